"""Decode attention on the GPU: a warp per cached position, its lanes over the head's
dimensions, an online softmax per warp, the block's warps merged in a shared tile.

Block ``b`` takes KV head ``kh = b % kv_heads`` over chunk ``c = b // kv_heads`` of the
positions ``0 .. pos`` (``pos`` read on the device), for the ``group`` query heads of ``kh``
(at most ``GMAX``). The grid has a fixed number of chunk slots (``grid.x // kv_heads``); the
chunk length grows with the position (``chunk_len``: at least ``CHUNK``, else the positions
spread over all the slots), so that one grid (one CUDA graph) keeps every block busy at a
long context and leaves all but the first chunk idle at a short one. Lane ``l`` holds the
dimensions ``4l .. 4l + 3`` of each query head (``hdp <= 128``). Warp ``w`` takes the
chunk's positions ``w, w + WARPS, ...``, four in flight per iteration: each lane reads the
four positions' 8-byte runs of K with one ``vec.load_runs`` (the loads in flight
together), then those of V (the warp's last one to three positions, a short context's only
ones, one at a time: no iteration computes a masked position), the scores come from
``ss.warp.sum`` of the lanes' partial dot products, and each head keeps a running maximum,
exp-sum and weighted V (flash-decoding's online softmax). The warps' states meet in a
shared tile; the block writes its row of ``opart`` (each head's output normalized by the
chunk's exp-sum) and of ``ml`` (the chunk's maximum and exp-sum per head),
which ``kernels.combine`` merges across chunks.

Ownership: ``opart`` and ``ml`` are ``BlockRow`` outputs (block ``b`` owns row ``b``); the
shared tile is written through ``block_stride`` (thread ``t`` owns column ``t``) before one
barrier and read after it.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, thread

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
def _head(st, qh, k0, k1, k2, k3, v0, v1, v2, v3, scale):  # type: ignore[no-untyped-def]
    """One head's state after the four positions of a whole iteration."""
    s0 = ss.warp.sum(_dot4(qh, k0)) * scale
    s1 = ss.warp.sum(_dot4(qh, k1)) * scale
    s2 = ss.warp.sum(_dot4(qh, k2)) * scale
    s3 = ss.warp.sum(_dot4(qh, k3)) * scale
    st = _update(st, s0, v0)
    st = _update(st, s1, v1)
    st = _update(st, s2, v2)
    return _update(st, s3, v3)


@ss.device
def _head1(st, qh, k, v, scale):  # type: ignore[no-untyped-def]
    """One head's state after one more position."""
    return _update(st, ss.warp.sum(_dot4(qh, k)) * scale, v)


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
            "q.size == group * kc.shape[1]",
            "opart.shape[0] == grid.x",
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
    q: In[np.float32],
    kc: In2D[BF16],
    vc: In2D[BF16],
    pos: In[np.int32],
    kv_heads: int,
    group: int,
    hd: int,
    hdp: int,
    g0: int,
    scale: np.float32,
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
    n = min(length, p + 1 - start)  # positions of this chunk to attend
    ng = min(GMAX, group - g0)  # query heads of this launch
    nr = hdp // 4  # runs of 4 per head row
    act = lane < nr
    col = kh * nr + lane  # this lane's run of the cache rows
    qr = (kh * group + g0) * nr + lane  # its run of head g0 of q
    # the four heads' runs in flight together (heads past ``ng`` are read and never used)
    q0, q1, q2, q3 = ss.vec.load_runs(q, (qr, qr + nr, qr + 2 * nr, qr + 3 * nr), 4)
    q0 = q0 if act else _Z4  # an idle lane's dot products are 0
    q1 = q1 if act else _Z4
    q2 = q2 if act else _Z4
    q3 = q3 if act else _Z4
    st0 = _S0
    st1 = _S0
    st2 = _S0
    st3 = _S0
    j = wid
    while j + 3 * WARPS < n:  # whole iterations: the warp's next four positions
        r = start + j
        # the four positions' K runs in flight together, then their V runs (one vec.load
        # each would wait for each run before issuing the next)
        runs = ((r, col), (r + WARPS, col), (r + 2 * WARPS, col), (r + 3 * WARPS, col))
        k0, k1, k2, k3 = ss.vec.load_runs(kc, runs, 4)
        v0, v1, v2, v3 = ss.vec.load_runs(vc, runs, 4)
        k0 = k0 if act else _Z4  # an idle lane reads another head's columns: 0 instead
        k1 = k1 if act else _Z4
        k2 = k2 if act else _Z4
        k3 = k3 if act else _Z4
        v0 = v0 if act else _Z4
        v1 = v1 if act else _Z4
        v2 = v2 if act else _Z4
        v3 = v3 if act else _Z4
        st0 = _head(st0, q0, k0, k1, k2, k3, v0, v1, v2, v3, scale)
        if ng > 1:
            st1 = _head(st1, q1, k0, k1, k2, k3, v0, v1, v2, v3, scale)
        if ng > 2:
            st2 = _head(st2, q2, k0, k1, k2, k3, v0, v1, v2, v3, scale)
        if ng > 3:
            st3 = _head(st3, q3, k0, k1, k2, k3, v0, v1, v2, v3, scale)
        j += 4 * WARPS
    while j < n:  # at most three positions left: one at a time (a short context's only ones)
        k = ss.vec.load(kc, (start + j, col), 4)
        v = ss.vec.load(vc, (start + j, col), 4)
        k = k if act else _Z4
        v = v if act else _Z4
        st0 = _head1(st0, q0, k, v, scale)
        if ng > 1:
            st1 = _head1(st1, q1, k, v, scale)
        if ng > 2:
            st2 = _head1(st2, q2, k, v, scale)
        if ng > 3:
            st3 = _head1(st3, q3, k, v, scale)
        j += WARPS
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
