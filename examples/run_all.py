"""Run every example with contract-checked launches and compare with numpy.

On a machine with a CUDA GPU the kernels run there; otherwise this script
re-runs itself on Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) with
smaller problem sizes (the simulator runs one Python thread per CUDA thread).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: example module -> (GPU sizes, simulator sizes)
SIZES: dict[str, tuple[dict[str, int | str], dict[str, int | str]]] = {
    "vecadd": ({"n": 10_000_019}, {"n": 5_003}),
    "saxpy": ({"n": 10_000_019, "blocks": 264}, {"n": 5_003, "blocks": 4}),
    "jacobi": ({"rows": 2_000, "cols": 3_001}, {"rows": 40, "cols": 67}),
    "heat3d": ({"nz": 200, "ny": 300, "nx": 513}, {"nz": 5, "ny": 7, "nx": 37}),
    "matmul": ({"m": 700, "k": 500, "n": 900}, {"m": 24, "k": 9, "n": 40}),
    "block_sumsq": ({"n": 10_000_019}, {"n": 3_001}),
    "monte_carlo_pi": (
        {"threads": 64 * 4096, "iterations": 2000},
        {"threads": 128, "iterations": 50},
    ),
    "pipeline": ({"n": 10_000_019, "steps": 3}, {"n": 1_003, "steps": 2}),
    # Block cooperation in Tier 1 (docs/performance.md), and the raw twins of the five.
    "reduce_sum": ({"n": 10_000_019}, {"n": 3_001, "blocks": 2}),
    "scan": ({"n": 6_000_011}, {"n": 3_081}),  # GPU: three levels of tile totals
    "transpose": ({"rows": 2_001, "cols": 3_003}, {"rows": 40, "cols": 33}),
    "sgemm": ({"m": 700, "k": 500, "n": 900}, {"m": 130, "k": 12, "n": 20}),
    # The fast schedule: cp.async double buffering, transposed A tile, 16-byte shared reads.
    "sgemm_async": ({"m": 700, "k": 500, "n": 900}, {"m": 130, "k": 24, "n": 20}),
    "histogram": ({"n": 10_000_019, "blocks": 264}, {"n": 3_001, "blocks": 2}),
    # Ownership won by an atomic: an append buffer (stream compaction).
    "compact": ({"n": 10_000_019, "blocks": 264}, {"n": 3_001, "blocks": 2}),
    # At the hardware limit (issue 20): a single-pass sum in 16-byte runs, one launch.
    "sum_vec": ({"n": 10_000_019}, {"n": 3_001, "blocks": 2}),
    "histogram_vec": ({"n": 10_000_019}, {"n": 3_001, "blocks": 2}),
    # Tensor cores (simtsafe.mma): a bf16 GEMM with fp32 accumulation.
    "gemm_bf16": ({"m": 1_000, "k": 700, "n": 900}, {"m": 100, "k": 40, "n": 20}),
    # simulator: one block (about 7 s), its second warpgroup's rows partly past m, columns
    # past n, K ending inside a stage
    "gemm_bf16_wgmma": ({"m": 1_000, "k": 700, "n": 900}, {"m": 70, "k": 72, "n": 100}),
    # A row per block (warp): thread.block_row / thread.warp_row, any width.
    "softmax": ({"rows": 4_096, "cols": 4_099}, {"rows": 3, "cols": 300}),
    "rmsnorm": ({"rows": 4_096, "cols": 4_099}, {"rows": 3, "cols": 300}),
    "layernorm": ({"rows": 4_096, "cols": 4_099}, {"rows": 3, "cols": 300}),
    # An application (a package of its own, examples/decode/): batch-1 Qwen3 greedy decode,
    # every kernel Tier 1, one graph replay per token, against its numpy reference. The
    # simulator decodes a one-layer, 128-word variant of the tiny shape.
    "decode": (
        {"config": "tiny", "tokens": 8},
        {"config": "tiny", "tokens": 2, "layers": 1, "vocab": 128},
    ),
    # An application (a package of its own, examples/tsdf/): hash-blocked TSDF fusion, every
    # kernel Tier 1, against its numpy reference; the simulator fuses one 40x30 frame.
    "tsdf": (
        {"width": 640, "height": 480, "frames": 4, "voxel_mm": 10},
        {"width": 40, "height": 30, "frames": 1, "voxel_mm": 60},
    ),
    "coop_raw": (
        {
            "n_reduce": 10_000_019,
            "n_scan": 6_000_011,
            "rows": 2_001,
            "cols": 3_003,
            "m": 700,
            "k": 500,
            "n": 900,
            "n_hist": 10_000_019,
            "blocks": 264,
        },
        {
            "n_reduce": 3_001,
            "n_scan": 3_081,
            "rows": 40,
            "cols": 33,
            "m": 130,
            "k": 12,
            "n": 20,
            "n_hist": 3_001,
            "blocks": 2,
        },
    ),
}


def _gpu_present() -> bool:
    probe = "from numba import cuda; import sys; sys.exit(0 if cuda.is_available() else 1)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.call([sys.executable, "-c", probe], env=env, stderr=subprocess.DEVNULL) == 0


def main() -> int:
    if "NUMBA_ENABLE_CUDASIM" not in os.environ and not _gpu_present():
        print("no CUDA GPU found: running the examples on the CUDA simulator", flush=True)
        env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
        return subprocess.call([sys.executable, __file__], env=env)

    sys.path.insert(0, str(HERE))
    from numba import cuda

    import simtsafe

    if simtsafe.SIMULATOR:
        where = "CUDA simulator (CPU)"
        # xoroshiro128+ wraps uint64 on purpose; numpy scalars warn about it on the CPU.
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
    else:
        # The raw reference twins launch some stages on purpose with a grid smaller than the
        # GPU (a single-block final pass): Numba's occupancy advice (a NumbaPerformanceWarning,
        # matched by its text) is not about simtsafe.
        warnings.filterwarnings(
            "ignore", r"(?s).*Grid size \d+ will likely result in GPU under-utilization"
        )
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        where = f"GPU {name} (compute capability {'.'.join(map(str, dev.compute_capability))})"
    print(f"simtsafe {simtsafe.__version__}: running examples on {where}")
    failures = 0
    for module_name, (gpu_sizes, sim_sizes) in SIZES.items():
        module = __import__(module_name)
        sizes = sim_sizes if simtsafe.SIMULATOR else gpu_sizes
        supported = getattr(module, "supported", None)
        if supported is not None and not supported():
            print(f"  {module_name:12s} skipped on {where}: {module.NEEDS}")
            continue
        t0 = time.perf_counter()
        ok = module.run(**sizes)
        dt = time.perf_counter() - t0
        failures += not ok
        shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
        verdict = "matches numpy" if ok else "DOES NOT MATCH numpy"
        print(f"  {module_name:12s} ({shown}) on {where}: {verdict}  [{dt:.2f} s]")
    print("all examples match numpy" if not failures else f"{failures} example(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
