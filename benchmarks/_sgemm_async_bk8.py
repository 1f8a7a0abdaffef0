# pyright: basic
"""The previous schedule of examples/sgemm_async.py (8-deep stages, two barriers per stage,
the stage's k loop kept as a loop), kept so that ``benchmarks/sgemm_variants.py`` times it
beside the current one (the ``async bk8`` rows). Not an example: the text below is its
original description.

Tiled single-precision matrix multiply ``c = a @ b``, the fast schedule (Tier 1: no unsafe
code): asynchronous double-buffered fills, a transposed A tile and 16-byte shared reads.

Each block of 16 x 16 threads computes a 128 x 128 tile of ``c``; each thread the 8 x 8
micro-tile ``thread.tile_2d(c, 8, 8)`` (rows ``8 ty ..``, columns ``8 tx ..`` of the block
tile), kept in registers. The K axis is walked eight columns at a time through two stages
of shared tiles, so the copy of stage ``s + 1`` is in flight while stage ``s`` is read:

* ``b_s`` (8 x 128, a slice of ``b``'s rows) is filled with ``shared.fill_async``: one
  16-byte ``cp.async.cg`` per thread, a warp copying one 512-byte row;
* ``a_s`` (8 x 128, padded to rows of 132) holds the slice ``a[row0:row0+128, k0:k0+8]``
  transposed (``a_s[k, r] = a[row0 + r, k0 + k]``), filled with ``shared.fill_transposed``:
  each thread loads 16 bytes of one of ``a``'s rows (``ld.global.v4``) and stores them
  down a column of the tile (the padding puts the two halves of a warp's stores in
  different banks);
* for each ``k`` of the stage, a thread reads its 8 values of A as two ``vec.load`` runs
  of ``a_s`` row ``k`` (one ``ld.shared.v4`` each; the two rows of threads of a warp read
  two addresses: broadcasts), its 8 values of B as two runs of ``b_s`` row ``k``, and does
  64 fused multiply-adds. Threads with ``tx % 8 >= 4`` read their two B runs in the other
  order, so that the 8 threads of each quarter warp read 8 different bank groups (no
  conflict); the columns are put back in place when the tile is written.

The loop body holds two stages (``a0/b0`` then ``a1/b1``), so that the phase analysis sees
each tile on its own lines: fill the other stage, wait for the stage to be read
(``shared.wait_group(1)``: every group but the one just issued has landed), barrier, read,
barrier. Past ``k``'s end the fills copy
zeros (a slice beyond the input is zero-filled), so any ``k`` works.

The contract asks for two resident blocks per multiprocessor (``blocks_per_sm=2``:
``.minnctapersm 2``, at most 128 registers per thread).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

BM = 128  # block tile rows
BN = 128  # block tile columns
BK = 8  # K step (one stage)
TM = 8  # micro-tile rows per thread
TN = 8  # micro-tile columns per thread
TX = BN // TN  # 16 threads along x
TY = BM // TM  # 16 threads along y
PAD = 4  # a_s rows of 132 floats: 528 bytes, a multiple of 16; stores spread over the banks
STEP = 2 * BK  # one loop iteration: two stages


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
def sgemm_async_bk8(
    c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]
) -> None:
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
    af = cuda.local.array(TM, np.float32)  # this k's A values: rows 8 ty .. 8 ty + 7
    bf = cuda.local.array(TN, np.float32)  # its B values, in the order p chooses
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
        # Stage k0 + BK goes to a1/b1 while a0/b0 (stage k0) are read.
        ss.shared.fill_transposed(a1, a, (row0, k0 + BK))
        ss.shared.fill_async(b1, b, (k0 + BK, col0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)  # every group but the newest: b0 has landed
        ss.block.sync()
        for k in range(BK):
            kk = k & (BK - 1)
            x0 = ss.vec.load(a0, (kk, ra), 4)
            x1 = ss.vec.load(a0, (kk, ra + 1), 4)
            y0 = ss.vec.load(b0, (kk, rb0), 4)
            y1 = ss.vec.load(b0, (kk, rb1), 4)
            af[0], af[1], af[2], af[3] = x0
            af[4], af[5], af[6], af[7] = x1
            bf[0], bf[1], bf[2], bf[3] = y0
            bf[4], bf[5], bf[6], bf[7] = y1
            for r in range(TM):
                for cc in range(TN):
                    acc[r, cc] += af[r] * bf[cc]
        ss.block.sync()
        # Stage k0 + 2 BK goes to a0/b0 while a1/b1 are read.
        ss.shared.fill_transposed(a0, a, (row0, k0 + STEP))
        ss.shared.fill_async(b0, b, (k0 + STEP, col0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)  # b1 has landed
        ss.block.sync()
        for k in range(BK):
            kk = k & (BK - 1)
            x0 = ss.vec.load(a1, (kk, ra), 4)
            x1 = ss.vec.load(a1, (kk, ra + 1), 4)
            y0 = ss.vec.load(b1, (kk, rb0), 4)
            y1 = ss.vec.load(b1, (kk, rb1), 4)
            af[0], af[1], af[2], af[3] = x0
            af[4], af[5], af[6], af[7] = x1
            bf[0], bf[1], bf[2], bf[3] = y0
            bf[4], bf[5], bf[6], bf[7] = y1
            for r in range(TM):
                for cc in range(TN):
                    acc[r, cc] += af[r] * bf[cc]
        ss.block.sync()
    ss.shared.wait_all()  # the last stage's copies (zeros past k's end) are never read
    t = thread.tile_2d(c, TM, TN)
    flip = 4 * p  # acc column j holds the micro-tile's column j ^ flip
    for r in range(TM):
        for cc in range(TN):
            t[r, cc ^ flip] = acc[r, cc]


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 128 tile of c: (column tiles, row tiles)."""
    return (math.ceil(n / BN), math.ceil(m / BM))
