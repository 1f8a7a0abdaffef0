"""Porting round 21: kernels people write for speed, ported to Tier 1 (no ``simtsafe.unsafe``).

Kernels (domains new to the rounds 15-20): a fused bias + GELU (tanh form) + dropout with a
counter-based generator (a 32-bit hash of the element's index), a depthwise 3x3 convolution of
NCHW images (a 3D launch), a 2x2 max-pool with PyTorch's argmax indices, a group norm (a block
per image-group, two block sums), a Sobel gradient's magnitude and direction, a box filter by
four lookups in a summed-area table, a segmented scan along rows (head flags; a block scan per
chunk, shared tiles, a carry), a sparse COO -> dense scatter (an accumulator), the population
count of bitmask rows (a warp per row, ``cuda.popc``), a 256-point complex FFT per row in shared
memory (complex64 tiles, eight radix-2 stages ping-ponged), a paged KV-cache gather through block
tables, the top-p (nucleus) cut of sorted rows (block scans), a BFS level expansion into an
append buffer, a row-wise L2 normalization of bf16 rows, and an int8 quantization with one scale
per group of 32 (a warp max).

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1, compiled with NVVM (``simtsafe.check_kernel``: no
                         finding, ``ptx(cc=(9, 0))``); on the simulator the port matches numpy
                         (``CHECKS``), several replayed clean under ``simtsafe.sim.check``;
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen, why it
                         is safe, and the workaround (``fixed`` where this round fixed it);
* ``BAD_ERRORS``      -- a message that misleads or lacks its fix;
* ``DOC_GAPS``        -- where the docs and the behaviour disagree.

Nothing unsound was found in the accepted kernels (each replays clean under
``simtsafe.sim.check``). The round's fix of a rule's input (complex tile elements stored and
loaded as one integer, so a witness store has one address) leaves the compiled-form rule as it
was: a neighbour's complex element read in the interval its owner writes it stays refused by the
compiled form alone. The round's own first cut of ``libdevice.f`` through its module trusted
the module found under its import name; a module swapped in there is refused since (the
function's identity decides; tests/ptx/test_port21_ptx.py).

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port21 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port21 NAME...  # simulator

Tests: tests/ptx/test_port21_ptx.py, tests/sim/test_port21_sim.py.
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

EXTRA_HEADER = (
    "import cmath\nimport math\nfrom simtsafe import Accumulate, BlockRow, Columns, WarpRow\n"
)

# =============================================================================================
# ACCEPTED
# =============================================================================================

BIAS_GELU_DROPOUT = """
B = 128
K0 = 0.7978845608028654   # sqrt(2 / pi)
K1 = 0.044715


@ss.device
def mix32(x):
    # a 32-bit integer hash (lowbias32): a counter-based generator's output for counter x.
    # Each product is taken back to uint32: Numba computes uint32 * uint32 in 64 bits on the
    # GPU (DOC_GAPS uint32_hash_widens)
    x = x ^ (x >> np.uint32(16))
    x = np.uint32(x * np.uint32(0x7FEB352D))
    x = x ^ (x >> np.uint32(15))
    x = np.uint32(x * np.uint32(0x846CA68B))
    x = x ^ (x >> np.uint32(16))
    return np.uint32(x)


@ss.device
def uniform(seed, i):
    # a uniform on [0, 1) of 24 bits from (seed, element index): no state, any order
    h = mix32(np.uint32(i) ^ mix32(seed))
    return np.float32(h >> np.uint32(8)) * np.float32(1.0 / 16777216.0)


# y = dropout(gelu_tanh(x + bias)), x [rows, cols], bias [cols]: a counter-based RNG keyed by
# the element's flat index, so the mask is the same on any launch shape
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 4, 1), covers="y",
           requires=["y.shape[0] == x.shape[0]", "y.shape[1] == x.shape[1]",
                     "bias.size == x.shape[1]"]))
def bias_gelu_dropout(y: DisjointSlice2D[np.float32], x: In2D[np.float32], bias: In[np.float32],
                      p: np.float32, seed: np.uint32) -> None:
    w = thread.index_2d()
    if w.in_bounds(y):
        v = x[w] + bias[w.col]
        g = np.float32(0.5) * v * (np.float32(1) + math.tanh(np.float32(K0) * (v + np.float32(K1) * v * v * v)))
        u = uniform(seed, w.row * x.shape[1] + w.col)
        y[w] = g / (np.float32(1) - p) if u >= p else np.float32(0)
"""


DEPTHWISE3 = """
# depthwise 3x3 convolution, NCHW, stride 1, zero padding 1: x viewed [N * C, H, W], a thread
# per output pixel (z: image-channel plane, y: row, x: column), the channel's 9 weights
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(32, 4, 1),
           requires=["out.shape[0] == x.shape[0]", "out.shape[1] == x.shape[1]",
                     "out.shape[2] == x.shape[2]", "wt.shape[1] == 9"]))
def depthwise3x3(out: DisjointSlice3D[np.float32], x: In3D[np.float32], wt: In2D[np.float32],
                 channels: np.int32) -> None:
    w = thread.index_3d()
    if w.in_bounds(out):
        plane, r, c = w.z, w.y, w.x
        ch = plane % channels
        h = x.shape[1]
        wd = x.shape[2]
        acc = np.float32(0)
        for dy in range(3):
            for dx in range(3):
                rr = r + dy - 1
                cc = c + dx - 1
                if 0 <= rr < h and 0 <= cc < wd:
                    acc += wt[ch, dy * 3 + dx] * x[plane, rr, cc]
        out[w] = acc
"""


MAXPOOL = """
# max-pool 2x2 stride 2 with the argmax (flat index into the input plane, first max wins, as
# PyTorch's return_indices), x viewed [planes, H, W]
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(16, 8, 1),
           requires=["out.shape[0] == x.shape[0]", "idx.shape[0] == x.shape[0]",
                     "2 * out.shape[1] <= x.shape[1]", "2 * out.shape[2] <= x.shape[2]",
                     "idx.shape[1] == out.shape[1]", "idx.shape[2] == out.shape[2]"]))
def maxpool2x2(out: DisjointSlice3D[np.float32], idx: DisjointSlice3D[np.int32],
               x: In3D[np.float32]) -> None:
    w = thread.index_3d()
    if w.in_bounds(out):
        r0 = 2 * w.y
        c0 = 2 * w.x
        best = x[w.z, r0, c0]
        arg = r0 * x.shape[2] + c0
        for k in range(1, 4):
            r = r0 + k // 2
            c = c0 + k % 2
            v = x[w.z, r, c]
            if v > best:
                best = v
                arg = r * x.shape[2] + c
        out[w] = best
        idx[w] = np.int32(arg)
"""


GROUPNORM = """
B = 128


# group norm: x [N, C, H, W] viewed [N * G, (C / G) * H * W] -- a row per (image, group),
# a block per row; mean and variance by two block sums, then the per-channel affine
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="y",
           requires=["y.shape[0] == x.shape[0]", "y.shape[1] == x.shape[1]",
                     "gamma.size == beta.size"]))
def group_norm(y: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32], gamma: In[np.float32],
               beta: In[np.float32], groups: np.int32, hw: np.int32, eps: np.float32) -> None:
    n = np.float32(x.shape[1])
    s = np.float32(0)
    for w in thread.block_row(x):
        s += x[w]
    mean = ss.block.sum(s) / n
    q = np.float32(0)
    for w in thread.block_row(x):
        d = x[w] - mean
        q += d * d
    inv = np.float32(1) / math.sqrt(ss.block.sum(q) / n + eps)
    cpg = x.shape[1] // hw
    g = cuda.blockIdx.x % groups
    for w in thread.block_row(y):
        ch = g * cpg + w.col // hw
        y[w] = (x[w] - mean) * inv * gamma[ch] + beta[ch]
"""


SOBEL = """
@ss.device
def px(img, r, c):
    # clamp to edge
    r = min(max(r, 0), img.shape[0] - 1)
    c = min(max(c, 0), img.shape[1] - 1)
    return img[r, c]


# Sobel gradient: magnitude and direction (atan2) per pixel, replicated border
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 8, 1),
           requires=["mag.shape[0] == img.shape[0]", "mag.shape[1] == img.shape[1]",
                     "ang.shape[0] == img.shape[0]", "ang.shape[1] == img.shape[1]"]))
def sobel(mag: DisjointSlice2D[np.float32], ang: DisjointSlice2D[np.float32],
          img: In2D[np.float32]) -> None:
    w = thread.index_2d()
    if w.in_bounds(mag):
        r, c = w.row, w.col
        gx = (px(img, r - 1, c + 1) + 2 * px(img, r, c + 1) + px(img, r + 1, c + 1)
              - px(img, r - 1, c - 1) - 2 * px(img, r, c - 1) - px(img, r + 1, c - 1))
        gy = (px(img, r + 1, c - 1) + 2 * px(img, r + 1, c) + px(img, r + 1, c + 1)
              - px(img, r - 1, c - 1) - 2 * px(img, r - 1, c) - px(img, r - 1, c + 1))
        mag[w] = math.sqrt(gx * gx + gy * gy)
        ang[w] = math.atan2(gy, gx)
"""


BOX_FILTER = """
# box filter of radius R by four lookups in a summed-area table with a zero first row and
# column (sat [H + 1, W + 1]); the window clipped at the border, divided by its own area
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 8, 1),
           requires=["sat.shape[0] == out.shape[0] + 1", "sat.shape[1] == out.shape[1] + 1"]))
def box_filter(out: DisjointSlice2D[np.float32], sat: In2D[np.float64], radius: np.int32) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        h = out.shape[0]
        wd = out.shape[1]
        r0 = max(w.row - radius, 0)
        r1 = min(w.row + radius + 1, h)
        c0 = max(w.col - radius, 0)
        c1 = min(w.col + radius + 1, wd)
        s = sat[r1, c1] - sat[r0, c1] - sat[r1, c0] + sat[r0, c0]
        out[w] = np.float32(s / ((r1 - r0) * (c1 - c0)))
"""


SEGSCAN = """
B = 64


# segmented inclusive sum along each row (a segment starts where flag != 0 and at the row's
# start), a block per row in chunks of B: a block scan per chunk, the chunk's prefix sums and
# flags in shared tiles, each thread walking back to its segment's head; the carry is the
# running sum of the segment open at the chunk's end
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out",
           requires=["out.shape[0] == v.shape[0]", "out.shape[1] == v.shape[1]",
                     "flag.shape[0] == v.shape[0]", "flag.shape[1] == v.shape[1]"]))
def segmented_scan(out: DisjointSlice[np.float32, BlockRow], v: In2D[np.float32],
                   flag: In2D[np.uint8]) -> None:
    pre = ss.shared.tile(B, np.float32)
    head = ss.shared.tile(B, np.uint8)
    carry = np.float32(0)
    for c in thread.block_row_chunks(out):
        x = v[c]
        f = flag[c] if c.valid else np.uint8(0)
        s = ss.block.scan(x)
        t = thread.local_index()
        pre[t] = s
        head[t] = f
        ss.block.sync()
        j = t.index
        while j > 0 and head[j] == 0:
            j -= 1
        if head[j] != 0:
            r = s - (pre[j - 1] if j > 0 else np.float32(0))
        else:
            r = s + carry
        out[c] = r
        carry = ss.block.sum(r if t.index == B - 1 else np.float32(0))
        ss.block.sync()
"""


COO_SCATTER = """
# sparse COO -> dense: dense[row[k], col[k]] += val[k] (duplicates summed, as scipy's
# coo.toarray()), the dense matrix flattened and updated atomically
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128,
           requires=["row.size == val.size", "col.size == val.size"]))
def coo_to_dense(dense: ss.Accumulate[np.float32], row: In[np.int32], col: In[np.int32],
                 val: In[np.float32], ncols: np.int32) -> None:
    for w in thread.grid_stride(val):
        dense.add(row[w] * ncols + col[w], val[w])
"""


POPCOUNT = """
# population count of each row of a bitmask (uint32 words), a warp per row
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="counts",
           requires=["counts.size == bits.shape[0]"]))
def row_popcount(counts: DisjointSlice[np.int32, PerWarp], bits: In2D[np.uint32]) -> None:
    n = np.int32(0)
    for w in thread.warp_row(bits):
        n += cuda.popc(bits[w])
    n = ss.warp.sum(n)
    counts[thread.warp_leader()] = n
"""


FFT = """
N = 256
LOGN = 8


@ss.device
def bitrev8(i):
    r = 0
    for b in range(LOGN):
        r = (r << 1) | ((i >> b) & 1)
    return r


@ss.device
def butterfly(src, i, s):
    # output i of radix-2 decimation-in-time stage s (half = 2**s): the pair (lo, hi) =
    # (base + j, base + j + half), lo + w hi for the first half of the group, lo - w hi after
    half = 1 << s
    j = i & (half - 1)
    base = (i >> (s + 1)) << (s + 1)
    tw = cmath.exp(np.complex64(-2j * math.pi) * np.float32(j) / np.float32(2 * half))
    a = src[base + j]
    b = src[base + j + half] * tw
    return a + b if (i & half) == 0 else a - b


# a 256-point complex FFT per row (a block of N threads per signal): bit-reversed load into a
# shared tile, then 8 radix-2 stages ping-ponged between two tiles (the tile written in the
# kernel, each thread its own element, read by a helper after the barrier)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=N, covers="out",
           requires=["out.shape[0] == x.shape[0]", "x.shape[1] == 256", "out.shape[1] == 256"]))
def fft256(out: DisjointSlice[np.complex64, BlockRow], x: In2D[np.complex64]) -> None:
    a = ss.shared.tile(N, np.complex64)
    b = ss.shared.tile(N, np.complex64)
    t = thread.local_index()
    r = cuda.blockIdx.x
    a[t] = x[r, bitrev8(t.index)] if r < x.shape[0] else np.complex64(0)
    ss.block.sync()
    for s in range(0, LOGN, 2):
        b[t] = butterfly(a, t.index, s)
        ss.block.sync()
        a[t] = butterfly(b, t.index, s + 1)
        ss.block.sync()
    for w in thread.block_row(out):
        out[w] = a[w.col]
"""


PAGED_GATHER = """
# paged KV-cache gather: token t of sequence s lives in physical block table[s, t // BS] of
# the cache, at slot t % BS; out[s * T + t, d] = cache[block * BS + slot, d]
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 4, 1),
           requires=["out.shape[1] == cache.shape[1]"]))
def paged_gather(out: DisjointSlice2D[np.float16], cache: In2D[np.float16], table: In2D[np.int32],
                 tokens: np.int32, bs: np.int32) -> None:
    w = thread.index_2d()
    if w.in_bounds(out):
        s = w.row // tokens
        t = w.row % tokens
        blk = table[s, t // bs]
        out[w] = cache[blk * bs + t % bs, w.col]
"""


TOP_P = """
B = 128


# top-p (nucleus) cut per row of probabilities sorted in descending order: the smallest k with
# p_0 + ... + p_{k-1} >= top_p (at least 1), a block per row, chunks of a block scan
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="keep",
           requires=["keep.size == p.shape[0]"]))
def top_p_cut(keep: DisjointSlice[np.int32, PerBlock], p: In2D[np.float32], top_p: np.float32) -> None:
    carry = np.float32(0)
    k = np.int32(0)
    for c in thread.block_row_chunks(p):
        v = p[c]
        before = ss.block.scan(v, inclusive=False) + carry
        k += ss.block.sum(np.int32(1) if c.valid and before < top_p else np.int32(0))
        carry += ss.block.sum(v)
    keep[thread.block_leader()] = max(k, np.int32(1))
"""


BFS = """
# one BFS level: every vertex of the frontier appends its unvisited neighbours (CSR graph;
# a neighbour reached from two frontier vertices appears twice: the host dedups)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, appends={"nxt": "count"}))
def bfs_expand(nxt: ss.AppendBuffer[np.int32], count: ss.Counter, frontier: In[np.int32],
               indptr: In[np.int32], indices: In[np.int32], level: In[np.int32]) -> None:
    for w in thread.grid_stride(frontier):
        u = frontier[w]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if level[v] < 0:
                s = nxt.claim()
                nxt[s] = v
"""


L2_BF16 = """
B = 128


# row-wise L2 normalization of bf16 rows (as F.normalize(x, dim=1)): fp32 sum of squares by a
# block sum, a block per row, bf16 out
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="y",
           requires=["y.shape[0] == x.shape[0]", "y.shape[1] == x.shape[1]"]))
def l2_normalize(y: DisjointSlice[ss.bfloat16, BlockRow], x: In2D[ss.bfloat16], eps: np.float32) -> None:
    acc = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        acc += v * v
    norm = math.sqrt(ss.block.sum(acc))
    inv = np.float32(1) / max(norm, eps)
    for w in thread.block_row(y):
        y[w] = x[w] * inv
"""


QUANT_GROUPS = """
QMAX = 127


# fp8-style quantization to int8 with a scale per group of 32 values: a warp per group, the
# group's absmax by a warp max, one scale per group, round half to even, saturate
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="q",
           requires=["q.size == x.size", "32 * scale.size >= x.size"]))
def quantize_groups(q: DisjointSlice[np.int8], scale: DisjointSlice[np.float32, PerWarp],
                    x: In[np.float32]) -> None:
    i = thread.index_1d()
    v = x[i.index] if i.in_bounds(x) else np.float32(0)
    amax = ss.warp.max(abs(v))
    s = amax / np.float32(QMAX) if amax > 0 else np.float32(1)
    q[i] = np.int8(min(max(round(v / s), -QMAX), QMAX))
    scale[thread.warp_leader()] = s
"""


ACCEPTED: dict[str, str] = {
    "bias_gelu_dropout": BIAS_GELU_DROPOUT,
    "depthwise_conv3x3": DEPTHWISE3,
    "maxpool2x2_argmax": MAXPOOL,
    "group_norm": GROUPNORM,
    "sobel": SOBEL,
    "box_filter_sat": BOX_FILTER,
    "segmented_scan": SEGSCAN,
    "coo_to_dense": COO_SCATTER,
    "row_popcount": POPCOUNT,
    "fft256": FFT,
    "paged_kv_gather": PAGED_GATHER,
    "top_p_cut": TOP_P,
    "bfs_expand": BFS,
    "l2_normalize_bf16": L2_BF16,
    "quantize_groups_int8": QUANT_GROUPS,
}

# =============================================================================================
# Sources of the refused or misreported kernels (each a natural port; its workaround named)
# =============================================================================================

#: a complex tile written by its owner and read back by the same thread in one interval
COMPLEX_TILE_OWN_READ = """
N = 64


# a read-modify-write of the thread's own element of a complex tile (a twiddle applied in place)
@ss.kernel(contract=ss.LaunchContract(domain=1, block=N, covers="out",
           requires=["out.shape[1] == 64"]))
def twiddle(out: DisjointSlice[np.complex64, BlockRow], x: In2D[np.complex64]) -> None:
    a = ss.shared.tile(N, np.complex64)
    t = thread.local_index()
    a[t] = x[cuda.blockIdx.x, t.index]
    a[t] = a[t] * cmath.exp(np.complex64(-2j * math.pi / N) * np.float32(t.index))
    ss.block.sync()
    for w in thread.block_row(out):
        out[w] = a[N - 1 - w.col]
"""

#: UNSAFE twin: a neighbour's complex element read in the interval its owner writes it
COMPLEX_TILE_NEIGHBOUR_READ = """
N = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=N))
def neighbour(out: DisjointSlice[np.complex64, BlockRow], x: In2D[np.complex64]) -> None:
    a = ss.shared.tile(N, np.complex64)
    t = thread.local_index()
    a[t] = x[cuda.blockIdx.x, t.index]
    v = a[(t.index + 1) % N]
    ss.block.sync()
    for w in thread.block_row(out):
        out[w] = v
"""

#: the FFT with its stage as a helper that writes the destination tile
FFT_STAGE_HELPER = FFT.replace(
    """@ss.device
def butterfly(src, i, s):""",
    """@ss.device
def stage(dst, src, t, s):
    # the whole stage: thread t writes its own element of dst
    dst[t] = butterfly(src, t.index, s)


@ss.device
def butterfly(src, i, s):""",
).replace(
    """        b[t] = butterfly(a, t.index, s)
        ss.block.sync()
        a[t] = butterfly(b, t.index, s + 1)""",
    """        stage(b, a, t, s)
        ss.block.sync()
        stage(a, b, t, s + 1)""",
)

#: the max-pool contract with the output size as a floor division
MAXPOOL_FLOORDIV = MAXPOOL.replace(
    '"2 * out.shape[1] <= x.shape[1]", "2 * out.shape[2] <= x.shape[2]"',
    '"out.shape[1] == x.shape[1] // 2", "out.shape[2] == x.shape[2] // 2"',
)

#: the depthwise convolution reading NCHW as it is (4 axes) through a 1D annotation
DEPTHWISE_4D = """
# depthwise 3x3, NCHW read as it is: x [N, C, H, W]
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(32, 4, 1)))
def depthwise4d(out: DisjointSlice3D[np.float32], x: In[np.float32], wt: In2D[np.float32]) -> None:
    w = thread.index_3d()
    if w.in_bounds(out):
        n = w.z // x.shape[1]
        ch = w.z % x.shape[1]
        acc = np.float32(0)
        for dy in range(3):
            for dx in range(3):
                rr = w.y + dy - 1
                cc = w.x + dx - 1
                if 0 <= rr < x.shape[2] and 0 <= cc < x.shape[3]:
                    acc += wt[ch, dy * 3 + dx] * x[n, ch, rr, cc]
        out[w] = acc
"""

#: COO -> dense with the dense matrix's own two indices
COO_PAIR = COO_SCATTER.replace(
    "dense.add(row[w] * ncols + col[w], val[w])", "dense.add((row[w], col[w]), val[w])"
)

#: the dropout's hash written as in CUDA C: np.uint32 constants, no conversion after a product
GELU_HASH_WIDE = BIAS_GELU_DROPOUT.replace(
    """    x = np.uint32(x * np.uint32(0x7FEB352D))
    x = x ^ (x >> np.uint32(15))
    x = np.uint32(x * np.uint32(0x846CA68B))
    x = x ^ (x >> np.uint32(16))
    return np.uint32(x)""",
    """    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846CA68B)
    x = x ^ (x >> np.uint32(16))
    return x""",
)


#: the FFT's ping-pong as one loop over the stages, the tiles chosen by the stage's parity
FFT_PARITY = FFT.replace(
    """    for s in range(0, LOGN, 2):
        b[t] = butterfly(a, t.index, s)
        ss.block.sync()
        a[t] = butterfly(b, t.index, s + 1)
        ss.block.sync()""",
    """    for s in range(LOGN):
        if s % 2 == 0:
            b[t] = butterfly(a, t.index, s)
        else:
            a[t] = butterfly(b, t.index, s)
        ss.block.sync()""",
)

#: BFS with a visited set: a HashTable of vertices, a vertex appended by the insert that won it
#: (no duplicates in the next frontier; each vertex's level stored as its value)
BFS_VISITED = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, appends={"nxt": "count"},
           tables={"seen": {"values": ["depth"], "failed": "nf"}}))
def bfs_visit(nxt: ss.AppendBuffer[np.int32], count: ss.Counter, seen: ss.HashTable[np.int32],
              depth: ss.HashValues[np.int32], nf: ss.Counter, frontier: In[np.int32],
              indptr: In[np.int32], indices: In[np.int32], level: np.int32) -> None:
    for w in thread.grid_stride(frontier):
        u = frontier[w]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            f = seen.insert(v)
            if f.in_bounds(depth):
                depth[f] = level
                s = nxt.claim()
                nxt[s] = v
"""

#: the visited set tested against its keys (no value array)
BFS_VISITED_KEYS = (
    BFS_VISITED.replace('{"values": ["depth"], "failed": "nf"}', '{"failed": "nf"}')
    .replace("              depth: ss.HashValues[np.int32], nf:", "              nf:")
    .replace(
        "            if f.in_bounds(depth):\n                depth[f] = level\n",
        "            if f.in_bounds(seen):\n",
    )
)


#: the paged gather at 16 bytes a thread, the natural way: a 1 x 8 tile of the 2D output
PAGED_VEC_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 16, 1)))
def paged_vec(out: DisjointSlice2D[np.float16], cache: In2D[np.float16], table: In2D[np.int32],
              tokens: np.int32, bs: np.int32) -> None:
    w = thread.index_2d()
    t = thread.tile_2d(out, 1, 8)
    s = w.row // tokens
    p = w.row % tokens
    blk = table[s, p // bs]
    ss.vec.store(t, ss.vec.load(cache, (blk * bs + p % bs, w.col), 8))
"""

#: its workaround: the output's flat view, a run of 8 halves per thread (one 16-byte load and
#: one 16-byte store), the rows a multiple of 8 long
PAGED_VEC_FLAT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128,
           requires=["cache.shape[1] == 8 * runs"]))
def paged_flat(out: DisjointSlice[np.float16], cache: In2D[np.float16], table: In2D[np.int32],
               tokens: np.int32, bs: np.int32, runs: np.int32) -> None:
    i = thread.index_1d()
    if 8 * i.index < out.size:  # the table is read with plain ints: only for a whole run
        t = thread.tile_1d(out, 8)
        r = i.index // runs
        j = i.index % runs
        s = r // tokens
        p = r % tokens
        blk = table[s, p // bs]
        ss.vec.store(t, ss.vec.load(cache, (blk * bs + p % bs, j), 8))
"""


#: the DC term of each row of complex samples (their sum), a block per row
ROW_DC = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="dc",
           requires=["dc.size == x.shape[0]"]))
def row_dc(dc: DisjointSlice[np.complex64, PerBlock], x: In2D[np.complex64]) -> None:
    acc = np.complex64(0)
    for w in thread.block_row(x):
        acc += x[w]
    dc[thread.block_leader()] = ss.block.sum(acc)
"""

#: the workaround the new message gives: the two parts apart
ROW_DC_PARTS = ROW_DC.replace(
    "    dc[thread.block_leader()] = ss.block.sum(acc)",
    "    re = ss.block.sum(acc.real)\n    im = ss.block.sum(acc.imag)\n"
    "    dc[thread.block_leader()] = complex(re, im)",
)


#: an MX-style shared exponent per group of 32 (a warp): the exponent of the group's absmax,
#: read from its bits with numba-cuda's libdevice as numba-cuda's docs import it
MX_EXPONENT = """
from numba.cuda import libdevice


@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="e",
           requires=["32 * e.size >= x.size"]))
def mx_exponent(e: DisjointSlice[np.int32, PerWarp], x: In[np.float32]) -> None:
    i = thread.index_1d()
    v = x[i.index] if i.in_bounds(x) else np.float32(0)
    amax = ss.warp.max(abs(v))
    e[thread.warp_leader()] = ((libdevice.float_as_int(amax) >> 23) & 255) - 127
"""

#: the same with the bits read as numpy spells it
MX_EXPONENT_VIEW = MX_EXPONENT.replace(
    "libdevice.float_as_int(amax)", "np.int32(np.float32(amax).view(np.int32))"
)


# =============================================================================================
# FALSE_REFUSALS
# =============================================================================================

_TILE_PHASE_WW = (
    "shared tile 'a' (made at line {made}) is written through a witness at line {line} and "
    "written at line {line} in the same barrier interval (the compiled code has no simtsafe "
    "block barrier between them on some path), so two threads may write one element"
)

FALSE_REFUSALS: dict[str, dict[str, Any]] = {
    "complex_tile_witness_store": {
        "fixed": "lowering/_tilebase.holder_store stores a complex element through a witness "
        "as ONE integer of its size (i64 / i128) at the witness's address, tagged as the "
        "witness store; the compiled-form rule is unchanged (tests/ptx/test_port21_ptx.py: "
        "the FFT accepted, PTX st.shared.u64; a neighbour's element read in the writing "
        "interval still refused by the compiled form alone)",
        "source": FFT,
        "kernel": "fft256",
        "where": "compile (compiled-form tile phases); the simulator's compile worker alike",
        "message": "kernel 'fft256': " + _TILE_PHASE_WW.format(made=43, line=47),
        "why_safe": "`a[t] = x[r, bitrev8(t.index)]` with `t = thread.local_index()`: each "
        "thread writes only its own element. Numba stores a complex as two float stores (the "
        "real part at the element's address, the imaginary part 4 bytes on); the second "
        "address is not the witness's, so the phase check took it for a write by no witness, "
        "clashing with the witness store itself. Every complex (complex64 and complex128) "
        "tile filled through a witness was refused, even `a[t] = x[...]` alone; docs/"
        "cooperation.md lists no such limit (records of 1-16 bytes are handled the same way)",
        "workaround": "(before the fix) keep the real and imaginary parts in two float32 tiles",
    },
    "complex_tile_own_read": {
        "fixed": "lowering/_tilebase.holder_load reads a complex element as one integer of "
        "its size, addressed as the witness store is (the own-read rule unchanged)",
        "source": COMPLEX_TILE_OWN_READ,
        "kernel": "twiddle",
        "where": "compile (compiled-form tile phases)",
        "message": "kernel 'twiddle': " + _TILE_PHASE_WW.format(made=19, line=21) + "; with "
        "the store fixed alone: 'shared tile 'a' ... is read at line L and written through a "
        "witness at line L' in the same barrier interval ...'",
        "why_safe": "`a[t] = a[t] * w`: the thread reads back its own element (docs/"
        "cooperation.md: a tile is read 'only through the writing thread's own witness' in its "
        "fill phase). The imaginary part's load was at another address than the witness "
        "store's, so it was a read of another thread's element",
        "workaround": "(before the fix) compute in a register and store once",
    },
    "tile_written_by_helper": {
        "source": FFT_STAGE_HELPER,
        "kernel": "fft256",
        "where": "compile (typing)",
        "message": "kernel 'fft256': a shared tile passed to a helper (SharedTile[complex64, 256, "
        "read-only]) is read-only there: the call is a read of the tile (in its read phase, "
        "after a barrier). Fill tiles in the kernel that makes them",
        "why_safe": "`stage(dst, src, t, s)` writes `dst[t]` with the kernel's own block-local "
        "witness: one element per thread, as in the kernel. The phases are followed by tile "
        "name in the kernel, and a helper's writes would have to be followed through the "
        "call; docs/cooperation.md ('Tiles are filled in the kernel that makes them') says so",
        "workaround": "the helper returns the element and the kernel stores it, `b[t] = "
        "butterfly(a, t.index, s)` (ACCEPTED fft256)",
    },
    "stage_parity_pingpong": {
        "source": FFT_PARITY,
        "kernel": "fft256",
        "where": "decoration (source-level tile phases); the compiled form alike",
        "message": "kernel 'fft256': shared tile `a` (was `a` or `b` by the run's hash seed; "
        "now always `a`, the first tile met) is read by index at line L and filled at "
        "line L' with no block barrier between them (on some path): another thread may be "
        "writing the element being read ...; the compiled form alone: 'shared tile 'a' ... is "
        "read at line L (in helper exp_impl, line 32) and written through a witness at line "
        "L'' ...' (BAD_ERRORS helper_named_by_the_last_call, now `butterfly`)",
        "why_safe": "`for s in range(LOGN): if s % 2 == 0: b[t] = f(a) else: a[t] = f(b)` with "
        "`block.sync()` after the branch: the condition is the same in every thread (a range "
        "variable), so in one barrier interval all threads take the same side, and the read "
        "of `b` (odd stages) and its fill (even stages) are always a barrier apart. Both "
        "checks see the two sides after the same barrier and do not use that the branch is "
        "uniform and taken once per interval. A relaxation needs both: a uniform branch run "
        "more than once in an interval (a loop with no barrier) does race, so it is left as "
        "reported",
        "workaround": "the loop unrolled by two with the tiles named in place, as docs/"
        "porting.md's ping-pong row says (ACCEPTED fft256)",
    },
}


# =============================================================================================
# BAD_ERRORS
# =============================================================================================

BAD_ERRORS: dict[str, dict[str, Any]] = {
    "requires_floor_division": {
        "fixed": "host/_requires.py: a '//' or '/' refusal adds the rewrite with the "
        "relation's own operands (`2 * A <= x.shape[1]` and `x.shape[1] < 2 * A + 2`)",
        "source": MAXPOOL_FLOORDIV,
        "kernel": "maxpool2x2",
        "where": "decoration (LaunchContract's validation)",
        "message": "ValidationError: requires relation 'out.shape[1] == x.shape[1] // 2' is "
        "invalid: the operator '//' is not allowed (use + - * only). Grammar: ...",
        "why_bad": "the pooled size `H // 2` is what every pooling, strided convolution or "
        "2x downsample states; the message lists the grammar but not how to say a quotient in "
        "it (a bound on a product). Not fixed: pydantic's wrapper cannot name the kernel (the "
        "contract is built before the decorator sees the function)",
        "workaround": "`2 * out.shape[1] <= x.shape[1]` (ACCEPTED maxpool2x2_argmax)",
    },
    "shape_axis_past_annotation": {
        "fixed": "lowering/_diagnostics.py: Numba's 'tuple index out of range' at a "
        "static-get-item names `x.shape[k]` from the line, the axes the annotations give and "
        "the 3D view for NCHW",
        "source": DEPTHWISE_4D,
        "kernel": "depthwise4d",
        "where": "compile (typing): check_kernel, prepare",
        "message": "kernel 'depthwise4d': Numba cannot compile this line: tuple index out of range",
        "why_bad": "an NCHW tensor annotated `In` (1D, the only way the annotation reads "
        "for a user with a 4D array: there is no In4D): the message names neither the array, "
        "nor the axis, nor that the annotation fixes the number of axes",
        "workaround": "pass a 3D view `x.reshape(n * c, h, w)` as `In3D` (ACCEPTED "
        "depthwise_conv3x3)",
    },
    "accumulate_pair_index": {
        "fixed": "lowering/_cooprule.FLAT_HINT after the refusal, on the GPU's typing and the "
        "simulator's alike: the flat view and `r * ncols + c`, or a 2D shared accumulator",
        "source": COO_PAIR,
        "kernel": "coo_to_dense",
        "where": "compile (typing); the simulator when the line runs",
        "message": "kernel 'coo_to_dense': acc.add(i, v): the index must be an int; got "
        "UniTuple(int32 x 2)",
        "why_bad": "a 2D dense matrix updated at (row, col) is the natural scatter; "
        "shared.accumulator((R, C)) takes a pair, Accumulate does not, and the message does not "
        "say what to write",
        "workaround": "the flat view and index (ACCEPTED coo_to_dense)",
    },
    "hash_insert_won_test": {
        "fixed": "lowering/_hash.HashTableType.in_bounds_advice, appended by the in_bounds "
        "refusal (lowering/_cuda.py): the value-array test and how to declare one",
        "source": BFS_VISITED_KEYS,
        "kernel": "bfs_visit",
        "where": "compile (typing)",
        "message": "kernel 'bfs_visit': w.in_bounds() takes a DisjointSlice, an input array or "
        "a constant array, got HashTable[array(int32, 1d, C), array(uint64, 1d, C), seen]",
        "why_bad": "a BFS visited set is a HashTable of vertices: the insert that wins a vertex "
        "appends it. Without a value array there is no way to ask whether `f = seen.insert(v)` "
        "won (`f.valid` is 'Numba cannot type .valid of ThreadIndex[Inserted[seen]]', whose "
        "advice is `w.in_bounds(out)`; `f.in_bounds(seen)` is the message above), and the "
        "message says neither",
        "workaround": "declare a value array and test it, `f.in_bounds(depth)` (BFS_VISITED, "
        "accepted; it stores each vertex's level there)",
    },
    "vec_store_row_tile": {
        "fixed": "lowering/_vecrule.vec_store_refusal (GPU typing and simulator alike): a 1 x n "
        "2D tile's refusal adds the flat view and tile_1d that keep the vector store",
        "source": PAGED_VEC_2D,
        "kernel": "paged_vec",
        "where": "compile (typing); the simulator when the line runs",
        "message": "kernel 'paged_vec': vec.store writes a 1D output tile (t = "
        "thread.tile_1d(out, n)); got a 2d tile of 1 x 8. Write its elements with t[r, c] = v",
        "why_bad": "a 16-byte copy per thread of a row-major output is the point of the "
        "kernel; the advice (eight scalar stores) gives the speed up, and the way that keeps "
        "the vector store (the flat view, tile_1d) is not named",
        "workaround": "PAGED_VEC_FLAT (accepted: `ld.global.v4`, `st.global.v4`, matches numpy)",
    },
    "complex_collective": {
        "fixed": "lowering/_cooprule.complex_refused, on the GPU's typing and the simulator's "
        "(which took a complex64 as a number before)",
        "source": ROW_DC,
        "kernel": "row_dc",
        "where": "compile (typing)",
        "message": "kernel 'row_dc': block.sum(v) takes a number (an int, float or bool "
        "scalar); got complex64. Collectives exchange numbers: reduce an array element by "
        "element; a state of several fields whose combine mixes them (Welford's ...) is a "
        "tuple of 1 to 8 numbers reduced with block.reduce(state, op) ...",
        "why_bad": "an FFT's DC term, a complex dot product, a phasor average: the advice "
        "(element by element; Welford's state) is beside the point for a complex sum, whose "
        "parts add apart",
        "workaround": "ROW_DC_PARTS: `re = ss.block.sum(acc.real)`, `im = "
        "ss.block.sum(acc.imag)`, `complex(re, im)` (accepted, matches numpy)",
    },
    "libdevice_module_import": {
        "fixed": "decoration/_policy.resolve_chain: a chain from the module numba.cuda.libdevice "
        "(by identity) is classified as `cuda.libdevice.<name>`, the same table row and "
        "allow-list of its public functions (`libdevice.not_a_function` is refused)",
        "source": MX_EXPONENT,
        "kernel": "mx_exponent",
        "where": "decoration",
        "message": "SafetyError: kernel 'mx_exponent': `libdevice.float_as_int` reaches "
        "cuda.libdevice.float_as_int through a user module; import it directly (e.g. `from "
        "numba import cuda`) so that Numba and simtsafe resolve it the same way",
        "why_bad": "`from numba.cuda import libdevice` is how numba-cuda's docs import it, not a "
        "user module; `cuda.libdevice.float_as_int(v)` and `from numba.cuda.libdevice import "
        "float_as_int` were accepted, so only this spelling was refused, with advice that says "
        "the user did something they did not",
        "workaround": "(before the fix) `cuda.libdevice.float_as_int(amax)`",
    },
    "scalar_view_bits": {
        "fixed": "decoration/_rewrite: the `.view` refusal adds the libdevice casts",
        "source": MX_EXPONENT_VIEW,
        "kernel": "mx_exponent",
        "where": "decoration",
        "message": "SafetyError: kernel 'mx_exponent': attribute `.view` is not allowed in "
        "kernels (array methods and attributes can alias or write their array); of the array "
        "attributes, kernel values offer .conjugate, .dtype, ... (record fields are read by "
        "name)",
        "why_bad": "`np.float32(v).view(np.int32)` reads a scalar's bits (an exponent, an fp8 "
        "encoding), no array is involved; the message explains arrays and does not say how to "
        "read the bits",
        "workaround": "`cuda.libdevice.float_as_int(v)` (MX_EXPONENT)",
    },
    "helper_named_by_the_last_call": {
        "source": FFT_PARITY,
        "kernel": "fft256",
        "where": "compile (compiled-form tile phases, with the source-level pass off: "
        "tests/ptx/test_port21_ptx.py)",
        "message": "kernel 'fft256': shared tile 'a' (made at line 43) is read at line 51 (in "
        "helper exp_impl, line 32) and written through a witness at line 53 ...",
        "why_bad": "line 32 is `a = src[base + j]` in the helper `butterfly`; `exp_impl` is "
        "Numba's implementation of the `cmath.exp` that `butterfly` calls on the line before. "
        "The compiled form names the helper of an inlined instruction by the nearest call "
        "marker before it (verify/_verdict._Locator.frames), and a call's marker does not end "
        "where the callee returns. Fixed: the nearest marker whose helper's module holds "
        "the line's file (exp_impl's is numba.cuda.cpython.cmathimpl) names the helper "
        "(`butterfly`); a helper of the same module called before the line still could be "
        "named instead (a marker at each inlined call's return would settle it)",
        "workaround": "read the line number, not the helper's name",
    },
}


# =============================================================================================
# DOC_GAPS
# =============================================================================================

DOC_GAPS: dict[str, dict[str, Any]] = {
    "uint32_hash_widens": {
        "fixed": "docs/checker.md 'Values, not bits' and docs/faq.md: uint32 is in the list, "
        "and the hash idiom's fix (np.uint32(...) around each product) is given",
        "source": GELU_HASH_WIDE,
        "kernel": "bias_gelu_dropout",
        "where": "GPU values vs simulator values (no refusal)",
        "doc": "docs/checker.md 'Values, not bits' and docs/faq.md list uint8, int8, int16, int32 "
        "as the narrow types whose arithmetic wraps on the simulator and not on the GPU, and "
        "advise widening first",
        "behaviour": "a counter-based RNG's hash written as in CUDA C (`x = x * "
        "np.uint32(0x7FEB352D)`) is computed in 64 bits on the GPU (PTX `mul.lo.s64`: Numba "
        "types uint32 * uint32 as uint64) and in uint32 on the simulator: the simulator's "
        "dropout mask is the intended one and passes its numpy check, the GPU's is not "
        "(its 'uniform' exceeds 1, so nothing is dropped). Here the wrap is wanted, so the "
        "docs' 'widen first' is the wrong advice: the fix is `np.uint32(x * K)` after each "
        "product (ACCEPTED bias_gelu_dropout: PTX `mul.lo.s32`, both targets agree)",
    },
    "libdevice_on_the_simulator": {
        "fixed": "docs/faq.md and docs/checker.md say it (not fixed in the simulator)",
        "source": MX_EXPONENT,
        "kernel": "mx_exponent",
        "where": "simulator launch",
        "doc": "docs/unsafe.md lists `libdevice.*` among the ungated Tier-1 intrinsics; the "
        "pages that send users to the simulator say nothing of it",
        "behaviour": "a launch on the simulator cannot run libdevice: `cuda.libdevice.f(...)` "
        "raises 'FakeCUDAModule' object has no attribute 'libdevice' (as a SafetyError naming "
        "the line), and `libdevice.f(...)` after `from numba.cuda import libdevice` is "
        "numba-cuda's stub, which returns None: here `None >> 23` fails, and a plain "
        "`out[i] = libdevice.sqrtf(v)` would store nothing meaningful. `simtsafe.sim.check` "
        "replays the math functions by their Python equivalents (not the bit casts)",
    },
    "complex_tiles_undocumented": {
        "fixed": "docs/cooperation.md (Shared tiles): complex elements are filled through "
        "witnesses like others, each stored as one integer of its size",
        "source": FFT,
        "kernel": "fft256",
        "where": "docs",
        "doc": "docs/cooperation.md says which record tiles a witness can fill and nothing of "
        "complex elements",
        "behaviour": "every complex tile filled through a witness was refused "
        "(FALSE_REFUSALS complex_tile_witness_store)",
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


def _mix32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def _check_gelu(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    r, c = 7, 45
    x = rng.standard_normal((r, c)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    p, seed = np.float32(0.25), np.uint32(1234)
    y = _dev(np.full((r, c), np.nan, np.float32))
    launch = m.bias_gelu_dropout.prepare(grid=(ss.cover(c, 32), ss.cover(r, 4)), block=(32, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # uint32 products wrap (as on the GPU)
        launch(y, _dev(x), _dev(b), p, seed)
        v = (x + b).astype(np.float64)
        g = 0.5 * v * (1 + np.tanh(0.7978845608028654 * (v + 0.044715 * v**3)))
        idx = np.arange(r * c, dtype=np.uint32).reshape(r, c)
        h = _mix32(idx ^ _mix32(np.array([seed]))[0])
    u = (h >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    ref = np.where(u >= p, g / (1 - 0.25), 0)
    got = _host(y)
    kept = u >= p
    return bool(
        np.allclose(got, ref, atol=1e-5) and 0.6 < kept.mean() < 0.9 and (got[~kept] == 0).all()
    )


def _check_depthwise(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n, c, h, w = 2, 3, 9, 37
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((c, 3, 3)).astype(np.float32)
    o = _dev(np.full((n * c, h, w), np.nan, np.float32))
    p = m.depthwise3x3.prepare(grid=(ss.cover(w, 32), ss.cover(h, 4), n * c), block=(32, 4, 1))
    p(o, _dev(x.reshape(n * c, h, w)), _dev(wt.reshape(c, 9)), np.int32(c))
    z = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    ref = sum(
        wt[None, :, dy, dx, None, None] * z[:, :, dy : dy + h, dx : dx + w]
        for dy in range(3)
        for dx in range(3)
    )
    return bool(np.allclose(_host(o).reshape(x.shape), ref, atol=1e-5))


def _check_maxpool(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    planes, h, w = 3, 9, 21  # odd: the last row and column are dropped
    x = rng.integers(0, 5, (planes, h, w)).astype(np.float32)  # ties: the first max wins
    oh, ow = h // 2, w // 2
    o = _dev(np.full((planes, oh, ow), np.nan, np.float32))
    ix = _dev(np.full((planes, oh, ow), -1, np.int32))
    p = m.maxpool2x2.prepare(grid=(ss.cover(ow, 16), ss.cover(oh, 8), planes), block=(16, 8, 1))
    p(o, ix, _dev(x))
    win = x[:, : 2 * oh, : 2 * ow].reshape(planes, oh, 2, ow, 2).transpose(0, 1, 3, 2, 4)
    win = win.reshape(planes, oh, ow, 4)
    k = win.argmax(-1)
    rows = 2 * np.arange(oh)[None, :, None] + k // 2
    cols = 2 * np.arange(ow)[None, None, :] + k % 2
    ok = np.array_equal(_host(o), win.max(-1))
    ok = ok and np.array_equal(_host(ix), rows * w + cols)
    return bool(ok) and _clean(
        p, np.zeros((planes, oh, ow), np.float32), np.zeros((planes, oh, ow), np.int32), x
    )


def _check_groupnorm(m: ModuleType, rng: np.random.Generator) -> bool:
    n, c, g, h, w = 2, 6, 3, 5, 7
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    gamma = rng.standard_normal(c).astype(np.float32)
    beta = rng.standard_normal(c).astype(np.float32)
    rows = x.reshape(n * g, -1)
    y = _dev(np.full(rows.shape, np.nan, np.float32))
    p = m.group_norm.prepare(grid=n * g, block=128)
    p(y, _dev(rows), _dev(gamma), _dev(beta), np.int32(g), np.int32(h * w), np.float32(1e-5))
    xg = x.reshape(n, g, -1).astype(np.float64)
    xn = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
    ref = xn.reshape(n, c, h, w) * gamma[None, :, None, None] + beta[None, :, None, None]
    ok = np.allclose(_host(y).reshape(x.shape), ref, atol=1e-4)
    return bool(ok) and _clean(
        p,
        np.zeros(rows.shape, np.float32),
        rows,
        gamma,
        beta,
        np.int32(g),
        np.int32(h * w),
        np.float32(1e-5),
    )


def _check_sobel(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w = 11, 40
    img = rng.random((h, w)).astype(np.float32)
    mag = _dev(np.full((h, w), np.nan, np.float32))
    ang = _dev(np.full((h, w), np.nan, np.float32))
    p = m.sobel.prepare(grid=(ss.cover(w, 32), ss.cover(h, 8)), block=(32, 8))
    p(mag, ang, _dev(img))
    z = np.pad(img, 1, mode="edge").astype(np.float64)

    def s(dy: int, dx: int) -> np.ndarray:
        return z[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]

    gx = s(-1, 1) + 2 * s(0, 1) + s(1, 1) - s(-1, -1) - 2 * s(0, -1) - s(1, -1)
    gy = s(1, -1) + 2 * s(1, 0) + s(1, 1) - s(-1, -1) - 2 * s(-1, 0) - s(-1, 1)
    ok = np.allclose(_host(mag), np.hypot(gx, gy), atol=1e-5)
    big = np.hypot(gx, gy) > 1e-3  # the angle of a zero gradient depends on rounding
    return bool(ok and np.allclose(_host(ang)[big], np.arctan2(gy, gx)[big], atol=1e-4))


def _check_box(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w, rad = 13, 35, 2
    img = rng.random((h, w))
    sat = np.zeros((h + 1, w + 1))
    sat[1:, 1:] = img.cumsum(0).cumsum(1)
    o = _dev(np.full((h, w), np.nan, np.float32))
    p = m.box_filter.prepare(grid=(ss.cover(w, 32), ss.cover(h, 8)), block=(32, 8))
    p(o, _dev(sat), np.int32(rad))
    ref = np.empty((h, w))
    for r in range(h):
        for c in range(w):
            ref[r, c] = img[max(r - rad, 0) : r + rad + 1, max(c - rad, 0) : c + rad + 1].mean()
    return bool(np.allclose(_host(o), ref, atol=1e-5))


def _segscan_ref(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape, np.float64)
    for r in range(v.shape[0]):
        acc = 0.0
        for c in range(v.shape[1]):
            acc = v[r, c] if (c == 0 or f[r, c]) else acc + v[r, c]
            out[r, c] = acc
    return out


def _check_segscan(m: ModuleType, rng: np.random.Generator) -> bool:
    rows, cols = 4, 150  # three chunks of 64, the last partial
    v = rng.integers(-4, 5, (rows, cols)).astype(np.float32)
    f = (rng.random((rows, cols)) < 0.08).astype(np.uint8)
    f[1] = 0  # one segment across every chunk
    f[2, 64] = 1  # a head at a chunk's first column
    o = _dev(np.full((rows, cols), np.nan, np.float32))
    p = m.segmented_scan.prepare(grid=rows, block=64)
    p(o, _dev(v), _dev(f))
    ok = np.array_equal(_host(o), _segscan_ref(v, f))
    return bool(ok) and _clean(p, np.zeros((rows, cols), np.float32), v, f)


def _check_coo(m: ModuleType, rng: np.random.Generator) -> bool:
    r, c, nnz = 9, 13, 300  # many duplicates
    row = rng.integers(0, r, nnz).astype(np.int32)
    col = rng.integers(0, c, nnz).astype(np.int32)
    val = rng.integers(-3, 4, nnz).astype(np.float32)  # small ints: sums exact in any order
    d = _dev(np.zeros(r * c, np.float32))
    p = m.coo_to_dense.prepare(grid=2, block=128)
    p(d, _dev(row), _dev(col), _dev(val), np.int32(c))
    ref = np.zeros((r, c))
    np.add.at(ref, (row, col), val)
    ok = np.array_equal(_host(d).reshape(r, c), ref)
    return bool(ok) and _clean(p, np.zeros(r * c, np.float32), row, col, val, np.int32(c))


def _check_popcount(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    rows, words = 10, 45
    bits = rng.integers(0, 2**32, (rows, words), dtype=np.uint64).astype(np.uint32)
    cnt = _dev(np.full(rows, -1, np.int32))
    p = m.row_popcount.prepare(grid=ss.cover(rows, 4), block=128)
    p(cnt, _dev(bits))
    ref = np.unpackbits(bits.view(np.uint8), axis=1).sum(1)
    return bool(np.array_equal(_host(cnt), ref))


def _check_fft(m: ModuleType, rng: np.random.Generator) -> bool:
    x = (rng.standard_normal((3, 256)) + 1j * rng.standard_normal((3, 256))).astype(np.complex64)
    o = _dev(np.zeros((3, 256), np.complex64))
    p = m.fft256.prepare(grid=3, block=256)
    p(o, _dev(x))
    ok = np.allclose(_host(o), np.fft.fft(x.astype(np.complex128), axis=1), atol=2e-3)
    return bool(ok) and _clean(p, np.zeros((1, 256), np.complex64), x[:1].copy())


def _check_paged(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    seqs, tokens, bs, d, nblocks = 3, 10, 4, 40, 12
    cache = rng.standard_normal((nblocks * bs, d)).astype(np.float16)
    per = -(-tokens // bs)
    table = rng.permutation(nblocks)[: seqs * per].reshape(seqs, per).astype(np.int32)
    o = _dev(np.zeros((seqs * tokens, d), np.float16))
    p = m.paged_gather.prepare(grid=(ss.cover(d, 32), ss.cover(seqs * tokens, 4)), block=(32, 4))
    p(o, _dev(cache), _dev(table), np.int32(tokens), np.int32(bs))
    t = np.arange(tokens)
    ref = np.concatenate([cache[table[s, t // bs] * bs + t % bs] for s in range(seqs)])
    return bool(np.array_equal(_host(o), ref))


def _check_paged_flat(m: ModuleType, rng: np.random.Generator) -> bool:
    """PAGED_VEC_FLAT against numpy (the paged gather's workaround for vec.store)."""
    import simtsafe as ss

    seqs, tokens, bs, d, nblocks = 3, 10, 4, 40, 12
    cache = rng.standard_normal((nblocks * bs, d)).astype(np.float16)
    per = -(-tokens // bs)
    table = rng.permutation(nblocks)[: seqs * per].reshape(seqs, per).astype(np.int32)
    o = _dev(np.zeros(seqs * tokens * d, np.float16))
    runs = d // 8
    p = m.paged_flat.prepare(grid=ss.cover(seqs * tokens * runs, 128), block=128)
    p(o, _dev(cache), _dev(table), np.int32(tokens), np.int32(bs), np.int32(runs))
    t = np.arange(tokens)
    ref = np.concatenate([cache[table[s, t // bs] * bs + t % bs] for s in range(seqs)])
    return bool(np.array_equal(_host(o).reshape(ref.shape), ref))


def _check_top_p(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (1, 100, 300):
        q = rng.random((5, cols)) ** 4
        pr = -np.sort(-(q / q.sum(1, keepdims=True)).astype(np.float32), axis=1)
        k = _dev(np.full(5, -1, np.int32))
        launch = m.top_p_cut.prepare(grid=5, block=128)
        launch(k, _dev(pr), np.float32(0.9))
        before = np.cumsum(pr.astype(np.float64), 1) - pr
        ref = np.maximum((before < 0.9).sum(1), 1)
        ok = ok and np.array_equal(_host(k), ref)
    return bool(ok)


def _check_bfs(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    nv, ne = 60, 200
    src = rng.integers(0, nv, ne)
    dst = rng.integers(0, nv, ne)
    order = np.argsort(src, kind="stable")
    indices = dst[order].astype(np.int32)
    indptr = np.searchsorted(src[order], np.arange(nv + 1)).astype(np.int32)
    level = np.full(nv, -1, np.int32)
    level[0] = 0
    frontier = np.array([0], np.int32)
    depth = 0
    while frontier.size:
        nxt = _dev(np.full(ne, -1, np.int32))
        c = ss.counter()
        m.bfs_expand.prepare(grid=2, block=64)(
            nxt, c, _dev(frontier), _dev(indptr), _dev(indices), _dev(level)
        )
        got = np.unique(_host(nxt)[: ss.appended(nxt, c)])
        fresh = got[level[got] < 0]
        depth += 1
        level[fresh] = depth
        frontier = fresh.astype(np.int32)
    ref = _bfs_levels(nv, src, dst)
    return bool(np.array_equal(level, ref))


def _bfs_levels(nv: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Each vertex's BFS level from vertex 0 (-1: unreached), by a plain queue."""
    ref = np.full(nv, -1)
    ref[0] = 0
    todo = [0]
    while todo:
        nxt = []
        for u in todo:
            for v in dst[src == u]:
                if ref[v] < 0:
                    ref[v] = ref[u] + 1
                    nxt.append(v)
        todo = nxt
    return ref


def _check_bfs_visited(m: ModuleType, rng: np.random.Generator) -> bool:
    """BFS_VISITED level by level: no vertex is appended twice, the levels are the BFS's."""
    import simtsafe as ss

    nv, ne = 60, 200
    src = rng.integers(0, nv, ne)
    dst = rng.integers(0, nv, ne)
    order = np.argsort(src, kind="stable")
    indices = _dev(dst[order].astype(np.int32))
    indptr = _dev(np.searchsorted(src[order], np.arange(nv + 1)).astype(np.int32))
    seen, depth, nf = ss.empty_keys(128, np.int32), _dev(np.full(128, -1, np.int32)), ss.counter()
    launch = m.bfs_visit.prepare(grid=2, block=64)

    def step(frontier: np.ndarray, ptr: Any, idx: Any, level: int) -> np.ndarray:
        nxt, c = _dev(np.full(nv, -1, np.int32)), ss.counter()
        launch(nxt, c, seen, depth, nf, _dev(frontier), ptr, idx, np.int32(level))
        return _host(nxt)[: ss.appended(nxt, c)]

    # level 0: vertex 0 inserted through the one-edge graph 0 -> 0
    zero = np.array([0], np.int32)
    frontier = step(zero, _dev(np.array([0, 1], np.int32)), _dev(zero), 0)
    unique, level = True, 0
    while frontier.size:
        level += 1
        frontier = step(frontier, indptr, indices, level)
        unique = unique and len(np.unique(frontier)) == len(frontier)
    keys, vals = _host(seen), _host(depth)
    levels = np.full(nv, -1)
    levels[keys[keys >= 0]] = vals[keys >= 0]
    return bool(unique and np.array_equal(levels, _bfs_levels(nv, src, dst)))


def _check_l2(m: ModuleType, rng: np.random.Generator) -> bool:
    import ml_dtypes

    ok = True
    for cols in (1, 100, 300):
        x = rng.standard_normal((4, cols)).astype(ml_dtypes.bfloat16)
        x[3] = 0  # a zero row: divided by eps, stays 0
        y = _dev(np.zeros((4, cols), ml_dtypes.bfloat16))
        p = m.l2_normalize.prepare(grid=4, block=128)
        p(y, _dev(x), np.float32(1e-12))
        x32 = x.astype(np.float32)
        n = np.maximum(np.sqrt((x32.astype(np.float64) ** 2).sum(1, keepdims=True)), 1e-12)
        ok = ok and np.allclose(_host(y).astype(np.float32), x32 / n, rtol=1e-2, atol=1e-3)
    return bool(ok)


def _check_quant_groups(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 300  # 10 groups, the last partial
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    x[32:64] = 0  # an all-zero group: scale 1
    ng = -(-n // 32)
    q = _dev(np.full(n, 99, np.int8))
    s = _dev(np.full(ng, np.nan, np.float32))
    p = m.quantize_groups.prepare(grid=ss.cover(n, 128), block=128)
    p(q, s, _dev(x))
    xp = np.zeros(ng * 32, np.float32)
    xp[:n] = x
    amax = np.abs(xp.reshape(ng, 32)).max(1)
    ref_s = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    ref_q = np.clip(np.rint(xp.reshape(ng, 32) / ref_s[:, None]), -127, 127).astype(np.int8)
    ok = np.array_equal(_host(s), ref_s) and np.array_equal(_host(q), ref_q.reshape(-1)[:n])
    return bool(ok) and _clean(p, np.zeros(n, np.int8), np.zeros(ng, np.float32), x)


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "bias_gelu_dropout": _check_gelu,
    "depthwise_conv3x3": _check_depthwise,
    "maxpool2x2_argmax": _check_maxpool,
    "group_norm": _check_groupnorm,
    "sobel": _check_sobel,
    "box_filter_sat": _check_box,
    "segmented_scan": _check_segscan,
    "coo_to_dense": _check_coo,
    "row_popcount": _check_popcount,
    "fft256": _check_fft,
    "paged_kv_gather": _check_paged,
    "top_p_cut": _check_top_p,
    "bfs_expand": _check_bfs,
    "l2_normalize_bf16": _check_l2,
    "quantize_groups_int8": _check_quant_groups,
}

_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=21)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
