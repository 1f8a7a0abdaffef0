"""The decode step's kernels: every one Tier 1 (no ``simtsafe.unsafe`` anywhere).

Data: weights bf16 (rows padded to a multiple of 8 columns, so that every row is a whole
number of 16-byte runs), activations float32, the KV cache bf16 as one
``[max_len, kv_heads * hdp]`` array per layer for K and one for V (``hdp`` is ``head_dim``
rounded up to 8; head ``j`` is columns ``[j*hdp, j*hdp + head_dim)``), the position and the
token int32 device arrays of one element: nothing in a step depends on a host value, so
one CUDA graph serves every step.

Ownership (what each kernel writes, and through which witness):

* ``embed``: ``x[i]`` (``grid_stride``).
* GEMVs on the GPU: ``gemv.py`` (two output rows a warp, the input staged in shared memory).
  Here their simulator twins, a thread per row (Index1D/PerBlock outputs, no collective per
  row): the simulator runs one Python thread per CUDA thread, so ``model.py`` takes these
  there; they are correct on a GPU too, only slower. ``gemv_norm`` fuses the RMSNorm of the
  input, ``gemv_swiglu`` reads gate row ``r`` and up row ``inter + r`` and writes
  ``silu(gate) * up``, ``gemv_residual`` adds ``res``, ``lm_head`` also writes per block the
  first maximum and its row (stage 1 of the argmax).
* ``qk_rope_append``: one block per query head (``block = hdp``): the head's RMSNorm and
  RoPE into ``q`` (Index1D), and for ``block < kv_heads`` the KV head's K (normed, roped) and
  V appended at row ``pos`` of the caches: ``Columns`` outputs, ``kc[p, w]`` with the
  thread's column ``w`` and ``p`` read on the device.
* ``attention``: ``attention.py`` (flash-decoding, a warp per cached position).
* ``combine``: one block per query head merges the chunks' outputs (BlockRow ``o``).
* ``finish``: one block: stage 2 of the argmax, the token fed back, the token history
  written at row ``pos`` (``Columns``), and the position advanced (PerBlock ``pos[w] + 1``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, Columns, DisjointSlice, In, In2D, PerBlock, thread

from .attention import _pick4, chunk_len
from .gemv import _dot, _rms_scale, _silu_mul

BF16 = ss.bfloat16
F32 = np.float32

# The simulator runs one Python thread per CUDA thread (and a barrier is a rendezvous of
# Python threads), so it runs the same kernels with smaller blocks and chunks: the algorithms
# are written for any of these values, and the simulator's small chunks exercise the
# multi-chunk merge at short contexts.
_SIM = ss.SIMULATOR

#: Threads per block of the thread-per-row GEMVs (the simulator's): rows per block.
THREAD_BLOCK = 64
#: Threads per block of the chunk merge.
COMBINE_BLOCK = 64 if _SIM else 256
#: Chunks the merge can take (``attention.SLOTS`` is at most this).
MAX_CHUNKS = 256
#: Threads of the final argmax block.
FINISH_BLOCK = 32 if _SIM else 1024
#: The largest padded head dimension the kernels take (attention: a run of 4 per lane of a
#: warp; merge: a run of 4 per thread).
MAX_HDP = min(128, 4 * COMBINE_BLOCK)
#: The "no index" of the argmax (larger than any row).
NO_INDEX = np.int32(2**31 - 1)
NEG_INF = F32(-np.inf)
ZERO = F32(0.0)


# ------------------------------------------------------------------------------ helpers


@ss.device
def _normed_run(x, nw, j):  # type: ignore[no-untyped-def]
    """Run ``j`` (elements ``8j .. 8j+7``) of ``x * nw`` as two runs of 4, and the sum of
    the squares of ``x`` over it (elements past the end of ``x`` read 0)."""
    x0 = ss.vec.load(x, 2 * j, 4)
    x1 = ss.vec.load(x, 2 * j + 1, 4)
    g = ss.vec.load(nw, j, 8)
    sq = (x0[0] * x0[0] + x0[1] * x0[1] + x0[2] * x0[2] + x0[3] * x0[3]) + (
        x1[0] * x1[0] + x1[1] * x1[1] + x1[2] * x1[2] + x1[3] * x1[3]
    )
    lo = (x0[0] * g[0], x0[1] * g[1], x0[2] * g[2], x0[3] * g[3])
    hi = (x1[0] * g[4], x1[1] * g[5], x1[2] * g[6], x1[3] * g[7])
    return lo, hi, sq


@ss.device
def _part_norm(w, row, x, nw, j0, step):  # type: ignore[no-untyped-def]
    """This lane's share of ``sum_j w[row, j] * x[j] * nw[j]`` and of ``sum_j x[j]^2``: runs
    ``j0, j0 + step, ...`` of the row, four 16-byte weight runs in flight per iteration."""
    nv = (w.shape[1] + 7) // 8
    acc = ZERO
    sq = ZERO
    j = j0
    while j < nv:
        j1 = j + step
        j2 = j1 + step
        j3 = j2 + step
        a0 = ss.vec.load(w, (row, j), 8)
        a1 = ss.vec.load(w, (row, j1), 8)
        a2 = ss.vec.load(w, (row, j2), 8)
        a3 = ss.vec.load(w, (row, j3), 8)
        l0, h0, s0 = _normed_run(x, nw, j)
        l1, h1, s1 = _normed_run(x, nw, j1)
        l2, h2, s2 = _normed_run(x, nw, j2)
        l3, h3, s3 = _normed_run(x, nw, j3)
        acc += (_dot(a0, l0, h0) + _dot(a1, l1, h1)) + (_dot(a2, l2, h2) + _dot(a3, l3, h3))
        sq += (s0 + s1) + (s2 + s3)
        j = j3 + step
    return acc, sq


@ss.device
def _part_norm2(w, r0, r1, x, nw, j0, step):  # type: ignore[no-untyped-def]
    """``_part_norm`` for two rows at once (they share the input runs)."""
    nv = (w.shape[1] + 7) // 8
    acc0 = ZERO
    acc1 = ZERO
    sq = ZERO
    j = j0
    while j < nv:
        j1 = j + step
        a0 = ss.vec.load(w, (r0, j), 8)
        a1 = ss.vec.load(w, (r0, j1), 8)
        b0 = ss.vec.load(w, (r1, j), 8)
        b1 = ss.vec.load(w, (r1, j1), 8)
        l0, h0, s0 = _normed_run(x, nw, j)
        l1, h1, s1 = _normed_run(x, nw, j1)
        acc0 += _dot(a0, l0, h0) + _dot(a1, l1, h1)
        acc1 += _dot(b0, l0, h0) + _dot(b1, l1, h1)
        sq += s0 + s1
        j = j1 + step
    return acc0, acc1, sq


@ss.device
def _part(w, row, v, j0, step):  # type: ignore[no-untyped-def]
    """This lane's share of ``sum_j w[row, j] * v[j]`` over runs ``j0, j0 + step, ...``."""
    nv = (w.shape[1] + 7) // 8
    acc = ZERO
    j = j0
    while j < nv:
        j1 = j + step
        j2 = j1 + step
        j3 = j2 + step
        a0 = ss.vec.load(w, (row, j), 8)
        a1 = ss.vec.load(w, (row, j1), 8)
        a2 = ss.vec.load(w, (row, j2), 8)
        a3 = ss.vec.load(w, (row, j3), 8)
        acc += (
            _dot(a0, ss.vec.load(v, 2 * j, 4), ss.vec.load(v, 2 * j + 1, 4))
            + _dot(a1, ss.vec.load(v, 2 * j1, 4), ss.vec.load(v, 2 * j1 + 1, 4))
        ) + (
            _dot(a2, ss.vec.load(v, 2 * j2, 4), ss.vec.load(v, 2 * j2 + 1, 4))
            + _dot(a3, ss.vec.load(v, 2 * j3, 4), ss.vec.load(v, 2 * j3 + 1, 4))
        )
        j = j3 + step
    return acc


# ------------------------------------------------------------------------------ embedding


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1), requires=["tok.size == 1"]))
def embed(x: DisjointSlice[np.float32], table: In2D[BF16], tok: In[np.int32]) -> None:
    """``x = table[tok[0]]`` as float32 (zeros for a token outside the table)."""
    t = tok[0]
    ok = t >= 0 and t < table.shape[0] and x.size <= table.shape[1]
    for w in thread.grid_stride(x):
        x[w] = F32(table[t, w.index]) if ok else ZERO


# ------------------------------------------------------------------------------ GEMVs, thread per row

_THREAD = ss.LaunchContract(domain=1, block=(THREAD_BLOCK, 1, 1), covers="y")


@ss.kernel(contract=_THREAD)
def gemv_norm_thread(
    y: DisjointSlice[np.float32], w: In2D[BF16], x: In[np.float32], nw: In[BF16], eps: np.float32
) -> None:
    """``gemv_norm_warp`` with a thread per row."""
    i = thread.index_1d()
    acc, sq = _part_norm(w, i.index, x, nw, 0, 1)
    y[i] = acc * _rms_scale(sq, x.size, eps)


@ss.kernel(contract=_THREAD)
def gemv_swiglu_thread(
    y: DisjointSlice[np.float32], w: In2D[BF16], x: In[np.float32], nw: In[BF16], eps: np.float32
) -> None:
    """``gemv_swiglu_warp`` with a thread per output."""
    i = thread.index_1d()
    gate, up, sq = _part_norm2(w, i.index, i.index + y.size, x, nw, 0, 1)
    scale = _rms_scale(sq, x.size, eps)
    y[i] = _silu_mul(gate * scale, up * scale)


@ss.kernel(contract=_THREAD)
def gemv_residual_thread(
    y: DisjointSlice[np.float32], w: In2D[BF16], v: In[np.float32], res: In[np.float32]
) -> None:
    """``gemv_residual_warp`` with a thread per row."""
    i = thread.index_1d()
    if i.in_bounds(res):
        y[i] = res[i] + _part(w, i.index, v, 0, 1)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(THREAD_BLOCK, 1, 1), covers="logits"))
def lm_head_thread(
    logits: DisjointSlice[np.float32],
    bval: DisjointSlice[np.float32, PerBlock],
    bidx: DisjointSlice[np.int32, PerBlock],
    w: In2D[BF16],
    x: In[np.float32],
    nw: In[BF16],
    eps: np.float32,
) -> None:
    """``lm_head_warp`` with a thread per row."""
    i = thread.index_1d()
    acc, sq = _part_norm(w, i.index, x, nw, 0, 1)
    v = acc * _rms_scale(sq, x.size, eps)
    logits[i] = v
    v = v if i.index < w.shape[0] else NEG_INF
    m = ss.block.max(v)
    first = ss.block.min(np.int32(i.index) if v == m else NO_INDEX)
    lb = thread.block_leader()
    bval[lb] = m
    bidx[lb] = first


# ------------------------------------------------------------------------------ q/k norm, RoPE, KV append


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        max_threads=1024,
        covers="q",
        requires=[
            "pos.size == 1",
            "q.size == grid.x * block.x",
            "block.x >= hd",
            "qkv.size == (grid.x + 2 * kv_heads) * hd",
            "kc.shape[1] == kv_heads * block.x",
            "vc.shape[0] == kc.shape[0]",
            "vc.shape[1] == kc.shape[1]",
            "qn.size == hd",
            "kn.size == hd",
            "2 * inv.size == hd",
        ],
    )
)
def qk_rope_append(
    q: DisjointSlice[np.float32],
    kc: DisjointSlice[BF16, Columns],
    vc: DisjointSlice[BF16, Columns],
    qkv: In[np.float32],
    qn: In[np.float32],
    kn: In[np.float32],
    inv: In[np.float32],
    pos: In[np.int32],
    kv_heads: int,
    hd: int,
    eps: np.float32,
) -> None:
    """Block ``b`` (``hdp`` threads, thread ``d`` = dimension ``d``): query head ``b`` of
    ``qkv`` RMS-normed with ``qn`` and rotated (rotate-half RoPE at ``pos``) into ``q``; for
    ``b < kv_heads`` also KV head ``b``: K normed with ``kn`` and rotated, V as is, both
    appended at cache row ``pos`` (columns ``[b*hdp, (b+1)*hdp)``; dimensions ``>= hd`` of
    the padding are written 0). The norm weights come as float32 (bf16 values widened on
    upload): a bf16 scalar read is a conversion call, which the uniformity analysis cannot
    see into, and the block sums must not follow one."""
    b = cuda.blockIdx.x
    d = cuda.threadIdx.x
    heads = cuda.gridDim.x
    p = pos[0]
    half = hd // 2
    inside = d < hd
    dd = d if inside else 0  # an index that is always in range
    partner = dd + half if dd < half else dd - half
    ang = F32(p) * inv[dd % half]
    c = math.cos(ang)
    s = math.sin(ang)
    # query head b
    base = b * hd
    xq = qkv[base + dd] if inside else ZERO
    scale = _rms_scale(ss.block.sum(xq * xq), hd, eps)
    own = xq * scale * qn[dd]
    other = qkv[base + partner] * scale * qn[partner]
    rot = -other if dd < half else other
    wq = thread.index_1d()
    q[wq] = own * c + rot * s if inside else ZERO
    if b < kv_heads:
        wc = thread.column()
        kbase = heads * hd + b * hd
        xk = qkv[kbase + dd] if inside else ZERO
        kscale = _rms_scale(ss.block.sum(xk * xk), hd, eps)
        kown = xk * kscale * kn[dd]
        kother = qkv[kbase + partner] * kscale * kn[partner]
        krot = -kother if dd < half else kother
        kc[p, wc] = kown * c + krot * s if inside else ZERO
        vbase = (heads + kv_heads) * hd + b * hd
        vc[p, wc] = qkv[vbase + dd] if inside else ZERO


# ------------------------------------------------------------------------------ attention


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        block=(COMBINE_BLOCK, 1, 1),
        covers="o",
        requires=[
            "pos.size == 1",
            "o.shape[0] == kv_heads * group",
            "o.shape[1] * group == opart.shape[1]",
            "ml.shape[0] == opart.shape[0]",
            "ml.shape[1] == 2 * group",
        ],
    )
)
def combine(
    o: DisjointSlice[np.float32, BlockRow],
    opart: In2D[np.float32],
    ml: In2D[np.float32],
    pos: In[np.int32],
    kv_heads: int,
    group: int,
) -> None:
    """Block ``h`` (a query head): ``o[h] = sum_c w_c opart_c / sum_c w_c`` over the chunks
    ``c`` holding a position (``c * chunk_len <= pos``), ``w_c = l_c exp(m_c - max_c m_c)``
    (flash-decoding's merge)."""
    h = cuda.blockIdx.x
    t = cuda.threadIdx.x
    kh = h // group
    g = h % group
    hdp = o.shape[1]
    slots = opart.shape[0] // kv_heads  # the attention's grid.x // kv_heads
    nc = min(pos[0] // chunk_len(pos[0], slots) + 1, slots)
    m = NEG_INF
    for c in range(t, nc, COMBINE_BLOCK):
        m = max(m, ml[c * kv_heads + kh, g])
    m = ss.block.max(m)
    wt = ss.shared.tile(MAX_CHUNKS, np.float32)
    lsum = ZERO
    for w in thread.block_stride(wt):
        c = w.index
        wc = (
            ml[c * kv_heads + kh, group + g] * math.exp(ml[c * kv_heads + kh, g] - m)
            if c < nc
            else ZERO
        )
        wt[w] = wc
        lsum += wc
    lsum = ss.block.sum(lsum)
    ss.block.sync()
    # thread t: run r4 (4 floats) of the head's row, chunks cs, cs + ncs, ...
    nr = (hdp + 3) // 4
    r4 = t % nr
    cs = t // nr
    ncs = COMBINE_BLOCK // nr
    base = (g * hdp) // 4 + r4
    a = (ZERO, ZERO, ZERO, ZERO)
    c = cs if cs < ncs else nc
    while c < nc:
        v = ss.vec.load(opart, (c * kv_heads + kh, base), 4)
        f = wt[c]
        a = (a[0] + f * v[0], a[1] + f * v[1], a[2] + f * v[2], a[3] + f * v[3])
        c += ncs
    red = ss.shared.tile((4, COMBINE_BLOCK), np.float32)
    for w in thread.block_stride(red):
        red[w] = _pick4(a[0], a[1], a[2], a[3], w.row)
    ss.block.sync()
    for w in thread.block_row(o):
        d = w.col
        total = ZERO
        for k in range(ncs):
            total += red[d % 4, k * nr + d // 4]
        o[w] = total / lsum


# ------------------------------------------------------------------------------ argmax, feedback


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        block=(FINISH_BLOCK, 1, 1),
        requires=[
            "grid.x == 1",
            "tok.size == 1",
            "pos.size == 1",
            "hist.shape[1] == 1",
            "bidx.size == bval.size",
        ],
    )
)
def finish(
    tok: DisjointSlice[np.int32, PerBlock],
    pos: DisjointSlice[np.int32, PerBlock],
    hist: DisjointSlice[np.int32, Columns],
    bval: In[np.float32],
    bidx: In[np.int32],
) -> None:
    """One block: the first row of the largest logit over the lm_head blocks' (max, row)
    pairs becomes the next token; it is written to ``hist[pos]`` and the position advances."""
    t = cuda.threadIdx.x
    best = NEG_INF
    at = NO_INDEX
    for k in range(t, bval.size, FINISH_BLOCK):  # ascending: the first block of a tie stays
        v = bval[k]
        if v > best:
            best = v
            at = bidx[k]
    m = ss.block.max(best)
    first = ss.block.min(at if best == m else NO_INDEX)
    lb = thread.block_leader()
    p = pos[lb]  # thread 0 reads the position (the others read 0 and write nothing below)
    hist[p, thread.column()] = first
    tok[lb] = first
    pos[lb] = p + 1
