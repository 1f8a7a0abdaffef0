"""Simulator fidelity (pre-existing, not the warp-number rule): Numba types
``np.int32(x) << 27`` as int64 (no wrap), so the compiled form folds the branch to
``false`` and accepts; the simulator evaluates it with numpy int32 wrapping, so the
accepted kernel's simulated run takes the branch in lanes 16..31 of each warp:
sim.check reports warp_mask. Run with NUMBA_ENABLE_CUDASIM=1."""

from attack_repros.harness import try_one
from tests.kernels.warp_index_rules import kernel_1d

try_one("shl27_ashr27", kernel_1d("((np.int32(cuda.threadIdx.x) << 27) >> 27) < 0"), (256, 1, 1))
