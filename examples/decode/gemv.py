"""The decode step's GEMVs on the GPU: warps on pairs of output rows, the input staged once
per block in shared memory.

A batch-1 GEMV reads each weight once, so its speed is the bytes it keeps in flight. The
schedule here:

* the block first copies its input vector into the dynamic shared tile ``h``
  (``shared.fill_async``), then, where the GEMV has an RMSNorm, folds its weight in
  (``h = x * nw``) in the pass that sums the squares for the scale: the main loop then reads
  only weights from global memory, and the input as ``ld.shared.v4`` runs;
* a pair of output rows is read by ``split`` warps of the block, each taking every
  ``split``-th run of the two rows: each lane reads a batch of ``2 * RUNS`` 16-byte weight
  runs (``RUNS`` of each row) with one ``vec.load_runs``, so that they are all in flight
  together (one ``vec.load`` a run would wait for each before the next), and the two rows
  share every input run it reads; a matrix of few rows takes a larger split, so that every
  multiprocessor gets blocks (``pick_split``);
* the warps' sums meet in shared tiles, and the block writes its rows;
* ``blocks_per_sm`` in the contract bounds the registers so that enough warps are resident.

Every kernel is Tier 1: ``BlockRow`` outputs (the output viewed as ``(blocks, R)``, block
``b`` owns row ``b``), ``In`` inputs, shared tiles each in a fill phase then a read phase.
"""

from __future__ import annotations

import math
import os
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
def _input_run(h, j):  # type: ignore[no-untyped-def]
    """The staged input's run ``j`` (``h[8j : 8j + 8]``) as two runs of 4."""
    return ss.vec.load(h, 2 * j, 4), ss.vec.load(h, 2 * j + 1, 4)


@ss.device
def _pair_dot(a, b, h, j):  # type: ignore[no-untyped-def]
    """Runs ``a`` and ``b`` (8 weights each, two rows) times the input's run ``j``."""
    h0, h1 = _input_run(h, j)
    return _dot(a, h0, h1), _dot(b, h0, h1)


#: Runs of each row a lane keeps in flight (a batch): the pair GEMVs read ``RUNS`` runs of
#: each of their two rows with one ``vec.load_runs`` (``2 * RUNS`` 16-byte loads issued
#: back to back), the SwiGLU GEMV half as many of each of its four rows. 2 or 4; the
#: environment variable is for the benchmark's sweep (scripts/gpu_round.sh ``gemv_runs``).
RUNS = int(os.environ.get("SIMTSAFE_DECODE_RUNS", "2"))
if RUNS not in (2, 4):
    raise ValueError(
        f"SIMTSAFE_DECODE_RUNS must be 2 or 4 (runs of a row a lane reads at once), got {RUNS}"
    )


@ss.device
def _pair_batch(w, r, j, step):  # type: ignore[no-untyped-def]
    """Runs ``j, j + step, ...`` (``RUNS`` of them) of rows ``r`` and ``r + 1``: row
    ``r``'s runs first."""
    if RUNS == 4:
        s2 = 2 * step
        s3 = 3 * step
        return ss.vec.load_runs(
            w,
            (
                (r, j), (r, j + step), (r, j + s2), (r, j + s3),
                (r + 1, j), (r + 1, j + step), (r + 1, j + s2), (r + 1, j + s3),
            ),
            8,
        )  # fmt: skip
    return ss.vec.load_runs(w, ((r, j), (r, j + step), (r + 1, j), (r + 1, j + step)), 8)


@ss.device
def _pair_batch_dot(b, h, j, step):  # type: ignore[no-untyped-def]
    """``_pair_batch``'s runs ``b`` times the input: the two rows' partial sums."""
    a0, b0 = _pair_dot(b[0], b[RUNS], h, j)
    a1, b1 = _pair_dot(b[1], b[RUNS + 1], h, j + step)
    if RUNS == 4:
        a2, b2 = _pair_dot(b[2], b[6], h, j + 2 * step)
        a3, b3 = _pair_dot(b[3], b[7], h, j + 3 * step)
        return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
    return a0 + a1, b0 + b1


@ss.device
def _two_rows(w, ra, h, j, step, first):  # type: ignore[no-untyped-def]
    """The warp's shares of ``W[ra] . h`` and ``W[ra + 1] . h``: the lane's runs ``j, j +
    step, ...`` of the rows, a batch (``_pair_batch``) in flight at a time; ``first`` the
    first batch (``_first_batch``, loaded before ``h`` was staged)."""
    nv = (w.shape[1] + 7) // 8
    acc_a, acc_b = _pair_batch_dot(first, h, j, step)
    j += RUNS * step
    while j < nv:
        b = _pair_batch(w, ra, j, step)
        da, db = _pair_batch_dot(b, h, j, step)
        acc_a += da
        acc_b += db
        j += RUNS * step
    return ss.warp.sum(acc_a), ss.warp.sum(acc_b)


@ss.device
def _quad_batch(w, rows, j, step):  # type: ignore[no-untyped-def]
    """Half a batch of each of the four ``rows``: runs ``j`` (and ``j + step`` when
    ``RUNS`` is 4) of each, row by row."""
    r0, r1, r2, r3 = rows
    if RUNS == 4:
        return ss.vec.load_runs(
            w,
            (
                (r0, j), (r0, j + step), (r1, j), (r1, j + step),
                (r2, j), (r2, j + step), (r3, j), (r3, j + step),
            ),
            8,
        )  # fmt: skip
    return ss.vec.load_runs(w, ((r0, j), (r1, j), (r2, j), (r3, j)), 8)


@ss.device
def _quad_batch_dot(b, h, j, step):  # type: ignore[no-untyped-def]
    """``_quad_batch``'s runs ``b`` times the input: the four rows' partial sums."""
    h0, h1 = _input_run(h, j)
    if RUNS == 4:
        g0, g1 = _input_run(h, j + step)
        return (
            _dot(b[0], h0, h1) + _dot(b[1], g0, g1),
            _dot(b[2], h0, h1) + _dot(b[3], g0, g1),
            _dot(b[4], h0, h1) + _dot(b[5], g0, g1),
            _dot(b[6], h0, h1) + _dot(b[7], g0, g1),
        )
    return _dot(b[0], h0, h1), _dot(b[1], h0, h1), _dot(b[2], h0, h1), _dot(b[3], h0, h1)


@ss.device
def _four_rows(w, rows, h, j, step, first):  # type: ignore[no-untyped-def]
    """``_two_rows`` for the four ``rows``, half a batch of each in flight at a time;
    ``first`` the first (``_quad_batch``, loaded before ``h`` was staged)."""
    nv = (w.shape[1] + 7) // 8
    acc_a, acc_b, acc_c, acc_d = _quad_batch_dot(first, h, j, step)
    j += RUNS // 2 * step
    while j < nv:
        b = _quad_batch(w, rows, j, step)
        da, db, dc, dd = _quad_batch_dot(b, h, j, step)
        acc_a += da
        acc_b += db
        acc_c += dc
        acc_d += dd
        j += RUNS // 2 * step
    return acc_a, acc_b, acc_c, acc_d


@ss.device
def _lane_runs(width, split):  # type: ignore[no-untyped-def]
    """The warp's first output row in a block of ``width`` outputs (``split`` warps a
    pair), this lane's first run and the step between its runs."""
    pairs = width // 2
    wi = ss.warp.broadcast(cuda.threadIdx.x // 32)  # warp-uniform
    r = cuda.blockIdx.x * width + 2 * (wi % pairs)
    return r, cuda.laneid + 32 * (wi // pairs), 32 * split


@ss.device
def _first_batch(w, width, split):  # type: ignore[no-untyped-def]
    """The warp's pair of rows and this lane's runs (``_lane_runs``), and the first batch
    of each row: issued before the block stages its input, they are in flight meanwhile."""
    r, j, step = _lane_runs(width, split)
    return r, j, step, _pair_batch(w, r, j, step)


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
    r, j, step, first = _first_batch(w, y.shape[1], split)
    h = ss.shared.dynamic_tile(np.float32)  # x, copied by cp.async
    ss.shared.fill_async(h, x, 0)
    ss.shared.wait_all()
    ss.block.sync()
    sq = ZERO
    for t in thread.block_stride(h):  # h = x * nw, the squares of x on the way
        v = h[t]
        sq += v * v
        h[t] = v * nw[t.index]
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    pairs = y.shape[1] // 2
    a, b = _two_rows(w, r, h, j, step, first)
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
    n = y.shape[0] * y.shape[1]
    r, j, step = _lane_runs(y.shape[1], split)
    rows = (r, r + 1, n + r, n + r + 1)  # gate pair, up pair
    first = _quad_batch(w, rows, j, step)  # in flight while the block stages x
    h = ss.shared.dynamic_tile(np.float32)  # x, copied by cp.async
    ss.shared.fill_async(h, x, 0)
    ss.shared.wait_all()
    ss.block.sync()
    sq = ZERO
    for t in thread.block_stride(h):  # h = x * nw, the squares of x on the way
        v = h[t]
        sq += v * v
        h[t] = v * nw[t.index]
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    pairs = y.shape[1] // 2
    g0, g1, u0, u1 = _four_rows(w, rows, h, j, step, first)
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
    r, j, step, first = _first_batch(w, y.shape[1], split)
    h = ss.shared.dynamic_tile(np.float32)  # v, copied by cp.async
    ss.shared.fill_async(h, v, 0)
    ss.shared.wait_all()
    ss.block.sync()
    pairs = y.shape[1] // 2
    a, b = _two_rows(w, r, h, j, step, first)
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
    r, j, step, first = _first_batch(w, logits.shape[1], split)
    h = ss.shared.dynamic_tile(np.float32)  # x, copied by cp.async
    ss.shared.fill_async(h, x, 0)
    ss.shared.wait_all()
    ss.block.sync()
    sq = ZERO
    for t in thread.block_stride(h):  # h = x * nw, the squares of x on the way
        v = h[t]
        sq += v * v
        h[t] = v * nw[t.index]
    ss.block.sync()
    scale = _rms_scale(ss.block.sum(sq), x.size, eps)
    pairs = logits.shape[1] // 2
    a, b = _two_rows(w, r, h, j, step, first)
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
