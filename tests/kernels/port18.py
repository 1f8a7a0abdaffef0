"""Porting round 18: kernels from real codebases, written first as plain Numba CUDA (the
``*_raw`` twin in each module body) and then ported to Tier 1 -- exercising this week's
features: tuple states in ``block.reduce`` / ``warp.reduce`` (argmax, Welford, the online
softmax state), ``cuda.const.array_like`` tables, ``thread.block_row_chunks`` /
``warp_row_chunks``, 2D shared accumulators and record field stores through helpers.

Kernels: per-row argmax (block and warp per row), LayerNorm by Welford at any width, a warp
row scan, a joint 2D histogram with per-warp privatized bins, a 7-tap 1D convolution with a
constant filter and a shared halo, a uint8 -> RGB lookup-table colour map, reduce-by-key over
sorted keys, a partial dot product + one atomic per block, a bilinear resize of an RGB record
image, CSR SpMV (a warp per row), the k-means assignment with per-cluster sums, a fused
softmax cross-entropy (loss and gradient), stream compaction by a block scan, an n-body step
with shared tiles, a warp softmax at any width, per-row statistics records stored by helpers.

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` below are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1 (no ``simtsafe.unsafe``), compiled with NVVM
                         (``simtsafe.check_kernel``: no finding); on the simulator the port and
                         its raw twin both match numpy and ``simtsafe.sim.check`` replays the
                         port with no finding (``CHECKS``);
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen, why it
                         is safe, and the workaround;
* ``BAD_ERRORS``      -- a message without its fix or with advice beside the point, and a
                         ``sim.check`` crash on code the compiled target accepts;
* ``DOC_GAPS``        -- where the docs and the behaviour disagree, or a cost is undocumented.

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port18 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port18 NAME...  # simulator + numpy

With no NAME, every case runs. Tests: tests/ptx/test_port18_ptx.py, tests/sim/test_port18_sim.py
(the open findings are strict xfails asserting the fixed behaviour).
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

EXTRA_HEADER = "import math\nfrom simtsafe import Accumulate, BlockRow, WarpRow\n"

# =============================================================================================
# ACCEPTED
# =============================================================================================

ARGMAX_TUPLE = """
B = 64


@cuda.jit
def row_argmax_raw(best_i, best_v, x):
    sv = cuda.shared.array(64, np.float32)
    si = cuda.shared.array(64, np.int32)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    bv = np.float32(-np.inf)
    bi = np.int32(x.shape[1])
    for c in range(t, x.shape[1], 64):
        v = x[r, c]
        if v > bv:
            bv = v
            bi = c
    sv[t] = bv
    si[t] = bi
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            ov = sv[t + s]
            oi = si[t + s]
            if ov > sv[t] or (ov == sv[t] and oi < si[t]):
                sv[t] = ov
                si[t] = oi
        cuda.syncthreads()
        s //= 2
    if t == 0:
        best_i[r] = si[0]
        best_v[r] = sv[0]


@ss.device
def argmax_op(a, b):
    # the larger value; among equal values the smaller index (np.argmax's first occurrence)
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


# a block per row: each thread's best over its columns, then one tuple reduce
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="best_i",
           requires=["best_v.size == best_i.size", "best_i.size == x.shape[0]"]))
def row_argmax(best_i: DisjointSlice[np.int32, PerBlock], best_v: DisjointSlice[np.float32, PerBlock],
               x: In2D[np.float32]) -> None:
    bv = np.float32(-np.inf)
    bi = np.int32(x.shape[1])
    for w in thread.block_row(x):
        v = x[w]
        if v > bv:
            bv = v
            bi = np.int32(w.col)
    v, i = ss.block.reduce((bv, bi), argmax_op)
    lead = thread.block_leader()
    best_i[lead] = i
    best_v[lead] = v


# the same, a warp per row: ss.warp.reduce of the (value, index) state
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def row_argmax_warp(best_i: DisjointSlice[np.int32, PerWarp], x: In2D[np.float32]) -> None:
    bv = np.float32(-np.inf)
    bi = np.int32(x.shape[1])
    for w in thread.warp_row(x):
        v = x[w]
        if v > bv:
            bv = v
            bi = np.int32(w.col)
    v, i = ss.warp.reduce((bv, bi), argmax_op)
    best_i[thread.warp_leader()] = i
"""

LAYERNORM_WELFORD = """
B = 64


@cuda.jit
def layernorm_raw(out, x, gamma, beta, eps):
    sn = cuda.shared.array(64, np.float32)
    sm = cuda.shared.array(64, np.float32)
    s2 = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    n = np.float32(0)
    mean = np.float32(0)
    m2 = np.float32(0)
    for c in range(t, x.shape[1], 64):
        v = x[r, c]
        n += np.float32(1)
        d = v - mean
        mean += d / n
        m2 += d * (v - mean)
    sn[t] = n
    sm[t] = mean
    s2[t] = m2
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            nb = sn[t + s]
            if nb > 0:
                na = sn[t]
                nn = na + nb
                d = sm[t + s] - sm[t]
                sm[t] = sm[t] + d * (nb / nn)
                s2[t] = s2[t] + s2[t + s] + d * d * (na * nb / nn)
                sn[t] = nn
        cuda.syncthreads()
        s //= 2
    mu = sm[0]
    rstd = np.float32(1) / math.sqrt(s2[0] / sn[0] + eps)
    for c in range(t, x.shape[1], 64):
        out[r, c] = (x[r, c] - mu) * rstd * gamma[c] + beta[c]


@ss.device
def welford(a, b):
    na, ma, qa = a
    nb, mb, qb = b
    n = na + nb
    if n == 0:
        return a
    d = mb - ma
    return n, ma + d * (nb / n), qa + qb + d * d * (na * nb / n)


# LayerNorm of rows of any width: per-thread Welford over its columns, one tuple reduce
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]",
                     "gamma.size == out.shape[1]", "beta.size == out.shape[1]"]))
def layernorm(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32], gamma: In[np.float32],
              beta: In[np.float32], eps: np.float32) -> None:
    n = np.float32(0)
    mean = np.float32(0)
    m2 = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        n += np.float32(1)
        d = v - mean
        mean += d / n
        m2 += d * (v - mean)
    n, mean, m2 = ss.block.reduce((n, mean, m2), welford)
    rstd = np.float32(1) / math.sqrt(m2 / n + eps)
    for w in thread.block_row(out):
        out[w] = (x[w] - mean) * rstd * gamma[w.col] + beta[w.col]
"""

ROW_SCAN_WARP = """
@cuda.jit
def row_scan_raw(out, x):
    # a warp per row; chunks of 32 columns, shfl_up scan, carry from lane 31
    lane = cuda.laneid
    r = cuda.grid(1) // 32
    if r < x.shape[0]:
        carry = np.float32(0)
        for c0 in range(0, x.shape[1], 32):
            c = c0 + lane
            v = x[r, c] if c < x.shape[1] else np.float32(0)
            for off in (1, 2, 4, 8, 16):
                u = cuda.shfl_up_sync(0xFFFFFFFF, v, off)
                if lane >= off:
                    v += u
            if c < x.shape[1]:
                out[r, c] = v + carry
            carry += cuda.shfl_sync(0xFFFFFFFF, v, 31)


# a warp per row, any width: warp_row_chunks keeps every lane in the chunk loop
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]"]))
def row_scan(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    carry = np.float32(0)
    for c in thread.warp_row_chunks(out):
        v = x[c]
        s = ss.warp.scan(v)
        out[c] = s + carry
        carry += ss.warp.sum(v)
"""

JOINT_HIST = """
B = 128
NW = 4          # warps per block
NB = 16         # bins per image (a byte >> 4)
NBB = 256       # NB * NB joint bins


@cuda.jit
def joint_hist_raw(h, a, b):
    sh = cuda.shared.array((4, 256), np.uint32)   # a copy of the bins per warp
    t = cuda.threadIdx.x
    wp = t // 32
    for k in range(t, 4 * 256, 128):
        sh[k // 256, k % 256] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        cuda.atomic.add(sh, (wp, (a[i] >> 4) * 16 + (b[i] >> 4)), 1)
    cuda.syncthreads()
    for k in range(t, 256, 128):
        tot = sh[0, k] + sh[1, k] + sh[2, k] + sh[3, k]
        if tot > 0:
            cuda.atomic.add(h, k, tot)


# joint histogram of two byte images, one privatized copy of the bins per warp
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["a.size == b.size", "h.size == 256"]))
def joint_hist(h: Accumulate[np.uint32], a: In[np.uint8], b: In[np.uint8]) -> None:
    bins = ss.shared.accumulator((NW, NBB), np.uint32)
    wp = cuda.threadIdx.x // 32
    for w in thread.grid_stride(a):
        bins.add((wp, (np.int32(a[w]) >> 4) * NB + (np.int32(b[w]) >> 4)), 1)
    ss.block.sync()
    for k in range(cuda.threadIdx.x, NBB, B):
        tot = bins[0, k] + bins[1, k] + bins[2, k] + bins[3, k]
        if tot > 0:
            h.add(k, tot)
"""

CONV1D_CONST = """
B = 64
R = 3
HALO = 70       # B + 2 * R
FILT = np.array([-1, 2, 5, 8, 5, 2, -1], dtype=np.float32) / 20


@cuda.jit
def conv1d_raw(out, x):
    f = cuda.const.array_like(FILT)
    t = cuda.shared.array(70, np.float32)
    i = cuda.grid(1)
    base = cuda.blockIdx.x * 64 - 3
    for k in range(cuda.threadIdx.x, 70, 64):
        j = base + k
        t[k] = x[j] if j >= 0 and j < x.size else np.float32(0)
    cuda.syncthreads()
    if i < out.size:
        acc = np.float32(0)
        for k in range(7):
            acc += f[k] * t[cuda.threadIdx.x + k]
        out[i] = acc


# 7-tap convolution: the filter in constant memory, the input's block window (halo) in a tile
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def conv1d(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    f = cuda.const.array_like(FILT)
    t = ss.shared.tile(HALO, np.float32)
    base = cuda.blockIdx.x * B - R
    for w in thread.block_stride(t):
        j = base + w.index
        t[w] = x[j] if j >= 0 and j < x.size else np.float32(0)
    ss.block.sync()
    i = thread.index_1d()
    me = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(2 * R + 1):
        acc += f[k] * t[me + k]
    out[i] = acc
"""

COLORMAP = """
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])
LUT = np.stack([np.arange(256), 255 - np.arange(256), (np.arange(256) * 7) % 256], 1).astype(np.uint8)


@cuda.jit
def colormap_raw(out, img, lut):
    i = cuda.grid(1)
    if i < out.size:
        v = img[i]
        out[i].r = lut[v, 0]
        out[i].g = lut[v, 1]
        out[i].b = lut[v, 2]


@ss.device
def put_rgb(o: DisjointSlice[RGB], w: ss.ThreadIndex[Index1D], lut, v) -> None:
    o[w].r = lut[v, 0]
    o[w].g = lut[v, 1]
    o[w].b = lut[v, 2]


# a uint8 -> RGB lookup-table colour map; the table in constant memory, the fields stored by a helper
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["img.size == out.size"], covers="out"))
def colormap(out: DisjointSlice[RGB], img: In[np.uint8]) -> None:
    lut = cuda.const.array_like(LUT)
    w = thread.index_1d()
    if w.in_bounds(img):
        put_rgb(out, w, lut, img[w])
"""

SEG_REDUCE = """
B = 64


@cuda.jit
def seg_reduce_raw(out, keys, vals):
    # keys sorted: a thread at a segment's tail adds its block-local inclusive prefix, one at a
    # segment's head subtracts its exclusive prefix (both at the key's slot)
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = keys.size
    v = vals[i] if i < n else np.float32(0)
    sh[t] = v
    cuda.syncthreads()
    off = 1
    while off < 64:
        u = sh[t - off] if t >= off else np.float32(0)
        cuda.syncthreads()
        sh[t] += u
        cuda.syncthreads()
        off *= 2
    if i < n:
        k = keys[i]
        if t == 63 or i == n - 1 or keys[i + 1] != k:
            cuda.atomic.add(out, k, sh[t])
        if t == 0 or keys[i - 1] != k:
            cuda.atomic.add(out, k, -(sh[t] - v))


# reduce-by-key over sorted keys: a block scan, then one atomic per segment end inside the block
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["keys.size == vals.size"]))
def seg_reduce(out: Accumulate[np.float32], keys: In[np.int32], vals: In[np.float32]) -> None:
    i = thread.index_1d()
    n = keys.size
    ok = i.in_bounds(keys)
    v = vals[i]
    incl = ss.block.scan(v)
    t = cuda.threadIdx.x
    if ok:
        j = i.index
        k = keys[j]
        if t == B - 1 or j == n - 1 or keys[j + 1] != k:
            out.add(k, incl)
        if t == 0 or keys[j - 1] != k:
            out.add(k, -(incl - v))
"""

DOT_ATOMIC = """
B = 64


@cuda.jit
def dot_raw(res, x, y):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i] * y[i]
    sh[t] = acc
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(res, 0, sh[0])


# per-block partial dot product (deterministic block.sum), then one atomic add per block
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == y.size", "res.size == 1"]))
def dot(res: Accumulate[np.float32], x: In[np.float32], y: In[np.float32]) -> None:
    acc = np.float32(0)
    for w in thread.grid_stride(x):
        acc += x[w] * y[w]
    s = ss.block.sum(acc)
    if cuda.threadIdx.x == 0:
        res.add(0, s)
"""

RESIZE_RGB = """
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])


@cuda.jit
def resize_raw(out, img):
    x, y = cuda.grid(2)
    oh, ow = out.shape
    ih, iw = img.shape
    if y < oh and x < ow:
        fy = max((y + np.float32(0.5)) * np.float32(ih / oh) - np.float32(0.5), np.float32(0))
        fx = max((x + np.float32(0.5)) * np.float32(iw / ow) - np.float32(0.5), np.float32(0))
        y0 = min(int(fy), ih - 1)
        x0 = min(int(fx), iw - 1)
        y1 = min(y0 + 1, ih - 1)
        x1 = min(x0 + 1, iw - 1)
        ly = fy - y0
        lx = fx - x0
        a, b, c, d = img[y0, x0], img[y0, x1], img[y1, x0], img[y1, x1]
        out[y, x].r = np.uint8(min(255, int(((a.r * (1 - lx) + b.r * lx) * (1 - ly) + (c.r * (1 - lx) + d.r * lx) * ly) + np.float32(0.5))))
        out[y, x].g = np.uint8(min(255, int(((a.g * (1 - lx) + b.g * lx) * (1 - ly) + (c.g * (1 - lx) + d.g * lx) * ly) + np.float32(0.5))))
        out[y, x].b = np.uint8(min(255, int(((a.b * (1 - lx) + b.b * lx) * (1 - ly) + (c.b * (1 - lx) + d.b * lx) * ly) + np.float32(0.5))))


@ss.device
def lerp2(a, b, c, d, lx, ly):
    v = (np.float32(a) * (1 - lx) + np.float32(b) * lx) * (1 - ly) + (np.float32(c) * (1 - lx) + np.float32(d) * lx) * ly
    return np.uint8(min(255, int(v + np.float32(0.5))))


# bilinear resize of an RGB image (half-pixel centres), record in, record out. The input's
# fields are read as a["r"]: `a.r` of a record read by int index (what the raw twin and the
# finding simcheck_record_attr_int_index write) stops sim.check with an AttributeError
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1), covers="out"))
def resize(out: DisjointSlice2D[RGB], img: In2D[RGB]) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        oh, ow = out.shape
        ih, iw = img.shape
        fy = max((w.row + np.float32(0.5)) * np.float32(ih / oh) - np.float32(0.5), np.float32(0))
        fx = max((w.col + np.float32(0.5)) * np.float32(iw / ow) - np.float32(0.5), np.float32(0))
        y0 = min(int(fy), ih - 1)
        x0 = min(int(fx), iw - 1)
        y1 = min(y0 + 1, ih - 1)
        x1 = min(x0 + 1, iw - 1)
        ly = fy - y0
        lx = fx - x0
        a, b, c, d = img[y0, x0], img[y0, x1], img[y1, x0], img[y1, x1]
        out[w].r = lerp2(a["r"], b["r"], c["r"], d["r"], lx, ly)
        out[w].g = lerp2(a["g"], b["g"], c["g"], d["g"], lx, ly)
        out[w].b = lerp2(a["b"], b["b"], c["b"], d["b"], lx, ly)
"""

SPMV = """
@cuda.jit
def spmv_raw(y, indptr, indices, data, x):
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row < y.size:
        acc = np.float32(0)
        for k in range(indptr[row] + lane, indptr[row + 1], 32):
            acc += data[k] * x[indices[k]]
        for off in (16, 8, 4, 2, 1):
            acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, off)
        if lane == 0:
            y[row] = acc


# CSR SpMV, a warp per row
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="y",
           requires=["indptr.size == y.size + 1", "indices.size == data.size"]))
def spmv(y: DisjointSlice[np.float32, PerWarp], indptr: In[np.int32], indices: In[np.int32],
         data: In[np.float32], x: In[np.float32]) -> None:
    row = cuda.grid(1) // 32
    acc = np.float32(0)
    if row < y.size:
        for k in range(indptr[row] + cuda.laneid, indptr[row + 1], 32):
            acc += data[k] * x[indices[k]]
    tot = ss.warp.sum(acc)
    y[thread.warp_leader()] = tot
"""

KMEANS2D = """
B = 64
K = 5
D = 3


@cuda.jit
def kmeans_raw(labels, sums, counts, pts, cent):
    ssum = cuda.shared.array((5, 3), np.float32)
    scnt = cuda.shared.array(5, np.uint32)
    t = cuda.threadIdx.x
    if t < 15:
        ssum[t // 3, t % 3] = 0
    if t < 5:
        scnt[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < pts.shape[0]:
        best = 0
        bd = np.float32(np.inf)
        for c in range(5):
            d2 = np.float32(0)
            for d in range(3):
                e = pts[i, d] - cent[c, d]
                d2 += e * e
            if d2 < bd:
                bd = d2
                best = c
        labels[i] = best
        for d in range(3):
            cuda.atomic.add(ssum, (best, d), pts[i, d])
        cuda.atomic.add(scnt, best, 1)
    cuda.syncthreads()
    if t < 15:
        cuda.atomic.add(sums, (t // 3, t % 3), ssum[t // 3, t % 3])
    if t < 5:
        cuda.atomic.add(counts, t, scnt[t])


# k-means assignment; per-cluster sums in a 2D shared accumulator, flushed once per block
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="labels",
           requires=["labels.size == pts.shape[0]", "pts.shape[1] == 3", "cent.shape[0] == 5",
                     "cent.shape[1] == 3", "sums.size == 15", "counts.size == 5"]))
def kmeans_assign(labels: DisjointSlice[np.int32], sums: Accumulate[np.float32], counts: Accumulate[np.uint32],
                  pts: In2D[np.float32], cent: In2D[np.float32]) -> None:
    ssum = ss.shared.accumulator((K, D), np.float32)
    scnt = ss.shared.accumulator(K, np.uint32)
    i = thread.index_1d()
    if i.in_bounds(labels):
        best = 0
        bd = np.float32(np.inf)
        for c in range(K):
            d2 = np.float32(0)
            for d in range(D):
                e = pts[i.index, d] - cent[c, d]
                d2 += e * e
            if d2 < bd:
                bd = d2
                best = c
        labels[i] = best
        for d in range(D):
            ssum.add((best, d), pts[i.index, d])
        scnt.add(best, 1)
    ss.block.sync()
    t = cuda.threadIdx.x
    if t < K * D:
        sums.add(t, ssum[t // D, t % D])
    if t < K:
        counts.add(t, scnt[t])
"""

SOFTMAX_XENT = """
B = 64


@cuda.jit
def xent_raw(loss, grad, x, labels):
    sm = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    r = cuda.blockIdx.x
    m = np.float32(-np.inf)
    for c in range(t, x.shape[1], 64):
        m = max(m, x[r, c])
    sm[t] = m
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sm[t] = max(sm[t], sm[t + s])
        cuda.syncthreads()
        s //= 2
    m = sm[0]
    cuda.syncthreads()
    acc = np.float32(0)
    for c in range(t, x.shape[1], 64):
        acc += math.exp(x[r, c] - m)
    sm[t] = acc
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    tot = sm[0]
    lab = labels[r]
    for c in range(t, x.shape[1], 64):
        p = math.exp(x[r, c] - m) / tot
        grad[r, c] = p - (np.float32(1) if c == lab else np.float32(0))
    if t == 0:
        loss[r] = math.log(tot) + m - x[r, lab]


@ss.device
def online_softmax(a, b):
    # (running max, sum of exp(x - max)): the one-pass softmax state
    m = max(a[0], b[0])
    sa = a[1] * math.exp(a[0] - m) if a[1] > 0 else np.float32(0)
    sb = b[1] * math.exp(b[0] - m) if b[1] > 0 else np.float32(0)
    return m, sa + sb


# fused softmax cross-entropy, forward loss and backward gradient, a block per row
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="grad",
           requires=["loss.size == x.shape[0]", "labels.size == x.shape[0]",
                     "grad.shape[0] == x.shape[0]", "grad.shape[1] == x.shape[1]"]))
def xent(loss: DisjointSlice[np.float32, PerBlock], grad: DisjointSlice[np.float32, BlockRow],
         x: In2D[np.float32], labels: In[np.int32]) -> None:
    m = np.float32(-np.inf)
    s = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        if v > m:
            s = s * math.exp(m - v) + np.float32(1)
            m = v
        else:
            s += math.exp(v - m)
    m, s = ss.block.reduce((m, s), online_softmax)
    r = cuda.blockIdx.x
    lab = labels[r] if r < labels.size else 0
    inv = np.float32(1) / s
    for w in thread.block_row(grad):
        p = math.exp(x[w] - m) * inv
        grad[w] = p - (np.float32(1) if w.col == lab else np.float32(0))
    if r < x.shape[0]:
        loss[thread.block_leader()] = math.log(s) + m - x[r, lab]
"""

COMPACT_SCAN = """
B = 64


@cuda.jit
def count_raw(counts, x, thr):
    sh = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        sh[0] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size and x[i] > thr:
        cuda.atomic.add(sh, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        counts[cuda.blockIdx.x] = sh[0]


@cuda.jit
def scatter_raw(out, x, offs, thr):
    sh = cuda.shared.array(64, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    keep = 1 if i < x.size and x[i] > thr else 0
    sh[t] = keep
    cuda.syncthreads()
    off = 1
    while off < 64:
        u = sh[t - off] if t >= off else 0
        cuda.syncthreads()
        sh[t] += u
        cuda.syncthreads()
        off *= 2
    if keep:
        out[offs[cuda.blockIdx.x] + sh[t] - 1] = x[i]


# stream compaction by prefix sums, Tier 1: the block's exclusive scan ranks the kept items
# in thread order, and block_claim's one atomic gives the block its base (blocks unordered)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, appends={"out": "count"}))
def compact(out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32], thr: np.float32) -> None:
    i = thread.index_1d()
    v = x[i]
    keep = i.in_bounds(x) and v > thr
    s = out.block_claim(keep)
    out[s] = v
"""

NBODY_SOA = """
B = 64


@cuda.jit
def nbody_raw(ax, ay, az, px, py, pz, pm, eps2):
    tx = cuda.shared.array(64, np.float32)
    ty = cuda.shared.array(64, np.float32)
    tz = cuda.shared.array(64, np.float32)
    tm = cuda.shared.array(64, np.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    n = px.size
    xi = px[i] if i < n else np.float32(0)
    yi = py[i] if i < n else np.float32(0)
    zi = pz[i] if i < n else np.float32(0)
    fx = np.float32(0)
    fy = np.float32(0)
    fz = np.float32(0)
    for j0 in range(0, n, 64):
        j = j0 + t
        tx[t] = px[j] if j < n else np.float32(0)
        ty[t] = py[j] if j < n else np.float32(0)
        tz[t] = pz[j] if j < n else np.float32(0)
        tm[t] = pm[j] if j < n else np.float32(0)
        cuda.syncthreads()
        for k in range(64):
            dx = tx[k] - xi
            dy = ty[k] - yi
            dz = tz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = np.float32(1) / math.sqrt(r2)
            s = tm[k] * inv * inv * inv
            fx += dx * s
            fy += dy * s
            fz += dz * s
        cuda.syncthreads()
    if i < n:
        ax[i] = fx
        ay[i] = fy
        az[i] = fz


# n-body accelerations, structure-of-arrays, the bodies streamed through shared tiles
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="ax",
           requires=["ay.size == ax.size", "az.size == ax.size", "px.size == ax.size",
                     "py.size == ax.size", "pz.size == ax.size", "pm.size == ax.size"]))
def nbody(ax: DisjointSlice[np.float32], ay: DisjointSlice[np.float32], az: DisjointSlice[np.float32],
          px: In[np.float32], py: In[np.float32], pz: In[np.float32], pm: In[np.float32],
          eps2: np.float32) -> None:
    tx = ss.shared.tile(B, np.float32)
    ty = ss.shared.tile(B, np.float32)
    tz = ss.shared.tile(B, np.float32)
    tm = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    n = px.size
    xi = px[i]
    yi = py[i]
    zi = pz[i]
    fx = np.float32(0)
    fy = np.float32(0)
    fz = np.float32(0)
    for j0 in range(0, n, B):
        j = j0 + me.index
        tx[me] = px[j] if j < n else np.float32(0)
        ty[me] = py[j] if j < n else np.float32(0)
        tz[me] = pz[j] if j < n else np.float32(0)
        tm[me] = pm[j] if j < n else np.float32(0)
        ss.block.sync()
        for k in range(B):
            dx = tx[k] - xi
            dy = ty[k] - yi
            dz = tz[k] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = np.float32(1) / math.sqrt(r2)
            s = tm[k] * inv * inv * inv
            fx += dx * s
            fy += dy * s
            fz += dz * s
        ss.block.sync()
    ax[i] = fx
    ay[i] = fy
    az[i] = fz
"""


SOFTMAX_CHUNKS = """
B = 64


# softmax over rows of any width, a warp per row, three chunk walks (max, sum, write)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out"))
def softmax_warp(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for c in thread.warp_row_chunks(x):
        v = x[c] if c.valid else np.float32(-np.inf)
        m = max(m, ss.warp.max(v))
    s = np.float32(0)
    for c in thread.warp_row_chunks(x):
        e = math.exp(x[c] - m) if c.valid else np.float32(0)
        s += ss.warp.sum(e)
    for c in thread.warp_row_chunks(out):
        out[c] = math.exp(x[c] - m) / s
"""

RECORD_STATS = """
ST = np.dtype([("mu", np.float32), ("s2", np.float32), ("arg", np.int32)])
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])


@ss.device
def put_stats(o: DisjointSlice[ST, PerWarp], w, mean, var, arg) -> None:
    o[w].mu = mean
    o[w].s2 = var
    o[w].arg = arg


@ss.device
def put_gray(o: DisjointSlice[RGB, BlockRow], w, v) -> None:
    o[w].r = v
    o[w].g = v
    o[w].b = v


# per-row statistics into a record per warp; every lane calls the helper, only lane 0's lands
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def row_stats(st: DisjointSlice[ST, PerWarp], x: In2D[np.float32]) -> None:
    s = np.float32(0)
    q = np.float32(0)
    for w in thread.warp_row(x):
        s += x[w]
        q += x[w] * x[w]
    s = ss.warp.sum(s)
    q = ss.warp.sum(q)
    n = np.float32(x.shape[1])
    put_stats(st, thread.warp_leader(), s / n, q / n - (s / n) * (s / n), np.int32(cuda.laneid))


# gray -> RGB records by row chunks: the last chunk's witnesses past the row's end store nothing
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def gray_rows(out: DisjointSlice[RGB, BlockRow], img: In2D[np.uint8]) -> None:
    for c in thread.block_row_chunks(out):
        v = img[c]
        put_gray(out, c, v)
        out[c].g = np.uint8(255) - v
"""

ACCEPTED: dict[str, str] = {
    "row_argmax": ARGMAX_TUPLE,
    "layernorm_welford": LAYERNORM_WELFORD,
    "row_scan_warp": ROW_SCAN_WARP,
    "joint_hist": JOINT_HIST,
    "conv1d_const": CONV1D_CONST,
    "colormap_lut": COLORMAP,
    "seg_reduce_by_key": SEG_REDUCE,
    "dot_atomic": DOT_ATOMIC,
    "resize_rgb": RESIZE_RGB,
    "spmv_csr_warp": SPMV,
    "kmeans_acc2d": KMEANS2D,
    "softmax_xent": SOFTMAX_XENT,
    "compact_scan": COMPACT_SCAN,
    "nbody_soa": NBODY_SOA,
    "softmax_warp_chunks": SOFTMAX_CHUNKS,
    "record_stats_helpers": RECORD_STATS,
}

# =============================================================================================
# numpy checks (simulator). Each launches the port AND its raw twin (a Tier-3 launch) on the
# same data, compares both with numpy, and replays the port under ``simtsafe.sim.check``
# (``_clean``: no finding, the whole launch replayed). Sizes are small and not multiples of
# the block.
# =============================================================================================

#: the last sim.check reports that were not clean (name -> text), for the runner's output
UNCLEAN: dict[str, str] = {}


def _raw(kernel: Any, grid: Any, block: Any, *args: Any) -> None:
    import simtsafe as ss

    with ss.unsafe("SAFETY: the raw twins are launched with the grid and block they expect"):
        kernel[grid, block](*args)


def _replay(kernel: Any, grid: Any, block: Any, *args: Any) -> dict[str, np.ndarray]:
    """A raw twin Numba's simulator cannot run (``cuda.shfl_*_sync`` is missing from its
    ``FakeCUDAModule``) replayed by ``simtsafe.sim.check`` instead: its outputs, asserted clean."""
    from simtsafe import sim

    rep = sim.check(kernel, grid, block, *args)
    assert rep.ok, str(rep)
    return dict(rep.outputs)


def _clean(prepared: Any, *args: Any) -> bool:
    """``sim.check`` of one prepared launch with host copies of ``args``: no finding."""
    from simtsafe import sim

    rep = sim.check(prepared, *args)
    if not rep.ok:
        UNCLEAN[prepared.kernel.name if hasattr(prepared, "kernel") else str(prepared)] = str(rep)
        print(rep)
    return bool(rep.ok)


def _scores(rng: np.random.Generator, rows: int = 5, cols: int = 150) -> np.ndarray:
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x[1, 7] = x[1, 120] = 9.0  # a tie across threads: the first index wins
    x[2, 3] = x[2, 67] = 9.0  # a tie between threads 3 and 3 of the next chunk
    return x


def _check_argmax(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = _scores(rng)
    bi, bv = _dev(np.full(5, -1, np.int32)), _dev(np.full(5, np.nan, np.float32))
    p = m.row_argmax.prepare(grid=5, block=64)
    p(bi, bv, _dev(x))
    ri, rv = _dev(np.full(5, -1, np.int32)), _dev(np.full(5, np.nan, np.float32))
    _raw(m.row_argmax_raw, 5, 64, ri, rv, _dev(x))
    ref = np.argmax(x, 1)
    wi = _dev(np.full(6, -1, np.int32))
    pw = m.row_argmax_warp.prepare(grid=ss.cover(5, 2), block=64)
    pw(wi, _dev(x))
    return bool(
        np.array_equal(_host(bi), ref)
        and np.array_equal(_host(bv), x.max(1))
        and np.array_equal(_host(ri), ref)
        and np.array_equal(_host(wi)[:5], ref)
        and _clean(p, np.zeros(5, np.int32), np.zeros(5, np.float32), x)
        and _clean(pw, np.zeros(6, np.int32), x)
    )


def _check_layernorm(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (1, 50, 150):
        x = (rng.standard_normal((4, cols)) * 3 + 100).astype(np.float32)
        g = rng.standard_normal(cols).astype(np.float32)
        b = rng.standard_normal(cols).astype(np.float32)
        eps = np.float32(1e-5)
        o = _dev(np.full_like(x, np.nan))
        p = m.layernorm.prepare(grid=4, block=64)
        p(o, _dev(x), _dev(g), _dev(b), eps)
        r = _dev(np.full_like(x, np.nan))
        _raw(m.layernorm_raw, 4, 64, r, _dev(x), _dev(g), _dev(b), eps)
        x64 = x.astype(np.float64)
        mu, var = x64.mean(1, keepdims=True), x64.var(1, keepdims=True)
        ref = (x64 - mu) / np.sqrt(var + 1e-5) * g + b
        ok = ok and np.allclose(_host(o), ref, atol=2e-3) and np.allclose(_host(r), ref, atol=2e-3)
    return bool(ok and _clean(p, np.zeros_like(x), x, g, b, eps))


def _check_row_scan(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ok = True
    for cols in (1, 31, 32, 33, 100):
        x = rng.integers(-3, 4, (5, cols)).astype(np.float32)
        o = _dev(np.full_like(x, np.nan))
        p = m.row_scan.prepare(grid=ss.cover(5, 2), block=64)
        p(o, _dev(x))
        r = _replay(m.row_scan_raw, ss.cover(5, 2), 64, np.full_like(x, np.nan), x)["out"]
        ref = np.cumsum(x, 1)
        ok = ok and np.array_equal(_host(o), ref) and np.array_equal(r, ref)
    return bool(ok and _clean(p, np.zeros_like(x), x))


def _check_joint_hist(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 700
    a = rng.integers(0, 256, n).astype(np.uint8)
    b = ((a.astype(np.int32) + rng.integers(0, 40, n)) % 256).astype(np.uint8)  # correlated
    h = _dev(np.zeros(256, np.uint32))
    p = m.joint_hist.prepare(grid=2, block=128)
    p(h, _dev(a), _dev(b))
    hr = _dev(np.zeros(256, np.uint32))
    _raw(m.joint_hist_raw, 2, 128, hr, _dev(a), _dev(b))
    ref = np.histogram2d(a >> 4, b >> 4, bins=16, range=[[0, 16], [0, 16]])[0].astype(np.uint32)
    return bool(
        np.array_equal(_host(h).reshape(16, 16), ref)
        and np.array_equal(_host(hr).reshape(16, 16), ref)
        and _clean(p, np.zeros(256, np.uint32), a, b)
    )


def _check_conv1d(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 150
    x = rng.standard_normal(n).astype(np.float32)
    o = _dev(np.full(n, np.nan, np.float32))
    p = m.conv1d.prepare(grid=ss.cover(n, 64), block=64)
    p(o, _dev(x))
    r = _dev(np.full(n, np.nan, np.float32))
    _raw(m.conv1d_raw, ss.cover(n, 64), 64, r, _dev(x))
    ref = np.convolve(x, m.FILT[::-1], "same")
    return bool(
        np.allclose(_host(o), ref, atol=1e-5)
        and np.allclose(_host(r), ref, atol=1e-5)
        and _clean(p, np.zeros(n, np.float32), x)
    )


def _check_colormap(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 100
    img = rng.integers(0, 256, n).astype(np.uint8)
    o = _dev(np.zeros(n, m.RGB))
    p = m.colormap.prepare(grid=ss.cover(n, 64), block=64)
    p(o, _dev(img))
    r = _dev(np.zeros(n, m.RGB))
    _raw(m.colormap_raw, ss.cover(n, 64), 64, r, _dev(img), _dev(m.LUT))
    ho, hr = _host(o), _host(r)
    ok = all(
        np.array_equal(ho[f], m.LUT[img, k]) and np.array_equal(hr[f], m.LUT[img, k])
        for k, f in enumerate("rgb")
    )
    return bool(ok and _clean(p, np.zeros(n, m.RGB), img))


def _seg_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    # sorted keys with runs that cross block boundaries, a run of 1, an absent key
    lens = [5, 70, 1, 3, 40, 2, 29]
    keys = np.repeat(np.array([0, 1, 2, 4, 5, 6, 7], np.int32), lens)
    vals = rng.integers(-5, 6, keys.size).astype(np.float32)  # exact in float32
    return keys, vals


def _check_seg_reduce(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    keys, vals = _seg_data(rng)
    n = keys.size
    o = _dev(np.zeros(8, np.float32))
    p = m.seg_reduce.prepare(grid=ss.cover(n, 64), block=64)
    p(o, _dev(keys), _dev(vals))
    r = _dev(np.zeros(8, np.float32))
    _raw(m.seg_reduce_raw, ss.cover(n, 64), 64, r, _dev(keys), _dev(vals))
    ref = np.bincount(keys, vals, minlength=8).astype(np.float32)
    return bool(
        np.array_equal(_host(o), ref)
        and np.array_equal(_host(r), ref)
        and _clean(p, np.zeros(8, np.float32), keys, vals)
    )


def _check_dot(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 500
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    o = _dev(np.zeros(1, np.float32))
    p = m.dot.prepare(grid=3, block=64)
    p(o, _dev(x), _dev(y))
    r = _dev(np.zeros(1, np.float32))
    _raw(m.dot_raw, 3, 64, r, _dev(x), _dev(y))
    ref = np.dot(x.astype(np.float64), y)
    return bool(
        np.isclose(_host(o)[0], ref, atol=1e-3)
        and np.isclose(_host(r)[0], ref, atol=1e-3)
        and _clean(p, np.zeros(1, np.float32), x, y)
    )


def _resize_ref(img: np.ndarray, oh: int, ow: int) -> np.ndarray:
    ih, iw = img.shape

    def axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = np.maximum(
            (np.arange(n_out) + np.float32(0.5)) * np.float32(n_in / n_out) - np.float32(0.5), 0
        )
        f = f.astype(np.float32)
        i0 = np.minimum(f.astype(int), n_in - 1)
        return i0, np.minimum(i0 + 1, n_in - 1), (f - i0).astype(np.float32)

    y0, y1, ly = axis(oh, ih)
    x0, x1, lx = axis(ow, iw)
    ly, lx = ly[:, None], lx[None, :]
    out = np.zeros((oh, ow), img.dtype)
    for f in "rgb":
        c = img[f].astype(np.float32)
        v = (c[y0][:, x0] * (1 - lx) + c[y0][:, x1] * lx) * (1 - ly) + (
            c[y1][:, x0] * (1 - lx) + c[y1][:, x1] * lx
        ) * ly
        out[f] = np.minimum(255, (v + np.float32(0.5)).astype(int))
    return out


def _check_resize(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ih, iw, oh, ow = 7, 9, 13, 11
    img = np.zeros((ih, iw), m.RGB)
    for f in "rgb":
        img[f] = rng.integers(0, 256, (ih, iw))
    o = _dev(np.zeros((oh, ow), m.RGB))
    grid = (ss.cover(ow, 16), ss.cover(oh, 8))
    p = m.resize.prepare(grid=grid, block=(16, 8))
    p(o, _dev(img))
    r = _dev(np.zeros((oh, ow), m.RGB))
    _raw(m.resize_raw, grid, (16, 8), r, _dev(img))
    ref = _resize_ref(img, oh, ow)
    ho, hr = _host(o), _host(r)
    # within one unit (float rounding at .5 between numpy's and the kernel's evaluation order)
    ok = all(
        np.abs(ho[f].astype(int) - ref[f]).max() <= 1 and np.array_equal(ho[f], hr[f])
        for f in "rgb"
    )
    return bool(ok and _clean(p, np.zeros((oh, ow), m.RGB), img))


def _csr(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    rows, cols = 7, 60
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    a[rng.random((rows, cols)) < 0.6] = 0
    a[3] = 0  # an empty row
    a[5, :] = rng.standard_normal(cols)  # a row longer than a warp
    nz = np.nonzero(a)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(nz[0], minlength=rows))]).astype(np.int32)
    return a, indptr, nz[1].astype(np.int32), a[nz].astype(np.float32)


def _check_spmv(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    a, indptr, idx, data = _csr(rng)
    x = rng.standard_normal(a.shape[1]).astype(np.float32)
    rows = a.shape[0]
    y = _dev(np.full(rows, np.nan, np.float32))
    p = m.spmv.prepare(grid=ss.cover(rows, 2), block=64)
    p(y, _dev(indptr), _dev(idx), _dev(data), _dev(x))
    r = _replay(m.spmv_raw, ss.cover(rows, 2), 64, np.zeros(rows, np.float32), indptr, idx, data, x)
    ref = a.astype(np.float64) @ x
    return bool(
        np.allclose(_host(y), ref, atol=1e-4)
        and np.allclose(r["y"], ref, atol=1e-4)
        and _clean(p, np.zeros(rows, np.float32), indptr, idx, data, x)
    )


def _check_kmeans(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n, d, k = 150, 3, 5
    pts = rng.integers(-8, 9, (n, d)).astype(np.float32) / 4  # exact sums in float32
    cent = rng.standard_normal((k, d)).astype(np.float32)
    lab, sums, cnt = (
        _dev(np.full(n, -1, np.int32)),
        _dev(np.zeros(k * d, np.float32)),
        _dev(np.zeros(k, np.uint32)),
    )
    p = m.kmeans_assign.prepare(grid=ss.cover(n, 64), block=64)
    p(lab, sums, cnt, _dev(pts), _dev(cent))
    rl, rs, rc = (
        _dev(np.full(n, -1, np.int32)),
        _dev(np.zeros((k, d), np.float32)),
        _dev(np.zeros(k, np.uint32)),
    )
    _raw(m.kmeans_raw, ss.cover(n, 64), 64, rl, rs, rc, _dev(pts), _dev(cent))
    ref = ((pts[:, None] - cent[None]) ** 2).sum(-1).argmin(1)
    refs = np.stack([pts[ref == j].sum(0) for j in range(k)])
    refc = np.bincount(ref, minlength=k)
    return bool(
        np.array_equal(_host(lab), ref)
        and np.array_equal(_host(cnt), refc)
        and np.array_equal(_host(sums).reshape(k, d), refs)
        and np.array_equal(_host(rl), ref)
        and np.array_equal(_host(rc), refc)
        and np.array_equal(_host(rs), refs)
        and _clean(
            p, np.zeros(n, np.int32), np.zeros(k * d, np.float32), np.zeros(k, np.uint32), pts, cent
        )
    )


def _check_xent(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (3, 150):
        rows = 5
        x = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
        lab = rng.integers(0, cols, rows).astype(np.int32)
        loss, grad = _dev(np.full(rows, np.nan, np.float32)), _dev(np.full_like(x, np.nan))
        p = m.xent.prepare(grid=rows, block=64)
        p(loss, grad, _dev(x), _dev(lab))
        rl, rg = _dev(np.full(rows, np.nan, np.float32)), _dev(np.full_like(x, np.nan))
        _raw(m.xent_raw, rows, 64, rl, rg, _dev(x), _dev(lab))
        x64 = x.astype(np.float64)
        mx = x64.max(1, keepdims=True)
        e = np.exp(x64 - mx)
        sm = e / e.sum(1, keepdims=True)
        refl = np.log(e.sum(1)) + mx[:, 0] - x64[np.arange(rows), lab]
        refg = sm.copy()
        refg[np.arange(rows), lab] -= 1
        ok = (
            ok
            and np.allclose(_host(loss), refl, atol=1e-4)
            and np.allclose(_host(grad), refg, atol=1e-5)
            and np.allclose(_host(rl), refl, atol=1e-4)
            and np.allclose(_host(rg), refg, atol=1e-5)
        )
    return bool(ok and _clean(p, np.zeros(rows, np.float32), np.zeros_like(x), x, lab))


def _check_compact(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    thr = np.float32(0.3)
    out = _dev(np.full(n, np.nan, np.float32))
    c = ss.counter()
    p = m.compact.prepare(grid=ss.cover(n, 64), block=64)
    p(out, c, _dev(x), thr)
    k = ss.appended(out, c)
    h = _host(out)[:k]
    # within a block the kept items keep their order (block_claim ranks by an exclusive scan)
    ok_set = np.array_equal(np.sort(h), np.sort(x[x > thr]))
    # the raw twin: count, host scan, scatter (stable across blocks too)
    nb = ss.cover(n, 64)
    cnt = _dev(np.zeros(nb, np.int32))
    _raw(m.count_raw, nb, 64, cnt, _dev(x), thr)
    hc = _host(cnt)
    offs = (np.cumsum(hc) - hc).astype(np.int32)
    ro = _dev(np.full(n, np.nan, np.float32))
    _raw(m.scatter_raw, nb, 64, ro, _dev(x), _dev(offs), thr)
    ok_raw = np.array_equal(_host(ro)[: hc.sum()], x[x > thr])
    return bool(
        ok_set and ok_raw and _clean(p, np.zeros(n, np.float32), np.zeros(1, np.uint64), x, thr)
    )


def _nbody_soa(rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    n = 100
    pos = rng.standard_normal((n, 3)).astype(np.float32)
    mass = rng.uniform(0.5, 1, n).astype(np.float32)
    d = pos[None, :, :] - pos[:, None, :]
    inv = 1 / np.sqrt((d**2).sum(-1) + 0.01)
    return [pos[:, 0].copy(), pos[:, 1].copy(), pos[:, 2].copy(), mass], (
        d * (mass[None, :] * inv**3)[..., None]
    ).sum(1)


def _check_nbody(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ins, ref = _nbody_soa(rng)
    n = ins[0].size
    outs = [_dev(np.full(n, np.nan, np.float32)) for _ in range(3)]
    p = m.nbody.prepare(grid=ss.cover(n, 64), block=64)
    p(*outs, *[_dev(a) for a in ins], np.float32(0.01))
    raws = [_dev(np.full(n, np.nan, np.float32)) for _ in range(3)]
    _raw(m.nbody_raw, ss.cover(n, 64), 64, *raws, *[_dev(a) for a in ins], np.float32(0.01))
    got = np.stack([_host(o) for o in outs], 1)
    gr = np.stack([_host(o) for o in raws], 1)
    return bool(
        np.allclose(got, ref, rtol=1e-4, atol=1e-3)
        and np.allclose(gr, ref, rtol=1e-4, atol=1e-3)
        and _clean(p, *[np.zeros(n, np.float32) for _ in range(3)], *ins, np.float32(0.01))
    )


def _check_softmax_chunks(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ok = True
    for cols in (1, 31, 32, 33, 100):
        x = rng.standard_normal((5, cols)).astype(np.float32)
        o = _dev(np.full_like(x, np.nan))
        p = m.softmax_warp.prepare(grid=ss.cover(5, 2), block=64)
        p(o, _dev(x))
        e = np.exp(x - x.max(1, keepdims=True))
        ok = ok and np.allclose(_host(o), e / e.sum(1, keepdims=True), atol=1e-6)
    return bool(ok and _clean(p, np.zeros_like(x), x))


def _check_record_stats(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal((5, 70)).astype(np.float32)
    st = _dev(np.zeros(6, m.ST))
    p = m.row_stats.prepare(grid=3, block=64)
    p(st, _dev(x))
    h = _host(st)
    ok1 = (
        np.allclose(h["mu"][:5], x.mean(1), atol=1e-5)
        and np.allclose(h["s2"][:5], x.var(1), atol=1e-4)
        and bool((h["arg"] == 0).all())  # every lane called the helper; lane 0's store landed
    )
    img = rng.integers(0, 256, (3, 100)).astype(np.uint8)
    o = _dev(np.zeros((3, 100), m.RGB))
    p2 = m.gray_rows.prepare(grid=3, block=64)
    p2(o, _dev(img))
    h2 = _host(o)
    ok2 = (
        np.array_equal(h2["r"], img)
        and np.array_equal(h2["g"], 255 - img)
        and np.array_equal(h2["b"], img)
    )
    return bool(
        ok1
        and ok2
        and _clean(p, np.zeros(6, m.ST), x)
        and _clean(p2, np.zeros((3, 100), m.RGB), img)
    )


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "row_argmax": _check_argmax,
    "layernorm_welford": _check_layernorm,
    "row_scan_warp": _check_row_scan,
    "joint_hist": _check_joint_hist,
    "conv1d_const": _check_conv1d,
    "colormap_lut": _check_colormap,
    "seg_reduce_by_key": _check_seg_reduce,
    "dot_atomic": _check_dot,
    "resize_rgb": _check_resize,
    "spmv_csr_warp": _check_spmv,
    "kmeans_acc2d": _check_kmeans,
    "softmax_xent": _check_xent,
    "compact_scan": _check_compact,
    "nbody_soa": _check_nbody,
    "softmax_warp_chunks": _check_softmax_chunks,
    "record_stats_helpers": _check_record_stats,
}

FALSE_REFUSALS: dict[str, dict[str, Any]] = {}
BAD_ERRORS: dict[str, dict[str, Any]] = {}
DOC_GAPS: dict[str, dict[str, Any]] = {}

# =============================================================================================
# FALSE_REFUSALS: natural, safe kernels that simtsafe refuses. "message": the text seen (a
# fragment); "workaround": what works. The line the refusal names is marked # BAD.
# =============================================================================================

FR_FIELD_NAMED_MEAN = """
ST = np.dtype([("mean", np.float32), ("var", np.float32), ("arg", np.int32)])


@ss.device
def put_stats(o: DisjointSlice[ST, PerWarp], w, mean, var, arg) -> None:
    o[w].mean = mean  # BAD
    o[w].var = var
    o[w].arg = arg


# record_stats_helpers' row_stats with the fields named as a statistics record names them
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def row_stats(st: DisjointSlice[ST, PerWarp], x: In2D[np.float32]) -> None:
    s = np.float32(0)
    q = np.float32(0)
    for w in thread.warp_row(x):
        s += x[w]
        q += x[w] * x[w]
    s = ss.warp.sum(s)
    q = ss.warp.sum(q)
    n = np.float32(x.shape[1])
    put_stats(st, thread.warp_leader(), s / n, q / n - (s / n) * (s / n), np.int32(cuda.laneid))
"""

FR_FIELD_NAMED_MEAN_READ = """
ST = np.dtype([("mean", np.float32), ("var", np.float32)])


@ss.device
def zscore(s, v):
    return (v - s.mean) / math.sqrt(s.var)  # BAD


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float32], st: In[ST]) -> None:
    w = thread.index_1d()
    out[w] = zscore(st[0], x[w])
"""

FR_ACC_BLOCK_STRIDE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def hist(h: Accumulate[np.uint32], a: In[np.uint8]) -> None:
    bins = ss.shared.accumulator(256, np.uint32)
    for w in thread.grid_stride(a):
        bins.add(a[w], 1)
    ss.block.sync()
    for w in thread.block_stride(bins):  # BAD
        h.add(w.index, bins[w])
"""

FR_STABLE_SCATTER = """
B = 64


# the three-phase (count, scan, scatter) compaction's scatter: the slot is the block's offset
# plus the thread's exclusive rank -- stable across blocks, unlike block_claim
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def scatter(out: DisjointSlice[np.float32], x: In[np.float32], offs: In[np.int32], thr: np.float32) -> None:
    i = thread.index_1d()
    v = x[i]
    keep = i.in_bounds(x) and v > thr
    r = ss.block.scan(1 if keep else 0, inclusive=False)
    if keep:
        out[offs[cuda.blockIdx.x] + r] = v  # BAD
"""


def _launch_stats_mean(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal((5, 70)).astype(np.float32)
    st = _dev(np.zeros(6, m.ST))
    m.row_stats.prepare(grid=3, block=64)(st, _dev(x))
    h = _host(st)
    return bool(np.allclose(h["mean"][:5], x.mean(1), atol=1e-5))


def _launch_zscore(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(100).astype(np.float32)
    st = np.zeros(1, m.ST)
    st["mean"], st["var"] = 0.5, 4.0
    o = _dev(np.zeros(100, np.float32))
    m.k.prepare(grid=2, block=64)(o, _dev(x), _dev(st))
    return bool(np.allclose(_host(o), (x - 0.5) / 2, atol=1e-6))


def _launch_acc_stride(m: ModuleType, rng: np.random.Generator) -> bool:
    a = rng.integers(0, 256, 500).astype(np.uint8)
    h = _dev(np.zeros(256, np.uint32))
    m.hist.prepare(grid=2, block=64)(h, _dev(a))
    return bool(np.array_equal(_host(h), np.bincount(a, minlength=256)))


def _launch_stable_scatter(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    keep = x > 0.3
    nb = ss.cover(n, 64)
    c = np.array([keep[b * 64 : (b + 1) * 64].sum() for b in range(nb)])
    offs = (np.cumsum(c) - c).astype(np.int32)
    o = _dev(np.full(n, np.nan, np.float32))
    m.scatter.prepare(grid=nb, block=64)(o, _dev(x), _dev(offs), np.float32(0.3))
    return bool(np.array_equal(_host(o)[: keep.sum()], x[keep]))


FALSE_REFUSALS.update(
    {
        "helper_field_named_like_array_method": {
            "source": FR_FIELD_NAMED_MEAN,
            "where": "decoration (of the @ss.device helper)",
            "message": "kernel 'put_stats': attribute `.mean` is not allowed in kernels (array "
            "methods and attributes can alias or write their array); of the array attributes, "
            "kernel values offer .conjugate, .dtype, .imag, .max, .min, .ndim, .real, .shape, "
            ".size (record fields are read by name)",
            "why_safe": "o is annotated DisjointSlice[ST, PerWarp] and `o[w].mean = v` is the "
            "documented helper field store (CHANGELOG: 'A record field of the thread's own output "
            "element is written through a helper'); it is accepted for the fields mu, s2, count, "
            "max, total, x (record_stats_helpers) and in the KERNEL form for `.mean`/`.var`/`.sum` "
            "too (`out[w].mean = v` compiles). Only the helper form refuses field names that are "
            "numpy array methods (mean, var, sum, ...), which are THE names of a statistics record",
            "severity": "medium: no Tier-1 spelling of the helper store (the message's hint 'by "
            "name' is `o[w]['mean'] = v`, which the typing refuses: 'a record field is written "
            "only by attribute')",
            "workaround": "store the fields in the kernel body (`st[lead].mean = ...`), or rename "
            "the fields (record_stats_helpers: mu, s2)",
        },
        "helper_field_read_named_like_array_method": {
            "source": FR_FIELD_NAMED_MEAN_READ,
            "where": "decoration (of the @ss.device helper)",
            "message": "kernel 'zscore': attribute `.mean` is not allowed in kernels (array methods "
            "and attributes can alias or write their array); ... (record fields are read by name)",
            "why_safe": "a READ of a field of a record an input gave the helper; in the kernel "
            "body `s = st[0]; s.mean` compiles",
            "severity": "low (the hint works for reads)",
            "workaround": "s['mean'] in the helper, or read the field in the kernel and pass it",
        },
        "accumulator_block_stride_flush": {
            "source": FR_ACC_BLOCK_STRIDE,
            "where": "compile (typing)",
            "message": "thread.block_stride() walks a shared tile, got SharedAccumulator[uint32 x 256]",
            "why_safe": "block_stride's witnesses are Local1D, which an accumulator is documented "
            "to be read with (`bins[w]`, docs/cooperation.md); the flush of a privatized histogram "
            "'every thread takes bins tid, tid + T, ...' is exactly block_stride's walk",
            "severity": "low; the message names no alternative",
            "workaround": "for k in range(cuda.threadIdx.x, NBINS, B): h.add(k, bins[k]) "
            "(joint_hist, kmeans_acc2d)",
        },
        "stable_compaction_scatter": {
            "source": FR_STABLE_SCATTER,
            "where": "compile (typing)",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index1D); got an index of type int64. Get a witness with thread.index_1d() or `for w "
            "in thread.grid_stride(out)`, or write out.unchecked[...] inside `with "
            'simtsafe.unsafe("SAFETY: ...")`',
            "why_safe": "offs is the exclusive scan of the per-block counts of the same x, thr "
            "and grid, so (block, rank) -> offs[block] + rank is one-to-one (a property of the "
            "data: documented as Tier 2, docs/porting.md section 10)",
            "severity": "low (documented); the message could name buf.block_claim(keep), the "
            "Tier-1 compaction (unordered across blocks), as the cuda.atomic.add refusal now "
            "names AppendBuffer",
            "workaround": "compact_scan (AppendBuffer.block_claim: stable within a block, blocks "
            "in arrival order) or out.unchecked[...] in an unsafe region for the stable order",
        },
    }
)
CHECKS.update(
    {
        "helper_field_named_like_array_method": _launch_stats_mean,
        "helper_field_read_named_like_array_method": _launch_zscore,
        "accumulator_block_stride_flush": _launch_acc_stride,
        "stable_compaction_scatter": _launch_stable_scatter,
    }
)

# =============================================================================================
# BAD_ERRORS: misleading messages, messages without the fix; a simulator/sim.check failure on
# code the compiled target accepts.
# =============================================================================================

BAD_HELPER_UNANNOTATED = """
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])
LUT = np.stack([np.arange(256), 255 - np.arange(256), (np.arange(256) * 7) % 256], 1).astype(np.uint8)


@ss.device
def put_rgb(o, w, lut, v):
    o[w].r = lut[v, 0]  # BAD
    o[w].g = lut[v, 1]
    o[w].b = lut[v, 2]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def colormap(out: DisjointSlice[RGB], img: In[np.uint8]) -> None:
    lut = cuda.const.array_like(LUT)
    w = thread.index_1d()
    if w.in_bounds(img):
        put_rgb(out, w, lut, img[w])
"""

BAD_LUT_ROW = """
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])
LUT = np.stack([np.arange(256), 255 - np.arange(256), (np.arange(256) * 7) % 256], 1).astype(np.uint8)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def colormap(out: DisjointSlice[RGB], img: In[np.uint8]) -> None:
    lut = cuda.const.array_like(LUT)
    w = thread.index_1d()
    if w.in_bounds(img):
        c = lut[img[w]]  # BAD
        out[w].r = c[0]
        out[w].g = c[1]
        out[w].b = c[2]
"""

BAD_SIMCHECK_RECORD_ATTR = """
RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])


# resize_rgb's gather of the four neighbours, fields read by attribute
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1)))
def nearest(out: DisjointSlice2D[np.float32], img: In2D[RGB]) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        a = img[w.row // 2, w.col // 2]
        out[w] = np.float32(a.r) + np.float32(a.g) + np.float32(a.b)  # BAD (sim.check)
"""


def _launch_colormap(m: ModuleType, rng: np.random.Generator) -> bool:
    img = rng.integers(0, 256, 100).astype(np.uint8)
    o = _dev(np.zeros(100, m.RGB))
    m.colormap.prepare(grid=2, block=64)(o, _dev(img))
    return bool(np.array_equal(_host(o)["g"], m.LUT[img, 1]))


def _simcheck_nearest(m: ModuleType, rng: np.random.Generator) -> bool:
    """The simulator launch is right; sim.check of the same launch raises AttributeError."""

    img = np.zeros((4, 5), m.RGB)
    for f in "rgb":
        img[f] = rng.integers(0, 80, (4, 5))
    p = m.nearest.prepare(grid=(1, 1), block=(16, 8))
    o = _dev(np.zeros((8, 10), np.float32))
    p(o, _dev(img))
    tot = img["r"].astype(np.float32) + img["g"] + img["b"]
    ok = np.array_equal(_host(o), tot.repeat(2, 0).repeat(2, 1))
    return bool(ok and _clean(p, np.zeros((8, 10), np.float32), img))


BAD_ERRORS.update(
    {
        "helper_record_store_unannotated": {
            "source": BAD_HELPER_UNANNOTATED,
            "where": "decoration (of the @ss.device helper, rule attribute-store)",
            "message": "kernel 'put_rgb': assigning `o[w].r` writes through a reference; it is "
            'allowed only inside `with simtsafe.unsafe("SAFETY: ..."):`',
            "why": "the helper is called with the output and the thread's witness, the documented "
            "Tier-1 helper store; it is accepted once `o` is annotated DisjointSlice[RGB] "
            "(colormap_lut). Helpers are otherwise written unannotated (every op of this round: "
            "argmax_op, welford, lerp2), so this is the natural first spelling, and the message "
            "sends the user to Tier 2 without naming the annotation",
            "severity": "medium (a new feature's first use)",
            "fix": "when the subscripted name is an unannotated helper parameter: 'annotate `o` "
            "as DisjointSlice[...] (the output the kernel passes) to store a field of the "
            "thread's own element'",
        },
        "const_lut_row_read": {
            "source": BAD_LUT_ROW,
            "where": "compile (typing)",
            "message": "a 2D constant array is read with 2 ints; it has no slices (read a "
            "witness's element with w.index, or (w.row, w.col))",
            "why": "the user reads a row of a (256, 3) colour table (`c = lut[v]; c[0]`); the "
            "advice talks about witnesses, which have nothing to do with a LUT read. Refusing is "
            "fine (no slices)",
            "severity": "low",
            "fix": "'read each element with lut[i, j] (lut[v, 0], lut[v, 1], ...)'",
        },
        "simcheck_record_attr_int_index": {
            "source": BAD_SIMCHECK_RECORD_ATTR,
            "where": "simtsafe.sim.check (the replay); NVVM and the simulator launch accept it",
            "message": "AttributeError: 'numpy.void' object has no attribute 'r' / raised in "
            "simulated thread block (0, 0, 0) thread (0, 0, 0) while simtsafe.sim.check replayed "
            "'nearest'",
            "why": "a record element of an In2D read by int index (`img[y, x].r`, the gather of "
            "a bilinear resize or any stencil over records) is a numpy.void in the replay, which "
            "has no attribute access; the same read through a witness (`a[w].x`) is replayed "
            "(CHANGELOG), and the simulator launch itself gives the right values. sim.check of "
            "a plain numba.cuda.jit twin doing the same fails the same way. A crash, not a wrong "
            "verdict",
            "severity": "medium: sim.check is the documented race checker and stops on the "
            "first record gather",
            "workaround": "read fields by name string, a['r'] (resize_rgb), which NVVM, the "
            "simulator and sim.check all accept",
        },
    }
)
CHECKS.update(
    {
        "helper_record_store_unannotated": _launch_colormap,
        "simcheck_record_attr_int_index": _simcheck_nearest,
    }
)

# =============================================================================================
# DOC_GAPS
# =============================================================================================

DOC_CONST_FACTORY = """
def make_blur(filt):
    @ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
    def blur(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
        i = thread.index_1d()
        if i.in_bounds(out):
            f = cuda.const.array_like(filt)
            acc = np.float32(0)
            for k in range(f.size):
                j = i.index + k - f.size // 2
                if j >= 0 and j < x.size:
                    acc += f[k] * x[j]
            out[i] = acc
    return blur


blur5 = make_blur(np.array([1, 4, 6, 4, 1], np.float32) / 16)
"""


def _factory_values(m: ModuleType, rng: np.random.Generator) -> bool:
    """Two filters from the factory give their own values (the snapshot is per kernel)."""
    x = rng.standard_normal(100).astype(np.float32)
    o = _dev(np.zeros(100, np.float32))
    m.blur5.prepare(grid=2, block=64)(o, _dev(x))
    ok1 = np.allclose(_host(o), np.convolve(x, np.array([1, 4, 6, 4, 1]) / 16, "same"), atol=1e-6)
    k2 = m.make_blur(np.array([0, 0, 1, 0, 0], np.float32))
    o2 = _dev(np.zeros(100, np.float32))
    k2.prepare(grid=2, block=64)(o2, _dev(x))
    return bool(ok1 and np.allclose(_host(o2), x) and k2 is not m.blur5)


def _raw_shuffle_twin(m: ModuleType, rng: np.random.Generator) -> bool:
    """The raw twin of row_scan_warp under Numba's simulator: AttributeError (shfl_up_sync)."""
    x = np.ones((2, 40), np.float32)
    _raw(m.row_scan_raw, 1, 64, _dev(np.zeros_like(x)), _dev(x))
    return True


DOC_GAPS.update(
    {
        "const_array_closed_over_by_a_factory": {
            "source": DOC_CONST_FACTORY,
            "where": "accepted (NVVM, simulator: right values per filter)",
            "doc": "docs/porting.md 'Patterns at a glance' (FILTER 'a module-level numpy array') "
            "and section 8 ('Closing over an array ... is refused with a message that says to "
            "pass it as an argument'); docs/safety.md 'Constant arrays'",
            "what": "cuda.const.array_like(filt) over a factory's closed-over numpy array is "
            "accepted and correct (each kernel snapshots its own values), against both docs. "
            "Calling the factory again with an equal array builds a NEW kernel (k is not "
            "blur5), unlike the documented 'the same values return the same kernel, compiled "
            "once' -- a recompile per call when a factory is called per batch",
        },
        "raw_shuffle_twins_on_the_simulator": {
            "source": ROW_SCAN_WARP,
            "where": "NUMBA_ENABLE_CUDASIM launch of the raw twin (Numba, not simtsafe)",
            "doc": "docs/porting.md (raw_launch of the _raw originals)",
            "what": "a raw twin using cuda.shfl_up_sync / shfl_down_sync does not run under Numba's "
            "simulator ('FakeCUDAModule' object has no attribute 'shfl_up_sync'), while "
            "simtsafe.sim.check replays it (and found the twins clean): porting.md's side-by-side "
            "recipe does not say to compare warp-shuffle originals through sim.check's outputs "
            "(row_scan_warp and spmv_csr_warp do)",
        },
    }
)
DOC_GAPS["record_store_scratch_cost"] = {
    "source": RECORD_STATS,
    "where": "compiled form (PTX), performance only",
    "doc": "docs/performance.md, docs/safety.md 'Record fields' (the scratch record is described "
    "for reads of tiles and local arrays, not its cost for output stores)",
    "what": "a field store `o[w].f = v` through a witness not proven in range of the output (a "
    "warp_leader() witness in a helper: row_stats) compiles to a per-store-site zero fill of "
    "a thread-local scratch record (st.local.v4.u8 x 2-3 for a 12-byte record) and GENERIC "
    "st.u8 byte stores (the address selects global element or local scratch); the raw Numba "
    "`out[i].f = v` is st.global.u8 only. Under `if w.in_bounds(out):` the simtsafe form is "
    "st.global.u8 only too (kernel and helper form alike, checked here), so the advice 'guard "
    "record field stores with in_bounds(out)' belongs in the docs",
}
CHECKS.update(
    {
        "const_array_closed_over_by_a_factory": _factory_values,
        "raw_shuffle_twins_on_the_simulator": _raw_shuffle_twin,
    }
)

# =============================================================================================
# Runner
# =============================================================================================

_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=18)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
