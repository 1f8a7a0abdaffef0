"""Candidate (Tier 1, not yet the decode's): a GEMV whose weights stream through shared memory.

examples/decode/gemv.py reads its weights into registers: a lane keeps one batch of
16-byte runs in flight, and the registers bound how many. Here the block's weight rows go
through a ring of ``STAGES`` shared tiles filled by ``shared.fill_async`` (cp.async:
global to shared, no register holds a weight in flight): ``STAGES - 1`` tiles of ``RB``
rows x ``BK`` columns are in flight while one is read, the GEMM examples' schedule with a
GEMV's shapes. The input is staged once in the dynamic tile, in its own copy group ahead
of the weights'.

Block ``b`` owns the ``RB`` outputs ``b*RB ..`` (``BlockRow``: the output viewed as
``(blocks, RB)``); warp ``w`` sums rows ``2w`` and ``2w + 1`` of each stage: lane ``l``
reads run ``l`` (8 weights, one ``ld.shared.v4``) of both rows and the input's run ``l``
of the stage. The residual GEMV ``y = res + W v`` (o_proj, down) and the normed one
``y = W (x / rms(x) * nw)`` (q|k|v).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, thread

BF16 = ss.bfloat16
F32 = np.float32
ZERO = F32(0.0)

WARPS = 8
BLOCK = 32 * WARPS
RB = 2 * WARPS  # output rows a block: two a warp
BK = 256  # columns a stage: one 16-byte run a lane a row
STAGES = 4
ROUND = STAGES * BK
MAX_STAGED = 49152  # bytes of the staged input (gemv.MAX_STAGED)


@ss.device
def _stage(t, h, k0, r, acc_a, acc_b):  # type: ignore[no-untyped-def]
    """The lane's run of rows ``r`` and ``r + 1`` of stage tile ``t`` (columns ``k0 ..``)
    times the input's run: the two partial sums, added to ``acc_a`` and ``acc_b``."""
    lane = cuda.laneid
    a, b = ss.vec.load_runs(t, ((r, lane), (r + 1, lane)), 8)
    j = k0 // 8 + lane
    h0 = ss.vec.load(h, 2 * j, 4)
    h1 = ss.vec.load(h, 2 * j + 1, 4)
    da = (a[0] * h0[0] + a[1] * h0[1] + a[2] * h0[2] + a[3] * h0[3]) + (
        a[4] * h1[0] + a[5] * h1[1] + a[6] * h1[2] + a[7] * h1[3]
    )
    db = (b[0] * h0[0] + b[1] * h0[1] + b[2] * h0[2] + b[3] * h0[3]) + (
        b[4] * h1[0] + b[5] * h1[1] + b[6] * h1[2] + b[7] * h1[3]
    )
    return acc_a + da, acc_b + db


@ss.device
def _stage_gu(tg, tu, h, k0, r, acc_g, acc_u):  # type: ignore[no-untyped-def]
    """``_stage`` for row ``r`` of the gate tile ``tg`` and of the up tile ``tu``."""
    lane = cuda.laneid
    a = ss.vec.load(tg, (r, lane), 8)
    b = ss.vec.load(tu, (r, lane), 8)
    j = k0 // 8 + lane
    h0 = ss.vec.load(h, 2 * j, 4)
    h1 = ss.vec.load(h, 2 * j + 1, 4)
    da = (a[0] * h0[0] + a[1] * h0[1] + a[2] * h0[2] + a[3] * h0[3]) + (
        a[4] * h1[0] + a[5] * h1[1] + a[6] * h1[2] + a[7] * h1[3]
    )
    db = (b[0] * h0[0] + b[1] * h0[1] + b[2] * h0[2] + b[3] * h0[3]) + (
        b[4] * h1[0] + b[5] * h1[1] + b[6] * h1[2] + b[7] * h1[3]
    )
    return acc_g + da, acc_u + db


def gemv_residual_piped(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    v: In[np.float32],
    res: In2D[np.float32],
) -> None:
    """``y = res + W v``; see the module's docstring."""
    t0 = ss.shared.tile((RB, BK), BF16)
    t1 = ss.shared.tile((RB, BK), BF16)
    t2 = ss.shared.tile((RB, BK), BF16)
    t3 = ss.shared.tile((RB, BK), BF16)
    h = ss.shared.dynamic_tile(np.float32)
    row0 = cuda.blockIdx.x * RB
    r = 2 * ss.warp.broadcast(cuda.threadIdx.x // 32)
    ss.shared.fill_async(h, v, 0)  # the input: a group of its own, the first to land
    ss.shared.commit_group()
    ss.shared.fill_async(t0, w, (row0, 0))
    ss.shared.commit_group()
    ss.shared.fill_async(t1, w, (row0, BK))
    ss.shared.commit_group()
    ss.shared.fill_async(t2, w, (row0, 2 * BK))
    ss.shared.commit_group()
    ss.shared.wait_group(3)  # the input has landed (the three stages may be in flight)
    ss.block.sync()
    acc_a = ZERO
    acc_b = ZERO
    for k0 in range(0, w.shape[1], ROUND):  # three stages in flight while one is read
        ss.shared.wait_group(2)  # stage 0 has landed
        ss.block.sync()
        ss.shared.fill_async(t3, w, (row0, k0 + 3 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t0, h, k0, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t0, w, (row0, k0 + 4 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t1, h, k0 + BK, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t1, w, (row0, k0 + 5 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t2, h, k0 + 2 * BK, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t2, w, (row0, k0 + 6 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t3, h, k0 + 3 * BK, r, acc_a, acc_b)
    ss.shared.wait_all()  # the stages past k's end (zeros) are never read
    pa = ss.shared.tile(BLOCK, np.float32)
    pb = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pa[li] = ss.warp.sum(acc_a)
    pb[li] = ss.warp.sum(acc_b)
    ss.block.sync()
    for wr in thread.block_row(y):
        c = wr.col
        at = 32 * (c // 2)
        y[wr] = res[wr] + (pa[at] if c % 2 == 0 else pb[at])


def gemv_norm_piped(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[np.float32],
    eps: np.float32,
) -> None:
    """``y = W (x / rms(x) * nw)`` (the q|k|v GEMV); see the module's docstring."""
    t0 = ss.shared.tile((RB, BK), BF16)
    t1 = ss.shared.tile((RB, BK), BF16)
    t2 = ss.shared.tile((RB, BK), BF16)
    t3 = ss.shared.tile((RB, BK), BF16)
    h = ss.shared.dynamic_tile(np.float32)
    row0 = cuda.blockIdx.x * RB
    r = 2 * ss.warp.broadcast(cuda.threadIdx.x // 32)
    ss.shared.fill_async(h, x, 0)
    ss.shared.commit_group()
    ss.shared.fill_async(t0, w, (row0, 0))
    ss.shared.commit_group()
    ss.shared.fill_async(t1, w, (row0, BK))
    ss.shared.commit_group()
    ss.shared.fill_async(t2, w, (row0, 2 * BK))
    ss.shared.commit_group()
    ss.shared.wait_group(3)
    ss.block.sync()
    sq = ZERO
    for t in thread.block_stride(h):  # h = x * nw, the squares of x on the way
        v = h[t]
        sq += v * v
        h[t] = v * nw[t.index]
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    acc_a = ZERO
    acc_b = ZERO
    for k0 in range(0, w.shape[1], ROUND):  # three stages in flight while one is read
        ss.shared.wait_group(2)  # stage 0 has landed
        ss.block.sync()
        ss.shared.fill_async(t3, w, (row0, k0 + 3 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t0, h, k0, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t0, w, (row0, k0 + 4 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t1, h, k0 + BK, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t1, w, (row0, k0 + 5 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t2, h, k0 + 2 * BK, r, acc_a, acc_b)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(t2, w, (row0, k0 + 6 * BK))
        ss.shared.commit_group()
        acc_a, acc_b = _stage(t3, h, k0 + 3 * BK, r, acc_a, acc_b)
    ss.shared.wait_all()  # the stages past k's end (zeros) are never read
    pa = ss.shared.tile(BLOCK, np.float32)
    pb = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pa[li] = ss.warp.sum(acc_a)
    pb[li] = ss.warp.sum(acc_b)
    ss.block.sync()
    for wr in thread.block_row(y):
        c = wr.col
        at = 32 * (c // 2)
        y[wr] = (pa[at] if c % 2 == 0 else pb[at]) * scale


def gemv_swiglu_piped(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[np.float32],
    eps: np.float32,
) -> None:
    """``y[i] = silu(g_i) * u_i``, ``g = W[:n] h``, ``u = W[n:] h``, ``h = x / rms(x) * nw``
    (gate|up): block ``b`` owns outputs ``b*WARPS ..``, warp ``w`` sums gate row and up row
    ``w`` of each stage (a stage: a gate tile and an up tile)."""
    g0 = ss.shared.tile((WARPS, BK), BF16)
    g1 = ss.shared.tile((WARPS, BK), BF16)
    g2 = ss.shared.tile((WARPS, BK), BF16)
    g3 = ss.shared.tile((WARPS, BK), BF16)
    u0 = ss.shared.tile((WARPS, BK), BF16)
    u1 = ss.shared.tile((WARPS, BK), BF16)
    u2 = ss.shared.tile((WARPS, BK), BF16)
    u3 = ss.shared.tile((WARPS, BK), BF16)
    h = ss.shared.dynamic_tile(np.float32)
    n = y.shape[0] * y.shape[1]
    row0 = cuda.blockIdx.x * WARPS
    up0 = n + row0
    r = ss.warp.broadcast(cuda.threadIdx.x // 32)
    ss.shared.fill_async(h, x, 0)
    ss.shared.commit_group()
    ss.shared.fill_async(g0, w, (row0, 0))
    ss.shared.fill_async(u0, w, (up0, 0))
    ss.shared.commit_group()
    ss.shared.fill_async(g1, w, (row0, BK))
    ss.shared.fill_async(u1, w, (up0, BK))
    ss.shared.commit_group()
    ss.shared.fill_async(g2, w, (row0, 2 * BK))
    ss.shared.fill_async(u2, w, (up0, 2 * BK))
    ss.shared.commit_group()
    ss.shared.wait_group(3)
    ss.block.sync()
    sq = ZERO
    for t in thread.block_stride(h):  # h = x * nw, the squares of x on the way
        v = h[t]
        sq += v * v
        h[t] = v * nw[t.index]
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    acc_g = ZERO
    acc_u = ZERO
    for k0 in range(0, w.shape[1], ROUND):  # three stages in flight while one is read
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(g3, w, (row0, k0 + 3 * BK))
        ss.shared.fill_async(u3, w, (up0, k0 + 3 * BK))
        ss.shared.commit_group()
        acc_g, acc_u = _stage_gu(g0, u0, h, k0, r, acc_g, acc_u)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(g0, w, (row0, k0 + 4 * BK))
        ss.shared.fill_async(u0, w, (up0, k0 + 4 * BK))
        ss.shared.commit_group()
        acc_g, acc_u = _stage_gu(g1, u1, h, k0 + BK, r, acc_g, acc_u)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(g1, w, (row0, k0 + 5 * BK))
        ss.shared.fill_async(u1, w, (up0, k0 + 5 * BK))
        ss.shared.commit_group()
        acc_g, acc_u = _stage_gu(g2, u2, h, k0 + 2 * BK, r, acc_g, acc_u)
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(g2, w, (row0, k0 + 6 * BK))
        ss.shared.fill_async(u2, w, (up0, k0 + 6 * BK))
        ss.shared.commit_group()
        acc_g, acc_u = _stage_gu(g3, u3, h, k0 + 3 * BK, r, acc_g, acc_u)
    ss.shared.wait_all()
    pg = ss.shared.tile(BLOCK, np.float32)
    pu = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pg[li] = ss.warp.sum(acc_g)
    pu[li] = ss.warp.sum(acc_u)
    ss.block.sync()
    for wr in thread.block_row(y):
        gate = pg[32 * wr.col] * scale
        up = pu[32 * wr.col] * scale
        y[wr] = gate / (F32(1.0) + math.exp(-gate)) * up


@ss.device
def _rms_scale(sq, n, eps):  # type: ignore[no-untyped-def]
    """``1 / sqrt(mean + eps)`` of a sum of ``n`` squares."""
    return F32(1.0) / math.sqrt(sq / F32(n) + eps)


_ROWS = ["y.shape[1] == 16", "y.shape[0] == grid.x", "w.shape[0] == y.shape[0] * y.shape[1]"]
_REQUIRES = {
    "residual": [*_ROWS, "v.size <= w.shape[1]", "res.shape[0] == y.shape[0]",
                 "res.shape[1] == y.shape[1]"],
    "norm": [*_ROWS, "x.size == nw.size", "x.size <= w.shape[1]"],
    "swiglu": ["y.shape[1] == 8", "y.shape[0] == grid.x",
               "w.shape[0] == 2 * y.shape[0] * y.shape[1]", "x.size == nw.size",
               "x.size <= w.shape[1]"],
}  # fmt: skip
_BODIES = {"residual": gemv_residual_piped, "norm": gemv_norm_piped, "swiglu": gemv_swiglu_piped}


def variants(blocks_per_sm: int) -> dict[str, object]:
    """The candidates with their registers bounded for ``blocks_per_sm`` resident blocks."""
    return {
        kind: ss.kernel(
            contract=ss.LaunchContract(
                domain=1,
                block=(BLOCK, 1, 1),
                blocks_per_sm=None if ss.SIMULATOR else blocks_per_sm,
                covers="y",
                requires=_REQUIRES[kind],
                dynamic_shared=(0, MAX_STAGED),
            )
        )(body)
        for kind, body in _BODIES.items()
    }
