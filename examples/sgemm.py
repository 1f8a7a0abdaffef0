"""Tiled single-precision matrix multiply ``c = a @ b`` (Tier 1: no unsafe code).

Each block of 16 x 16 threads computes a 128 x 128 tile of ``c``; each
thread an 8 x 8 micro-tile of it, kept in registers (a Tier-1 local array),
at rows ``ty + 16 r`` and columns ``tx + 16 c`` of the block tile
(``thread.tile_2d_strided(c, 8, 8)``: a warp's stores are coalesced). The
K axis is walked eight columns at a time; per step:

1. fill phase: the block copies ``a[row0:row0+128, k0:k0+8]`` and
   ``b[k0:k0+8, col0:col0+128]`` into two shared tiles of those shapes
   (``thread.block_stride``: every element written by exactly one thread;
   a warp reads two rows x 8 consecutive floats of ``a``, two rows x 16
   consecutive floats of ``b``);
2. ``simtsafe.block.sync()``;
3. read phase: for each of the 8 columns ``kk``, every thread loads its 8
   values ``a_s[ty + 16 r, kk]`` (two addresses per warp: a broadcast) and
   its 8 values ``b_s[kk, tx + 16 c]`` (16 consecutive floats per warp: no
   bank conflict), then does 64 fused multiply-adds;
4. ``simtsafe.block.sync()`` before the next fill.

The same schedule as ``coop_raw.sgemm_raw``. Why 2D tiles and the
``local_index_2d`` coordinates: every tile read is bounds-checked against
the tile's shape, one compare per axis; with the row index ``ty + 16 r``
(``ty`` < 16, known from the contract's block) and the column ``tx + 16 c``
those compares fold away at compile time, leaving one check of ``kk``
per step of the inner loop instead of one per load.

What this schedule does not do (see docs/performance.md): prefetch the next
slices into registers while computing (a shared tile is filled through the
``block_stride`` loop, which stores each value as it arrives), or 128-bit
shared loads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

BM = 128  # block tile rows
BN = 128  # block tile columns
BK = 8  # K step
TM = 8  # micro-tile rows per thread
TN = 8  # micro-tile columns per thread
TX = BN // TN  # 16 threads along x
TY = BM // TM  # 16 threads along y


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=(TX, TY, 1),
        requires=[
            "a.shape[1] == b.shape[0]",
            "c.shape[0] == a.shape[0]",
            "c.shape[1] == b.shape[1]",
        ],
    )
)
def sgemm(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    me = thread.local_index_2d()  # (threadIdx.y, threadIdx.x), each < 16 by the contract
    tx = me.col
    ty = me.row
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    a_s = ss.shared.tile((BM, BK), np.float32)  # a[row0:row0 + 128, k0:k0 + 8]
    b_s = ss.shared.tile((BK, BN), np.float32)  # b[k0:k0 + 8, col0:col0 + 128]
    acc = cuda.local.array((TM, TN), np.float32)  # the 8 x 8 micro-tile, in registers
    af = cuda.local.array(TM, np.float32)
    bf = cuda.local.array(TN, np.float32)
    for r in range(TM):
        for cc in range(TN):
            acc[r, cc] = np.float32(0.0)
    for k0 in range(0, kdim, BK):  # block-uniform trip count
        for w in thread.block_stride(a_s):  # rows ty + 16 i, columns tx (threads with tx < 8)
            gr = row0 + w.row
            gk = k0 + w.col
            a_s[w] = a[gr, gk] if gr < m and gk < kdim else np.float32(0.0)
        for w in thread.block_stride(b_s):  # rows ty (threads with ty < 8), columns tx + 16 j
            gk = k0 + w.row
            gc = col0 + w.col
            b_s[w] = b[gk, gc] if gk < kdim and gc < n else np.float32(0.0)
        ss.block.sync()
        for kk in range(BK):
            for r in range(TM):
                af[r] = a_s[ty + TY * r, kk]
            for cc in range(TN):
                bf[cc] = b_s[kk, tx + TX * cc]
            for r in range(TM):
                for cc in range(TN):
                    acc[r, cc] += af[r] * bf[cc]
        ss.block.sync()
    t = thread.tile_2d_strided(c, TM, TN)  # rows row0 + ty + 16 r, columns col0 + tx + 16 c
    for r in range(TM):
        for cc in range(TN):
            t[r, cc] = acc[r, cc]


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 128 tile of c: (column tiles, row tiles)."""
    return (math.ceil(n / BN), math.ceil(m / BM))


def run(m: int = 300, k: int = 200, n: int = 250) -> bool:
    """c = a @ b for random m x k and k x n matrices; compare with numpy (float64)."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    launch = sgemm.prepare(grid=grid_for(m, n), block=(TX, TY, 1))
    launch(d_c, cuda.to_device(a), cuda.to_device(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-3))


if __name__ == "__main__":
    print("sgemm matches numpy:", run())
