"""Collectives and accumulators on the simulator: results against numpy.

Every block and warp collective, for each element type, on blocks that are
1D, 2D and 3D, with partial warps (48, 100, (16, 3), (4, 3, 5) threads; the
1024-thread block is in tests/gpu); accumulators: a privatized histogram with
out-of-range values ignored, scatter min/max, float sums, and every misuse
refused with its message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe import lowering
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

DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")
SHAPES: tuple[int | tuple[int, ...], ...] = (100, (16, 3), (4, 3, 5))

# Numba's simulator runs one OS thread per CUDA thread and polls them all at every
# barrier, so these stay at one block of at most 100 threads (the dtype sweep at 48:
# a full warp and a partial one) (a 1024-thread block
# takes minutes here; tests/gpu runs it, and tests/ptx compiles it).
CASES = (
    [(scope, dtype, 48) for scope in ("block", "warp") for dtype in DTYPES]
    + [(scope, "int32", shape) for scope in ("block", "warp") for shape in SHAPES]
    + [("block", "float32", (4, 3, 5))]
)


def _launch(kernel: Any, grid: int, block: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    dev = [cuda.to_device(a) for a in arrays]
    kernel.prepare(grid=grid, block=block)(*dev)
    return [d.copy_to_host() for d in dev]


@pytest.mark.parametrize(("scope", "dtype", "block"), CASES)
def test_collectives_match_numpy(tmp_path: Path, scope: str, dtype: str, block: Any) -> None:
    grid = 1
    mod = load_kernel_module(tmp_path, collective_source(dtype, scope))
    a = random_values(dtype, block, grid)
    outs = [np.zeros_like(a) for _ in OUTPUTS]
    got = _launch(mod.collectives, grid, block, *outs, a)
    want = expected(a, scope, block, grid)
    check = tolerance(a, block)
    for name, g in zip(OUTPUTS, got[: len(OUTPUTS)], strict=True):
        check(g, want[name])


def test_block_results_are_bitwise_uniform(tmp_path: Path) -> None:
    """The analysis treats block.sum's result as uniform: every thread gets the same bits."""
    mod = load_kernel_module(tmp_path, collective_source("float32", "block"))
    block = (16, 3)
    a = random_values("float32", block, 2, seed=3) * np.float32(1e3)
    outs = [np.zeros_like(a) for _ in OUTPUTS]
    got = dict(
        zip(OUTPUTS, _launch(mod.collectives, 2, block, *outs, a)[: len(OUTPUTS)], strict=True)
    )
    bx = dims(block)[0]
    for name in ("o_sum", "o_max", "o_min", "o_red", "o_opx", "o_bc"):
        for b in range(2):
            part = got[name][:, :, b * bx : (b + 1) * bx].view(np.uint32)
            assert (part == part.flat[0]).all(), name


def test_collectives_in_a_loop(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, LOOPED_SOURCE.format(block=48))
    a = np.random.default_rng(4).integers(-100, 100, 48).astype(np.int64)
    (out, _) = _launch(mod.looped, 1, 48, np.zeros(48, np.int64), a)
    np.testing.assert_array_equal(out, looped_expected(a, 48))


# ----------------------------------------------------------------------------- accumulators

HISTOGRAM = """
NBINS = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1)))
def histogram(h: ss.Accumulate[np.uint32], values: In[np.int32]) -> None:
    bins = ss.shared.accumulator(NBINS, np.uint32)
    for w in thread.grid_stride(values):
        bins.add(values[w], 1)
    ss.block.sync()
    t = thread.index_1d().index % 128
    for k in range(t, NBINS, 128):
        h.add(k, bins[k])
"""


def test_privatized_histogram_ignores_out_of_range_values(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, HISTOGRAM)
    values = np.random.default_rng(1).integers(-20, 90, 1500).astype(np.int32)
    (h, _) = _launch(mod.histogram, 3, 128, np.zeros(64, np.uint32), values)
    inside = values[(values >= 0) & (values < 64)]
    np.testing.assert_array_equal(h, np.bincount(inside, minlength=64).astype(np.uint32))


SCATTER = """
@ss.kernel
def scatter(
    lo: ss.Accumulate[np.int32],
    hi: ss.Accumulate[np.float64],
    total: ss.Accumulate[np.float32],
    idx: In[np.int64],
    vals: In[np.int32],
) -> None:
    for w in thread.grid_stride(idx):
        lo.min(idx[w], vals[w])
        hi.max(idx[w], vals[w])
        total.add(0, vals[w])
        total.add(len(total) + 5, 1)  # always out of range: ignored
"""


def test_scatter_min_max_and_add(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, SCATTER)
    rng = np.random.default_rng(2)
    idx = rng.integers(-3, 12, 400).astype(np.int64)
    vals = rng.integers(-50, 50, 400).astype(np.int32)
    lo0 = np.full(10, 1000, np.int32)
    hi0 = np.full(10, -1000, np.float64)
    lo, hi, total, *_ = _launch(mod.scatter, 2, 64, lo0, hi0, np.zeros(1, np.float32), idx, vals)
    ok = (idx >= 0) & (idx < 10)
    want_lo, want_hi = lo0.copy(), hi0.copy()
    np.minimum.at(want_lo, idx[ok], vals[ok])
    np.maximum.at(want_hi, idx[ok], vals[ok].astype(np.float64))
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)
    assert total[0] == np.float32(vals.sum())  # integers: exact in float32


SHARED_READS = """
@ss.kernel
def reads(out: DisjointSlice[np.int64], probe: In[np.int64]) -> None:
    acc = ss.shared.accumulator(8, np.int64)
    acc.add(thread.index_1d().index % 7, 2)
    acc.max(7, 100)
    ss.block.sync()
    i = thread.index_1d()
    out[i] = acc[probe[i]] + len(acc) * 1000 + acc.size * 100000
"""


def test_shared_accumulator_reads_are_bounds_checked(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, SHARED_READS)
    probe = np.array([0, 1, 7, 8, -1, 2**40, 3, 6] * 4, np.int64)
    (out, _) = _launch(mod.reads, 1, 32, np.zeros(32, np.int64), probe)
    per_slot = np.append(2 * np.bincount(np.arange(32) % 7), 100)
    want = np.array([per_slot[p] if 0 <= p < 8 else 0 for p in probe]) + 8 * 1000 + 8 * 100000
    np.testing.assert_array_equal(out, want)


def test_shared_accumulator_reads_through_a_local1d_witness() -> None:
    from simtsafe.lowering import _coop_sim, _sim

    arr = np.arange(4, dtype=np.uint32)
    acc = _coop_sim.SimSharedAccumulator(arr)
    assert acc[_sim._mint("Local1D", (2,))] == 2
    assert acc[_sim._mint("Local1D", (9,))] == 0
    with pytest.raises(ss.SafetyError, match="read with an int or a thread.local_index"):
        acc[_sim._mint("Index1D", (1,))]


@pytest.mark.skipif(
    "__ss_local_index" not in lowering.builtins(proven_domain=None),
    reason="thread.local_index() is lowered on the tiles branch",
)
def test_shared_accumulator_read_with_local_index(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def own(out: DisjointSlice[np.uint32]) -> None:
    acc = ss.shared.accumulator(32, np.uint32)
    acc.add(0, 1)
    ss.block.sync()
    out[thread.index_1d()] = acc[thread.local_index()]
""",
    )
    (out,) = _launch(mod.own, 1, 40, np.zeros(40, np.uint32))
    assert out[0] == 40 and (out[1:32] == 0).all() and (out[32:] == 0).all()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x = acc[0]", "an Accumulate is not read during the launch"),
        ("acc[0] = 1", "not written with `acc[i] = v`"),
        ("x = acc.dtype", "has no .dtype"),
        ("acc.add(1.5, 1)", "the index must be an int"),
    ],
)
def test_accumulate_misuse_is_refused(tmp_path: Path, body: str, message: str) -> None:
    mod = load_kernel_module(
        tmp_path,
        f"""
@ss.kernel
def misuse(acc: ss.Accumulate[np.int32]) -> None:
    {body}
""",
    )
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        _launch(mod.misuse, 1, 1, np.zeros(4, np.int32))


def test_accumulate_twin_accepts_the_correct_use(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def fine(acc: ss.Accumulate[np.int32]) -> None:
    acc.add(1, 1)
    acc.max(2, acc.size + len(acc) + acc.shape[0])
""",
    )
    (acc,) = _launch(mod.fine, 1, 3, np.zeros(4, np.int32))
    np.testing.assert_array_equal(acc, [0, 3, 12, 0])


def test_collective_of_a_non_number_is_refused(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def bad(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.sum((a[i], a[i]))[0]
""",
    )
    with pytest.raises(ss.SafetyError, match=re.escape("block.sum(v) takes a number")):
        _launch(mod.bad, 1, 4, np.zeros(4, np.float32), np.ones(4, np.float32))
