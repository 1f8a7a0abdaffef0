"""``covers`` of an output written through tensor-core tiles (host/_tilecover): the capacity
is a corner of the output every element of which some thread owns, by the ownership rules
of lowering/_mma.py and lowering/_wgmma.py replayed here element by element; with whole
warps (warpgroups) for the tile it is the whole grid of block tiles (port20
FALSE_REFUSALS covers_mma_out_tile)."""

from __future__ import annotations

import itertools

import pytest

from simtsafe.host._tilecover import tensor_core_capacity, tensor_core_coverage_message


def _mma_owned(
    sizes: tuple[int, ...], grid: tuple[int, int, int], threads: int
) -> set[tuple[int, int]]:
    """Every (row, column) some thread's ``mma.store`` may write (all (mi, ni) of its warp)."""
    bm, bn, wm, wn = sizes
    across, rects = bn // wn, (bm // wm) * (bn // wn)
    owned: set[tuple[int, int]] = set()
    if grid[2] != 1:
        return owned
    for bx, by, t in itertools.product(range(grid[0]), range(grid[1]), range(threads)):
        w, lane = t >> 5, t & 31
        if w >= rects:
            continue
        r0, c0 = by * bm + (w // across) * wm, bx * bn + (w % across) * wn
        g, q = lane >> 2, lane & 3
        for mi, ni, j in itertools.product(range(wm // 16), range(wn // 8), range(4)):
            owned.add((r0 + 16 * mi + g + 8 * (j >> 1), c0 + 8 * ni + 2 * q + (j & 1)))
    return owned


def _wgmma_owned(
    sizes: tuple[int, ...], grid: tuple[int, int, int], threads: int
) -> set[tuple[int, int]]:
    """Every (row, column) some thread's ``wgmma.store`` writes."""
    bm, bn = sizes
    owned: set[tuple[int, int]] = set()
    if grid[2] != 1:
        return owned
    for bx, by, t in itertools.product(range(grid[0]), range(grid[1]), range(threads)):
        g, w, lane = t >> 7, (t >> 5) & 3, t & 31
        if g >= bm // 64:
            continue
        r0, c0 = by * bm + 64 * g, bx * bn
        for i in range(bn // 2):
            r = 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1)
            c = 8 * (i >> 2) + 2 * (lane & 3) + (i & 1)
            owned.add((r0 + r, c0 + c))
    return owned


MMA_CASES = [
    ((16, 16, 16, 16), (1, 3, 1), (32, 1, 1)),  # port20 bmm16
    ((16, 16, 16, 16), (2, 2, 1), (64, 1, 1)),  # a second warp owns nothing
    ((16, 16, 16, 16), (1, 2, 1), (16, 1, 1)),  # a partial warp: nothing whole
    ((32, 32, 16, 16), (2, 1, 1), (64, 1, 1)),  # 2 of 4 rectangles: one band
    ((32, 32, 16, 16), (1, 2, 1), (32, 1, 1)),  # 1 of 4: the corner rectangle
    ((32, 32, 16, 16), (2, 2, 1), (128, 1, 1)),  # whole
    ((32, 32, 16, 16), (2, 2, 1), (32, 4, 1)),  # whole, a 2D block
    ((32, 32, 16, 16), (2, 2, 1), (96, 1, 1)),  # 3 of 4: one whole band
    ((32, 32, 16, 16), (2, 2, 1), (100, 1, 1)),  # 3 whole warps and a partial one
    ((32, 32, 32, 8), (1, 2, 1), (96, 1, 1)),  # 3 of 4 rectangles across one band
    ((64, 32, 32, 16), (2, 1, 1), (128, 1, 1)),
    ((16, 16, 16, 16), (2, 2, 2), (32, 1, 1)),  # grid.z > 1: nothing
]
WGMMA_CASES = [
    ((64, 64), (2, 2, 1), (128, 1, 1)),
    ((128, 64), (1, 2, 1), (128, 1, 1)),  # 1 of 2 warpgroups
    ((128, 64), (1, 2, 1), (256, 1, 1)),
    ((128, 64), (1, 1, 1), (192, 1, 1)),  # a partial warpgroup
    ((64, 64), (1, 1, 1), (64, 1, 1)),  # no whole warpgroup
]


def _check(
    ctor: str,
    owned: set[tuple[int, int]],
    sizes: tuple[int, ...],
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
) -> tuple[int, int]:
    rows, cols = tensor_core_capacity(ctor, sizes, grid, block)
    missing = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in owned]
    assert not missing, (ctor, sizes, grid, block, (rows, cols), missing[:4])
    return rows, cols


@pytest.mark.parametrize(("sizes", "grid", "block"), MMA_CASES, ids=str)
def test_the_mma_capacity_is_owned_element_by_element(
    sizes: tuple[int, ...], grid: tuple[int, int, int], block: tuple[int, int, int]
) -> None:
    threads = block[0] * block[1] * block[2]
    rows, cols = _check("mma.out_tile", _mma_owned(sizes, grid, threads), sizes, grid, block)
    bm, bn, wm, wn = sizes
    if threads // 32 >= (bm // wm) * (bn // wn) and grid[2] == 1:
        assert (rows, cols) == (grid[1] * bm, grid[0] * bn)  # every block tile, whole


@pytest.mark.parametrize(("sizes", "grid", "block"), WGMMA_CASES, ids=str)
def test_the_wgmma_capacity_is_owned_element_by_element(
    sizes: tuple[int, ...], grid: tuple[int, int, int], block: tuple[int, int, int]
) -> None:
    threads = block[0] * block[1] * block[2]
    rows, cols = _check("wgmma.out_tile", _wgmma_owned(sizes, grid, threads), sizes, grid, block)
    if threads // 128 >= sizes[0] // 64:
        assert (rows, cols) == (grid[1] * sizes[0], grid[0] * sizes[1])


def test_a_tile_of_unknown_sizes_counts_nothing() -> None:
    assert tensor_core_capacity("mma.out_tile", (), (4, 4, 1), (128, 1, 1)) == (0, 0)
    msg = tensor_core_coverage_message(
        "k", "c", "mma.out_tile", (), (4, 4, 1), (128, 1, 1), 0, 64, 0
    )
    assert "whose sizes are not int literals or module constants" in msg


def test_too_few_warps_for_the_tile_asks_for_a_larger_block() -> None:
    msg = tensor_core_coverage_message(
        "k", "c", "mma.out_tile", (32, 32, 16, 16), (2, 2, 1), (64, 1, 1), 0, 64, 16
    )
    assert (
        "kernel 'k' must cover every element of 'c' by its launch contract, but the launch owns "
        "16 along axis 0 and 'c' has 64: 'c' is written through ss.mma.out_tile(c, 32, 32, 16, "
        "16), so block (bx, by) owns the 32 x 32 tile c[32*by : +32, 32*bx : +32] (each of its "
        "first 4 warps a 16 x 16 rectangle), but a block of 64 threads has 2 whole warps of the "
        "4 the tile needs, so part of every block tile has no owner. Launch blocks of 128 "
        "threads (or more), or make the warp's part of the tile larger"
    ) == msg
