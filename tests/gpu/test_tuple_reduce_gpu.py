"""Tuple states in ``block.reduce`` / ``warp.reduce`` on a real device (skipped without one).

The kernels and numpy references of tests/sim/test_tuple_reduce_sim.py on many blocks, up to
1024 threads: Welford, argmax with ties (the first occurrence wins) and a (min, max,
any-negative) state match numpy; every thread of a block (lane of a warp) gets the same
bits, and Welford's bits are the simulator's (the same combine order, in float32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.tuple_reduce_cases import (
    EACH_OUTPUTS,
    each_expected,
    each_inputs,
    each_source,
    rows_expected,
    rows_source,
    welford_order,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

GRID = 40
_DTYPES = {"ai": np.int64, "lo": np.int32, "hi": np.int32, "neg": np.bool_}


def _run_each(tmp_path: Path, scope: str, block: int) -> tuple[dict[str, np.ndarray], Any]:
    mod = load_kernel_module(tmp_path, each_source(scope, block))
    total = GRID * block
    x, k = each_inputs(total - 13, seed=block)
    outs = [np.full(total, 7, _DTYPES.get(name, np.float32)) for name in EACH_OUTPUTS]
    dev = [cuda.to_device(a) for a in [*outs, x, k]]
    mod.each.prepare(grid=GRID, block=block)(*dev)
    cuda.synchronize()
    return dict(zip(EACH_OUTPUTS, (d.copy_to_host() for d in dev), strict=False)), (x, k)


@pytest.mark.parametrize("block", [32, 48, 64, 96, 256, 1024])
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_tuple_states_match_numpy(tmp_path: Path, scope: str, block: int) -> None:
    got, (x, k) = _run_each(tmp_path, scope, block)
    want = each_expected(scope, block, GRID, x, k)
    np.testing.assert_array_equal(got["wn"], want["wn"])
    np.testing.assert_allclose(got["wm"], want["wm"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["wq"], want["wq"], rtol=1e-5, atol=1e-3)
    for name in ("av", "ai", "lo", "hi", "neg"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize(("scope", "block"), [("block", 96), ("block", 1024), ("warp", 48)])
def test_every_thread_gets_the_simulators_bits(tmp_path: Path, scope: str, block: int) -> None:
    got, (x, _) = _run_each(tmp_path, scope, block)
    size = block if scope == "block" else 32
    for b in range(GRID):
        for s in range(0, block, size):
            lo, hi = b * block + s, b * block + min(s + size, block)
            n, mean, m2 = welford_order(x[lo : min(hi, x.size)], hi - lo, scope)
            for name, want in (("wn", n), ("wm", mean), ("wq", m2)):
                part = got[name][lo:hi].view(np.uint32)
                assert (part == np.float32(want).view(np.uint32)).all(), (name, b, s)


@pytest.mark.parametrize("block", [32, 64, 96, 256])
@pytest.mark.parametrize("width", [20, 1000, 4099])
def test_welford_rows_in_one_block_reduce(tmp_path: Path, block: int, width: int) -> None:
    mod = load_kernel_module(tmp_path, rows_source(block))
    x = (np.random.default_rng(width).standard_normal((64, width)) * 3 + 100).astype(np.float32)
    mean, var, count = (cuda.to_device(np.full(64, np.nan, np.float32)) for _ in range(3))
    mod.welford_rows.prepare(grid=64, block=block)(mean, var, count, cuda.to_device(x))
    want_mean, want_var = rows_expected(x)
    np.testing.assert_array_equal(count.copy_to_host(), np.full(64, width, np.float32))
    np.testing.assert_allclose(mean.copy_to_host(), want_mean, rtol=1e-6)
    np.testing.assert_allclose(var.copy_to_host(), want_var, rtol=1e-3)
