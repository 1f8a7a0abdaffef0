"""Porting round 17 (tests/kernels/port17.py): each ported Tier-1 kernel gives numpy's values
on the simulator; the launch-time refusals the round met name the fix that works (a
PerBlock output's grid, the counter's maker)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import port17

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(set(port17.ACCEPTED) & set(port17.CHECKS)))
def test_a_ported_kernel_matches_numpy(tmp_path: Path, name: str) -> None:
    mod = port17.load(name, tmp_path)
    assert port17.CHECKS[name](mod, np.random.default_rng(17))


def test_the_constant_memory_filter_is_accepted_and_matches_numpy(tmp_path: Path) -> None:
    # the round's false refusal (cuda.const.array_like outside an unsafe region), fixed
    mod = port17.load("constant_memory_filter", tmp_path)
    assert port17.CHECKS["constant_memory_filter"](mod, np.random.default_rng(17))


@pytest.mark.parametrize("cols", [1, 63, 64, 65, 700])
def test_the_chunked_row_scan_is_numpys_cumsum_at_any_width(tmp_path: Path, cols: int) -> None:
    # The round's row scan (a false refusal: no Tier-1 spelling) through
    # thread.block_row_chunks: past the old workaround's bound of 512 columns too.
    m = port17.load("row_cumsum_chunks", tmp_path)
    x = np.random.default_rng(cols).integers(-3, 4, (3, cols)).astype(np.float32)
    out = cuda.to_device(np.full_like(x, np.nan))
    m.row_cumsum.prepare(grid=3, block=64)(out, cuda.to_device(x))
    np.testing.assert_array_equal(out.copy_to_host(), np.cumsum(x, axis=1))


def test_a_segment_sum_launched_short_is_told_one_block_a_segment(tmp_path: Path) -> None:
    m = port17.load("coverage_advice_per_block", tmp_path)
    xs = cuda.to_device(np.arange(500, dtype=np.float32))
    out = cuda.to_device(np.full(6, np.nan, np.float32))
    offs = cuda.to_device(port17.SEG_OFFS)
    with pytest.raises(ss.CoverageError, match=r"Prepare with 6 blocks \(one element a block"):
        m.segment_sum.prepare(grid=4, block=64)(out, xs, offs)
    m.segment_sum.prepare(grid=6, block=64)(out, xs, offs)  # the advised grid
    bounds = port17.SEG_OFFS
    want = [np.arange(bounds[i], bounds[i + 1]).sum() for i in range(6)]
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-6)


def test_a_counter_of_another_dtype_is_pointed_to_simtsafe_counter(tmp_path: Path) -> None:
    m = port17.load("counter_dtype_advice", tmp_path)
    with pytest.raises(ss.ArgumentTypeError, match=r"\(simtsafe\.counter\(\) makes one\)"):
        m.compact_claim.prepare(grid=2, block=64)(
            cuda.to_device(np.zeros(300, np.float32)),
            cuda.to_device(np.zeros(1, np.uint32)),
            cuda.to_device(np.ones(300, np.float32)),
            np.float32(0.3),
        )
