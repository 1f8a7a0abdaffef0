"""Collectives and accumulators on a real device, with large random inputs (skipped without one).

The same kernels and numpy references as tests/sim/test_coop_sim.py, but
on many blocks, full 1024-thread blocks and 2**22-element histograms: what
the simulator is too slow for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.coop_cases import (
    LOOPED_SOURCE,
    OUTPUTS,
    collective_source,
    dims,
    expected,
    looped_expected,
    random_values,
    tolerance,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
#: Problem sizes (a smoke run on the simulator may shrink them).
SIZES = {"grid": 132, "values": 2**22}
BLOCKS: tuple[int | tuple[int, ...], ...] = (32, 48, 100, 256, (16, 6), (8, 4, 3), (32, 32), 1024)


def _launch(kernel: Any, grid: int, block: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    dev = [cuda.to_device(a) for a in arrays]
    kernel.prepare(grid=grid, block=block)(*dev)
    cuda.synchronize()
    return [d.copy_to_host() for d in dev]


@pytest.mark.parametrize("block", BLOCKS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_collectives_match_numpy(tmp_path: Path, scope: str, dtype: str, block: Any) -> None:
    mod = load_kernel_module(tmp_path, collective_source(dtype, scope))
    grid = SIZES["grid"]
    a = random_values(dtype, block, grid, seed=11)
    outs = [np.zeros_like(a) for _ in OUTPUTS]
    got = _launch(mod.collectives, grid, block, *outs, a)
    want = expected(a, scope, block, grid)
    check = tolerance(a, block)
    for name, g in zip(OUTPUTS, got[: len(OUTPUTS)], strict=True):
        check(g, want[name])
    if scope == "block":  # the sum is bitwise the same in every thread of a block
        bx = dims(block)[0]
        for b in range(grid):
            bits = got[0][:, :, b * bx : (b + 1) * bx].reshape(-1).view(f"u{a.itemsize}")
            assert (bits == bits[0]).all()


@pytest.mark.parametrize("block", [96, 100, 256, 1024])
def test_collectives_in_a_loop_reuse_their_buffers(tmp_path: Path, block: int) -> None:
    """An exact-block contract: alternating buffers, one barrier per collective."""
    mod = load_kernel_module(tmp_path, LOOPED_SOURCE.format(block=block))
    n = block * SIZES["grid"]
    a = np.random.default_rng(block).integers(-1000, 1000, n).astype(np.int64)
    (out, _) = _launch(mod.looped, SIZES["grid"], block, np.zeros(n, np.int64), a)
    np.testing.assert_array_equal(out, looped_expected(a, block))


def test_simulator_and_device_agree_bitwise_on_float_sums(tmp_path: Path) -> None:
    """The simulator twin computes in the GPU's order: float32 block sums agree bit for bit."""
    from tests.kernels.coop_cases import block_values

    mod = load_kernel_module(tmp_path, collective_source("float32", "block"))
    block, grid = 100, SIZES["grid"]
    a = random_values("float32", block, grid, seed=5) * np.float32(1e3)
    outs = [np.zeros_like(a) for _ in OUTPUTS]
    got = _launch(mod.collectives, grid, block, *outs, a)
    for b in range(grid):
        vals = block_values(a, b, block)
        totals = []
        for w in range(0, len(vals), 32):
            seg = list(vals[w : w + 32])
            n = len(seg)
            for off in (16, 8, 4, 2, 1):
                seg = [seg[x] + seg[x + off] if x + off < n else seg[x] for x in range(n)]
            totals.append(seg[0])
        total = totals[0]
        for t in totals[1:]:
            total = np.float32(total + t)
        assert block_values(got[0], b, block)[0] == total


HISTOGRAM = """
NBINS = 256


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def histogram(h: ss.Accumulate[np.uint32], values: In[np.int32]) -> None:
    bins = ss.shared.accumulator(NBINS, np.uint32)
    for w in thread.grid_stride(values):
        bins.add(values[w], 1)
    ss.block.sync()
    t = thread.index_1d().index % 256
    h.add(t, bins[t])
"""


def test_privatized_histogram_of_four_million_values(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, HISTOGRAM)
    values = np.random.default_rng(7).integers(-100, 400, SIZES["values"]).astype(np.int32)
    (h, _) = _launch(mod.histogram, SIZES["grid"], 256, np.zeros(256, np.uint32), values)
    inside = values[(values >= 0) & (values < 256)]
    np.testing.assert_array_equal(h, np.bincount(inside, minlength=256).astype(np.uint32))


SCATTER = """
@ss.kernel
def scatter(
    lo: ss.Accumulate[np.int64],
    hi: ss.Accumulate[np.float32],
    total: ss.Accumulate[np.float64],
    count: ss.Accumulate[np.uint64],
    idx: In[np.int64],
    vals: In[np.float32],
) -> None:
    for w in thread.grid_stride(idx):
        lo.min(idx[w], np.int64(vals[w] * 1000))
        hi.max(idx[w], vals[w])
        total.add(idx[w], vals[w])
        count.add(idx[w], 1)
"""


def test_scatter_atomics_on_a_million_indices(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, SCATTER)
    rng = np.random.default_rng(9)
    n, m = SIZES["values"] // 4, 1000
    idx = rng.integers(-50, m + 50, n).astype(np.int64)
    vals = rng.standard_normal(n).astype(np.float32)
    lo, hi, total, count, *_ = _launch(
        mod.scatter,
        SIZES["grid"],
        256,
        np.full(m, 2**62, np.int64),
        np.full(m, -np.inf, np.float32),
        np.zeros(m, np.float64),
        np.zeros(m, np.uint64),
        idx,
        vals,
    )
    ok = (idx >= 0) & (idx < m)
    want_lo = np.full(m, 2**62, np.int64)
    # The kernel multiplies float32 by an int literal: in float64 (Numba's promotion).
    np.minimum.at(want_lo, idx[ok], (vals[ok].astype(np.float64) * 1000).astype(np.int64))
    want_hi = np.full(m, -np.inf, np.float32)
    np.maximum.at(want_hi, idx[ok], vals[ok])
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)
    np.testing.assert_array_equal(count, np.bincount(idx[ok], minlength=m).astype(np.uint64))
    want_total = np.bincount(idx[ok], weights=vals[ok].astype(np.float64), minlength=m)
    np.testing.assert_allclose(total, want_total, rtol=1e-9, atol=1e-9)


GRID_SUM = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def grid_sum(total: ss.Accumulate[np.float64], a: In[np.float32]) -> None:
    s = np.float32(0)
    for w in thread.grid_stride(a):
        s += a[w]
    block_total = ss.block.sum(s)
    if thread.index_1d().index % 256 == 0:
        total.add(0, block_total)
"""


def test_grid_sum_block_reduce_then_one_atomic_per_block(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, GRID_SUM)
    a = np.random.default_rng(3).standard_normal(SIZES["values"] * 4).astype(np.float32)
    (total, _) = _launch(mod.grid_sum, SIZES["grid"], 256, np.zeros(1, np.float64), a)
    assert abs(total[0] - a.astype(np.float64).sum()) < 1e-3 * np.sqrt(a.size)
