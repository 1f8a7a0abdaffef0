"""Tiled single-precision matrix multiply ``c = a @ b``, the fast schedule (Tier 1: no unsafe
code): asynchronous double-buffered fills, a transposed A tile and 16-byte shared reads.

Each block of 16 x 16 threads computes a 128 x 128 tile of ``c``; each thread the 8 x 8
micro-tile ``thread.tile_2d(c, 8, 8)`` (rows ``8 ty ..``, columns ``8 tx ..`` of the block
tile), kept in registers. The K axis is walked sixteen columns at a time through two stages
of shared tiles, so the copy of stage ``s + 1`` is in flight while stage ``s`` is read:

* ``b_s`` (16 x 128, a slice of ``b``'s rows) is filled with ``shared.fill_async``: two
  16-byte ``cp.async.cg`` per thread, a warp copying one 512-byte row per run;
* ``a_s`` (16 x 128, padded to rows of 132) holds the slice ``a[row0:row0+128, k0:k0+16]``
  transposed (``a_s[k, r] = a[row0 + r, k0 + k]``), filled with ``shared.fill_transposed``:
  each thread loads two 16-byte runs of ``a``'s rows (``ld.global.v4``) and stores them
  down columns of the tile;
* for each ``k`` of the stage, a thread reads its 8 values of A as two ``vec.load`` runs
  of ``a_s`` row ``k`` (one ``ld.shared.v4`` each; the two rows of threads of a warp read
  two addresses: broadcasts), its 8 values of B as two runs of ``b_s`` row ``k``, and does
  64 fused multiply-adds. Threads with ``tx % 8 >= 4`` read their two B runs in the other
  order, so that the 8 threads of each quarter warp read 8 different bank groups (no
  conflict); the columns are put back in place when the tile is written.

The 16 ``k`` of a stage are written out (``stage``: a loop of 16 would stay a loop in NVVM
and ptxas, 17 instructions of loop and no early reads per 64 FMAs), and row ``k + 1``'s
values are read before ``k``'s FMAs (``frags`` then ``fmas``), so ptxas issues each
``k``'s shared reads during the previous ``k``'s FMAs. One barrier per stage: wait for the
stage's copies (``shared.wait_group(0)``), barrier (every thread's copies have landed, and
no thread still reads the other stage's tiles), fill the other stage, read this one. The
loop body holds two stages (``a0/b0`` then ``a1/b1``), so that the phase analysis sees each
tile on its own lines. Past ``k``'s end the fills copy zeros (a slice beyond the input is
zero-filled), so any ``k`` works.

The contract asks for two resident blocks per multiprocessor (``blocks_per_sm=2``:
``.minnctapersm 2``, at most 128 registers per thread; 33 KB of shared tiles per block).
The previous schedule (8-deep stages, two barriers each, the ``k`` loop a loop) is kept in
benchmarks/_sgemm_async_bk8.py, timed beside this one by benchmarks/sgemm_variants.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

BM = 128  # block tile rows
BN = 128  # block tile columns
BK = 16  # K step (one stage)
TM = 8  # micro-tile rows per thread
TN = 8  # micro-tile columns per thread
TX = BN // TN  # 16 threads along x
TY = BM // TM  # 16 threads along y
PAD = 4  # a_s rows of 132 floats: 528 bytes, a multiple of 16; stores spread over the banks
STEP = 2 * BK  # one loop iteration: two stages


#: A thread's values of one ``k``: two runs of 4 of A, two of B.
Frags = tuple[tuple[np.float32, ...], ...]
Tile = ss.SharedTile[np.float32, Any]


@ss.device
def frags(at: Tile, bt: Tile, k: int, ra: int, rb0: int, rb1: int) -> Frags:
    """Row ``k`` of the stage: this thread's 8 values of A (``at`` runs ``ra``, ``ra + 1``)
    and of B (``bt`` runs ``rb0``, ``rb1``) as four runs of 4: 4 ``ld.shared.v4``."""
    return (
        ss.vec.load(at, (k, ra), 4),
        ss.vec.load(at, (k, ra + 1), 4),
        ss.vec.load(bt, (k, rb0), 4),
        ss.vec.load(bt, (k, rb1), 4),
    )


@ss.device
def fmas(acc: Any, f: Frags) -> None:
    """The 64 fused multiply-adds of one ``k`` (``f = frags(...)``):
    ``acc[r, c] += A[r] * B[c]``."""
    x0, x1, y0, y1 = f
    for r in range(4):
        for cc in range(4):
            acc[r, cc] += x0[r] * y0[cc]
            acc[r, 4 + cc] += x0[r] * y1[cc]
            acc[4 + r, cc] += x1[r] * y0[cc]
            acc[4 + r, 4 + cc] += x1[r] * y1[cc]


@ss.device
def stage(acc: Any, at: Tile, bt: Tile, ra: int, rb0: int, rb1: int) -> None:
    """The 16 ``k`` of a stage, written out, row ``k + 1``'s values read before ``k``'s FMAs."""
    f: Frags = frags(at, bt, 0, ra, rb0, rb1)
    g: Frags = frags(at, bt, 1, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 2, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 3, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 4, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 5, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 6, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 7, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 8, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 9, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 10, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 11, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 12, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 13, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 14, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    g = frags(at, bt, 15, ra, rb0, rb1)
    fmas(acc, f)
    f = g
    fmas(acc, f)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=(TX, TY, 1),
        blocks_per_sm=2,
        requires=[
            "a.shape[1] == b.shape[0]",
            "c.shape[0] == a.shape[0]",
            "c.shape[1] == b.shape[1]",
        ],
    )
)
def sgemm_async(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    me = thread.local_index_2d()
    tx = me.col
    ty = me.row
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    kdim = a.shape[1]
    a0 = ss.shared.tile((BK, BM), np.float32, pad=PAD)  # a0[k, r] = a[row0 + r, k0 + k]
    a1 = ss.shared.tile((BK, BM), np.float32, pad=PAD)
    b0 = ss.shared.tile((BK, BN), np.float32)  # b0[k, j] = b[k0 + k, col0 + j]
    b1 = ss.shared.tile((BK, BN), np.float32)
    acc = cuda.local.array((TM, TN), np.float32)
    for r in range(TM):
        for cc in range(TN):
            acc[r, cc] = np.float32(0.0)
    p = (tx >> 2) & 1  # quarter-warp parity: which of its two B runs a thread reads first
    ra = 2 * ty  # this thread's A runs: rows 8 ty .. 8 ty + 7 of the block tile
    rb0 = 2 * tx + p  # its B runs: columns 8 tx .. 8 tx + 7, in the order p chooses
    rb1 = 2 * tx + 1 - p
    ss.shared.fill_transposed(a0, a, (row0, 0))
    ss.shared.fill_async(b0, b, (0, col0))
    ss.shared.commit_group()
    for k0 in range(0, kdim, STEP):
        ss.shared.wait_group(0)  # stage k0 (a0/b0) has landed
        ss.block.sync()  # ... for every thread; and a1/b1 are read by none
        ss.shared.fill_transposed(a1, a, (row0, k0 + BK))  # stage k0 + BK in flight ...
        ss.shared.fill_async(b1, b, (k0 + BK, col0))
        ss.shared.commit_group()
        stage(acc, a0, b0, ra, rb0, rb1)  # ... while stage k0 is read
        ss.shared.wait_group(0)  # stage k0 + BK has landed
        ss.block.sync()  # ... for every thread; and a0/b0 are read by none
        ss.shared.fill_transposed(a0, a, (row0, k0 + STEP))
        ss.shared.fill_async(b0, b, (k0 + STEP, col0))
        ss.shared.commit_group()
        stage(acc, a1, b1, ra, rb0, rb1)
    ss.shared.wait_all()  # the last stage's copies (zeros past k's end) are never read
    t = thread.tile_2d(c, TM, TN)
    flip = 4 * p  # acc column j holds the micro-tile's column j ^ flip
    for r in range(TM):
        for cc in range(TN):
            t[r, cc ^ flip] = acc[r, cc]


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 128 tile of c: (column tiles, row tiles)."""
    return (math.ceil(n / BN), math.ceil(m / BM))


def run(m: int = 300, k: int = 200, n: int = 250) -> bool:
    """c = a @ b for random m x k and k x n matrices; compare with numpy (float64)."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    launch = sgemm_async.prepare(grid=grid_for(m, n), block=(TX, TY, 1))
    launch(d_c, cuda.to_device(a), cuda.to_device(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-3))


if __name__ == "__main__":
    print("sgemm_async matches numpy:", run())
