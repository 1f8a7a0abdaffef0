"""The decode step's GEMVs on the GPU: warps on pairs of output rows, the input staged once
per block in shared memory.

A batch-1 GEMV reads each weight once, so its speed is the bytes it keeps in flight. The
schedule here:

* the block first stages its input vector in a dynamic shared tile (``h``), fused with the
  RMSNorm where the GEMV has one (``h = x * nw``, the block's sum of squares gives the
  scale): the main loop then reads only weights from global memory, and the input as
  ``ld.shared.v4`` runs;
* a pair of output rows is read by ``split`` warps of the block, each taking every
  ``split``-th run of the two rows: each lane keeps four 16-byte weight loads in flight (two
  runs of each row), and the two rows share every input run it reads; a matrix of few rows
  takes a larger split, so that every multiprocessor gets blocks (``pick_split``);
* the warps' sums meet in shared tiles, and the block writes its rows;
* ``blocks_per_sm`` in the contract bounds the registers so that enough warps are resident.

Every kernel is Tier 1: ``BlockRow`` outputs (the output viewed as ``(blocks, R)``, block
``b`` owns row ``b``), ``In`` inputs, shared tiles each in a fill phase then a read phase.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, PerBlock, thread

BF16 = ss.bfloat16
F32 = np.float32
ZERO = F32(0.0)
NEG_INF = F32(-np.inf)
NO_INDEX = np.int32(2**31 - 1)

#: Threads per block (8 warps: 16 rows per block).
BLOCK = 64 if ss.SIMULATOR else 256
#: Output rows per warp.
ROWS = 2
#: Blocks of BLOCK threads resident per multiprocessor the registers are bounded for.
BLOCKS_PER_SM = 3
#: Bytes of the staged input: up to 12288 float32 (the intermediate size of the shapes here
#: is at most 9728).
MAX_STAGED = 49152


@ss.device
def _dot(a, b0, b1):  # type: ignore[no-untyped-def]
    """Dot product of a run of 8 (``a``) with two runs of 4 (``b0``, ``b1``), float32."""
    return (a[0] * b0[0] + a[1] * b0[1] + a[2] * b0[2] + a[3] * b0[3]) + (
        a[4] * b1[0] + a[5] * b1[1] + a[6] * b1[2] + a[7] * b1[3]
    )


@ss.device
def _two_rows(w, ra, rb, h, j0, step):  # type: ignore[no-untyped-def]
    """This lane's shares of ``W[ra] . h`` and ``W[rb] . h``: runs ``j0, j0 + step, ...`` of
    the rows, two runs of each row (four 16-byte loads) in flight per iteration; ``h`` a
    shared tile (runs past its end read 0)."""
    nv = (w.shape[1] + 7) // 8
    acc_a = ZERO
    acc_b = ZERO
    j = j0
    while j < nv:
        j1 = j + step
        a0 = ss.vec.load(w, (ra, j), 8)
        a1 = ss.vec.load(w, (ra, j1), 8)
        b0 = ss.vec.load(w, (rb, j), 8)
        b1 = ss.vec.load(w, (rb, j1), 8)
        h0 = ss.vec.load(h, 2 * j, 4)
        h1 = ss.vec.load(h, 2 * j + 1, 4)
        h2 = ss.vec.load(h, 2 * j1, 4)
        h3 = ss.vec.load(h, 2 * j1 + 1, 4)
        acc_a += _dot(a0, h0, h1) + _dot(a1, h2, h3)
        acc_b += _dot(b0, h0, h1) + _dot(b1, h2, h3)
        j = j1 + step
    return acc_a, acc_b


@ss.device
def _four_rows(w, ra, rb, rc, rd, h, j0, step):  # type: ignore[no-untyped-def]
    """``_two_rows`` for four rows, one run of each in flight per iteration."""
    nv = (w.shape[1] + 7) // 8
    acc_a = ZERO
    acc_b = ZERO
    acc_c = ZERO
    acc_d = ZERO
    j = j0
    while j < nv:
        a = ss.vec.load(w, (ra, j), 8)
        b = ss.vec.load(w, (rb, j), 8)
        c = ss.vec.load(w, (rc, j), 8)
        d = ss.vec.load(w, (rd, j), 8)
        h0 = ss.vec.load(h, 2 * j, 4)
        h1 = ss.vec.load(h, 2 * j + 1, 4)
        acc_a += _dot(a, h0, h1)
        acc_b += _dot(b, h0, h1)
        acc_c += _dot(c, h0, h1)
        acc_d += _dot(d, h0, h1)
        j += step
    return acc_a, acc_b, acc_c, acc_d


@ss.device
def _pair(w, h, width, split):  # type: ignore[no-untyped-def]
    """The warp's sums over its runs of its pair of rows, in a block that owns ``width``
    outputs (``split`` warps a pair)."""
    pairs = width // 2
    wi = ss.warp.broadcast(cuda.threadIdx.x // 32)  # warp-uniform
    r = cuda.blockIdx.x * width + 2 * (wi % pairs)
    a, b = _two_rows(w, r, r + 1, h, cuda.laneid + 32 * (wi // pairs), 32 * split)
    return ss.warp.sum(a), ss.warp.sum(b)


@ss.device
def _rms_scale(sq, n, eps):  # type: ignore[no-untyped-def]
    """``1 / sqrt(mean + eps)`` of a sum of ``n`` squares."""
    return F32(1.0) / math.sqrt(sq / F32(n) + eps)


@ss.device
def _silu_mul(gate, up):  # type: ignore[no-untyped-def]
    return gate / (F32(1.0) + math.exp(-gate)) * up


@ss.device
def _gather(pa, pb, col, pairs, split):  # type: ignore[no-untyped-def]
    """The sum over the ``split`` warps of output ``col``'s pair of their warp sums (lane
    0's copy in ``pa`` for the pair's first row, ``pb`` for its second)."""
    p = col // 2
    total = ZERO
    for s in range(split):
        at = 32 * (s * pairs + p)
        total += pa[at] if col % 2 == 0 else pb[at]
    return total


#: Every kernel: ``R * split`` outputs a block is two a warp (``16 R split == block.x``), a
#: row of the output view a block. ``R >= 2``: a pair of rows at least (``R = 1`` with
#: ``split = 2 * warps`` satisfies the product, but its ``pairs = 0`` divides by zero and
#: every warp sums the same runs: attack round 9); with a block of a power of two threads
#: ``R`` is then even and ``split`` at most the warps.
_REQ_SPLIT = ["16 * y.shape[1] * split == block.x", "y.shape[0] == grid.x", "y.shape[1] >= 2"]
#: The weight rows are the outputs (rows past ``w``'s end would read 0: a silent zero).
_REQ_ROWS = ["w.shape[0] == y.shape[0] * y.shape[1]"]
_REQ_NORM = ["x.size == nw.size", "x.size <= w.shape[1]", *_REQ_SPLIT, *_REQ_ROWS]


def _contract(covers: str, requires: list[str], blocks_per_sm: int = BLOCKS_PER_SM) -> Any:
    return ss.LaunchContract(
        domain=1,
        block=(BLOCK, 1, 1),
        blocks_per_sm=None if ss.SIMULATOR else blocks_per_sm,
        covers=covers,
        requires=requires,
        dynamic_shared=(0, MAX_STAGED),
    )


def gemv_norm(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[np.float32],
    eps: np.float32,
    split: int,
) -> None:
    """``y = W (x / rms(x) * nw)``, ``y`` viewed as ``(blocks, R)``: block ``b`` owns rows
    ``b*R .. b*R + R - 1``, ``R = 2 * warps / split``; ``split`` warps share each pair of
    rows, each taking every ``split``-th run of them."""
    h = ss.shared.dynamic_tile(np.float32)  # filled here: a helper only reads a tile
    sq = ZERO
    for t in thread.block_stride(h):
        v = x[t.index] if t.index < x.size else ZERO
        sq += v * v
        h[t] = v * nw[t.index] if t.index < x.size else ZERO
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    pairs = y.shape[1] // 2
    a, b = _pair(w, h, y.shape[1], split)
    pa = ss.shared.tile(BLOCK, np.float32)
    pb = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pa[li] = a
    pb[li] = b
    ss.block.sync()
    for wr in thread.block_row(y):
        y[wr] = _gather(pa, pb, wr.col, pairs, split) * scale


def gemv_swiglu(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[np.float32],
    eps: np.float32,
    split: int,
) -> None:
    """``y[i] = silu(g_i) * u_i``, ``g = W[:n] h``, ``u = W[n:] h``, ``h = x / rms(x) * nw``,
    ``n = y.size``, ``y`` viewed as ``(blocks, R)`` as in ``gemv_norm``: the warps of a
    pair of outputs read their four rows."""
    h = ss.shared.dynamic_tile(np.float32)  # filled here: a helper only reads a tile
    sq = ZERO
    for t in thread.block_stride(h):
        v = x[t.index] if t.index < x.size else ZERO
        sq += v * v
        h[t] = v * nw[t.index] if t.index < x.size else ZERO
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    n = y.shape[0] * y.shape[1]
    pairs = y.shape[1] // 2
    wi = ss.warp.broadcast(cuda.threadIdx.x // 32)
    r = cuda.blockIdx.x * y.shape[1] + 2 * (wi % pairs)
    j0 = cuda.laneid + 32 * (wi // pairs)
    g0, g1, u0, u1 = _four_rows(w, r, r + 1, n + r, n + r + 1, h, j0, 32 * split)
    pg0 = ss.shared.tile(BLOCK, np.float32)
    pg1 = ss.shared.tile(BLOCK, np.float32)
    pu0 = ss.shared.tile(BLOCK, np.float32)
    pu1 = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pg0[li] = ss.warp.sum(g0)
    pg1[li] = ss.warp.sum(g1)
    pu0[li] = ss.warp.sum(u0)
    pu1[li] = ss.warp.sum(u1)
    ss.block.sync()
    for wr in thread.block_row(y):
        gate = _gather(pg0, pg1, wr.col, pairs, split) * scale
        up = _gather(pu0, pu1, wr.col, pairs, split) * scale
        y[wr] = _silu_mul(gate, up)


def gemv_residual(
    y: DisjointSlice[np.float32, BlockRow],
    w: In2D[BF16],
    v: In[np.float32],
    res: In2D[np.float32],
    split: int,
) -> None:
    """``y = res + W v``, ``y`` and ``res`` viewed as ``(blocks, R)`` as in ``gemv_norm``;
    ``v`` staged in shared memory."""
    h = ss.shared.dynamic_tile(np.float32)
    for t in thread.block_stride(h):
        h[t] = v[t.index] if t.index < v.size else ZERO
    ss.block.sync()
    pairs = y.shape[1] // 2
    a, b = _pair(w, h, y.shape[1], split)
    pa = ss.shared.tile(BLOCK, np.float32)
    pb = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pa[li] = a
    pb[li] = b
    ss.block.sync()
    for wr in thread.block_row(y):
        y[wr] = res[wr] + _gather(pa, pb, wr.col, pairs, split)


def lm_head(
    logits: DisjointSlice[np.float32, BlockRow],
    bval: DisjointSlice[np.float32, PerBlock],
    bidx: DisjointSlice[np.int32, PerBlock],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[np.float32],
    eps: np.float32,
    split: int,
) -> None:
    """Logits ``W (x / rms(x) * nw)`` (``logits`` viewed as ``(blocks, R)`` as in
    ``gemv_norm``), and stage 1 of the argmax: each block's largest logit and its first row."""
    h = ss.shared.dynamic_tile(np.float32)  # filled here: a helper only reads a tile
    sq = ZERO
    for t in thread.block_stride(h):
        v = x[t.index] if t.index < x.size else ZERO
        sq += v * v
        h[t] = v * nw[t.index] if t.index < x.size else ZERO
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    pairs = logits.shape[1] // 2
    a, b = _pair(w, h, logits.shape[1], split)
    pa = ss.shared.tile(BLOCK, np.float32)
    pb = ss.shared.tile(BLOCK, np.float32)
    li = thread.local_index()
    pa[li] = a
    pb[li] = b
    ss.block.sync()
    best = NEG_INF
    row = NO_INDEX
    for wr in thread.block_row(logits):
        v = _gather(pa, pb, wr.col, pairs, split) * scale
        logits[wr] = v
        i = cuda.blockIdx.x * logits.shape[1] + wr.col
        if i < w.shape[0] and v > best:
            best = v
            row = np.int32(i)
    m = ss.block.max(best)
    first = ss.block.min(row if best == m else NO_INDEX)
    lb = thread.block_leader()
    bval[lb] = m
    bidx[lb] = first


#: Gate rows, then as many up rows.
_REQ_SWIGLU = [*_REQ_NORM[:2], *_REQ_SPLIT, "w.shape[0] == 2 * y.shape[0] * y.shape[1]"]
_REQ_RESIDUAL = [
    "v.size <= w.shape[1]",
    "res.shape[0] == y.shape[0]",
    "res.shape[1] == y.shape[1]",
    *_REQ_SPLIT,
    *_REQ_ROWS,
]
#: The logits may run past the vocabulary (those rows are 0 and never the argmax), not
#: short of it; one (max, row) per block, all of which ``kernels.finish`` reads.
_REQ_HEAD = [
    *_REQ_NORM[:2],
    *[r.replace("y.", "logits.") for r in _REQ_SPLIT],
    "w.shape[0] <= logits.shape[0] * logits.shape[1]",
    "bval.size == grid.x",
    "bidx.size == grid.x",
]


_BODIES = {
    "norm": (gemv_norm, "y", _REQ_NORM),
    "swiglu": (gemv_swiglu, "y", _REQ_SWIGLU),
    "residual": (gemv_residual, "y", _REQ_RESIDUAL),
    "lm_head": (lm_head, "logits", _REQ_HEAD),
}


def variants(blocks_per_sm: int) -> dict[str, Any]:
    """The four kernels with their registers bounded for ``blocks_per_sm`` resident blocks
    (benchmarks/decode_gemv.py sweeps it; the module's names take ``BLOCKS_PER_SM``)."""
    return {
        kind: ss.kernel(contract=_contract(covers, requires, blocks_per_sm))(body)
        for kind, (body, covers, requires) in _BODIES.items()
    }


_DEFAULT = variants(BLOCKS_PER_SM)
gemv_norm = _DEFAULT["norm"]  # noqa: F811 (the kernel of the body above)
gemv_swiglu = _DEFAULT["swiglu"]  # noqa: F811
gemv_residual = _DEFAULT["residual"]  # noqa: F811
lm_head = _DEFAULT["lm_head"]  # noqa: F811


#: Warps per block.
WARPS = BLOCK // 32
#: The splits a kernel takes: warps per pair of outputs.
SPLITS = tuple(k for k in (1, 2, 4, 8) if k <= WARPS)
#: Blocks the split aims at: about two a multiprocessor of an H200 (132). Measured
#: (benchmarks/results/decode_gemv.md, every split of the 0.6B and 4B GEMVs): the least
#: split giving 256 blocks was the fastest split of each of the ten shapes; more warps a row
#: cost more than the occupancy they add.
TARGET_BLOCKS = 256


def pick_split(outputs: int) -> int:
    """The split for ``outputs`` rows: the least that gives ``TARGET_BLOCKS`` blocks (fewer
    rows: more warps a row), and that divides the rows into whole blocks."""
    for k in SPLITS:
        per = 2 * WARPS // k
        if outputs % per == 0 and (outputs // per >= TARGET_BLOCKS or k == SPLITS[-1]):
            return k
    return SPLITS[-1]


def rows_per_block(split: int) -> int:
    """Outputs a block owns at a split."""
    return 2 * WARPS // split


def grid(outputs: int, split: int) -> int:
    """Blocks for ``outputs`` rows at ``split`` (``outputs`` a multiple of the block's rows)."""
    per = rows_per_block(split)
    if outputs % per:
        raise ValueError(f"{outputs} outputs are not whole blocks of {per} (split {split})")
    return outputs // per
