"""Porting round 20: kernels people write for speed, ported to Tier 1 (no ``simtsafe.unsafe``).

Kernels (domains new to the rounds 15-19): a separable 9-tap Gaussian (row pass and column
pass, shared halo tiles, a constant filter), RMSNorm of fp16 rows with a bf16 weight and fp32
accumulation, per-row absmax int8 quantization, an int4 dequantize-then-GEMV with bf16 group
scales (vector loads, a warp per row), an int4 -> int8 unpack (a vector load and a vector
store), a float histogram with np.histogram's edges (a shared accumulator), particle binning
into grid cells (counts by atomics, each cell's range by binary search), a 2x2 RGBA
downsample (record fields), an in-place causal / padding mask of attention scores, Mandelbrot
(a loop left by ``break``), Black-Scholes (erf, log, exp; two outputs), inverse-CDF sampling
of one index per row (a block scan per chunk, ``break`` on a block-uniform value), a
summed-area table (a ``Columns`` pass, then an in-place ``block_row_chunks`` pass), NeoX RoPE
applied in place to q and k (output tiles given to a helper), and a batch of 16 x 16 fp16
products on tensor cores.

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1, compiled with NVVM (``simtsafe.check_kernel``: no
                         finding); on the simulator the port matches numpy (``CHECKS``);
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen, why it
                         is safe, and the workaround;
* ``BAD_ERRORS``      -- a message that misleads or lacks its fix;
* ``DOC_GAPS``        -- where the docs and the behaviour disagree.

Nothing unsound was found: the accepted kernels replay clean under ``simtsafe.sim.check`` where
checked, and the probes of the range-loop tuple positions under thread-dependent control
(shadowed, reassigned, negative, nested, ``while``, ``zip``, helpers) were all refused or proven
(tests/ptx/test_port20_ptx.py).

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port20 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port20 NAME...  # simulator

Tests: tests/ptx/test_port20_ptx.py, tests/sim/test_port20_sim.py.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from tests.kernels.porting import Corpus, replay_clean
from tests.kernels.porting import to_device as _dev
from tests.kernels.porting import to_host as _host

EXTRA_HEADER = "import math\nfrom simtsafe import Accumulate, BlockRow, Columns, WarpRow\n"

# =============================================================================================
# ACCEPTED
# =============================================================================================

SEPARABLE = """
R = 4
TAPS = 9
BX = 32
BY = 8
HX = 40          # BX + 2 * R
HY = 16          # BY + 2 * R
GAUSS9 = np.array([1, 8, 28, 56, 70, 56, 28, 8, 1], np.float32) / np.float32(256)


@ss.device
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


# separable 9-tap Gaussian, pass 1 along the rows: a shared tile with a halo of R columns on
# each side (clamp to edge), the filter in constant memory
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(BX, BY, 1),
           requires=["out.shape[0] == x.shape[0]", "out.shape[1] == x.shape[1]"]))
def blur_rows(out: DisjointSlice2D[np.float32], x: In2D[np.float32]) -> None:
    t = ss.shared.tile((BY, HX), np.float32)
    r0 = cuda.blockIdx.y * BY
    c0 = cuda.blockIdx.x * BX - R
    for w in thread.block_stride(t):
        r = clamp(r0 + w.row, 0, x.shape[0] - 1)
        c = clamp(c0 + w.col, 0, x.shape[1] - 1)
        t[w] = x[r, c]
    ss.block.sync()
    f = cuda.const.array_like(GAUSS9)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(TAPS):
        acc += f[k] * t[ty, tx + k]
    out[thread.index_2d()] = acc


# pass 2 along the columns: a halo of R rows above and below
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(BX, BY, 1),
           requires=["out.shape[0] == x.shape[0]", "out.shape[1] == x.shape[1]"]))
def blur_cols(out: DisjointSlice2D[np.float32], x: In2D[np.float32]) -> None:
    t = ss.shared.tile((HY, BX), np.float32)
    r0 = cuda.blockIdx.y * BY - R
    c0 = cuda.blockIdx.x * BX
    for w in thread.block_stride(t):
        r = clamp(r0 + w.row, 0, x.shape[0] - 1)
        c = clamp(c0 + w.col, 0, x.shape[1] - 1)
        t[w] = x[r, c]
    ss.block.sync()
    f = cuda.const.array_like(GAUSS9)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(TAPS):
        acc += f[k] * t[ty + k, tx]
    out[thread.index_2d()] = acc
"""


RMSNORM_F16 = """
B = 128


# RMSNorm of fp16 activations with a bf16 weight, accumulated in fp32, a block per row
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["out.shape[0] == x.shape[0]", "out.shape[1] == x.shape[1]",
                     "weight.size == x.shape[1]"]))
def rmsnorm_f16(out: DisjointSlice[np.float16, BlockRow], x: In2D[np.float16],
                weight: In[ss.bfloat16], eps: np.float32) -> None:
    acc = np.float32(0)
    for w in thread.block_row(x):
        v = np.float32(x[w])
        acc += v * v
    acc = ss.block.sum(acc)
    inv = np.float32(1) / math.sqrt(acc / np.float32(x.shape[1]) + eps)
    for w in thread.block_row(out):
        out[w] = np.float16(np.float32(x[w]) * inv * np.float32(weight[w.col]))
"""


QUANT_ROWS = """
B = 128


# per-row absmax quantization to int8 (LLM.int8-style): a block per row, the row's scale out
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="q",
           requires=["q.shape[0] == x.shape[0]", "q.shape[1] == x.shape[1]",
                     "scale.size == x.shape[0]"]))
def quantize_rows(q: DisjointSlice[np.int8, BlockRow], scale: DisjointSlice[np.float32, PerBlock],
                  x: In2D[np.float32]) -> None:
    amax = np.float32(0)
    for w in thread.block_row(x):
        amax = max(amax, abs(x[w]))
    amax = ss.block.max(amax)
    s = amax / np.float32(127) if amax > 0 else np.float32(1)
    inv = np.float32(1) / s
    for w in thread.block_row(q):
        v = round(x[w] * inv)
        q[w] = np.int8(min(max(v, -127), 127))
    scale[thread.block_leader()] = s
"""


GEMV_INT4 = """
G = 32          # columns per scale group


@ss.device
def nibbles(b):
    # two int4 weights of one byte, low nibble first, zero point 8
    return np.float32(np.int32(b & 15) - 8), np.float32(np.int32(b >> 4) - 8)


# y = dequant(W) @ x: W int4 packed two per byte, one bf16 scale per 32 columns, x bf16;
# a warp per row, 8 columns per step (one 4-byte load of W, one 16-byte load of x).
# Two workarounds (FALSE_REFUSALS): the scale widened through float64, the tuple positions
# masked with & 7
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="y",
           requires=["wq.shape[0] == y.size", "2 * wq.shape[1] == x.size",
                     "scales.shape[0] == y.size", "scales.shape[1] * 32 == x.size"]))
def gemv_int4(y: DisjointSlice[np.float32, PerWarp], wq: In2D[np.uint8],
              scales: In2D[ss.bfloat16], x: In[ss.bfloat16]) -> None:
    row = cuda.grid(1) // 32
    acc = np.float32(0)
    if row < y.size:
        for j in range(cuda.laneid, wq.shape[1] // 4, 32):
            b = ss.vec.load(wq, (row, j), 4)
            xv = ss.vec.load(x, j, 8)
            s = np.float32(np.float64(scales[row, (8 * j) // G]))
            part = np.float32(0)
            for q in range(4):
                lo, hi = nibbles(b[q])
                part += lo * xv[(2 * q) & 7] + hi * xv[(2 * q + 1) & 7]
            acc += s * part
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""

#: the natural tuple positions `xv[2 * q]`, `xv[2 * q + 1]` (FALSE_REFUSALS tuple_position_arith)
GEMV_INT4_TUPLE_ARITH = GEMV_INT4.replace(
    "xv[(2 * q) & 7] + hi * xv[(2 * q + 1) & 7]", "xv[2 * q] + hi * xv[2 * q + 1]"
)
#: the docs' bf16 widening `np.float32(scales[r, g])` (FALSE_REFUSALS bf16_widen_before_collective)
GEMV_INT4_BF16_SCALE = GEMV_INT4.replace(
    "np.float32(np.float64(scales[row, (8 * j) // G]))", "np.float32(scales[row, (8 * j) // G])"
)


UNPACK_INT4 = """
@ss.device
def sext4(n):
    # the signed int4 in the low 4 bits of n
    return np.int8(((n & 15) ^ 8) - 8)


# int4 -> int8 unpack, low nibble first: 4 packed bytes in, 8 int8 out per thread (one 4-byte
# load, one 8-byte store)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="out",
           requires=["out.size == 2 * packed.size"]))
def unpack_int4(out: DisjointSlice[np.int8], packed: In[np.uint8]) -> None:
    i = thread.index_1d()
    t = thread.tile_1d(out, 8)
    b = ss.vec.load(packed, i.index, 4)
    ss.vec.store(t, (sext4(b[0]), sext4(b[0] >> 4), sext4(b[1]), sext4(b[1] >> 4),
                     sext4(b[2]), sext4(b[2] >> 4), sext4(b[3]), sext4(b[3] >> 4)))
"""


HIST_F32 = """
NB = 64
B = 128


# histogram of floats into NB equal bins over [lo, hi] (np.histogram's rule: hi goes in the
# last bin, values outside and NaN are dropped), privatized per block in shared memory
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def hist_f32(counts: Accumulate[np.uint32], x: In[np.float32], lo: np.float32, hi: np.float32) -> None:
    bins = ss.shared.accumulator(NB, np.uint32)
    scale = np.float32(NB) / (hi - lo)
    for w in thread.grid_stride(x):
        v = x[w]
        if v >= lo and v <= hi:
            b = int((v - lo) * scale)
            bins.add(min(b, NB - 1), 1)
    ss.block.sync()
    for w in thread.block_stride(bins):
        c = bins[w]
        if c != 0:
            counts.add(w.index, c)
"""


CELL_BINNING = """
@ss.device
def lower_bound(a, v):
    # the first position of the sorted a whose value is >= v
    lo = 0
    hi = a.size
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


# particles -> cells of a uniform 2D grid (clamped to the grid), with a count per cell
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128,
           requires=["cell.size == px.size", "py.size == px.size"]))
def bin_particles(cell: DisjointSlice[np.int32], counts: Accumulate[np.int32], px: In[np.float32],
                  py: In[np.float32], inv_h: np.float32, nx: np.int32, ny: np.int32) -> None:
    for w in thread.grid_stride(px):
        cx = min(max(int(px[w] * inv_h), 0), nx - 1)
        cy = min(max(int(py[w] * inv_h), 0), ny - 1)
        c = np.int32(cy * nx + cx)
        cell[w] = c
        counts.add(c, 1)


# after sorting the particles by cell: each cell's range [start, end) of the sorted order,
# a thread per cell, by binary search (empty cells get start == end)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="start",
           requires=["end.size == start.size"]))
def cell_ranges(start: DisjointSlice[np.int32], end: DisjointSlice[np.int32],
                sorted_cells: In[np.int32]) -> None:
    c = thread.index_1d()
    start[c] = lower_bound(sorted_cells, c.index)
    end[c] = lower_bound(sorted_cells, c.index + 1)
"""


WARP_BINCOUNT = """
NB = 8
B = 128


# a bincount of few classes with warp-aggregated atomics: per class, a warp vote (a warp sum
# of 0/1) and one atomic by lane 0, instead of an atomic per element
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def bincount8(counts: Accumulate[np.uint32], labels: In[np.int32]) -> None:
    n = labels.size
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    for _ in range((n + stride - 1) // stride):   # the same trip count in every lane
        lab = labels[i] if i < n else -1
        for b in range(NB):
            c = ss.warp.sum(np.uint32(1 if lab == b else 0))
            if cuda.laneid == 0 and c > 0:
                counts.add(b, c)
        i += stride
"""


DOWNSAMPLE = """
RGBA = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8), ("a", np.uint8)])


@ss.device
def avg4(a, b, c, d):
    # the rounded mean of four bytes
    return np.uint8((np.int32(a) + np.int32(b) + np.int32(c) + np.int32(d) + 2) >> 2)


# 2x2 box downsample of an RGBA image (one mip level; an odd last row or column is dropped)
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1), covers="out",
           requires=["img.shape[0] >= 2 * out.shape[0]", "img.shape[1] >= 2 * out.shape[1]"]))
def downsample2x2(out: DisjointSlice2D[RGBA], img: In2D[RGBA]) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        r = 2 * w.row
        c = 2 * w.col
        p00 = img[r, c]
        p01 = img[r, c + 1]
        p10 = img[r + 1, c]
        p11 = img[r + 1, c + 1]
        out[w].r = avg4(p00.r, p01.r, p10.r, p11.r)
        out[w].g = avg4(p00.g, p01.g, p10.g, p11.g)
        out[w].b = avg4(p00.b, p01.b, p10.b, p11.b)
        out[w].a = avg4(p00.a, p01.a, p10.a, p11.a)
"""


MASKED_FILL = """
# attention scores masked in place: -inf above the causal diagonal (shifted by the cached
# length) and at padded keys
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 4, 1),
           requires=["key_ok.size == scores.shape[1]"]))
def mask_scores(scores: DisjointSlice2D[np.float32], key_ok: In[np.bool_], offset: np.int32) -> None:
    w = thread.index_2d()
    if w.in_bounds(scores):
        if w.col > w.row + offset or not key_ok[w.col]:
            scores[w] = np.float32(-np.inf)
"""


MANDELBROT = """
MAXIT = 200


# escape-time Mandelbrot: a pixel per thread, the loop left with break
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 16, 1), covers="out"))
def mandelbrot(out: DisjointSlice2D[np.uint16], x0: np.float32, y0: np.float32,
               dx: np.float32, dy: np.float32) -> None:
    w = thread.index_2d()
    cr = x0 + np.float32(w.col) * dx
    ci = y0 + np.float32(w.row) * dy
    zr = np.float32(0)
    zi = np.float32(0)
    it = 0
    while it < MAXIT:
        zr2 = zr * zr
        zi2 = zi * zi
        if zr2 + zi2 > np.float32(4):
            break
        zi = np.float32(2) * zr * zi + ci
        zr = zr2 - zi2 + cr
        it += 1
    out[w] = it
"""


BLACK_SCHOLES = """
@ss.device
def cnd(d):
    # the standard normal CDF
    return np.float32(0.5) * (np.float32(1) + math.erf(d * np.float32(0.7071067811865476)))


# Black-Scholes European call and put prices, an option per thread
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="call",
           requires=["put.size == call.size", "s.size == call.size", "k.size == call.size",
                     "t.size == call.size"]))
def black_scholes(call: DisjointSlice[np.float32], put: DisjointSlice[np.float32],
                  s: In[np.float32], k: In[np.float32], t: In[np.float32],
                  r: np.float32, vol: np.float32) -> None:
    i = thread.index_1d()
    if i.in_bounds(call):  # skips the work (and 0 / 0) past the end
        S = s[i]
        K = k[i]
        T = t[i]
        sqt = math.sqrt(T)
        d1 = (math.log(S / K) + (r + np.float32(0.5) * vol * vol) * T) / (vol * sqt)
        d2 = d1 - vol * sqt
        disc = math.exp(-r * T)
        c = S * cnd(d1) - K * disc * cnd(d2)
        call[i] = c
        put[i] = c - S + K * disc
"""


SAMPLE_ROWS = """
B = 128
NONE = 2**30


# inverse-CDF sampling of one index per row of unnormalized probabilities (a block per row):
# the row's total, then chunks of a block scan until the running sum passes u * total
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="idx",
           requires=["idx.size == p.shape[0]", "u.size == p.shape[0]"]))
def sample_rows(idx: DisjointSlice[np.int32, PerBlock], p: In2D[np.float32], u: In[np.float32]) -> None:
    r = cuda.blockIdx.x
    if r < u.size:
        total = np.float32(0)
        for w in thread.block_row(p):
            total += p[w]
        total = ss.block.sum(total)
        target = u[r] * total
        carry = np.float32(0)
        found = np.int32(p.shape[1] - 1)
        for c in thread.block_row_chunks(p):
            v = p[c]
            run = ss.block.scan(v) + carry
            first = ss.block.min(np.int32(c.col) if c.valid and run > target else np.int32(NONE))
            if first != NONE:
                found = first
                break
            carry += ss.block.sum(v)
        idx[thread.block_leader()] = found
"""


INTEGRAL_IMAGE = """
B = 64


# summed-area table, pass 1: the cumulative sum down each column, a thread per column walking
# the rows (consecutive threads read consecutive columns: coalesced)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["out.shape[0] == img.shape[0]", "out.shape[1] == img.shape[1]"]))
def sat_cols(out: DisjointSlice[np.float32, Columns], img: In2D[np.float32]) -> None:
    w = thread.column()
    if w.index < img.shape[1]:
        acc = np.float32(0)
        for r in range(img.shape[0]):
            acc += img[r, w.index]
            out[r, w] = acc


# pass 2, in place: the cumulative sum along each row, a block per row in chunks of B columns
# (a block scan per chunk, the carry between chunks)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="a"))
def sat_rows(a: DisjointSlice[np.float32, BlockRow]) -> None:
    carry = np.float32(0)
    for c in thread.block_row_chunks(a):
        v = a[c]
        a[c] = ss.block.scan(v) + carry
        carry += ss.block.sum(v)
"""


ROPE_INPLACE = """
@ss.device
def rotate_pair(t, c, s):
    # (a, b) -> (a c - b s, b c + a s) on the thread's 2 x 1 output tile
    a = t[0, 0]
    b = t[1, 0]
    t[0, 0] = a * c - b * s
    t[1, 0] = b * c + a * s


# NeoX RoPE applied in place to q [T, Hq, D] and k [T, Hk, D] (GQA: Hk divides Hq), at each
# token's position in a cos/sin cache; both viewed as [T * H * 2, D // 2], so that thread
# (r, d) owns the pair (d, d + D/2) of row r // 2 -- of q, and of k where k has that row
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 4, 1), covers="q",
           requires=["k.shape[1] == q.shape[1]", "cos.shape[1] == q.shape[1]",
                     "sin.shape[0] == cos.shape[0]", "sin.shape[1] == cos.shape[1]",
                     "q.shape[0] == 2 * hq * pos.size", "k.shape[0] == 2 * hk * pos.size"]))
def rope_qk(q: DisjointSlice2D[np.float32], k: DisjointSlice2D[np.float32], pos: In[np.int32],
            cos: In2D[np.float32], sin: In2D[np.float32], hq: np.int64, hk: np.int64) -> None:
    w = thread.index_2d()
    tq = thread.tile_2d(q, 2, 1)
    tk = thread.tile_2d(k, 2, 1)
    d = w.col
    if d < cos.shape[1]:
        tok = w.row // hq
        if tok < pos.size:
            p = pos[tok]
            if p >= 0 and p < cos.shape[0]:
                rotate_pair(tq, cos[p, d], sin[p, d])
        tok = w.row // hk
        if tok < pos.size:
            p = pos[tok]
            if p >= 0 and p < cos.shape[0]:
                rotate_pair(tk, cos[p, d], sin[p, d])
"""


BMM_MMA = """
M = 16


# a batch of 16 x 16 fp16 products C[b] = A[b] @ B[b] on tensor cores, a warp per matrix:
# A and B are [batch * 16, 16], C [batch * 16, 16] fp32; block (0, b) owns C[b]
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 1, 1),
           requires=["grid.y * 16 >= c.shape[0]", "a.shape[0] == c.shape[0]", "b.shape[0] == c.shape[0]", "a.shape[1] == 16",
                     "b.shape[1] == 16", "c.shape[1] == 16"]))
def bmm16(c: DisjointSlice2D[np.float32], a: In2D[np.float16], b: In2D[np.float16]) -> None:
    ta = ss.shared.tile((M, M), np.float16, pad=8)
    tb = ss.shared.tile((M, M), np.float16, pad=8)
    r0 = cuda.blockIdx.y * M
    for w in thread.block_stride(ta):
        r = r0 + w.row
        ta[w] = a[r, w.col] if r < a.shape[0] else np.float16(0)
    for w in thread.block_stride(tb):
        r = r0 + w.row
        tb[w] = b[r, w.col] if r < b.shape[0] else np.float16(0)
    ss.block.sync()
    o = ss.mma.out_tile(c, M, M, M, M)
    fa = ss.mma.load_a(ta, (0, 0))
    fb0, fb1 = ss.mma.load_b2(tb, (0, 0))
    ss.mma.store(o, 0, 0, ss.mma.mma(fa, fb0, ss.mma.zeros()))
    ss.mma.store(o, 0, 1, ss.mma.mma(fa, fb1, ss.mma.zeros()))
"""


ACCEPTED: dict[str, str] = {
    "separable_gauss9": SEPARABLE,
    "rmsnorm_fp16_bf16": RMSNORM_F16,
    "quantize_rows_int8": QUANT_ROWS,
    "gemv_int4_bf16": GEMV_INT4,
    "unpack_int4": UNPACK_INT4,
    "histogram_f32": HIST_F32,
    "cell_binning": CELL_BINNING,
    "downsample_rgba": DOWNSAMPLE,
    "masked_fill_causal": MASKED_FILL,
    "mandelbrot": MANDELBROT,
    "black_scholes": BLACK_SCHOLES,
    "sample_rows": SAMPLE_ROWS,
    "integral_image": INTEGRAL_IMAGE,
    "rope_inplace_qk": ROPE_INPLACE,
    "bmm16_mma": BMM_MMA,
}

# =============================================================================================
# Sources of the refused kernels (each a natural port; its accepted workaround is named)
# =============================================================================================

BF16_ROW_SUMS = """
B = 64


# the sum of each row of a bf16 matrix, a block per row; the int-index read widened as
# docs/porting.md section 11 says (`np.float32(m[r, j])`)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="sums",
           requires=["sums.size == m.shape[0]"]))
def bf16_row_sums(sums: DisjointSlice[np.float32, PerBlock], m: In2D[ss.bfloat16]) -> None:
    r = cuda.blockIdx.x
    acc = np.float32(0)
    if r < m.shape[0]:
        for j in range(cuda.threadIdx.x, m.shape[1], B):
            acc += np.float32(m[r, j])
    acc = ss.block.sum(acc)
    sums[thread.block_leader()] = acc
"""

#: the workaround: widen through float64 (an inline shift, no call)
BF16_ROW_SUMS_F64 = BF16_ROW_SUMS.replace("np.float32(m[r, j])", "np.float64(m[r, j])")

#: RMSNorm's sum of squares in fp16 arithmetic (`v = x[w]; acc += v * v`)
FP16_SQUARES = RMSNORM_F16.replace("v = np.float32(x[w])", "v = x[w]")

FLOAT_OF_BF16 = """
# a bf16 input widened with float() (a Python float, as for any other dtype)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == y.size"]))
def widen(y: DisjointSlice[np.float32], x: In[ss.bfloat16]) -> None:
    i = thread.index_1d()
    if i.in_bounds(y):
        y[i] = float(x[i.index])
"""

GEMV_INT4_HELPER = GEMV_INT4.replace(
    """            for q in range(4):
                lo, hi = nibbles(b[q])
                part += lo * xv[(2 * q) & 7] + hi * xv[(2 * q + 1) & 7]
""",
    """            for e in range(8):
                part += weight(b, e) * xv[e]
""",
).replace(
    "@ss.device\ndef nibbles",
    """@ss.device
def weight(b, e):
    # the e-th int4 weight of 4 packed bytes, zero point 8 (the byte index masked: a position)
    return np.float32(np.int32((b[(e >> 1) & 3] >> (4 * (e & 1))) & 15) - 8)


@ss.device
def nibbles""",
)

#: the batched MMA with ``covers="c"`` instead of the grid relation
BMM_COVERS = BMM_MMA.replace(
    """@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 1, 1),
           requires=["grid.y * 16 >= c.shape[0]", """,
    """@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 1, 1), covers="c",
           requires=[""",
)

CELL_SCATTER = """
# counting sort of particles by cell, the scatter pass: `cursor` holds each cell's start (the
# exclusive scan of the counts) and each particle takes the next slot of its cell's range
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, requires=["cell.size == order.size"]))
def scatter_by_cell(order: DisjointSlice[np.int32], cursor: Accumulate[np.int32],
                    cell: In[np.int32]) -> None:
    for w in thread.grid_stride(cell):
        slot = cursor.add(cell[w], 1)
        order[slot] = np.int32(w.index)
"""

QUANT_NUMPY = QUANT_ROWS.replace(
    """        v = round(x[w] * inv)
        q[w] = np.int8(min(max(v, -127), 127))""",
    """        q[w] = np.int8(np.clip(np.round(x[w] * inv), -127, 127))""",
)

QUANT_RINT = QUANT_ROWS.replace("v = round(x[w] * inv)", "v = np.rint(x[w] * inv)")

BINCOUNT_GRID_STRIDE = WARP_BINCOUNT.replace(
    """    n = labels.size
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    for _ in range((n + stride - 1) // stride):   # the same trip count in every lane
        lab = labels[i] if i < n else -1
        for b in range(NB):
            c = ss.warp.sum(np.uint32(1 if lab == b else 0))
            if cuda.laneid == 0 and c > 0:
                counts.add(b, c)
        i += stride
""",
    """    for w in thread.grid_stride(labels):
        lab = labels[w]
        for b in range(NB):
            c = ss.warp.sum(np.uint32(1 if lab == b else 0))
            if cuda.laneid == 0 and c > 0:
                counts.add(b, c)
""",
)

#: the RGBA downsample storing its four averages as one tuple
DOWNSAMPLE_TUPLE = DOWNSAMPLE.replace(
    """        out[w].r = avg4(p00.r, p01.r, p10.r, p11.r)
        out[w].g = avg4(p00.g, p01.g, p10.g, p11.g)
        out[w].b = avg4(p00.b, p01.b, p10.b, p11.b)
        out[w].a = avg4(p00.a, p01.a, p10.a, p11.a)""",
    """        out[w] = (avg4(p00.r, p01.r, p10.r, p11.r), avg4(p00.g, p01.g, p10.g, p11.g),
                  avg4(p00.b, p01.b, p10.b, p11.b), avg4(p00.a, p01.a, p10.a, p11.a))""",
)

LOW_NIBBLE = """
# the signed low nibble of each byte, as a float
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["out.size == packed.size"]))
def low_nibble(out: DisjointSlice[np.float32], packed: In[np.uint8]) -> None:
    i = thread.index_1d()
    b = packed[i]
    out[i] = np.float32(((b & 15) ^ 8) - 8)
"""


BF16_WIDEN_NO_BRANCH = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="y",
           requires=["x.size >= 64 * y.size"]))
def block_sums(y: DisjointSlice[np.float32, PerBlock], x: In[ss.bfloat16]) -> None:
    i = thread.index_1d()
    acc = np.float32(x[i.index])
    acc = ss.block.sum(acc)
    y[thread.block_leader()] = acc
"""

# =============================================================================================
# FALSE_REFUSALS
# =============================================================================================

FALSE_REFUSALS: dict[str, dict[str, Any]] = {
    "tuple_position_arith": {
        "fixed": "round 30's range-loop spans (verify/_ranges) accept xv[2 * q], t[q + 1], "
        "t[q + q], t[q | 2], t[e >> 1], range(0, 4, 2), range(np.int8(4)) "
        "(tests/ptx/test_port20_ptx.py TUPLE_SAFE_FIXED); a while counter and a helper's index "
        "since, enumerate(t) and range(-4, 0) since round 33 (signed bounds, counters stepped "
        "together)",
        "source": GEMV_INT4_TUPLE_ARITH,
        "kernel": "gemv_int4",
        "where": "compile (compiled-form uniformity)",
        "message": "`warp.sum` needs every thread of the warp to reach it, but control flow here "
        "is thread-dependent: the tuple index at line 39 reads a 8-element tuple at a position "
        "computed at run time, and Numba raises IndexError there for a position out of range. "
        "simtsafe does not prove this position in range (proven: `for q in range(k)` with a "
        "constant k <= 8, a mask `& c`, a compare) ... Index with a bounded position, `t[q & 7]` "
        "...",
        "why_safe": "`for q in range(4)` then `xv[2 * q]`, `xv[2 * q + 1]` on the 8-tuple of "
        "`vec.load(x, j, 8)`: the positions are 0..7, Numba's IndexError default is never taken, "
        "so no lane leaves before `warp.sum`. The range-loop variable is proven a position on its "
        "own (round 19) but composes with nothing: `t[q + 1]` under `range(3)`, `t[q + q]`, "
        "`t[2 * q]`, `t[q | 2]`, `t[e >> 1]` under `range(8)` on a 4-tuple, `range(0, 4, 2)`, "
        "`while q < 4`, `enumerate(t)` then `t[q]` are all refused (tests/ptx/test_port20_ptx.py), "
        "while masked values compose with `+`, `*` and `<<` ((q & 1) * 2 is accepted). "
        "docs/safety.md says `+` of bounded values is bounded and the range variable is 'a "
        "position too (proven by the same range facts as input reads)'",
        "workaround": "mask each position, `xv[(2 * q) & 7]`, `xv[(2 * q + 1) & 7]` (ACCEPTED "
        "gemv_int4_bf16); the message's own `t[q & 7]` is not the fix here (the index is 2q)",
    },
    "bf16_widen_before_collective": {
        "source": BF16_ROW_SUMS,
        "kernel": "bf16_row_sums",
        "where": "compile (compiled-form uniformity); the simulator's compile worker alike",
        "message": "`block.sum` needs every thread of the block to reach it, but control flow here "
        "is thread-dependent: the branch at line 23 depends on the result of a call simtsafe "
        "cannot see into at line 23, and threads going one way do not reach it ...",
        "why_safe": "line 23 is `acc += np.float32(m[r, j])`, the widening docs/porting.md section "
        "11 prescribes for a bf16 int-index read. numba-cuda lowers it to an out-of-line call of "
        "cuda_bf16's `__nv_bfloat16::operator float` (PTX `call.uni` to an `.extern .func`), "
        "whose status check the compiled form cannot see through, so it assumes the call may "
        "end the thread. The conversion is pure (bits << 16) and never raises. Every bf16 kernel "
        "that widens an int-index read before ANY barrier or collective is refused: a row sum, "
        "the int4 GEMV's group scale (GEMV_INT4_BF16_SCALE), even `np.float32(x[0])` at the top "
        "level. `np.float64(m[r, j])` compiles to an inline shift and is accepted",
        "fixed": "lowering/_shims.py reads the status of each C++ shim numba-cuda links from its source (return 0 only), the analysed copy gives the call status 0 and verify/_feasible drops the exception exit behind it (tests/ptx/test_port20_ptx.py, tests/kernels/fixed_refusals.py)",
        "workaround": "`np.float64(m[r, j])` (BF16_ROW_SUMS_F64; `np.float32(np.float64(...))` "
        "for a float32), a witness read (`for w in thread.block_row(m): acc += m[w]`, exact "
        "float32), or `ss.vec.load` (bf16 runs read as float32)",
    },
    "fp16_arith_before_collective": {
        "source": FP16_SQUARES,
        "kernel": "rmsnorm_f16",
        "where": "compile (compiled-form uniformity)",
        "message": "`block.sum` needs every thread of the block to reach it, but control flow here "
        "is thread-dependent: the branch at line 23 depends on the result of a call simtsafe "
        "cannot see into at line 23 ...",
        "why_safe": "line 23 is `acc += v * v` with `v = x[w]` a float16 witness read: Numba's "
        "float16 multiply is a call (`operator*(__half const&, __half const&)`), pure, that "
        "never raises; the same root cause as bf16_widen_before_collective. docs/cooperation.md "
        "says float16 arithmetic is 'a function call per operation' (to explain why collectives "
        "refuse float16), nowhere that such a call before a collective makes it refused",
        "fixed": "lowering/_shims.py reads the status of each C++ shim numba-cuda links from its source (return 0 only), the analysed copy gives the call status 0 and verify/_feasible drops the exception exit behind it (tests/ptx/test_port20_ptx.py, tests/kernels/fixed_refusals.py)",
        "workaround": "widen first, `v = np.float32(x[w])` (ACCEPTED rmsnorm_fp16_bf16): the "
        "float16 -> float32 conversion is an inline `cvt`",
    },
    "tuple_index_in_helper": {
        "source": GEMV_INT4_HELPER,
        "kernel": "gemv_int4",
        "where": "compile (compiled-form uniformity)",
        "message": "`warp.sum` needs every thread of the warp to reach it, but control flow here "
        "is thread-dependent: the branch at line 44 depends on a value that depends on which way "
        "the branch at line 43 went ...",
        "why_safe": "the helper `weight(b, e)` reads `b[(e >> 1) & 3]` of a 4-tuple: a masked "
        "position (docs/safety.md: `TT[int(x) & 3]` raises for no thread), and `xv[e]` under "
        "`for e in range(8)` is a range position. The same expression inline in the kernel is "
        "accepted; through a `@ss.device` helper called under a thread-dependent branch (the "
        "lane's loop) it is refused, and so is the minimal `pick(t, k)` returning `t[k & 3]` "
        "under `if cuda.laneid < n:` (accepted at the top level). docs/safety.md says the "
        "bounded positions hold 'in a kernel or an op'",
        "workaround": "index the tuple in the kernel itself (ACCEPTED gemv_int4_bf16), not in a "
        "helper",
    },
    "covers_mma_out_tile": {
        "fixed": "covers counts what a tensor-core output tile owns (host/_tilecover.py; the "
        "sizes recorded at decoration, decoration/_rewrite._note_out_tile): (grid.y*BM, "
        "grid.x*BN) of mma.out_tile(out, BM, BN, WM, WN) where each block has (BM/WM)*(BN/WN) "
        "whole warps (wgmma.out_tile: BM/64 whole warpgroups), the corner block (0, 0)'s whole "
        "warps own otherwise, nothing with grid.z > 1 or sizes the decorator cannot read. grid "
        "(1, 3) is accepted and matches numpy; grid (1, 2) is refused. The old count (one "
        "element a thread) was also unsound for these tiles: it took a (16, 32) output from "
        "grid (1, 16) of 32-thread blocks owning 16 x 16 tiles, leaving c[:, 16:] without an "
        "owner (tests/sim/test_port20_sim.py, tests/unit/test_tilecover.py)",
        "source": BMM_COVERS,
        "kernel": "bmm16",
        "where": "launch (CoverageError), simulator and GPU alike; check_kernel finds nothing",
        "message": "CoverageError: kernel 'bmm16' must cover every element of 'c' by its launch "
        "contract, but the launch owns 3 along axis 0 and 'c' has 48. Prepare with grid.y = "
        "simtsafe.cover(48, 1) (= 48) (axis 0 follows y: block.y = 1). (covers counts what a "
        "thread owns: one element a witness, a tile's elements where the kernel writes the output "
        "through thread.tile_1d / tile_2d / tile_2d_strided; ...)",
        "why_safe": "`ss.mma.out_tile(c, 16, 16, 16, 16)` gives block (0, b) the 16 x 16 block "
        "`c[16b : 16b + 16, :]`: grid (1, 3) covers a (48, 16) output. covers counts one "
        "element a thread for tensor-core tiles (docs/contracts.md says so in one sentence; "
        "docs/tensor_cores.md and the message do not), so the only launch it takes has 16x the "
        "blocks, 45 of them writing nothing",
        "workaround": "drop covers and state the grid: requires=['grid.y * 16 >= c.shape[0]'] "
        "(ACCEPTED bmm16_mma)",
    },
    "per_cell_cursor_scatter": {
        "source": CELL_SCATTER,
        "kernel": "scatter_by_cell",
        "where": "decoration",
        "message": "`cursor.add(cell[w], 1)` returns nothing: an Accumulate is only updated (the "
        "old value is not returned, so two threads cannot learn distinct values from it). For a "
        "unique slot per thread (the fetch-add idiom of stream compaction) use an AppendBuffer: "
        "w = buf.claim(), then buf[w] = v (docs/atomics.md); call cursor.add(...) as a statement "
        "of its own",
        "why_safe": "the counting sort's scatter (cell lists in SPH / molecular dynamics, "
        "bucketing): a fetch-add per cell hands each particle a distinct slot of its cell's range "
        "when `cursor` starts at the exclusive scan of the counts -- a property of the data, so "
        "documented Tier 2 (docs/porting.md section 10; port17's radix scatter). Severity low; "
        "the advice misleads: an AppendBuffer has one counter, so its slots are not grouped by "
        "cell, and nothing in docs/atomics.md gives a per-bucket append",
        "workaround": "sort the cells (host or a library sort), then a thread per cell finds "
        "its range by binary search (ACCEPTED cell_binning: cell_ranges); or an AppendBuffer of "
        "(cell, id) records sorted afterwards",
    },
}

# =============================================================================================
# BAD_ERRORS
# =============================================================================================

BAD_ERRORS: dict[str, dict[str, Any]] = {
    "opaque_call_uniformity_message": {
        "fixed": "moot for the shims (no refusal: FALSE_REFUSALS bf16_widen_before_collective); "
        "a call the analysis cannot see into is still worded 'the branch at line N depends on "
        "the result of a call'",
        "source": BF16_WIDEN_NO_BRANCH,
        "kernel": "block_sums",
        "message": "`block.sum` needs every thread of the block to reach it, but control flow here "
        "is thread-dependent: the branch at line 15 depends on the result of a call simtsafe "
        "cannot see into at line 15, and threads going one way do not reach it ... Move the call "
        "out of that branch or loop ... make the condition uniform ...; compiled after another "
        "bf16 kernel in the same process, bf16_row_sums's refusal adds '(in helper "
        "_conversion_op_caller___nv_bfloat16, line 15)', line 15 of block_sums's file",
        "what": "line 15 is `acc = np.float32(x[i.index])`: no branch in the source, and the "
        "call is numba-cuda's bf16 conversion. The message never says bf16 (or, for "
        "FP16_SQUARES, float16 arithmetic: another such call), calls the call's status check "
        "'the branch at line 15', and gives advice that does not apply (the collective is at "
        "the top level). Where it names the helper, it names numba-cuda's internal "
        "`_conversion_op_caller___nv_bfloat16` (fp16: the mangled `_ZmlRK6__halfS1__nbst_caller`) "
        "with the line of whichever kernel first compiled that helper in the process -- another "
        "file's line, different from run to run with the order of compiles "
        "(tests/ptx/test_port20_ptx.py). The fix -- `np.float64(...)`, a witness read, "
        "`vec.load`, widening fp16 before arithmetic -- is in no message or doc",
    },
    "tuple_index_in_helper_message": {
        "source": GEMV_INT4_HELPER,
        "kernel": "gemv_int4",
        "message": "the branch at line 44 depends on a value that depends on which way the branch "
        "at line 43 went, and threads going one way do not reach it ...",
        "what": "line 44 is `part += weight(b, e) * xv[e]` and line 43 `for e in range(8):`: "
        "round 19's message, which names the tuple index, Numba's IndexError and the fixes, is "
        "given for a tuple index in the kernel only; through a helper (`weight`, or `pick(t, k)` "
        "-> `t[k]`) the refusal is the old 'branch at line N' wording, pointing at the call, not "
        "at the helper's tuple index (where it names the helper's line, it still says 'branch')",
    },
    "numpy_clip_round_allow_list": {
        "fixed": "a numpy function that is not a ufunc is refused as one (rule numpy-function, "
        "lowering/_ufuncs.numpy_function_refusal): '`np.clip` is a numpy function over arrays, "
        "not a ufunc, which kernels cannot call: they compute an element at a time, with numpy "
        "ufuncs on scalars ...; for np.clip(x, lo, hi) write `min(max(x, lo), hi)` (np.clip's "
        "value for every x but NaN)'; np.round / np.around name the builtin round(x) (half to "
        "even on both targets, an int), np.where `a if c else b`, np.max / np.sum a loop or a "
        "collective; the allow-list text no longer says 'numpy functions' (docs/faq.md, "
        "docs/safety.md)",
        "source": QUANT_NUMPY,
        "kernel": "quantize_rows",
        "message": "`np.clip` is a numpy._ArrayFunctionDispatcher object, which is not on "
        "simtsafe's allow-list of what kernels may refer to (constants, numba.cuda's kernel API, "
        "math/cmath/numpy functions, simtsafe.thread, @simtsafe.device helpers). Pass data as "
        "arguments",
        "what": "`np.int8(np.clip(np.round(x * inv), -127, 127))` is how every quantization "
        "kernel is first written. 'Pass data as arguments' does not apply to a function; the "
        "message says numpy functions are allowed and then refuses one; np.round and np.around "
        "get the same text. The fixes are `min(max(v, lo), hi)` and the builtin `round(v)` "
        "(half to even, as np.round: PTX cvt.rni), as np.sign's and np.cbrt's messages spell "
        "their replacements",
    },
    "np_rint_no_spelling": {
        "fixed": "np.rint's refusal ends 'write the builtin `round(x)`: half to even, as np.rint, "
        "for a finite x in int64 range; it is an int (`np.float32(round(x))` for a float)' "
        "(PTX cvt.rni.s64.f64; the simulator's Python round, checked against np.rint); np.sign's "
        "spelling, `(x > 0) - (x < 0)`, a bool subtraction numpy refuses on the simulator, is "
        "now `int(x > 0) - int(x < 0)`",
        "source": QUANT_RINT,
        "kernel": "quantize_rows",
        "message": "`np.rint`: np.rint does not compile in kernels (numba-cuda 0.30.4 cannot "
        "lower it on the GPU); write it with operators or math functions",
        "what": "the equivalent is the builtin `round(v)` (round half to even, an int; "
        "`cvt.rni`), which is neither an operator nor a math function; np.sign and np.cbrt's "
        "refusals name their spelling, np.rint's does not",
    },
    "float_of_bf16": {
        "fixed": "a typing error on numba-cuda's bf16 scalar (float(), int(), np.exp... of "
        "`__nv_bfloat16`) adds: '`__nv_bfloat16` is numba-cuda's bfloat16 scalar, what an "
        "int-index read `x[k]` of a bfloat16 array gives, and Python's float()/int() and most "
        "functions do not take it. Widen it first: `np.float32(x[k])` or `np.float64(x[k])` "
        "(then int(...) and math functions apply), or read the element through a witness "
        "(`x[w]` is its exact float32); docs/porting.md section 11' "
        "(lowering/_diagnostics.translate_typing_error; the simulator's compile worker alike)",
        "source": FLOAT_OF_BF16,
        "kernel": "widen",
        "message": "Numba cannot type `float(__nv_bfloat16)`",
        "what": "`float(x[k])` is the first widening a Python programmer writes; the message "
        "names numba-cuda's C type, not the bf16 input, and no fix (`np.float64(x[k])`, or a "
        "witness read `x[w]`, which is float32)",
    },
    "collective_in_grid_stride": {
        "fixed": "a uniformity refusal of a collective inside a witness loop with a per-thread "
        "trip count (thread.grid_stride, block_row, warp_row; recorded at decoration, "
        "decoration/_uniformity.with_loop_note, applied to the compiled form's verdict and to "
        "the source-level fallback) ends: '. The call is inside `for ... in "
        "thread.grid_stride(...)` at line 19, whose trip count differs between threads (thread "
        "i of the grid runs ceil((n - i) / stride) rounds: where the array ends, some threads "
        "of a warp or block run one round fewer than the others), so no collective in its "
        "body is reached by every thread the same number of times. For a collective each "
        "round, loop the same number of times in every thread and guard the read: `stride = "
        "cuda.gridsize(1)`, `i = cuda.grid(1)`, `for _ in range((n + stride - 1) // stride):` "
        "then `v = x[i] if i < n else <a value that changes nothing>` and `i += stride` at the "
        "end of the body (docs/atomics.md, 'Block claims')'; block_row / warp_row name "
        "block_row_chunks / warp_row_chunks",
        "source": BINCOUNT_GRID_STRIDE,
        "kernel": "bincount8",
        "message": "`warp.sum` needs every thread of the warp to reach it, but control flow here "
        "is thread-dependent: the branch at line 21 depends on a value computed in a loop that "
        "threads leave at different iterations (the exit at line 19) ... Move the call out of "
        "that branch or loop (compute per-thread values first, then call it in every thread) ...",
        "what": "a correct refusal (the warp holding the array's end runs one round fewer in some "
        "lanes) whose message never names `thread.grid_stride` (line 19) nor the fix the docs "
        "show only for block_claim (docs/atomics.md, examples/compact.py): loop "
        "`(n + stride - 1) // stride` times in every lane and guard the read; 'move the call out "
        "of the loop' cannot apply to a vote per element. Severity low",
        "workaround": "WARP_BINCOUNT (the uniform trip count; accepted, matches numpy)",
    },
    "record_store_tuple": {
        "fixed": "a store that does not convert into a record element of a DisjointSlice or an "
        "AppendBuffer (lowering/_cuda.store_refusal) reads: 'cannot store a value of type "
        "UniTuple(uint8 x 4) into a DisjointSlice of records (fields r, g, b, a): a record "
        "element takes a record of its dtype (`out[w] = src[k]`, src an input of that dtype) "
        "or is written field by field through the witness, `out[w].r = ...`, `out[w].g = "
        "...`, ... (docs/porting.md, 'Python constructs on views')'",
        "source": DOWNSAMPLE_TUPLE,
        "kernel": "downsample2x2",
        "message": "cannot store a value of type UniTuple(uint8 x 4) into a DisjointSlice of "
        "Record(r[type=uint8;offset=0],g[type=uint8;offset=1],b[type=uint8;offset=2],"
        "a[type=uint8;offset=3];4;False)",
        "what": "storing a pixel as a tuple of its channels is the natural first try; the message "
        "prints Numba's record type and no fix (the field stores `out[w].r = ...`, which the "
        "docs give for records: docs/porting.md 'Python constructs on views')",
    },
    "coverage_mma_grid_advice": {
        "fixed": "a launch that leaves rows of an mma / wgmma output unowned is refused with "
        "what a block owns and the grid of block tiles: '... but the launch owns 32 along axis "
        "0 and 'c' has 48: 'c' is written through ss.mma.out_tile(c, 16, 16, 16, 16), so block "
        "(bx, by) owns the 16 x 16 tile c[16*by : +16, 16*bx : +16] (its first warp all of "
        "it). Prepare with grid.y = simtsafe.cover(48, 16) (= 3) (axis 0 follows y: 16 rows a "
        "block)'; a block with too few whole warps for its tile is told the block size; the "
        "generic text lists the tensor-core tiles (docs/contracts.md, docs/tensor_cores.md, "
        "docs/faq.md)",
        "source": BMM_COVERS,
        "kernel": "bmm16",
        "message": "Prepare with grid.y = simtsafe.cover(48, 1) (= 48) ... (covers counts what a "
        "thread owns: one element a witness, a tile's elements where the kernel writes the output "
        "through thread.tile_1d / tile_2d / tile_2d_strided; ...)",
        "what": "the suggested grid (48 blocks for 3 matrices) launches 16x the work; the list of "
        "what covers counts omits mma/wgmma tiles (one element a thread), so the user cannot tell "
        "why a tile output is counted per thread, nor that `requires=['grid.y * 16 >= ...']` is "
        "the way out",
    },
}

# =============================================================================================
# DOC_GAPS
# =============================================================================================

DOC_GAPS: dict[str, dict[str, Any]] = {
    "bf16_widen_np_float32": {
        "fixed": "docs/porting.md section 11 says the widening is a call per element that may "
        "come before a collective, and names the inline np.float64 / np.float32(float16) forms; "
        "docs/safety.md's levels table says how the shims' status is read",
        "source": BF16_ROW_SUMS,
        "doc": "docs/porting.md section 11 ('widen it with np.float32(x[k])', and its "
        "bf16_row_sums); docs/safety.md 'What is NOT enforced' (bf16 int-index reads)",
        "what": "the prescribed widening is an out-of-line call per element (PTX `call.uni` to "
        "`.extern .func ____nv_bfloat16__ZNK13__nv_bfloat16cvfEv_1`, its result through local "
        "memory; `np.float64(x[k])` is one `shl.b32`), and it makes every later barrier or "
        "collective refused (FALSE_REFUSALS bf16_widen_before_collective). Neither page says "
        "either; the porting guide's own bf16_row_sums only works because it has no collective",
    },
    "tuple_bounded_positions": {
        "fixed": "docs/safety.md's list says what is accepted, each example checked by "
        "tests/ptx/test_port20_ptx.py DOCUMENTED_POSITIONS: `&` with a non-negative constant; "
        "`|`, `^`, `+`, `*`, `<<` of bounded values; `>>` by a constant; a sign-keeping "
        "widening; constants; a compare on the path; `%` by a constant of an unsigned or "
        "non-negative value from data (the same `%` of a value from the thread's index is "
        "refused today: `& 3`); the range-loop variable alone or masked, composing with nothing "
        "else; all of it in a kernel's body and a reduction's op, not in a helper called under "
        "a thread-dependent branch",
        "source": GEMV_INT4_TUPLE_ARITH,
        "doc": "docs/safety.md 'Uniformity' (a tuple indexed at a bounded position)",
        "what": "the list says `and`, `|`, `^`, `+` of bounded values and `%` by a constant keep "
        "a position bounded and that a range-loop variable is a position 'proven by the same "
        "range facts'. Behaviour: `*` and `<<` of masked values are accepted too ((q & 1) * 2, "
        "(q & 1) << 1; not listed), while the range variable composes with nothing (q + 1, 2 * q, "
        "q | 2 refused), and neither holds inside a helper (tuple_index_in_helper)",
    },
    "simulator_narrow_int_wraps": {
        "fixed": "docs/checker.md 'Values, not bits' says a simulator launch and the replay "
        "compute integers in the element type where Numba widens to int64, with this int4 "
        "example (248.0 there, -8.0 on the GPU) and the spellings that give the GPU's values "
        "on both (`int(b)`, `np.int64(b)` first, or an np.int8 result); docs/faq.md's "
        "simulator bullet says it and points there (tests/sim/test_port20_sim.py)",
        "source": LOW_NIBBLE,
        "kernel": "low_nibble",
        "doc": "docs/tutorial.md / docs/porting.md / docs/faq.md (the simulator as the way to "
        "check values); only docs/checker.md 'Values, not bits' says it, for `<< 27` in int32",
        "what": "`np.float32(((b & 15) ^ 8) - 8)` of a uint8 read (the int4 sign extension) is "
        "-8.0 on the GPU (PTX: the int64 `add.s64 -8`, `cvt.rn.f32.s64`) and 248.0 on the "
        "simulator, where the read is an np.uint8 and numpy 2 keeps `uint8 - 8` in uint8 (with a "
        "RuntimeWarning). A correct int4 kernel fails its numpy check on the simulator; "
        "ACCEPTED unpack_int4 passes only because it casts to np.int8 (the wrap is then the same "
        "bits). The pages that send users to the simulator do not say its integer arithmetic "
        "is numpy's on the element type",
    },
}

# =============================================================================================
# numpy checks (simulator): each launches the port on small data (sizes not multiples of the
# block where natural) and compares with numpy; ``_clean`` replays it under ``simtsafe.sim.check``.
# =============================================================================================

#: the last sim.check reports that were not clean (name -> text)
UNCLEAN: dict[str, str] = {}


def _clean(prepared: Any, *args: Any) -> bool:
    """``sim.check`` of one prepared launch with host copies of ``args``: no finding."""
    return replay_clean(prepared, args, UNCLEAN)


def _gauss9_ref(x: np.ndarray, f: np.ndarray, axis: int) -> np.ndarray:
    pad = [(0, 0), (0, 0)]
    pad[axis] = (4, 4)
    z = np.pad(x, pad, mode="edge")
    n = x.shape[axis]
    return sum(f[k] * (z[k : k + n, :] if axis == 0 else z[:, k : k + n]) for k in range(9)).astype(
        np.float32
    )


def _check_separable(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = rng.standard_normal((19, 45)).astype(np.float32)
    tmp = _dev(np.full_like(x, np.nan))
    out = _dev(np.full_like(x, np.nan))
    grid = (ss.cover(45, 32), ss.cover(19, 8))
    rows = m.blur_rows.prepare(grid=grid, block=(32, 8))
    cols = m.blur_cols.prepare(grid=grid, block=(32, 8))
    rows(tmp, _dev(x))
    cols(out, tmp)
    ref = _gauss9_ref(_gauss9_ref(x, m.GAUSS9, 1), m.GAUSS9, 0)
    return bool(np.allclose(_host(out), ref, atol=1e-5)) and _clean(rows, np.zeros_like(x), x)


def _check_rmsnorm(m: ModuleType, rng: np.random.Generator) -> bool:
    import ml_dtypes

    ok = True
    for cols in (1, 100, 300):
        x = rng.standard_normal((5, cols)).astype(np.float16)
        wt = rng.standard_normal(cols).astype(ml_dtypes.bfloat16)
        o = _dev(np.full(x.shape, np.nan, np.float16))
        p = m.rmsnorm_f16.prepare(grid=5, block=128)
        p(o, _dev(x), _dev(wt), np.float32(1e-5))
        x32 = x.astype(np.float32)
        inv = 1 / np.sqrt((x32 * x32).mean(1, keepdims=True) + 1e-5)
        ref = (x32 * inv * wt.astype(np.float32)).astype(np.float16)
        ok = ok and np.allclose(
            _host(o).astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=2e-3
        )
    return bool(ok)


def _check_quant(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (3, 130):
        x = (rng.standard_normal((4, cols)) * 3).astype(np.float32)
        x[2] = 0  # an all-zero row: scale 1, zeros out
        q = _dev(np.full(x.shape, 99, np.int8))
        s = _dev(np.full(4, np.nan, np.float32))
        p = m.quantize_rows.prepare(grid=4, block=128)
        p(q, s, _dev(x))
        amax = np.abs(x).max(1)
        ref_s = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
        ref_q = np.clip(np.rint(x * (np.float32(1) / ref_s)[:, None]), -127, 127).astype(np.int8)
        ok = ok and np.array_equal(_host(s), ref_s) and np.array_equal(_host(q), ref_q)
    return bool(ok)


def _int4_ref(wq: np.ndarray) -> np.ndarray:
    lo = (wq & 15).astype(np.int32) - 8
    hi = (wq >> 4).astype(np.int32) - 8
    return np.stack([lo, hi], axis=-1).reshape(wq.shape[0], -1)


def _check_gemv_int4(m: ModuleType, rng: np.random.Generator) -> bool:
    import ml_dtypes

    import simtsafe as ss

    ok = True
    for k in (32, 96, 512):
        rows = 6
        wq = rng.integers(0, 256, (rows, k // 2)).astype(np.uint8)
        sc = (rng.random((rows, k // 32)) + 0.5).astype(ml_dtypes.bfloat16)
        x = rng.standard_normal(k).astype(ml_dtypes.bfloat16)
        y = _dev(np.full(rows, np.nan, np.float32))
        p = m.gemv_int4.prepare(grid=ss.cover(rows, 4), block=128)
        p(y, _dev(wq), _dev(sc), _dev(x))
        w = _int4_ref(wq) * np.repeat(sc.astype(np.float64), 32, axis=1)
        ok = ok and np.allclose(_host(y), w @ x.astype(np.float64), rtol=1e-4, atol=1e-3)
    return bool(ok)


def _check_unpack(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 301  # not a multiple of 4: the last thread's run is partial
    packed = rng.integers(0, 256, n).astype(np.uint8)
    o = _dev(np.full(2 * n, 99, np.int8))
    p = m.unpack_int4.prepare(grid=ss.cover(ss.cover(n, 4), 128), block=128)
    with warnings.catch_warnings():
        # the simulator computes `((n & 15) ^ 8) - 8` in uint8 (DOC_GAPS
        # simulator_narrow_int_wraps); the np.int8 cast makes the wrapped bits right
        warnings.simplefilter("ignore", RuntimeWarning)
        p(o, _dev(packed))
    lo = ((packed & 15).astype(np.int16) ^ 8) - 8
    hi = ((packed >> 4).astype(np.int16) ^ 8) - 8
    ref = np.stack([lo, hi], 1).reshape(-1).astype(np.int8)
    return bool(np.array_equal(_host(o), ref))


def _check_hist_f32(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 1000
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    x[:3] = [np.nan, np.float32(3), np.float32(-3)]  # NaN dropped, both ends kept
    lo, hi = np.float32(-3), np.float32(3)
    c = _dev(np.zeros(64, np.uint32))
    p = m.hist_f32.prepare(grid=3, block=128)
    p(c, _dev(x), lo, hi)
    keep = x[(x >= lo) & (x <= hi)]
    b = np.minimum(((keep - lo) * (np.float32(64) / (hi - lo))).astype(np.int64), 63)
    ok = np.array_equal(_host(c), np.bincount(b, minlength=64))
    return bool(ok) and _clean(p, np.zeros(64, np.uint32), x, lo, hi)


def _check_cells(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n, nx, ny, h = 300, 7, 5, np.float32(0.25)
    px = (rng.random(n) * nx * h * 1.1 - 0.05).astype(np.float32)  # a few outside: clamped
    py = (rng.random(n) * ny * h * 1.1 - 0.05).astype(np.float32)
    cell = _dev(np.full(n, -1, np.int32))
    counts = _dev(np.zeros(nx * ny, np.int32))
    p = m.bin_particles.prepare(grid=2, block=128)
    p(cell, counts, _dev(px), _dev(py), np.float32(1) / h, np.int32(nx), np.int32(ny))
    inv = np.float32(1) / h
    cx = np.clip((px * inv).astype(np.int64), 0, nx - 1)
    cy = np.clip((py * inv).astype(np.int64), 0, ny - 1)
    ref = (cy * nx + cx).astype(np.int32)
    got = _host(cell)
    ok = np.array_equal(got, ref)
    ok = ok and np.array_equal(_host(counts), np.bincount(ref, minlength=nx * ny))
    srt = np.sort(got)
    start = _dev(np.full(nx * ny, -1, np.int32))
    end = _dev(np.full(nx * ny, -1, np.int32))
    q = m.cell_ranges.prepare(grid=ss.cover(nx * ny, 128), block=128)
    q(start, end, _dev(srt))
    cells = np.arange(nx * ny)
    ok = ok and np.array_equal(_host(start), np.searchsorted(srt, cells, side="left"))
    ok = ok and np.array_equal(_host(end), np.searchsorted(srt, cells, side="right"))
    return bool(ok)


def _check_bincount(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 1000
    lab = rng.integers(-1, 9, n).astype(np.int32)  # -1 and 8: outside the 8 classes
    c = _dev(np.zeros(8, np.uint32))
    p = m.bincount8.prepare(grid=3, block=128)
    p(c, _dev(lab))
    keep = lab[(lab >= 0) & (lab < 8)]
    return bool(np.array_equal(_host(c), np.bincount(keep, minlength=8)))


def _check_downsample(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w = 19, 37  # odd: the last row and column are dropped
    img = np.zeros((h, w), m.RGBA)
    for f in "rgba":
        img[f] = rng.integers(0, 256, (h, w))
    oh, ow = h // 2, w // 2
    o = _dev(np.zeros((oh, ow), m.RGBA))
    p = m.downsample2x2.prepare(grid=(ss.cover(ow, 16), ss.cover(oh, 8)), block=(16, 8))
    p(o, _dev(img))
    got = _host(o)
    ok = True
    for f in "rgba":
        c = img[f][: 2 * oh, : 2 * ow].astype(np.int32)
        ref = (c[0::2, 0::2] + c[0::2, 1::2] + c[1::2, 0::2] + c[1::2, 1::2] + 2) >> 2
        ok = ok and np.array_equal(got[f], ref.astype(np.uint8))
    return bool(ok)


def _check_mask(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    t, s, off = 13, 45, 5
    sc = rng.standard_normal((t, s)).astype(np.float32)
    ok_keys = rng.random(s) > 0.2
    d = _dev(sc)
    p = m.mask_scores.prepare(grid=(ss.cover(s, 32), ss.cover(t, 4)), block=(32, 4))
    p(d, _dev(ok_keys), np.int32(off))
    rows, cols = np.indices((t, s))
    ref = np.where((cols > rows + off) | ~ok_keys[None, :], np.float32(-np.inf), sc)
    return bool(np.array_equal(_host(d), ref))


def _check_mandelbrot(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w = 20, 37
    x0, y0, dx, dy = np.float32(-2), np.float32(-1.2), np.float32(3 / w), np.float32(2.4 / h)
    o = _dev(np.zeros((h, w), np.uint16))
    p = m.mandelbrot.prepare(grid=(ss.cover(w, 16), ss.cover(h, 16)), block=(16, 16))
    p(o, x0, y0, dx, dy)
    ref = np.zeros((h, w), np.uint16)
    for r in range(h):
        for c in range(w):
            cr = x0 + np.float32(c) * dx
            ci = y0 + np.float32(r) * dy
            zr = zi = np.float32(0)
            it = 0
            while it < 200:
                zr2, zi2 = zr * zr, zi * zi
                if zr2 + zi2 > np.float32(4):
                    break
                zi = np.float32(2) * zr * zi + ci
                zr = zr2 - zi2 + cr
                it += 1
            ref[r, c] = it
    return bool(np.array_equal(_host(o), ref))


def _check_black_scholes(m: ModuleType, rng: np.random.Generator) -> bool:
    import math

    import simtsafe as ss

    n = 200
    s = (rng.random(n) * 50 + 25).astype(np.float32)
    k = (rng.random(n) * 50 + 25).astype(np.float32)
    t = (rng.random(n) * 2 + 0.1).astype(np.float32)
    r, vol = np.float32(0.03), np.float32(0.3)
    call = _dev(np.full(n, np.nan, np.float32))
    put = _dev(np.full(n, np.nan, np.float32))
    p = m.black_scholes.prepare(grid=ss.cover(n, 128), block=128)
    p(call, put, _dev(s), _dev(k), _dev(t), r, vol)
    s64, k64, t64 = (a.astype(np.float64) for a in (s, k, t))
    sq = np.sqrt(t64)
    d1 = (np.log(s64 / k64) + (0.03 + 0.5 * 0.09) * t64) / (0.3 * sq)
    d2 = d1 - 0.3 * sq
    cdf = np.vectorize(lambda d: 0.5 * (1 + math.erf(d / math.sqrt(2))))
    disc = np.exp(-0.03 * t64)
    c_ref = s64 * cdf(d1) - k64 * disc * cdf(d2)
    p_ref = c_ref - s64 + k64 * disc
    return bool(
        np.allclose(_host(call), c_ref, atol=1e-3) and np.allclose(_host(put), p_ref, atol=1e-3)
    )


def _check_sample(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (1, 100, 300):
        p = rng.random((5, cols)).astype(np.float32)
        p[1, : cols // 2] = 0  # leading zeros: never drawn
        u = rng.random(5).astype(np.float32)
        idx = _dev(np.full(5, -1, np.int32))
        launch = m.sample_rows.prepare(grid=5, block=128)
        launch(idx, _dev(p), _dev(u))
        got = _host(idx)
        cdf = np.cumsum(p.astype(np.float64), 1)
        want = np.minimum(
            [np.searchsorted(cdf[i], u[i] * cdf[i, -1], side="right") for i in range(5)], cols - 1
        )
        ok = ok and np.array_equal(got, want)
    return bool(ok)


def _check_sat(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    img = rng.random((9, 150)).astype(np.float32)
    o = _dev(np.full_like(img, np.nan))
    cols = m.sat_cols.prepare(grid=ss.cover(150, 64), block=64)
    rows = m.sat_rows.prepare(grid=9, block=64)
    cols(o, _dev(img))
    rows(o)
    ref = img.astype(np.float64).cumsum(0).cumsum(1)
    ok = np.allclose(_host(o), ref, rtol=1e-5, atol=1e-4)
    return bool(ok) and _clean(cols, np.zeros_like(img), img) and _clean(rows, img.copy())


def _rope_ref(x: np.ndarray, pos: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    t, h, d = x.shape
    half = d // 2
    c = cos[pos][:, None, :]
    s = sin[pos][:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def _check_rope(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    t, hq, hk, d, cache = 5, 4, 2, 20, 16
    q = rng.standard_normal((t, hq, d)).astype(np.float32)
    k = rng.standard_normal((t, hk, d)).astype(np.float32)
    pos = rng.integers(0, cache, t).astype(np.int32)
    ang = rng.random((cache, d // 2)).astype(np.float32) * 6
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    dq = _dev(q.reshape(t * hq * 2, d // 2))
    dk = _dev(k.reshape(t * hk * 2, d // 2))
    p = m.rope_qk.prepare(grid=(ss.cover(d // 2, 32), ss.cover(t * hq, 4)), block=(32, 4))
    p(dq, dk, _dev(pos), _dev(cos), _dev(sin), hq, hk)
    ok = np.allclose(_host(dq).reshape(q.shape), _rope_ref(q, pos, cos, sin), atol=1e-5)
    ok = ok and np.allclose(_host(dk).reshape(k.shape), _rope_ref(k, pos, cos, sin), atol=1e-5)
    q2, k2 = q.reshape(t * hq * 2, d // 2), k.reshape(t * hk * 2, d // 2)
    return bool(ok) and _clean(p, q2.copy(), k2.copy(), pos, cos, sin, hq, hk)


def _check_bmm(m: ModuleType, rng: np.random.Generator) -> bool:
    nb = 3
    a = rng.standard_normal((nb * 16, 16)).astype(np.float16)
    b = rng.standard_normal((nb * 16, 16)).astype(np.float16)
    c = _dev(np.full((nb * 16, 16), np.nan, np.float32))
    p = m.bmm16.prepare(grid=(1, nb), block=32)
    p(c, _dev(a), _dev(b))
    a3 = a.astype(np.float64).reshape(nb, 16, 16)
    b3 = b.astype(np.float64).reshape(nb, 16, 16)
    return bool(np.allclose(_host(c).reshape(nb, 16, 16), a3 @ b3, atol=1e-4))


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "separable_gauss9": _check_separable,
    "rmsnorm_fp16_bf16": _check_rmsnorm,
    "quantize_rows_int8": _check_quant,
    "gemv_int4_bf16": _check_gemv_int4,
    "unpack_int4": _check_unpack,
    "histogram_f32": _check_hist_f32,
    "cell_binning": _check_cells,
    "downsample_rgba": _check_downsample,
    "masked_fill_causal": _check_mask,
    "mandelbrot": _check_mandelbrot,
    "black_scholes": _check_black_scholes,
    "sample_rows": _check_sample,
    "integral_image": _check_sat,
    "rope_inplace_qk": _check_rope,
    "bmm16_mma": _check_bmm,
}

_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=20)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
