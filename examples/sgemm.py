"""Tiled single-precision matrix multiply ``c = a @ b`` (Tier 1: no unsafe code).

Each block of 16 x 16 threads computes a 128 x 128 tile of ``c``; each
thread an 8 x 8 micro-tile of it, kept in registers (Tier-1 local arrays),
at rows ``ty + 16 r`` and columns ``tx + 16 c`` of the block tile
(``thread.tile_2d_strided(c, 8, 8)``: a warp's stores are coalesced). The
K axis is walked eight columns at a time, one step ahead:

1. fill phase: every thread stores the 4 elements of the A slice
   ``a[row0:row0+128, k0:k0+8]`` and the 4 of the B slice
   ``b[k0:k0+8, col0:col0+128]`` that it loaded during the previous step
   (register prefetch) into two shared tiles, through ``thread.block_stride``
   (every element written by exactly one thread). The A slice is stored as a
   (64, 16) tile, two slice rows per tile row, and the B slice as (16, 64),
   so that a 16 x 16 block's ``block_stride`` gives all 256 threads 4
   elements each, and a warp's loads are 4 rows x 8 consecutive floats of
   ``a`` and 2 x 16 of ``b``;
2. ``simtsafe.block.sync()``;
3. the global loads of the next slice are issued into registers (in a
   block-uniform fast path without per-element checks when the whole block
   tile is inside the matrices; else each load is guarded and padded with 0);
4. read phase: for each of the 8 columns ``kk``, every thread loads its 8
   values of A and its 8 of B from shared memory and does 64 fused
   multiply-adds, while the loads of step 3 are in flight;
5. ``simtsafe.block.sync()`` before the next fill.

The loop runs one extra step: the first only loads, the last only computes.
``kk = k & (BK - 1)`` (equal to ``k``) lets the compiler prove every tile
read in range, so the inner loop has no compares. The kernel fits in 128
registers: two blocks per SM.

Measured on an H200 at 4096^3 (``benchmarks/sgemm_variants.py``,
``benchmarks/coop.py``; docs/performance.md): 26.8 TFLOP/s, 54% of cuBLAS's
FP32 SGEMM, against 6.3 TFLOP/s for the previous schedule (a 16 x 16-thread
``block_stride`` fill of (128, 8) and (8, 128) tiles: half the threads idle,
no prefetch, 165 registers, one block per SM).

The raw twin ``coop_raw.sgemm_raw`` has the same schedule. What Tier 1
cannot express here (docs/performance.md): 16-byte-aligned shared tiles for
``ld.shared.v4`` loads, and an A tile stored transposed from coalesced loads
(a tile element is written only by the thread its witness names).
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
FILL = BM * BK // (TX * TY)  # 4: elements of each slice a thread loads per K step
# The (128, 8) A slice is stored as a (64, 16) tile and the (8, 128) B slice as (16, 64).
A_ROWS = BM // 2
A_COLS = 2 * BK
B_ROWS = 2 * BK
B_COLS = BN // 2


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
    me = thread.local_index_2d()
    tx = me.col
    ty = me.row
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    a_s = ss.shared.tile((A_ROWS, A_COLS), np.float32)  # a[row0 + 2 i + j // 8, k0 + j % 8]
    b_s = ss.shared.tile((B_ROWS, B_COLS), np.float32)  # b[k0 + i // 2, col0 + 64 (i % 2) + j]
    acc = cuda.local.array((TM, TN), np.float32)
    af = cuda.local.array(TM, np.float32)
    bf = cuda.local.array(TN, np.float32)
    pa = cuda.local.array(FILL, np.float32)  # the next A elements, in block_stride order
    pb = cuda.local.array(FILL, np.float32)
    for r in range(TM):
        for cc in range(TN):
            acc[r, cc] = np.float32(0.0)
    # This thread's fill elements (block_stride order): a_s rows ty + 16 i, column tx;
    # b_s row ty, columns tx + 16 j.
    ar = row0 + 2 * ty + tx // BK  # + 32 i
    ak = tx % BK
    bk = ty // 2
    bc = col0 + BN // 2 * (ty % 2) + tx  # + 16 j
    inside = row0 + BM <= m and col0 + BN <= n
    for k0 in range(0, kdim + BK, BK):  # one extra step: the first only loads
        if k0 > 0:
            j = 0
            for w in thread.block_stride(a_s):
                a_s[w] = pa[j]
                j += 1
            j = 0
            for w in thread.block_stride(b_s):
                b_s[w] = pb[j]
                j += 1
        ss.block.sync()
        if k0 < kdim:  # load the slice at k0 (stored at the next step)
            if inside and k0 + BK <= kdim:
                for i in range(FILL):
                    pa[i] = a[ar + 32 * i, k0 + ak]
                for i in range(FILL):
                    pb[i] = b[k0 + bk, bc + 16 * i]
            else:
                for i in range(FILL):
                    gr = ar + 32 * i
                    gk = k0 + ak
                    pa[i] = a[gr, gk] if gr < m and gk < kdim else np.float32(0.0)
                for i in range(FILL):
                    gk = k0 + bk
                    gc = bc + 16 * i
                    pb[i] = b[gk, gc] if gk < kdim and gc < n else np.float32(0.0)
        if k0 > 0:
            for k in range(BK):
                kk = k & (BK - 1)  # == k; lets the compiler drop the tiles' bounds checks
                for r in range(TM):
                    af[r] = a_s[ty // 2 + 8 * r, BK * (ty % 2) + kk]  # a row ty + 16 r
                for cc in range(TN):
                    bf[cc] = b_s[2 * kk + cc // 4, tx + 16 * (cc % 4)]  # b column tx + 16 cc
                for r in range(TM):
                    for cc in range(TN):
                        acc[r, cc] += af[r] * bf[cc]
        ss.block.sync()
    t = thread.tile_2d_strided(c, TM, TN)
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
