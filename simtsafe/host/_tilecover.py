"""``covers`` for outputs written through tensor-core tiles: what a launch owns of them.

``mma.out_tile(out, BM, BN, WM, WN)`` gives block ``(bx, by)`` the ``BM x BN`` block
tile of ``out`` at ``(by*BM, bx*BN)``; inside it warp ``w`` (the linear thread number //
32) owns the ``WM x WN`` rectangle ``(w // (BN/WN), w % (BN/WN))`` when ``w < (BM/WM) *
(BN/WN)``, and the 32 lanes of the warp together own every element of it
(``lowering/_mma.py``). ``wgmma.out_tile(out, BM, BN)`` gives the same block tile,
warpgroup ``g`` (linear thread number // 128) its rows ``64g .. 64g + 63`` when ``g < BM
/ 64``, the 128 threads of the warpgroup together every element of those rows
(``lowering/_wgmma.py``). With a grid z extent above 1 neither owns anything.

Only whole warps (warpgroups) count: a block whose thread count is not a multiple of 32
(128) has a partial one, whose missing lanes' elements no thread owns. So a block owns
its whole tile when it has a whole warp (warpgroup) for every rectangle (64 rows);
otherwise the owned elements of block ``(0, 0)`` start at the tile's corner and stop
early, and every later block leaves the same gap: the launch owns only that corner.
The capacity is the rectangle ``[0, rows) x [0, cols)`` every element of which some
thread owns.
"""

from __future__ import annotations

from ..decoration._outroutes import TENSOR_CORE_TILES

__all__ = ["TENSOR_CORE_TILES", "tensor_core_capacity", "tensor_core_coverage_message"]

_WARPGROUP_ROWS = 64


def _parts(ctor: str, sizes: tuple[int, ...]) -> tuple[int, int, int, int, int, int]:
    """(BM, BN, rectangles a block tile has, their row count across, threads each needs,
    rows each has) of a tile; the rectangles of a block tile run row-major."""
    if ctor == "mma.out_tile":
        bm, bn, wm, wn = sizes
        return bm, bn, (bm // wm) * (bn // wn), bn // wn, 32, wm
    bm, bn = sizes
    return bm, bn, bm // _WARPGROUP_ROWS, 1, 128, _WARPGROUP_ROWS


def tensor_core_capacity(
    ctor: str, sizes: tuple[int, ...], grid: tuple[int, ...], block: tuple[int, ...]
) -> tuple[int, int]:
    """(rows, columns) of the output's corner a launch of ``grid`` x ``block`` owns, every
    element of it, through the tile ``ctor(out, *sizes)``; ``sizes`` empty: not known at
    decoration, nothing counted."""
    if not sizes or grid[2] != 1:
        return (0, 0)
    bm, bn, rects, across, each, rows = _parts(ctor, sizes)
    owners = (block[0] * block[1] * block[2]) // each  # whole warps (warpgroups)
    if owners >= rects:
        return (grid[1] * bm, grid[0] * bn)
    if owners >= across:  # whole bands of rectangles: every column of each block tile
        return ((owners // across) * rows, grid[0] * bn)
    width = bn // across
    return (rows if owners else 0, owners * width)


def tensor_core_coverage_message(
    name: str,
    covers: str,
    ctor: str,
    sizes: tuple[int, ...],
    grid: tuple[int, ...],
    block: tuple[int, ...],
    axis: int,
    n: int,
    owned: int,
) -> str:
    """The CoverageError text: ``covers`` has ``n`` along ``axis`` and the launch owns
    ``owned`` through the tensor-core tile ``ctor``; what a block owns, and the fix."""
    head = (
        f"kernel {name!r} must cover every element of {covers!r} by its launch contract, but "
        f"the launch owns {owned} along axis {axis} and {covers!r} has {n}"
    )
    call = f"ss.{ctor}({covers}, {', '.join(map(str, sizes))})" if sizes else f"ss.{ctor}"
    if not sizes:
        return (
            f"{head}: {covers!r} is written through {call}, whose sizes are not int literals "
            "or module constants the decorator can read, so covers counts nothing of it. Write "
            "the sizes as int literals or module constants"
        )
    if grid[2] != 1:
        return (
            f"{head}: {covers!r} is written through {call}, which owns nothing in a launch "
            f"with grid.z = {grid[2]} (its block tiles follow (blockIdx.y, blockIdx.x)). "
            "Launch with grid.z = 1"
        )
    bm, bn, rects, _across, each, _rows = _parts(ctor, sizes)
    threads = block[0] * block[1] * block[2]
    unit = "warp" if each == 32 else "warpgroup"
    if rects == 1:
        split = f"its first {unit} all of it"
    elif ctor == "mma.out_tile":
        split = f"each of its first {rects} warps a {sizes[2]} x {sizes[3]} rectangle"
    else:
        split = f"each of its first {rects} warpgroups 64 rows"
    owns = (
        f"{covers!r} is written through {call}, so block (bx, by) owns the {bm} x {bn} tile "
        f"{covers}[{bm}*by : +{bm}, {bn}*bx : +{bn}] ({split})"
    )
    if threads // each < rects:
        return (
            f"{head}: {owns}, but a block of {threads} threads has {threads // each} whole "
            f"{unit}{'s' if threads // each != 1 else ''} of the {rects} the tile needs, so "
            f"part of every block tile has no owner. Launch blocks of {rects * each} threads "
            f"(or more), or make the {unit}'s part of the tile larger"
        )
    dim, per = ("y", bm) if axis == 0 else ("x", bn)
    return (
        f"{head}: {owns}. Prepare with grid.{dim} = simtsafe.cover({n}, {per}) "
        f"(= {-(-n // per)}) (axis {axis} follows {dim}: {per} "
        f"{'rows' if axis == 0 else 'columns'} a block)"
    )
