"""``simtsafe.mma`` on the simulator: a small bf16 GEMM against numpy (fp32 accumulation),
the fragment layouts of the PTX ISA, the same refusals as the compiled form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.mma_rules import (
    ACCEPTED,
    REFUSED,
    SIM_ORDERS,
    SIM_ORDERS_SYNCWARP,
    SIM_TERNARY,
    SIM_TERNARY_UNIFORM,
    UNIFORMITY,
)

pytestmark = pytest.mark.sim

BF16 = ml_dtypes.bfloat16


def _inputs(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((m, k)).astype(BF16),
        rng.standard_normal((k, n)).astype(BF16),
    )


def _gemm(mod: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    m, n = a.shape[0], b.shape[1]
    out = cuda.to_device(np.full((m, n), -1, np.float32))
    grid = ((n + 15) // 16, (m + 31) // 32)
    mod.k.prepare(grid=grid, block=64)(out, cuda.to_device(a), cuda.to_device(b))
    return out.copy_to_host()


def _run(mod: Any) -> np.ndarray:
    return _gemm(mod, *_inputs(32, 16, 16))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], _run)


@pytest.mark.parametrize("case", sorted(UNIFORMITY))
def test_divergent_warp_operations_are_refused(tmp_path: Path, case: str) -> None:
    source, fragment = UNIFORMITY[case]
    assert fragment is not None
    assert_refused(tmp_path, source, fragment, _run)


def test_a_bf16_gemm_matches_numpy(tmp_path: Path) -> None:
    # Edges in every direction: M, N, K not multiples of the block tile or the K step.
    a, b = _inputs(40, 24, 40, seed=1)
    got = _gemm(load_kernel_module(tmp_path, ACCEPTED), a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # Products of bf16 are exact in fp32; only the fp32 sums round (K = 40).
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fragment_layouts(tmp_path: Path) -> None:
    # A one-hot A picks one row of B: each output element is one B element, exactly, so
    # every lane's position in the A, B and C/D layouts is checked.
    a = np.zeros((32, 16), BF16)
    perm = np.random.default_rng(2).permutation(16)
    for i in range(32):
        a[i, perm[i % 16]] = 1
    b = (np.arange(16 * 16).reshape(16, 16) % 251).astype(BF16)
    got = _gemm(load_kernel_module(tmp_path, ACCEPTED), a, b)
    np.testing.assert_array_equal(got, a.astype(np.float32) @ b.astype(np.float32))


def _replay(tmp_path: Path, source: str) -> ss.sim.CheckReport:
    a, b = _inputs(32, 16, 16)
    out = np.zeros((32, 16), np.float32)
    return ss.sim.check(load_kernel_module(tmp_path, source).k, (1, 1), 64, out, a, b)


def test_lanes_at_two_mma_calls_on_one_line_are_a_warp_mask(tmp_path: Path) -> None:
    # the replay keyed an mma's meeting by its line: even and odd lanes met as one exchange
    (found,) = _replay(tmp_path, SIM_TERNARY).findings
    assert found.kind == "warp_mask", found
    assert "lanes 0 and 1 of warp 0 meet at different warp collectives: mma.mma" in found.message


def test_lanes_at_one_mma_call_meet(tmp_path: Path) -> None:
    assert _replay(tmp_path, SIM_TERNARY_UNIFORM).ok


def test_an_mma_orders_no_memory(tmp_path: Path) -> None:
    # the replay met the lanes at a syncwarp, which orders their shared accesses
    (found,) = _replay(tmp_path, SIM_ORDERS).findings
    assert found.kind == "race", found
    assert "lanes of one warp are ordered only by syncwarp or a block barrier" in found.message
    assert _replay(tmp_path, SIM_ORDERS_SYNCWARP).ok
