"""Porting round 17: more kernels a GPU programmer writes on first contact with simtsafe (Tier 1).

Kernels new to this round (port15 did softmax, layernorm, transpose, stencils, SGEMM,
reductions, argmax, scan, gather/histogram, SpMV, batched matmul, bf16, vectors, grid-stride):
bitonic and odd-even block sorts, LSD radix sort (digit histogram + stable scatter), stream
compaction through append buffers, per-row top-k and argmax by a warp per row, cross-entropy,
segmented sums, Welford mean/variance, RoPE (three layouts), 3D 7-point stencil, 2D
convolution with a shared halo tile, bilinear resize, embedding bag, n-body with shared tiles,
a hash table build + probe, the k-means assignment step, ping-ponged Jacobi sweeps, per-row
cumulative sums, and a small constant filter.

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` below are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1, compiled with NVVM (``simtsafe.check_kernel``: no
                         finding) and run on the CUDA simulator against numpy (``CHECKS``);
                         ``radix_sort``'s scatter is the one Tier-2 region (documented: a
                         data-dependent scatter has no witness);
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen and
                         the name of its accepted workaround;
* ``BAD_ERRORS``      -- a misleading message, one that does not name the fix, or advice that
                         is wrong for the kernel at hand;
* ``DOC_GAPS``        -- where the docs promise or imply something that does not hold, or
                         leave a common pattern without its Tier-1 spelling.

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port17 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port17 NAME...  # simulator + numpy

With no NAME, every case runs. Report: PORT17.md.

Fixed after the round (tests/ptx/test_port17_ptx.py, tests/sim/test_port17_sim.py and
tests/sim/test_covers_advice_sim.py assert each message): CoverageError names the grid that
covers each kind of output (a PerBlock output: one block an element); a gated API's refusal
names its Tier-1 form (``cuda.atomic.*``: Accumulate / AppendBuffer / HashTable;
``cuda.const.array_like``: then a tuple global); a used result of ``Accumulate.add`` is refused
at its line; a slot won on another AppendBuffer is refused with the record-dtype advice (no
longer "claim again", which mispairs); ``in_bounds`` of an array of another rank, the tile
swap and the multi-element write name their fixes; a counter of another dtype names
``simtsafe.counter()``. The tuple reduce (Welford's state in one ``block.reduce``) is
accepted now: ``welford_tuple_reduce`` moved to ``ACCEPTED`` (tuple states in
``block.reduce`` / ``warp.reduce``; tests/sim/test_tuple_reduce_sim.py). Constant memory is
Tier 1 now: ``constant_memory_filter`` compiles and matches numpy (tests/*/test_constmem_*.py).
The row scan has its Tier-1 spelling: ``row_cumsum_chunks`` in ``ACCEPTED``
(``thread.block_row_chunks``, any width; the block_row loop around a scan stays refused and its
message names the chunked walk). Open (features): a shared counter across buffers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from tests.kernels.porting import Corpus
from tests.kernels.porting import to_device as _dev
from tests.kernels.porting import to_host as _host

EXTRA_HEADER = (
    "import math\nfrom simtsafe import Accumulate, BlockRow, Columns, WarpRow\nBF16 = ss.bfloat16\n"
)

# =============================================================================================
# ACCEPTED
# =============================================================================================

BITONIC = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def bitonic_block(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    t[me] = x[i] if i.in_bounds(x) else np.float32(np.inf)
    ss.block.sync()
    tid = me.index
    k = 2
    while k <= B:
        j = k // 2
        while j > 0:
            p = tid ^ j
            a = t[tid]
            b = t[p]
            keep_min = (tid < p) == ((tid & k) == 0)
            nv = min(a, b) if keep_min else max(a, b)
            ss.block.sync()
            t[me] = nv
            ss.block.sync()
            j //= 2
        k *= 2
    out[i] = t[me]
"""

ODDEVEN = """
B = 64


# odd-even transposition sort, two tiles, the phase loop unrolled by two (one barrier a phase)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def oddeven_sort(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t0 = ss.shared.tile(B, np.float32)
    t1 = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    tid = me.index
    t0[me] = x[i] if i.in_bounds(x) else np.float32(np.inf)
    ss.block.sync()
    even = tid + 1 if (tid & 1) == 0 else tid - 1   # partner in even phases
    odd = tid - 1 if (tid & 1) == 0 else tid + 1    # partner in odd phases
    for _ in range(B // 2):
        a = t0[tid]
        if even >= 0 and even < B:
            b = t0[even]
            a = min(a, b) if tid < even else max(a, b)
        t1[me] = a
        ss.block.sync()
        a = t1[tid]
        if odd >= 0 and odd < B:
            b = t1[odd]
            a = min(a, b) if tid < odd else max(a, b)
        t0[me] = a
        ss.block.sync()
    out[i] = t0[me]
"""

RADIX = """
B = 64
RADIX = 16


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def radix_hist(counts: Accumulate[np.uint32], keys: In[np.uint32], shift: np.uint32) -> None:
    bins = ss.shared.accumulator(RADIX, np.uint32)
    i = thread.index_1d()
    if i.in_bounds(keys):
        bins.add((keys[i] >> shift) & (RADIX - 1), 1)
    ss.block.sync()
    t = cuda.threadIdx.x
    if t < RADIX:
        counts.add(t * cuda.gridDim.x + cuda.blockIdx.x, bins[t])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["out.size == keys.size",
           "offs.size == grid.x * 16"]))
def radix_scatter(out: DisjointSlice[np.uint32], keys: In[np.uint32], offs: In[np.uint32],
                  shift: np.uint32) -> None:
    i = thread.index_1d()
    valid = i.in_bounds(keys)
    k = keys[i]
    d = (k >> shift) & (RADIX - 1)
    rank = 0
    for dd in range(RADIX):
        flag = valid and d == dd
        r = ss.block.scan(1 if flag else 0, inclusive=False)
        if flag:
            rank = r
    if valid:
        pos = offs[d * cuda.gridDim.x + cuda.blockIdx.x] + rank
        with ss.unsafe("SAFETY: offs is the exclusive scan of the [digit, block] counts of "
                       "radix_hist over the same keys and grid, so (digit, block, rank) -> pos "
                       "is one-to-one onto [0, keys.size); out.size == keys.size"):
            out.unchecked[pos] = k
"""

COMPACT = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, appends={"out": "count"}))
def compact_claim(out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32],
                  thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            s = out.claim()
            out[s] = v


PAIR = np.dtype([("v", np.float32), ("i", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, appends={"out": "count"}))
def compact_pairs(out: ss.AppendBuffer[PAIR], count: ss.Counter, x: In[np.float32],
                  thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            s = out.claim()
            out[s].v = v
            out[s].i = w.index
"""

ROW_ARGMAX = """
B = 64


# argmax of every row, a warp per row (first index of the max, like np.argmax)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def row_argmax_warp(best: DisjointSlice[np.int32, PerWarp], x: In2D[np.float32]) -> None:
    bv = np.float32(-np.inf)
    bi = np.int32(x.shape[1])
    for w in thread.warp_row(x):
        v = x[w]
        if v > bv:
            bv = v
            bi = np.int32(w.col)
    m = ss.warp.max(bv)
    cand = bi if bv == m else np.int32(x.shape[1])
    best[thread.warp_leader()] = ss.warp.min(cand)
"""

TOPK = """
B = 64
K = 4


# top-K values of every row, a warp per row, descending: K rounds of warp.max; the winning
# lane (smallest column among equal maxima) drops its value
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["out.shape[0] == x.shape[0]", "out.shape[1] == 4"]))
def topk_warp(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    loc = cuda.local.array(K, np.float32)     # this lane's K best, descending
    for k in range(K):
        loc[k] = np.float32(-np.inf)
    for w in thread.warp_row(x):
        v = x[w]
        if v > loc[K - 1]:
            j = K - 1
            while j > 0 and loc[j - 1] < v:
                loc[j] = loc[j - 1]
                j -= 1
            loc[j] = v
    res = cuda.local.array(K, np.float32)
    lane = cuda.laneid
    for k in range(K):
        m = ss.warp.max(loc[0])
        owner = ss.warp.min(lane if loc[0] == m else 32)
        res[k] = m
        if lane == owner:
            for j in range(K - 1):
                loc[j] = loc[j + 1]
            loc[K - 1] = np.float32(-np.inf)
    for w in thread.warp_row(out):
        out[w] = res[w.col]
"""

CROSS_ENTROPY = """
B = 64


# cross-entropy of every row, a block per row: logsumexp(x) - x[label]
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="loss",
           requires=["labels.size == x.shape[0]", "loss.size == x.shape[0]"]))
def cross_entropy(loss: DisjointSlice[np.float32, PerBlock], x: In2D[np.float32],
                  labels: In[np.int32]) -> None:
    m = np.float32(-np.inf)
    for w in thread.block_row(x):
        m = max(m, x[w])
    m = ss.block.max(m)
    s = np.float32(0)
    for w in thread.block_row(x):
        s += math.exp(x[w] - m)
    s = ss.block.sum(s)
    lead = thread.block_leader()
    if lead.in_bounds(loss):
        r = cuda.blockIdx.x
        lab = labels[r]
        loss[lead] = math.log(s) + m - x[r, lab]
"""

SEGMENT_SUM = """
B = 64


# sum of every segment [offs[s], offs[s+1]) of x, a block per segment
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["offs.size == out.size + 1"]))
def segment_sum(out: DisjointSlice[np.float32, PerBlock], x: In[np.float32], offs: In[np.int32]) -> None:
    seg = cuda.blockIdx.x
    acc = np.float32(0)
    if seg < out.size:
        for j in range(offs[seg] + cuda.threadIdx.x, offs[seg + 1], B):
            acc += x[j]
    acc = ss.block.sum(acc)
    out[thread.block_leader()] = acc
"""

WELFORD = """
B = 64


# per-thread Welford, then the parallel combine (Chan et al.) spelled with block.sum:
# n = sum n_t, mean = sum n_t mean_t / n, M2 = sum (M2_t + n_t (mean_t - mean)^2)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="mean",
           requires=["mean.size == x.shape[0]", "var.size == x.shape[0]"]))
def welford_rows(mean: DisjointSlice[np.float32, PerBlock], var: DisjointSlice[np.float32, PerBlock],
                 x: In2D[np.float32]) -> None:
    n = np.float32(0)
    mu = np.float32(0)
    q = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        n += np.float32(1)
        d = v - mu
        mu += d / n
        q += d * (v - mu)
    nt = ss.block.sum(n)
    mt = ss.block.sum(n * mu) / nt
    dm = mu - mt
    qt = ss.block.sum(q + n * dm * dm)
    lead = thread.block_leader()
    mean[lead] = mt
    var[lead] = qt / nt
"""

WELFORD_TUPLE = """
B = 64


# per-thread Welford, then the states combined in one block.reduce of a (count, mean, M2)
# tuple (a round-17 false refusal, fixed: tuple states in block.reduce / warp.reduce)
@ss.device
def welford_combine(a, b):
    na, ma, qa = a
    nb, mb, qb = b
    n = na + nb
    if n == 0:
        return a
    d = mb - ma
    return (n, ma + d * nb / n, qa + qb + d * d * na * nb / n)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="mean",
           requires=["mean.size == x.shape[0]", "var.size == x.shape[0]"]))
def welford_rows(mean: DisjointSlice[np.float32, PerBlock], var: DisjointSlice[np.float32, PerBlock],
                 x: In2D[np.float32]) -> None:
    n = np.float32(0)
    mu = np.float32(0)
    q = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        n += np.float32(1)
        d = v - mu
        mu += d / n
        q += d * (v - mu)
    n, mu, q = ss.block.reduce((n, mu, q), welford_combine)  # one collective, Chan's combine
    lead = thread.block_leader()
    mean[lead] = mu
    var[lead] = q / n
"""

ROPE = """
# NeoX-style RoPE on [tokens, heads, dim]: a thread per OUTPUT element, reading its partner
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(16, 4, 1), covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]",
                     "x.shape[2] == out.shape[2]", "cos.shape[0] == x.shape[0]",
                     "cos.shape[1] * 2 == x.shape[2]", "sin.shape[0] == x.shape[0]",
                     "sin.shape[1] * 2 == x.shape[2]"]))
def rope(out: DisjointSlice3D[np.float32], x: In3D[np.float32], cos: In2D[np.float32],
         sin: In2D[np.float32]) -> None:
    w = thread.index_3d()
    if w.in_bounds(out):
        half = x.shape[2] // 2
        t, h, d = w.z, w.y, w.x
        if d < half:
            out[w] = x[w] * cos[t, d] - x[t, h, d + half] * sin[t, d]
        else:
            out[w] = x[w] * cos[t, d - half] + x[t, h, d - half] * sin[t, d - half]


# GPT-J style (interleaved pairs 2i, 2i+1): a thread per pair through a 2-element output tile
# of the flattened tensor
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out",
           requires=["x.size == out.size", "cos.shape[1] * 2 == dim", "sin.shape[1] * 2 == dim",
                     "cos.shape[0] * heads * dim == x.size", "sin.shape[0] == cos.shape[0]"]))
def rope_interleaved(out: DisjointSlice[np.float32], x: In[np.float32], cos: In2D[np.float32],
                     sin: In2D[np.float32], heads: np.int64, dim: np.int64) -> None:
    g = thread.index_1d()               # pair number
    o = thread.tile_1d(out, 2)          # out[2g], out[2g + 1]
    p = g.index
    half = dim // 2
    t = p // (heads * half)
    i = p % half
    if 2 * p + 1 < x.size:
        a = x[2 * p]
        b = x[2 * p + 1]
        c = cos[t, i]
        s = sin[t, i]
        o[0] = a * c - b * s
        o[1] = b * c + a * s


# NeoX RoPE, a thread per pair: view out as [T*H*2, half]; thread (r, d) owns rows 2r, 2r+1 of
# column d through tile_2d(out, 2, 1) -- exactly (t, h, d) and (t, h, d + half)
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 4, 1), covers="out",
           requires=["x.size == out.size", "cos.shape[1] == out.shape[1]",
                     "sin.shape[1] == out.shape[1]", "cos.shape[0] * heads * 2 == out.shape[0]",
                     "sin.shape[0] == cos.shape[0]"]))
def rope_pair_tile(out: DisjointSlice2D[np.float32], x: In2D[np.float32], cos: In2D[np.float32],
                   sin: In2D[np.float32], heads: np.int64) -> None:
    w = thread.index_2d()
    o = thread.tile_2d(out, 2, 1)
    r, d = w.row, w.col
    if 2 * r + 1 < x.shape[0] and d < x.shape[1]:
        t = r // heads
        a = x[2 * r, d]
        b = x[2 * r + 1, d]
        c = cos[t, d]
        s = sin[t, d]
        o[0, 0] = a * c - b * s
        o[1, 0] = b * c + a * s
"""

STENCIL7 = """
# 7-point 3D stencil (zero boundary)
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(8, 4, 2), covers="out",
           requires=["v.shape[0] == out.shape[0]", "v.shape[1] == out.shape[1]",
                     "v.shape[2] == out.shape[2]"]))
def stencil7(out: DisjointSlice3D[np.float32], v: In3D[np.float32], c0: np.float32,
             c1: np.float32) -> None:
    w = thread.index_3d()
    if w.in_bounds(out):
        z, y, x = w.z, w.y, w.x
        nz, ny, nx = v.shape[0], v.shape[1], v.shape[2]
        s = np.float32(0)
        if z > 0:
            s += v[z - 1, y, x]
        if z + 1 < nz:
            s += v[z + 1, y, x]
        if y > 0:
            s += v[z, y - 1, x]
        if y + 1 < ny:
            s += v[z, y + 1, x]
        if x > 0:
            s += v[z, y, x - 1]
        if x + 1 < nx:
            s += v[z, y, x + 1]
        out[w] = c0 * v[w] + c1 * s
"""

CONV2D = """
R = 2          # filter radius
TX = 16
TY = 8
HX = 20        # TX + 2R (a module constant: `TX + 2 * R` is refused, port15)
HY = 12        # TY + 2R
FW = 5         # 2R + 1


# 2D convolution (cross-correlation, zero padding) with a 5x5 filter, shared halo tile
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TX, TY, 1), covers="out",
           requires=["img.shape[0] == out.shape[0]", "img.shape[1] == out.shape[1]",
                     "f.shape[0] == 5", "f.shape[1] == 5"]))
def conv2d(out: DisjointSlice2D[np.float32], img: In2D[np.float32], f: In2D[np.float32]) -> None:
    t = ss.shared.tile((HY, HX), np.float32)
    r0 = cuda.blockIdx.y * TY - R
    c0 = cuda.blockIdx.x * TX - R
    for w in thread.block_stride(t):
        r = r0 + w.row
        c = c0 + w.col
        inside = r >= 0 and r < img.shape[0] and c >= 0 and c < img.shape[1]
        t[w] = img[r, c] if inside else np.float32(0)
    ss.block.sync()
    me = thread.local_index_2d()
    acc = np.float32(0)
    for i in range(FW):
        for j in range(FW):
            acc += f[i, j] * t[me.row + i, me.col + j]
    out[thread.index_2d()] = acc
"""

RESIZE = """
# bilinear resize (align_corners=False, clamped), a thread per output pixel
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1), covers="out"))
def resize_bilinear(out: DisjointSlice2D[np.float32], img: In2D[np.float32]) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        H, W = img.shape[0], img.shape[1]
        sy = np.float32(H) / np.float32(out.shape[0])
        sx = np.float32(W) / np.float32(out.shape[1])
        fy = max((np.float32(w.row) + np.float32(0.5)) * sy - np.float32(0.5), np.float32(0))
        fx = max((np.float32(w.col) + np.float32(0.5)) * sx - np.float32(0.5), np.float32(0))
        y0 = min(int(fy), H - 1)
        x0 = min(int(fx), W - 1)
        y1 = min(y0 + 1, H - 1)
        x1 = min(x0 + 1, W - 1)
        ly = fy - np.float32(y0)
        lx = fx - np.float32(x0)
        top = img[y0, x0] * (np.float32(1) - lx) + img[y0, x1] * lx
        bot = img[y1, x0] * (np.float32(1) - lx) + img[y1, x1] * lx
        out[w] = top * (np.float32(1) - ly) + bot * ly
"""

EMBEDDING_BAG = """
# embedding bag (sum): out[b, :] = sum of table[idx[j], :] for j in [offs[b], offs[b+1])
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 4, 1), covers="out",
           requires=["offs.size == out.shape[0] + 1", "table.shape[1] == out.shape[1]"]))
def embedding_bag(out: DisjointSlice2D[np.float32], table: In2D[np.float32], idx: In[np.int32],
                  offs: In[np.int32]) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        acc = np.float32(0)
        for j in range(offs[w.row], offs[w.row + 1]):
            k = idx[j]
            if k >= 0 and k < table.shape[0]:
                acc += table[k, w.col]
        out[w] = acc
"""

NBODY = """
B = 64


# all-pairs gravity; pos is [n, 4] (x, y, z, mass); acc is [n, 3] written as a flat [3n] output
# through a 3-element output tile per body; bodies streamed through a shared tile of B x 4
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="acc",
           requires=["acc.size == pos.shape[0] * 3", "pos.shape[1] == 4"]))
def nbody(acc: DisjointSlice[np.float32], pos: In2D[np.float32], eps2: np.float32) -> None:
    sh = ss.shared.tile((B, 4), np.float32)
    i = thread.index_1d()
    me = thread.local_index_2d()
    o = thread.tile_1d(acc, 3)
    n = pos.shape[0]
    p = i.index
    valid = p < n
    px = pos[p, 0] if valid else np.float32(0)
    py = pos[p, 1] if valid else np.float32(0)
    pz = pos[p, 2] if valid else np.float32(0)
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    for base in range(0, n, B):
        for w in thread.block_stride(sh):
            j = base + w.row
            sh[w] = pos[j, w.col] if j < n else np.float32(0)   # mass 0 past the end
        ss.block.sync()
        for k in range(B):
            dx = sh[k, 0] - px
            dy = sh[k, 1] - py
            dz = sh[k, 2] - pz
            inv = np.float32(1) / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            s = sh[k, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        ss.block.sync()
    o[0] = ax
    o[1] = ay
    o[2] = az
"""

HASH = """
B = 64


# build: key -> its first-seen position (any position of an equal key wins), and a count per key
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B,
           tables={"keys": {"values": ["pos"], "failed": "nfail"}},
           requires=["counts.size == keys.size"]))
def hash_build(keys: ss.HashTable[np.int64], pos: ss.HashValues[np.int32], nfail: ss.Counter,
               counts: Accumulate[np.uint32], q: In[np.int64]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        pos[s] = np.int32(w.index)
        counts.add(keys.insert_or_find(q[w]), 1)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["q.size == out.size",
           "counts.size == keys.size", "q.size == cnt.size"]))
def hash_probe(out: DisjointSlice[np.int32], cnt: DisjointSlice[np.uint32], keys: In[np.int64],
               counts: In[np.uint32], q: In[np.int64]) -> None:
    for w in thread.grid_stride(q):
        f = ss.hashing.find(keys, q[w])
        out[w] = np.int32(f.index) if f.in_bounds(keys) else np.int32(-1)
        cnt[w] = counts[f]
"""

KMEANS = """
B = 64
KD = 64        # shared capacity for the centroids: k * d <= 64


# assignment: nearest centroid per point (centroids cached in a shared tile), plus the update's
# sums and counts by atomics
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="labels",
           requires=["labels.size == pts.shape[0]", "cent.shape[1] == pts.shape[1]",
                     "cent.shape[0] * cent.shape[1] <= 64", "sums.size == cent.shape[0] * cent.shape[1]",
                     "counts.size == cent.shape[0]"]))
def kmeans_assign(labels: DisjointSlice[np.int32], sums: Accumulate[np.float32],
                  counts: Accumulate[np.uint32], pts: In2D[np.float32], cent: In2D[np.float32]) -> None:
    c = ss.shared.tile(KD, np.float32)
    k = cent.shape[0]
    d = cent.shape[1]
    for w in thread.block_stride(c):
        c[w] = cent[w.index // d, w.index % d] if w.index < k * d else np.float32(0)
    ss.block.sync()
    i = thread.index_1d()
    if i.in_bounds(labels):
        p = i.index
        best = 0
        bd = np.float32(np.inf)
        for j in range(k):
            s = np.float32(0)
            for q in range(d):
                t = pts[p, q] - c[j * d + q]
                s += t * t
            if s < bd:
                bd = s
                best = j
        labels[i] = best
        counts.add(best, 1)
        for q in range(d):
            sums.add(best * d + q, pts[p, q])
"""

JACOBI = """
# one Jacobi sweep for the 2D Poisson problem (Dirichlet boundary kept); launched with the two
# buffers swapped each iteration
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1), covers="new",
           requires=["old.shape[0] == new.shape[0]", "old.shape[1] == new.shape[1]",
                     "f.shape[0] == new.shape[0]", "f.shape[1] == new.shape[1]"]))
def jacobi_step(new: DisjointSlice2D[np.float32], old: In2D[np.float32], f: In2D[np.float32],
                h2: np.float32) -> None:
    w = thread.index_2d()
    if w.in_bounds(new):
        r, c = w.row, w.col
        if r == 0 or c == 0 or r == old.shape[0] - 1 or c == old.shape[1] - 1:
            new[w] = old[w]
        else:
            new[w] = np.float32(0.25) * (old[r - 1, c] + old[r + 1, c] + old[r, c - 1] + old[r, c + 1]
                                         - h2 * f[w])
"""

ROW_CUMSUM = """
B = 64
MAXC = 8       # rows up to MAXC * B = 512 columns


# a block per row: chunks of B columns in a loop whose trip count is the same in every thread
# (the collectives need it); each thread keeps its chunks' results in a local array, then
# writes them through block_row (its columns tid, tid + B, ... are chunk 0, 1, ...)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]",
                     "x.shape[1] <= 512"]))
def row_cumsum(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    res = cuda.local.array(MAXC, np.float32)
    r = cuda.blockIdx.x
    ncol = x.shape[1]
    carry = np.float32(0)
    for c in range((ncol + B - 1) // B):
        col = c * B + cuda.threadIdx.x
        v = x[r, col] if r < x.shape[0] and col < ncol else np.float32(0)
        res[c] = ss.block.scan(v) + carry
        carry += ss.block.sum(v)
    k = 0
    for w in thread.block_row(out):
        out[w] = res[k]
        k += 1
"""

ROW_CUMSUM_CHUNKS = """
B = 64


# the natural row scan, any width: the row walked in whole chunks of B columns, the same
# number of chunks in every thread (a round-17 false refusal, fixed: thread.block_row_chunks)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]"]))
def row_cumsum(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    carry = np.float32(0)
    for c in thread.block_row_chunks(out):
        v = x[c]                       # 0 past the row's end
        s = ss.block.scan(v)           # every thread reaches it: uniform trip count
        out[c] = s + carry             # past the end: nothing written
        carry += ss.block.sum(v)
"""

BLUR_CONST = """
FILT = (0.0625, 0.25, 0.375, 0.25, 0.0625)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def blur1d(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        acc = np.float32(0)
        for k in range(5):
            j = i.index + k - 2
            if j >= 0 and j < x.size:
                acc += np.float32(FILT[k]) * x[j]
        out[i] = acc
"""

ACCEPTED: dict[str, str] = {
    "bitonic_block": BITONIC,
    "oddeven_sort": ODDEVEN,
    "radix_sort": RADIX,
    "compact": COMPACT,
    "row_argmax_warp": ROW_ARGMAX,
    "topk_warp": TOPK,
    "cross_entropy": CROSS_ENTROPY,
    "segment_sum": SEGMENT_SUM,
    "welford_rows": WELFORD,
    "welford_tuple_reduce": WELFORD_TUPLE,
    "rope": ROPE,
    "stencil7": STENCIL7,
    "conv2d": CONV2D,
    "resize_bilinear": RESIZE,
    "embedding_bag": EMBEDDING_BAG,
    "nbody": NBODY,
    "hash_table": HASH,
    "kmeans_assign": KMEANS,
    "jacobi": JACOBI,
    "row_cumsum": ROW_CUMSUM,
    "row_cumsum_chunks": ROW_CUMSUM_CHUNKS,
    "blur_const": BLUR_CONST,
}

# =============================================================================================
# numpy checks (simulator). Each takes the loaded module and a Generator; returns a bool.
# Sizes are small (the simulator runs a Python thread per CUDA thread) and not multiples of
# the block.
# =============================================================================================


def _check_block_sort(m: ModuleType, rng: np.random.Generator, name: str) -> bool:
    import simtsafe as ss

    n = 150
    x = rng.standard_normal(n).astype(np.float32)
    out = _dev(np.full(n, np.nan, np.float32))
    getattr(m, name).prepare(grid=ss.cover(n, 64), block=64)(out, _dev(x))
    ref = np.concatenate([np.sort(x[k : k + 64]) for k in range(0, n, 64)])
    return bool(np.array_equal(_host(out), ref))


def _check_radix(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 200
    keys = rng.integers(0, 2**16, n).astype(np.uint32)
    nb = ss.cover(n, 64)
    cur = keys.copy()
    for shift in (0, 4, 8, 12):
        cnt = _dev(np.zeros(16 * nb, np.uint32))
        m.radix_hist.prepare(grid=nb, block=64)(cnt, _dev(cur), np.uint32(shift))
        c = _host(cnt)
        offs = (np.cumsum(c) - c).astype(np.uint32)
        out = _dev(np.zeros(n, np.uint32))
        m.radix_scatter.prepare(grid=nb, block=64)(out, _dev(cur), _dev(offs), np.uint32(shift))
        cur = _host(out)
    return bool(np.array_equal(cur, np.sort(keys)))


def _check_compact(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = rng.standard_normal(300).astype(np.float32)
    out = _dev(np.full(300, np.nan, np.float32))
    c = ss.counter()
    m.compact_claim.prepare(grid=2, block=64)(out, c, _dev(x), np.float32(0.3))
    k = ss.appended(out, c)
    ok1 = np.array_equal(np.sort(_host(out)[:k]), np.sort(x[x > 0.3]))
    pair = np.dtype([("v", np.float32), ("i", np.int32)])
    outp = _dev(np.zeros(300, pair))
    c2 = ss.counter()
    m.compact_pairs.prepare(grid=2, block=64)(outp, c2, _dev(x), np.float32(0.3))
    h = _host(outp)[: ss.appended(outp, c2)]
    o = np.argsort(h["i"])
    ok2 = np.array_equal(h["i"][o], np.nonzero(x > 0.3)[0]) and np.array_equal(
        h["v"][o], x[x > 0.3]
    )
    return bool(ok1 and ok2)


def _rows_input(rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((7, 83)).astype(np.float32)
    x[3, 10] = x[3, 50] = 9.0  # a tie: the first index wins, as in np.argmax
    return x


def _check_row_argmax(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = _rows_input(rng)
    best = _dev(np.full(8, -1, np.int32))
    m.row_argmax_warp.prepare(grid=ss.cover(7, 2), block=64)(best, _dev(x))
    return bool(np.array_equal(_host(best)[:7], np.argmax(x, 1)))


def _check_topk(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = _rows_input(rng)
    out = _dev(np.full((7, 4), np.nan, np.float32))
    m.topk_warp.prepare(grid=ss.cover(7, 2), block=64)(out, _dev(x))
    return bool(np.array_equal(_host(out), -np.sort(-x, 1)[:, :4]))


def _check_cross_entropy(m: ModuleType, rng: np.random.Generator) -> bool:
    x = _rows_input(rng)
    lab = rng.integers(0, 83, 7).astype(np.int32)
    loss = _dev(np.full(7, np.nan, np.float32))
    m.cross_entropy.prepare(grid=7, block=64)(loss, _dev(x), _dev(lab))
    mx = x.max(1, keepdims=True)
    ref = np.log(np.exp(x - mx).sum(1)) + mx[:, 0] - x[np.arange(7), lab]
    return bool(np.allclose(_host(loss), ref, atol=1e-5))


SEG_OFFS = np.array([0, 3, 3, 130, 200, 499, 500], np.int32)  # an empty segment, a long one


def _check_segment_sum(m: ModuleType, rng: np.random.Generator) -> bool:
    xs = rng.standard_normal(500).astype(np.float32)
    o = _dev(np.full(6, np.nan, np.float32))
    m.segment_sum.prepare(grid=6, block=64)(o, _dev(xs), _dev(SEG_OFFS))
    ref = np.array([xs[a:b].sum() for a, b in zip(SEG_OFFS[:-1], SEG_OFFS[1:], strict=True)])
    return bool(np.allclose(_host(o), ref, atol=1e-4))


def _check_welford(m: ModuleType, rng: np.random.Generator) -> bool:
    x = (rng.standard_normal((5, 150)) * 3 + 100).astype(np.float32)  # a large mean
    mu = _dev(np.full(5, np.nan, np.float32))
    va = _dev(np.full(5, np.nan, np.float32))
    m.welford_rows.prepare(grid=5, block=64)(mu, va, _dev(x))
    x64 = x.astype(np.float64)
    return bool(
        np.allclose(_host(mu), x64.mean(1), rtol=1e-5)
        and np.allclose(_host(va), x64.var(1), rtol=1e-3)
    )


def _rope_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t, h, d = 5, 3, 20
    x = rng.standard_normal((t, h, d)).astype(np.float32)
    ang = rng.uniform(0, 6, (t, d // 2)).astype(np.float32)
    return x, np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def _rope_neox_ref(x: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    h = x.shape[2] // 2
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c[:, None] - b * s[:, None], b * c[:, None] + a * s[:, None]], -1)


def _check_rope_neox(m: ModuleType, rng: np.random.Generator, name: str = "rope") -> bool:
    import simtsafe as ss

    x, c, s = _rope_data(rng)
    t, h, d = x.shape
    out = _dev(np.full_like(x, np.nan))
    getattr(m, name).prepare(grid=(ss.cover(d, 16), ss.cover(h, 4), t), block=(16, 4, 1))(
        out, _dev(x), _dev(c), _dev(s)
    )
    return bool(np.allclose(_host(out), _rope_neox_ref(x, c, s), atol=1e-6))


def _check_rope(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ok1 = _check_rope_neox(m, rng)
    x, c, s = _rope_data(rng)
    t, h, d = x.shape
    xf = x.reshape(-1)
    o2 = _dev(np.full(xf.size, np.nan, np.float32))
    m.rope_interleaved.prepare(grid=ss.cover(xf.size // 2, 64), block=64)(
        o2, _dev(xf), _dev(c), _dev(s), h, d
    )
    a, b = x[..., 0::2], x[..., 1::2]
    r2 = np.empty_like(x)
    r2[..., 0::2] = a * c[:, None] - b * s[:, None]
    r2[..., 1::2] = b * c[:, None] + a * s[:, None]
    ok2 = np.allclose(_host(o2), r2.reshape(-1), atol=1e-6)
    x2 = x.reshape(t * h * 2, d // 2)
    o3 = _dev(np.full_like(x2, np.nan))
    m.rope_pair_tile.prepare(grid=(ss.cover(d // 2, 16), ss.cover(t * h, 4)), block=(16, 4, 1))(
        o3, _dev(x2), _dev(c), _dev(s), h
    )
    ok3 = np.allclose(_host(o3).reshape(t, h, d), _rope_neox_ref(x, c, s), atol=1e-6)
    return bool(ok1 and ok2 and ok3)


def _check_stencil7(m: ModuleType, rng: np.random.Generator) -> bool:
    v = rng.standard_normal((5, 7, 11)).astype(np.float32)
    o = _dev(np.full_like(v, np.nan))
    m.stencil7.prepare(grid=(2, 2, 3), block=(8, 4, 2))(o, _dev(v), np.float32(-6), np.float32(1))
    p = np.pad(v, 1)
    ref = (
        -6 * v
        + p[:-2, 1:-1, 1:-1]
        + p[2:, 1:-1, 1:-1]
        + p[1:-1, :-2, 1:-1]
        + p[1:-1, 2:, 1:-1]
        + p[1:-1, 1:-1, :-2]
        + p[1:-1, 1:-1, 2:]
    )
    return bool(np.allclose(_host(o), ref, atol=1e-5))


def _check_conv2d(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    img = rng.standard_normal((19, 37)).astype(np.float32)
    f = rng.standard_normal((5, 5)).astype(np.float32)
    o = _dev(np.full_like(img, np.nan))
    m.conv2d.prepare(grid=(ss.cover(37, 16), ss.cover(19, 8)), block=(16, 8))(o, _dev(img), _dev(f))
    p = np.pad(img, 2)
    ref = sum(f[i, j] * p[i : i + 19, j : j + 37] for i in range(5) for j in range(5))
    return bool(np.allclose(_host(o), ref, atol=1e-4))


def _check_resize(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    img = rng.standard_normal((13, 17)).astype(np.float32)
    oh, ow = 29, 23
    o = _dev(np.full((oh, ow), np.nan, np.float32))
    m.resize_bilinear.prepare(grid=(ss.cover(ow, 16), ss.cover(oh, 8)), block=(16, 8))(o, _dev(img))

    def axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0)
        i0 = np.minimum(f.astype(int), n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), f - i0

    y0, y1, ly = axis(oh, 13)
    x0, x1, lx = axis(ow, 17)
    top = img[y0][:, x0] * (1 - lx) + img[y0][:, x1] * lx
    bot = img[y1][:, x0] * (1 - lx) + img[y1][:, x1] * lx
    return bool(np.allclose(_host(o), top * (1 - ly[:, None]) + bot * ly[:, None], atol=1e-5))


def _check_embedding_bag(m: ModuleType, rng: np.random.Generator) -> bool:
    table = rng.standard_normal((50, 40)).astype(np.float32)
    offs = np.array([0, 3, 3, 10, 17], np.int32)  # an empty bag
    idx = rng.integers(0, 50, 17).astype(np.int32)
    o = _dev(np.full((4, 40), np.nan, np.float32))
    m.embedding_bag.prepare(grid=(2, 1), block=(32, 4))(o, _dev(table), _dev(idx), _dev(offs))
    ref = np.stack([table[idx[offs[b] : offs[b + 1]]].sum(0) for b in range(4)])
    return bool(np.allclose(_host(o), ref, atol=1e-5))


def _nbody_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = 100
    pos = rng.standard_normal((n, 4)).astype(np.float32)
    pos[:, 3] = rng.uniform(0.5, 1, n)
    d = pos[None, :, :3] - pos[:, None, :3]
    inv = 1 / np.sqrt((d**2).sum(-1) + 0.01)
    return pos, (d * (pos[None, :, 3] * inv**3)[..., None]).sum(1)


def _check_nbody(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    pos, ref = _nbody_data(rng)
    n = pos.shape[0]
    a = _dev(np.full(3 * n, np.nan, np.float32))
    m.nbody.prepare(grid=ss.cover(n, 64), block=64)(a, _dev(pos), np.float32(0.01))
    return bool(np.allclose(_host(a).reshape(n, 3), ref, rtol=1e-4, atol=1e-3))


def _check_hash(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    q = rng.integers(-40, 40, 200).astype(np.int64)
    q[q == -1] = 77  # -1 is EMPTY for signed keys (documented; counted as a failed insert)
    cap = 128
    keys = ss.empty_keys(cap, np.int64)
    pos = _dev(np.full(cap, -1, np.int32))
    nf = ss.counter()
    counts = _dev(np.zeros(cap, np.uint32))
    m.hash_build.prepare(grid=2, block=64)(keys, pos, nf, counts, _dev(q))
    occ = ss.inserted(keys, nf)
    p, kh = _host(pos), _host(keys)
    uq = np.unique(q)
    ok1 = occ == len(uq) and all(q[p[ss.hash_lookup(kh, int(k))]] == k for k in uq)
    probe = np.concatenate([q[:50], np.array([1000, -1000], np.int64)])
    out = _dev(np.full(probe.size, -7, np.int32))
    cnt = _dev(np.zeros(probe.size, np.uint32))
    m.hash_probe.prepare(grid=1, block=64)(out, cnt, keys, counts, _dev(probe))
    o, c = _host(out), _host(cnt)
    ok2 = all(o[j] == ss.hash_lookup(kh, int(probe[j])) for j in range(probe.size)) and o[-1] == -1
    ok3 = all(c[j] == (q == probe[j]).sum() for j in range(probe.size))
    return bool(ok1 and ok2 and ok3)


def _check_kmeans(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n, d, k = 150, 3, 5
    pts = rng.standard_normal((n, d)).astype(np.float32)
    cent = rng.standard_normal((k, d)).astype(np.float32)
    lab = _dev(np.full(n, -1, np.int32))
    sums = _dev(np.zeros(k * d, np.float32))
    cnt = _dev(np.zeros(k, np.uint32))
    m.kmeans_assign.prepare(grid=ss.cover(n, 64), block=64)(lab, sums, cnt, _dev(pts), _dev(cent))
    ref = ((pts[:, None] - cent[None]) ** 2).sum(-1).argmin(1)
    rs = np.stack([pts[ref == j].sum(0) for j in range(k)])
    return bool(
        np.array_equal(_host(lab), ref)
        and np.array_equal(_host(cnt), np.bincount(ref, minlength=k))
        and np.allclose(_host(sums).reshape(k, d), rs, atol=1e-4)
    )


def _check_jacobi(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w = 21, 35
    u = rng.standard_normal((h, w)).astype(np.float32)
    f = rng.standard_normal((h, w)).astype(np.float32)
    a, b, df = _dev(u), _dev(np.zeros_like(u)), _dev(f)
    step = m.jacobi_step.prepare(grid=(ss.cover(w, 16), ss.cover(h, 8)), block=(16, 8))
    ref = u.copy()
    for _ in range(6):  # ping-pong: the output of one launch is the input of the next
        step(b, a, df, np.float32(0.01))
        a, b = b, a
        nxt = ref.copy()
        nxt[1:-1, 1:-1] = np.float32(0.25) * (
            ref[:-2, 1:-1]
            + ref[2:, 1:-1]
            + ref[1:-1, :-2]
            + ref[1:-1, 2:]
            - np.float32(0.01) * f[1:-1, 1:-1]
        )
        ref = nxt
    return bool(np.allclose(_host(a), ref, atol=1e-5))


def _check_row_cumsum(m: ModuleType, rng: np.random.Generator, cols: int = 150) -> bool:
    x = rng.integers(-3, 4, (6, cols)).astype(np.float32)
    o = _dev(np.full_like(x, np.nan))
    m.row_cumsum.prepare(grid=6, block=64)(o, _dev(x))
    return bool(np.array_equal(_host(o), np.cumsum(x, 1)))


def _check_blur(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(150).astype(np.float32)
    o = _dev(np.full(150, np.nan, np.float32))
    m.blur1d.prepare(grid=3, block=64)(o, _dev(x))
    ref = np.convolve(x, np.array([1, 4, 6, 4, 1]) / 16, "same")
    return bool(np.allclose(_host(o), ref, atol=1e-6))


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "bitonic_block": lambda m, r: _check_block_sort(m, r, "bitonic_block"),
    "oddeven_sort": lambda m, r: _check_block_sort(m, r, "oddeven_sort"),
    "radix_sort": _check_radix,
    "compact": _check_compact,
    "row_argmax_warp": _check_row_argmax,
    "topk_warp": _check_topk,
    "cross_entropy": _check_cross_entropy,
    "segment_sum": _check_segment_sum,
    "welford_rows": _check_welford,
    "welford_tuple_reduce": _check_welford,
    "rope": _check_rope,
    "stencil7": _check_stencil7,
    "conv2d": _check_conv2d,
    "resize_bilinear": _check_resize,
    "embedding_bag": _check_embedding_bag,
    "nbody": _check_nbody,
    "hash_table": _check_hash,
    "kmeans_assign": _check_kmeans,
    "jacobi": _check_jacobi,
    "row_cumsum": _check_row_cumsum,
    "row_cumsum_chunks": lambda m, r: all(
        _check_row_cumsum(m, r, cols) for cols in (1, 63, 64, 65, 150, 700)
    ),
    "blur_const": _check_blur,
}

FALSE_REFUSALS: dict[str, dict[str, Any]] = {}
BAD_ERRORS: dict[str, dict[str, Any]] = {}
DOC_GAPS: dict[str, dict[str, Any]] = {}

# =============================================================================================
# FALSE_REFUSALS: natural, safe kernels that simtsafe refuses. "message": the text seen (a
# fragment); "workaround": the ACCEPTED case that computes the same thing. The line the
# refusal names is marked # BAD.
# =============================================================================================

FR_TWO_BUFFERS_ONE_CLAIM = """
B = 64


# the index of each kept element too (two buffers filled by one claim: the natural "filter
# with indices" -- the second buffer has its own counter, so two claims)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, appends={"vals": "nv", "idx": "ni"}))
def compact_with_index(vals: ss.AppendBuffer[np.float32], nv: ss.Counter,
                       idx: ss.AppendBuffer[np.int32], ni: ss.Counter,
                       x: In[np.float32], thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            s = vals.claim()
            vals[s] = v
            idx[s] = w.index  # BAD
"""

FR_ROPE_PAIR = """
# NeoX-style RoPE: pairs (d, d + half). The CUDA habit: a thread per pair, writing both.
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(16, 4, 1),
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]",
                     "x.shape[2] == out.shape[2]", "cos.shape[0] == x.shape[0]",
                     "cos.shape[1] * 2 == x.shape[2]", "sin.shape[0] == x.shape[0]",
                     "sin.shape[1] * 2 == x.shape[2]"]))
def rope_pairs(out: DisjointSlice3D[np.float32], x: In3D[np.float32], cos: In2D[np.float32],
               sin: In2D[np.float32]) -> None:
    w = thread.index_3d()  # (token, head, pair)
    half = x.shape[2] // 2
    t, h, d = w.z, w.y, w.x
    if t < x.shape[0] and h < x.shape[1] and d < half:
        a = x[t, h, d]
        b = x[t, h, d + half]
        c = cos[t, d]
        s = sin[t, d]
        out[t, h, d] = a * c - b * s  # BAD
        out[t, h, d + half] = b * c + a * s
"""

FR_NBODY_ROW = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["acc.shape[0] == pos.shape[0]"]))
def nbody_naive(acc: DisjointSlice2D[np.float32], pos: In2D[np.float32], eps2: np.float32) -> None:
    i = thread.index_1d()
    if i.index < pos.shape[0]:
        p = i.index
        ax = np.float32(0)
        ay = np.float32(0)
        az = np.float32(0)
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[p, 0]
            dy = pos[j, 1] - pos[p, 1]
            dz = pos[j, 2] - pos[p, 2]
            inv = np.float32(1) / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[p, 0] = ax  # BAD
        acc[p, 1] = ay
        acc[p, 2] = az
"""

FR_ROW_CUMSUM = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]"]))
def row_cumsum(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    carry = np.float32(0)
    for w in thread.block_row(out):
        v = x[w]
        s = ss.block.scan(v)  # BAD
        out[w] = s + carry
        carry += ss.block.sum(v)
"""

FR_TILE_SWAP = """
B = 64


# odd-even transposition sort of each block's chunk, ping-ponging two shared tiles
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def oddeven_sort(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    src = ss.shared.tile(B, np.float32)
    dst = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    tid = me.index
    src[me] = x[i] if i.in_bounds(x) else np.float32(np.inf)
    ss.block.sync()
    for phase in range(B):
        p = tid + 1 if (tid & 1) == (phase & 1) else tid - 1
        a = src[tid]
        if p >= 0 and p < B:
            b = src[p]
            a = min(a, b) if tid < p else max(a, b)
        dst[me] = a
        ss.block.sync()
        src, dst = dst, src  # BAD
    out[i] = src[me]
"""

FR_CONST_FILTER = """
FILT = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def blur1d(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        f = cuda.const.array_like(FILT)  # BAD (refused by the round; Tier 1 since)
        acc = np.float32(0)
        for k in range(5):
            j = i.index + k - 2
            if j >= 0 and j < x.size:
                acc += f[k] * x[j]
        out[i] = acc
"""

FR_RADIX_SCATTER = """
B = 64
RADIX = 16


# pass 1: per-block digit counts, laid out [digit, block] (so an exclusive scan of the flat
# array gives every (digit, block) its first output position)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def radix_hist(counts: Accumulate[np.uint32], keys: In[np.uint32], shift: np.uint32) -> None:
    bins = ss.shared.accumulator(RADIX, np.uint32)
    i = thread.index_1d()
    if i.in_bounds(keys):
        bins.add((keys[i] >> shift) & (RADIX - 1), 1)
    ss.block.sync()
    t = cuda.threadIdx.x
    if t < RADIX:
        counts.add(t * cuda.gridDim.x + cuda.blockIdx.x, bins[t])


# pass 2: stable scatter; the local rank among equal digits by one block.scan per digit
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["out.size == keys.size"]))
def radix_scatter(out: DisjointSlice[np.uint32], keys: In[np.uint32], offs: In[np.uint32],
                  shift: np.uint32) -> None:
    i = thread.index_1d()
    valid = i.in_bounds(keys)
    k = keys[i]
    d = (k >> shift) & (RADIX - 1)
    rank = 0
    for dd in range(RADIX):
        flag = valid and d == dd
        r = ss.block.scan(1 if flag else 0, inclusive=False)
        if flag:
            rank = r
    if valid:
        pos = offs[d * cuda.gridDim.x + cuda.blockIdx.x] + rank
        out[pos] = k  # BAD
"""

BAD_TWO_CLAIMS = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, appends={"vals": "nv", "idx": "ni"}))
def compact_with_index(vals: ss.AppendBuffer[np.float32], nv: ss.Counter,
                       idx: ss.AppendBuffer[np.int32], ni: ss.Counter,
                       x: In[np.float32], thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            s = vals.claim()
            vals[s] = v
            t = idx.claim()  # the error's advice: "Claim with w = idx.claim()"
            idx[t] = w.index
"""

# =============================================================================================
# BAD_ERRORS
# =============================================================================================

BAD_ATOMIC_SLOT = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def compact_atomic(out: DisjointSlice[np.float32], count: DisjointSlice[np.uint32], x: In[np.float32],
                   thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            pos = cuda.atomic.add(count, 0, 1)  # BAD
            out[pos] = v
"""

BAD_ACC_FETCH_ADD = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def compact_acc(out: DisjointSlice[np.float32], count: Accumulate[np.uint32], x: In[np.float32],
                thr: np.float32) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > thr:
            pos = count.add(0, 1)  # BAD
            out[pos] = v
"""

BAD_IN_BOUNDS_2D = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["out.size == pts.shape[0]"]))
def row_norms(out: DisjointSlice[np.float32], pts: In2D[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(pts):  # BAD: "ThreadIndex[Index1D].in_bounds() of a 2D array" (no fix named)
        s = np.float32(0)
        for k in range(pts.shape[1]):
            s += pts[i.index, k] * pts[i.index, k]
        out[i] = math.sqrt(s)
"""

BAD_BITONIC_SWAP = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def bitonic_cuda(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    t[me] = x[i] if i.in_bounds(x) else np.float32(np.inf)
    ss.block.sync()
    tid = me.index
    k = 2
    while k <= B:
        j = k // 2
        while j > 0:
            ixj = tid ^ j
            if ixj > tid:
                a = t[tid]
                b = t[ixj]
                up = (tid & k) == 0
                if (a > b) == up:
                    t[tid] = b  # BAD
                    t[ixj] = a
            ss.block.sync()
            j //= 2
        k *= 2
    out[i] = t[me]
"""

BAD_BITONIC_SWAP_SYNCED = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def bitonic_cuda(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    t[me] = x[i] if i.in_bounds(x) else np.float32(np.inf)
    ss.block.sync()
    tid = me.index
    k = 2
    while k <= B:
        j = k // 2
        while j > 0:
            ixj = tid ^ j
            a = t[tid]
            b = t[ixj]
            ss.block.sync()
            if ixj > tid:
                up = (tid & k) == 0
                if (a > b) == up:
                    t[tid] = b  # BAD
                    t[ixj] = a
            ss.block.sync()
            j //= 2
        k *= 2
    out[i] = t[me]
"""


def _launch_compact_with_index(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = rng.standard_normal(300).astype(np.float32)
    v, i = _dev(np.zeros(300, np.float32)), _dev(np.zeros(300, np.int32))
    nv, ni = ss.counter(), ss.counter()
    m.compact_with_index.prepare(grid=2, block=64)(v, nv, i, ni, _dev(x), np.float32(0.3))
    k = ss.appended(v, nv)
    hv, hi = _host(v)[:k], _host(i)[:k]
    return bool(np.array_equal(x[hi], hv))


def _launch_nbody_naive(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    pos, ref = _nbody_data(rng)
    n = pos.shape[0]
    a = _dev(np.full((n, 3), np.nan, np.float32))
    m.nbody_naive.prepare(grid=ss.cover(n, 64), block=64)(a, _dev(pos), np.float32(0.01))
    return bool(np.allclose(_host(a), ref, rtol=1e-4, atol=1e-3))


FALSE_REFUSALS.update(
    {
        "compact_two_buffers_one_claim": {
            "source": FR_TWO_BUFFERS_ONE_CLAIM,
            "where": "compile (typing); a shared counter is refused at decoration (pydantic)",
            "message": "a ThreadIndex[Appended[vals]] witness cannot write the AppendBuffer 'idx': "
            "only a slot won by idx.claim() is this thread's there (its counter gave it out "
            "once). Claim with w = idx.claim()  [and appends={'vals': 'n', 'idx': 'n'}: "
            "\"appends names the counter 'n' for both 'vals' and 'idx'; give each AppendBuffer "
            'its own Counter"]',
            "why_safe": "one fetch-add gives slot s to one claim; writing s of two parallel "
            "(structure-of-arrays) buffers of any capacities is as unique as writing one, and "
            "each write is bounds-checked. The advice (a second claim) pairs values with the "
            "WRONG indices: two counters hand out slots in different orders",
            "workaround": "compact.compact_pairs (one AppendBuffer of a record dtype {v, i})",
        },
        "rope_thread_per_pair": {
            "source": FR_ROPE_PAIR,
            "where": "compile (typing)",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index3D); got an index of type UniTuple(int64 x 3). Get a witness with "
            "thread.index_3d(), or write out.unchecked[...]",
            "why_safe": "thread (t, h, d < half) writes d and d + half: distinct threads write "
            "distinct pairs",
            "workaround": "rope.rope (a thread per output element, 2x the loads) or "
            "rope.rope_pair_tile (host view [T*H*2, half] + thread.tile_2d(out, 2, 1): the pair "
            "IS a 2x1 output tile); GPT-J layout: rope.rope_interleaved (tile_1d(out, 2))",
        },
        "nbody_row_per_thread": {
            "source": FR_NBODY_ROW,
            "where": "compile (typing)",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index2D); got an index of type UniTuple(int64 x 2). Get a witness with "
            "thread.index_2d(), or write out.unchecked[...]",
            "why_safe": "thread i writes only row i of acc[n, 3] (an array-of-structs result: "
            "a force, a normal, a bounding box per item)",
            "misleading": "the advice `thread.index_2d()` is wrong for a domain=1 kernel whose "
            "thread owns a whole row; no Tier-1 'row per thread' space exists (Columns is the "
            "transposed form)",
            "workaround": "nbody (flat [3n] output through thread.tile_1d(acc, 3)); or an [n] "
            "record output written out[i].x = ...; or SoA acc[3, n] as a Columns output",
        },
        "row_cumsum_block_row_scan": {
            "source": FR_ROW_CUMSUM,
            "where": "compile (uniformity)",
            "message": "`block.scan` needs every thread of the block to reach it, but control flow "
            "here is thread-dependent: the loop whose exit is at line N runs a different number "
            "of times in different threads",
            "why_safe": "no: as written the last chunk deadlocks when the width is not a multiple "
            "of the block. The false refusal is that NO Tier-1 spelling of an unbounded-width "
            "row scan exists: block_row gives no chunk loop with a block-uniform trip count and "
            "a per-chunk witness; requires cannot state 'x.shape[1] % 64 == 0' ('%' not allowed)",
            "workaround": "row_cumsum (a chunk loop on cuda.threadIdx.x with a uniform trip "
            "count, results kept in a cuda.local.array(MAXC), written through block_row after "
            "the loop: width bounded by MAXC * B)",
            "fixed": "row_cumsum_chunks: `for c in thread.block_row_chunks(out)` walks the row "
            "in ceil(width / B) chunks in every thread (the compiled form proves the trip count "
            "uniform from shape[1] and ntid.x), the last chunk's witnesses past the end read 0 "
            "and write nothing; any width. This kernel (block_row around a scan) stays refused, "
            "rightly, and its message now names the chunked walk",
        },
        "tile_pingpong_swap": {
            "source": FR_TILE_SWAP,
            "where": "decoration",
            "message": "`src` is a shared tile or accumulator: index it, call its methods, pass it "
            "to thread.block_stride or len(), or pass a tile to a @simtsafe.device helper (...); "
            "it cannot be copied, stored or returned (its fill and read phases could not be "
            "followed)",
            "why_safe": "one barrier per phase between writing dst and reading it; the swap is "
            "block-uniform",
            "workaround": "oddeven_sort (the phase loop unrolled by two, each tile with fixed "
            "roles; documented for fill_async only, in docs/cooperation.md)",
        },
        "constant_memory_filter": {
            "source": FR_CONST_FILTER,
            "where": "decoration",
            "message": "`cuda.const.array_like` is allowed only inside `with simtsafe.unsafe(...)`: "
            "(shared memory, barriers, warp intrinsics, fences and atomics can break the "
            "disjoint-write guarantee)",
            "why_safe": "__constant__ memory is read-only in the kernel; the listed reasons do "
            "not include it",
            "workaround": "blur_const (a module-level tuple of floats; or pass the filter as In)",
            "fixed": "cuda.const.array_like(ARR) is Tier 1: a read-only, bounds-checked constant "
            "array; this kernel compiles and matches numpy (tests/ptx/test_port17_ptx.py, "
            "tests/sim/test_port17_sim.py; the rules: tests/*/test_constmem_*.py)",
        },
        "radix_scatter_by_rank": {
            "source": FR_RADIX_SCATTER,
            "where": "compile (typing)",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index1D); got an index of type int64",
            "why_safe": "pos = offs[digit, block] + rank is a permutation by construction (a "
            "property of the data, documented in porting.md section 10 as Tier 2)",
            "workaround": "radix_sort (radix_scatter writes out.unchecked[pos] in one unsafe "
            "region); no Tier-1 form: AppendBuffer has one counter per buffer (not one per "
            "digit) and is unordered (radix sort needs a stable scatter)",
        },
    }
)
CHECKS.update(
    {
        "compact_two_buffers_one_claim": _launch_compact_with_index,
        "rope_thread_per_pair": lambda m, r: _check_rope_neox(m, r, "rope_pairs"),
        "nbody_row_per_thread": _launch_nbody_naive,
        "row_cumsum_block_row_scan": _check_row_cumsum,
        "tile_pingpong_swap": lambda m, r: _check_block_sort(m, r, "oddeven_sort"),
        "constant_memory_filter": _check_blur,
        "radix_scatter_by_rank": _check_radix,
    }
)

# =============================================================================================
# BAD_ERRORS: misleading messages, messages without the fix, advice wrong for the kernel.
# =============================================================================================


def _launch_compact_acc(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    m.compact_acc.prepare(grid=2, block=64)(
        _dev(np.zeros(300, np.float32)), _dev(np.zeros(1, np.uint32)), _dev(x), np.float32(0.3)
    )
    return False


def _launch_row_norms(m: ModuleType, rng: np.random.Generator) -> bool:
    p = rng.standard_normal((100, 3)).astype(np.float32)
    o = _dev(np.zeros(100, np.float32))
    m.row_norms.prepare(grid=2, block=64)(o, _dev(p))
    return bool(np.allclose(_host(o), np.linalg.norm(p, axis=1), atol=1e-5))


def _follow_coverage_advice(m: ModuleType, rng: np.random.Generator) -> bool:
    """Launch segment_sum with too few blocks, then as CoverageError advises."""
    import simtsafe as ss

    xs = rng.standard_normal(500).astype(np.float32)
    o = _dev(np.full(6, np.nan, np.float32))
    try:
        m.segment_sum.prepare(grid=4, block=64)(o, _dev(xs), _dev(SEG_OFFS))
    except ss.CoverageError as exc:
        print(f"    first launch, grid=4: {type(exc).__name__}: {exc}")
    # "Prepare with a larger grid (simtsafe.cover(n, block) blocks)": cover(6, 64) == 1 block
    m.segment_sum.prepare(grid=ss.cover(6, 64), block=64)(o, _dev(xs), _dev(SEG_OFFS))
    return True


def _launch_counter_uint32(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    m.compact_claim.prepare(grid=2, block=64)(
        _dev(np.zeros(300, np.float32)), _dev(np.zeros(1, np.uint32)), _dev(x), np.float32(0.3)
    )
    return True


def _two_claims_pairing(m: ModuleType, rng: np.random.Generator) -> bool:
    """True when every (value, index) pair matches; the simulator serializes claims."""
    return all(_launch_compact_with_index(m, rng) for _ in range(3))


BAD_ERRORS.update(
    {
        "atomic_fetch_add_slot": {
            "source": BAD_ATOMIC_SLOT,
            "where": "decoration (unsafe-op)",
            "message": '`cuda.atomic.add` is allowed only inside `with simtsafe.unsafe("SAFETY: '
            '..."):` (shared memory, barriers, warp intrinsics, fences and atomics can break the '
            "disjoint-write guarantee). Wrap the code in such a block and state why it is sound",
            "why": "`pos = cuda.atomic.add(count, 0, 1); out[pos] = v` is THE CUDA compaction "
            "idiom and has a Tier-1 form (AppendBuffer.claim(), docs/atomics.md); an update "
            "without a used result is Accumulate.add. The message sends the user to Tier 2 and "
            "names neither",
            "fix": "for cuda.atomic.*: 'the Tier-1 forms are Accumulate[T].add/min/max (no "
            "result) and AppendBuffer.claim() (a slot from a counter: docs/atomics.md)'",
        },
        "accumulate_add_as_fetch_add": {
            "source": BAD_ACC_FETCH_ADD,
            "where": "compile (typing), at the USE of the result",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index1D); got an index of type none",
            "why": "the user's next try after the previous message: `pos = count.add(0, 1)`. "
            "Accumulate.add returns nothing, silently (`pos` is None); the error names the "
            "store, 'type none', and not the add",
            "fix": "refuse using the result of acc.add/min/max at its line: 'Accumulate updates "
            "return nothing; for a slot won by a fetch-add use an AppendBuffer and claim()'",
        },
        "in_bounds_1d_witness_2d_input": {
            "source": BAD_IN_BOUNDS_2D,
            "where": "compile (typing)",
            "message": "ThreadIndex[Index1D].in_bounds() of a 2D array",
            "why": "a thread per row of a 2D input (`if i.in_bounds(pts)`) is natural; the "
            "message neither says why nor names the fix, unlike every other simtsafe message",
            "fix": "either define it (row < shape[0], as Columns witnesses address their rows), "
            "or say 'a 1D witness addresses 1D arrays: test i.index < pts.shape[0], or "
            "i.in_bounds(out) on the 1D output'",
        },
        "bitonic_compare_swap": {
            "source": BAD_BITONIC_SWAP,
            "where": "decoration (tile-phase); after adding the barrier: compile (typing)",
            "message": "shared tile `t` is read by index at line N and filled at line N with no "
            "block barrier between them (on some path) ... Put simtsafe.block.sync() between the "
            "fill and the reads   THEN (BAD_BITONIC_SWAP_SYNCED): a shared tile "
            "(SharedTile[float32, 64]) is filled only through a block-local witness of its space "
            "(Local1D) ... Got an index of type int64",
            "why": "the CUDA compare-and-swap `t[tid] = b; t[ixj] = a` (a thread writes its "
            "partner's element) is refused first for a missing barrier; adding it (two steps of "
            "work) meets the real rule. The first message should be the write rule",
            "fix": "report an int-index (non-witness) store into a tile before phase findings; "
            "suggest 'compute your own element's new value (min/max with the partner), barrier, "
            "t[me] = new' (bitonic_block)",
        },
        "coverage_advice_per_block": {
            "source": SEGMENT_SUM,
            "where": "launch (CoverageError)",
            "message": "kernel 'segment_sum' must cover every element of 'out' by its launch "
            "contract, but the launch owns 4 along axis 0 and 'out' has 6. Prepare with a larger "
            "grid (simtsafe.cover(n, block) blocks). (covers counts what a thread owns: one "
            "element a witness, ...)",
            "why": "out is DisjointSlice[T, PerBlock]: the grid must be out.size blocks. The "
            "advice gives cover(6, 64) == 1 block, and following it fails again (the WarpRow "
            "message gets this right: 'Prepare with grid=simtsafe.cover(7, 2) (= 4) blocks')",
            "fix": "for PerBlock outputs: 'Prepare with grid=6 (one block per element)'; PerWarp: "
            "cover(n, warps per block)",
        },
        "append_second_claim_mispairs": {
            "source": BAD_TWO_CLAIMS,
            "where": "nowhere (accepted; check_kernel: no finding)",
            "message": "(none) -- this is the kernel the compact_two_buffers_one_claim error asks for "
            "('Claim with w = idx.claim()')",
            "why": "two counters give slots in their own arrival order (docs/atomics.md, 'Order: "
            "none'), so vals[k] and idx[k] need not be the same item. The simulator serializes "
            "the claims and shows no mismatch (the check passes there); nothing guarantees it "
            "on a GPU, where warps reach the two atomics in different orders",
            "fix": "do not advise a second claim when the first claim's witness writes another "
            "AppendBuffer; advise a record dtype (or allow buffers declared to share one counter)",
        },
        "counter_dtype_advice": {
            "source": COMPACT,
            "where": "launch (ArgumentTypeError)",
            "message": "argument 'count' is declared Counter (1D uint64), got a 1D uint32 array of "
            "shape (1,). Pass a 1D uint64 device array (convert with .astype / reshape before "
            "copying to the device)",
            "why": "minor: correct, but the helper made for it (simtsafe.counter()) is not named",
            "fix": "'Pass simtsafe.counter() (a one-element uint64 device array)'",
        },
    }
)
CHECKS.update(
    {
        "accumulate_add_as_fetch_add": _launch_compact_acc,
        "in_bounds_1d_witness_2d_input": _launch_row_norms,
        "bitonic_compare_swap": lambda m, r: _check_block_sort(m, r, "bitonic_cuda"),
        "coverage_advice_per_block": _follow_coverage_advice,
        "counter_dtype_advice": _launch_counter_uint32,
        "append_second_claim_mispairs": _two_claims_pairing,
    }
)

# =============================================================================================
# DOC_GAPS
# =============================================================================================

DOC_GAPS.update(
    {
        "row_per_thread_output": {
            "source": FR_NBODY_ROW,
            "where": "compile (typing)",
            "doc": "docs/porting.md 'Patterns at a glance'; docs/safety.md witness table",
            "what": "a thread writing a whole (short) row of a 2D output -- acc[i, 0:3], a "
            "bounding box, a per-point feature vector -- has no entry. The spellings that work "
            "(tile_1d on the flattened output, a record dtype, Columns on the transposed [3, n] "
            "array) are each documented for other purposes",
        },
        "block_row_chunked_collectives": {
            "source": FR_ROW_CUMSUM,
            "where": "compile (uniformity)",
            "doc": "docs/cooperation.md 'A row per block (or per warp)'",
            "what": "says a collective inside the row loop is refused and one after it accepted, "
            "which covers reductions only; row scans (cumsum, top-p sampling's cumulative "
            "probabilities, stream compaction per row) need a collective per chunk and have no "
            "documented Tier-1 form",
        },
        "tile_ping_pong": {
            "source": FR_TILE_SWAP,
            "where": "decoration",
            "doc": "docs/cooperation.md (the 'unroll by two' advice is under fill_async only)",
            "what": "ping-pong between two shared tiles (sorting networks, iterative smoothing in "
            "shared memory) is the usual way to get one barrier per step; the refusal of "
            "`src, dst = dst, src` does not say to unroll by two, and the docs say it only for "
            "asynchronous fills",
        },
        "append_soa_buffers": {
            "source": FR_TWO_BUFFERS_ONE_CLAIM,
            "where": "compile (typing)",
            "doc": "docs/atomics.md 'Append buffers'",
            "what": "no word on appending several fields per item; the record dtype works "
            "(`out[s].v = ...`, tested here), but docs/atomics.md only says records are "
            "allowed, and the error's advice (claim again) silently mispairs fields",
        },
    }
)
CHECKS["row_per_thread_output"] = _launch_nbody_naive
CHECKS["block_row_chunked_collectives"] = _check_row_cumsum
CHECKS["tile_ping_pong"] = lambda m, r: _check_block_sort(m, r, "oddeven_sort")
CHECKS["append_soa_buffers"] = _launch_compact_with_index

# =============================================================================================
# Runner
# =============================================================================================


_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=17)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
