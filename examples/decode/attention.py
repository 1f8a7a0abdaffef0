"""Decode attention on the GPU: the q/k RMSNorm and RoPE, then a warp per cached position,
its lanes over the head's dimensions, an online softmax per warp, the block's warps merged
in a shared tile.

Block ``b`` takes KV head ``kh = b % kv_heads`` over chunk ``c = b // kv_heads`` of the
positions ``0 .. pos`` (``pos`` read on the device), for the ``group`` query heads of ``kh``
(at most ``GMAX``). The grid has a fixed number of chunk slots (``grid.x // kv_heads``); the
chunk length grows with the position (``chunk_len``: at least ``CHUNK``, else the positions
spread over all the slots), so that one grid (one CUDA graph) keeps every block busy at a
long context and leaves all but the first chunk idle at a short one.

The block first makes its inputs from the q|k|v GEMV's output: one block reduction of the
query heads' and the KV head's squares (a tuple state), then the query heads RMS-normed and
rotated (rotate-half RoPE at ``pos``) into the shared tile ``qt``, and K (normed, rotated)
and V at ``pos`` into the bf16 tile ``kvt``: the values the caches will hold. The block
holding ``pos`` attends it from ``kvt``; chunk 0's blocks write ``kvt`` to ``kvn``, which
the output projection (``gemv.gemv_residual_append``) appends to the caches (the caches are
this kernel's inputs: a launch does not write what it reads).

Lane ``l`` holds the dimensions ``4l .. 4l + 3`` of each query head (``hdp <= 128``). Warp
``w`` takes the chunk's cached positions ``w, w + WARPS, ...``, four in flight per
iteration: each lane reads the four positions' 8-byte runs of K with one ``vec.load_runs``
(the loads in flight together), then those of V; the warp's last one to four positions (a
short context's only ones) are one batch whose positions past the end read the last row
again and are left out of the state. The scores come from ``ss.warp.sum`` of the lanes'
partial dot products, and each head keeps a running maximum, exp-sum and weighted V
(flash-decoding's online softmax). The warps' states meet in a shared tile; the block writes
its row of ``opart`` (each head's output normalized by the chunk's exp-sum) and of ``ml``
(the chunk's maximum and exp-sum per head), which ``kernels.combine`` merges across chunks.

Ownership: ``opart``, ``ml`` and ``kvn`` are ``BlockRow`` outputs (block ``b`` owns row
``b``; ``kvn`` has a row per KV head, written by chunk 0); the shared tiles are written
through ``block_stride`` (thread ``t`` owns elements ``t, t + BLOCK, ...``) before a
barrier and read after it.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, thread

from .gemv import _rms_scale

BF16 = ss.bfloat16
F32 = np.float32
ZERO = F32(0.0)
NEG_INF = F32(-np.inf)

#: Warps per block (the environment variable is for the benchmark's sweep).
WARPS = int(os.environ.get("SIMTSAFE_DECODE_ATTN_WARPS", "4"))
#: The least positions a block takes (a chunk at a short context).
CHUNK = 16 if ss.SIMULATOR else 32
#: Chunk slots of the grid (``Decoder`` takes at most this many): blocks per KV head. The
#: simulator's two slots make a context past ``2 * CHUNK`` take longer chunks. The
#: environment variable is for the benchmark's sweep.
SLOTS = 2 if ss.SIMULATOR else int(os.environ.get("SIMTSAFE_DECODE_SLOTS", "32"))
#: A chunk's length is a multiple of this: the warps' four positions in flight each.
_CHUNK_STEP = 4 * WARPS
#: Query heads per KV head one launch takes: a power of two (the merge masks a head number
#: with ``GMAX - 1``).
GMAX = 4
if GMAX & (GMAX - 1):
    raise ValueError(f"GMAX must be a power of two, got {GMAX}")
#: Rows of the merge tile: 4 accumulator elements per head, then the maxima, then the sums.
_MROW = 4 * GMAX
_LROW = 5 * GMAX
_TROWS = 6 * GMAX
#: Threads per block.
BLOCK = 32 * WARPS

_Z4 = (ZERO, ZERO, ZERO, ZERO)
_S0 = (NEG_INF, ZERO, ZERO, ZERO, ZERO, ZERO)


@ss.device
def chunk_len(p, slots):  # type: ignore[no-untyped-def]
    """Positions of a chunk when ``0 .. p`` spread over ``slots`` chunks: at least ``CHUNK``,
    a multiple of ``_CHUNK_STEP``, and ``slots * chunk_len > p`` (every position in a slot).
    A grid of fewer blocks than KV heads has no whole slot: it counts as one."""
    slots = max(slots, 1)
    per = (p + slots) // slots  # ceil((p + 1) / slots)
    per = (per + _CHUNK_STEP - 1) // _CHUNK_STEP * _CHUNK_STEP
    return max(per, CHUNK)


@ss.device
def _dot4(a, b):  # type: ignore[no-untyped-def]
    return (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])


@ss.device
def _update(st, s, v):  # type: ignore[no-untyped-def]
    """The online-softmax state ``(max, exp-sum, a0..a3)`` after one more position of score
    ``s`` and V run ``v`` (a score of -inf after a finite one changes nothing)."""
    m = max(st[0], s)
    c = math.exp(st[0] - m)
    e = math.exp(s - m)
    return (
        m,
        st[1] * c + e,
        st[2] * c + e * v[0],
        st[3] * c + e * v[1],
        st[4] * c + e * v[2],
        st[5] * c + e * v[3],
    )


@ss.device
def _head(st, qh, ks, vs, scale, m):  # type: ignore[no-untyped-def]
    """One head's state after the first ``m`` (1..4) of a batch's four positions (K runs
    ``ks``, V runs ``vs``); a whole iteration passes 4. Every score is computed (the runs
    were read at positions in range, the four sums in flight together), those past ``m``
    are left out of the state."""
    k0, k1, k2, k3 = ks
    v0, v1, v2, v3 = vs
    s0 = ss.warp.sum(_dot4(qh, k0)) * scale
    s1 = ss.warp.sum(_dot4(qh, k1)) * scale
    s2 = ss.warp.sum(_dot4(qh, k2)) * scale
    s3 = ss.warp.sum(_dot4(qh, k3)) * scale
    st = _update(st, s0, v0)
    if m > 1:
        st = _update(st, s1, v1)
    if m > 2:
        st = _update(st, s2, v2)
    if m > 3:
        st = _update(st, s3, v3)
    return st


@ss.device
def _heads(sts, qs, ks, vs, scale, ng, m):  # type: ignore[no-untyped-def]
    """The launch's ``ng`` heads' states (``sts``, queries ``qs``) after a batch."""
    st0, st1, st2, st3 = sts
    st0 = _head(st0, qs[0], ks, vs, scale, m)
    if ng > 1:
        st1 = _head(st1, qs[1], ks, vs, scale, m)
    if ng > 2:
        st2 = _head(st2, qs[2], ks, vs, scale, m)
    if ng > 3:
        st3 = _head(st3, qs[3], ks, vs, scale, m)
    return st0, st1, st2, st3


@ss.device
def _head1(st, qh, k, v, scale):  # type: ignore[no-untyped-def]
    """One head's state after one more position."""
    return _update(st, ss.warp.sum(_dot4(qh, k)) * scale, v)


@ss.device
def _heads1(sts, qs, k, v, scale, ng):  # type: ignore[no-untyped-def]
    """The launch's ``ng`` heads' states after one more position."""
    st0, st1, st2, st3 = sts
    st0 = _head1(st0, qs[0], k, v, scale)
    if ng > 1:
        st1 = _head1(st1, qs[1], k, v, scale)
    if ng > 2:
        st2 = _head1(st2, qs[2], k, v, scale)
    if ng > 3:
        st3 = _head1(st3, qs[3], k, v, scale)
    return st0, st1, st2, st3


@ss.device
def _idle_zero(runs, act):  # type: ignore[no-untyped-def]
    """Four runs, each 0 in a lane past the head (``act`` false: it read another head's
    columns)."""
    r0, r1, r2, r3 = runs
    return (
        r0 if act else _Z4,
        r1 if act else _Z4,
        r2 if act else _Z4,
        r3 if act else _Z4,
    )


@ss.device
def _pick4(t0, t1, t2, t3, i):  # type: ignore[no-untyped-def]
    """``(t0, t1, t2, t3)[i]`` by comparisons (0 past the end)."""
    if i == 0:
        return t0
    if i == 1:
        return t1
    if i == 2:
        return t2
    if i == 3:
        return t3
    return ZERO


@ss.device
def _elem(st, e):  # type: ignore[no-untyped-def]
    """Accumulator element ``e`` (0..3) of a state."""
    return _pick4(st[2], st[3], st[4], st[5], e)


@ss.device
def _add5(a, b):  # type: ignore[no-untyped-def]
    """Field-wise sum of two 5-number states (the block's sums of squares)."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])


@ss.device
def _head_sq(qkv, at, d, hd):  # type: ignore[no-untyped-def]
    """The square of element ``d`` of the head at ``qkv[at:]`` (0 past ``hd``)."""
    x = qkv[at + d] if d < hd else ZERO
    return x * x


@ss.device
def _normed_roped(qkv, at, nw, inv, p, d, hd, scale):  # type: ignore[no-untyped-def]
    """Element ``d`` of the head at ``qkv[at:]`` RMS-normed (``scale``, weights ``nw``) and
    rotated (rotate-half RoPE at position ``p``); 0 past ``hd``."""
    if d >= hd:
        return ZERO
    half = hd // 2
    partner = d + half if d < half else d - half
    ang = F32(p) * inv[d % half]
    own = qkv[at + d] * scale * nw[d]
    other = qkv[at + partner] * scale * nw[partner]
    rot = -other if d < half else other
    return own * math.cos(ang) + rot * math.sin(ang)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        block=(BLOCK, 1, 1),
        requires=[
            "pos.size == 1",
            "vc.shape[0] == kc.shape[0]",
            "vc.shape[1] == kc.shape[1]",
            "ml.shape[0] == opart.shape[0]",
            "ml.shape[1] == 2 * group",
            "opart.shape[1] * kv_heads == group * kc.shape[1]",
            "opart.shape[0] == grid.x",
            "qkv.size == (group + 2) * kv_heads * hd",
            "qn.size == hd",
            "kn.size == hd",
            "2 * inv.size == hd",
            "kvn.shape[0] == kv_heads",
            "kvn.shape[1] == 2 * hdp",
            "hd <= hdp",
            "hdp <= 128",
            "kc.shape[1] == kv_heads * hdp",
            "g0 < group",
            # attack round 9: a negative head offset (shifted heads) or no KV head (an
            # empty cache, b % 0) satisfied the relations above; the model never launches
            # them
            "0 <= g0",
            "kv_heads >= 1",
            "hdp >= 4",
        ],
    )
)
def attention(
    opart: DisjointSlice[np.float32, BlockRow],
    ml: DisjointSlice[np.float32, BlockRow],
    kvn: DisjointSlice[BF16, BlockRow],
    qkv: In[np.float32],
    qn: In[np.float32],
    kn: In[np.float32],
    inv: In[np.float32],
    kc: In2D[BF16],
    vc: In2D[BF16],
    pos: In[np.int32],
    kv_heads: int,
    group: int,
    hd: int,
    hdp: int,
    g0: int,
    scale: np.float32,
    eps: np.float32,
) -> None:
    """See the module's docstring; query heads ``kh*group + g0 .. + GMAX`` of the group."""
    b = cuda.blockIdx.x
    lane = cuda.laneid
    wid = ss.warp.broadcast(cuda.threadIdx.x // 32)  # the warp-uniform warp number
    p = pos[0]
    kh = b % kv_heads
    length = chunk_len(p, cuda.gridDim.x // kv_heads)
    start = (b // kv_heads) * length
    if start > p:
        return  # the whole block: this chunk is past the position
    n = min(length, p + 1 - start)  # positions of this chunk to attend, ``p`` the last if held
    held = start + n == p + 1  # this chunk holds ``p``: its K and V come from ``kvt``
    nc = n - 1 if held else n  # positions read from the caches
    ng = min(GMAX, group - g0)  # query heads of this launch
    nr = hdp // 4  # runs of 4 per head row
    act = lane < nr
    col = kh * nr + lane  # this lane's run of the cache rows
    # -- the launch's query heads and KV head ``kh`` at ``p``: the heads' sums of squares
    # (one block reduction), then q normed and roped into ``qt``, K normed and roped and V
    # into ``kvt`` (bf16: the values the caches will hold)
    heads = kv_heads * group
    qa = (kh * group + g0) * hd  # head g0's first element in ``qkv``
    ka = (heads + kh) * hd
    va = (heads + kv_heads + kh) * hd
    sq = (ZERO, ZERO, ZERO, ZERO, ZERO)
    for d in range(cuda.threadIdx.x, hdp, BLOCK):
        sq = (
            sq[0] + _head_sq(qkv, qa, d, hd),
            sq[1] + (_head_sq(qkv, qa + hd, d, hd) if ng > 1 else ZERO),
            sq[2] + (_head_sq(qkv, qa + 2 * hd, d, hd) if ng > 2 else ZERO),
            sq[3] + (_head_sq(qkv, qa + 3 * hd, d, hd) if ng > 3 else ZERO),
            sq[4] + _head_sq(qkv, ka, d, hd),
        )
    sq = ss.block.reduce(sq, _add5)
    qt = ss.shared.tile((GMAX, 128), np.float32)
    for w in thread.block_stride(qt):
        g = w.row
        qs = _rms_scale(_pick4(sq[0], sq[1], sq[2], sq[3], g), hd, eps)
        qt[w] = _normed_roped(qkv, qa + g * hd, qn, inv, p, w.col, hd, qs) if g < ng else ZERO
    kvt = ss.shared.tile((2, 128), BF16)
    ks = _rms_scale(sq[4], hd, eps)
    for w in thread.block_stride(kvt):
        d = w.col
        if w.row == 0:
            kvt[w] = _normed_roped(qkv, ka, kn, inv, p, d, hd, ks)
        else:
            kvt[w] = qkv[va + d] if d < hd else ZERO
    ss.block.sync()
    if b < kv_heads:  # chunk 0 (every position holds one): K and V at ``p`` for the append
        for w in thread.block_row(kvn):
            c = w.col
            kvn[w] = kvt[0, c] if c < hdp else kvt[1, c - hdp]
    # the four heads' runs in flight together (heads past ``ng`` are 0 and never used)
    qs = ss.vec.load_runs(qt, ((0, lane), (1, lane), (2, lane), (3, lane)), 4)
    sts = (_S0, _S0, _S0, _S0)
    j = wid
    while j + 3 * WARPS < nc:  # whole iterations: the warp's next four positions
        r = start + j
        # the four positions' K runs in flight together, then their V runs (one vec.load
        # each would wait for each run before issuing the next)
        runs = ((r, col), (r + WARPS, col), (r + 2 * WARPS, col), (r + 3 * WARPS, col))
        ks = _idle_zero(ss.vec.load_runs(kc, runs, 4), act)
        vs = _idle_zero(ss.vec.load_runs(vc, runs, 4), act)
        sts = _heads(sts, qs, ks, vs, scale, ng, 4)
        j += 4 * WARPS
    if j < nc:  # one to four cached positions left: one batch, the positions past ``nc`` masked
        nb = (nc - j + WARPS - 1) // WARPS  # positions of this batch to attend (1..4)
        last = start + nc - 1  # a masked position reads this row again (in range, finite)
        runs = (
            (start + j, col),
            (min(start + j + WARPS, last), col),
            (min(start + j + 2 * WARPS, last), col),
            (min(start + j + 3 * WARPS, last), col),
        )
        ks = _idle_zero(ss.vec.load_runs(kc, runs, 4), act)
        vs = _idle_zero(ss.vec.load_runs(vc, runs, 4), act)
        sts = _heads(sts, qs, ks, vs, scale, ng, nb)
    if held and wid == nc % WARPS:  # position ``p``, by the warp whose turn it is
        k = ss.vec.load(kvt, (0, lane), 4)  # lanes past ``nr`` read the zero padding
        v = ss.vec.load(kvt, (1, lane), 4)
        sts = _heads1(sts, qs, k, v, scale, ng)
    st0, st1, st2, st3 = sts
    # -- the warps' states meet: mt[4g + e, t] element e of head g of thread t's run,
    # mt[_MROW + g, t] and mt[_LROW + g, t] its warp's maximum and exp-sum of head g
    mt = ss.shared.tile((_TROWS, BLOCK), np.float32)
    for w in thread.block_stride(mt):
        row = w.row
        g = row // 4 if row < _MROW else (row - _MROW) % GMAX
        st = st0
        if g == 1:
            st = st1
        elif g == 2:
            st = st2
        elif g == 3:
            st = st3
        if row < _MROW:
            mt[w] = _elem(st, row % 4)
        elif row < _LROW:
            mt[w] = st[0]
        else:
            mt[w] = st[1]
    ss.block.sync()
    # The merge's tile reads at indices known in range: ``0 <= g < ng <= GMAX`` and ``0 <= d <
    # hdp <= 128``, so ``g & (GMAX - 1)`` is ``g``, ``d & 3`` is ``d % 4`` and ``(d >> 2) &
    # 31`` is ``d // 4``; written so, the compiler sees each read inside the tile and drops
    # its bounds check (a branch a read, which kept each read waiting for the one before it).
    for w in thread.block_row(opart):
        g = w.col // hdp - g0
        if g >= 0 and g < ng:
            g = g & (GMAX - 1)
            d = w.col % hdp
            at = 4 * g + (d & 3)
            lane_at = (d >> 2) & 31
            m = NEG_INF
            for k in range(WARPS):
                m = max(m, mt[_MROW + g, 32 * k])
            total = ZERO
            lsum = ZERO
            for k in range(WARPS):
                c = math.exp(mt[_MROW + g, 32 * k] - m)
                lsum += mt[_LROW + g, 32 * k] * c
                total += mt[at, 32 * k + lane_at] * c
            opart[w] = total / lsum
    for w in thread.block_row(ml):
        g = w.col % group - g0
        if g >= 0 and g < ng:
            g = g & (GMAX - 1)
            m = NEG_INF
            for k in range(WARPS):
                m = max(m, mt[_MROW + g, 32 * k])
            lsum = ZERO
            for k in range(WARPS):
                lsum += mt[_LROW + g, 32 * k] * math.exp(mt[_MROW + g, 32 * k] - m)
            ml[w] = m if w.col < group else lsum
