"""Porting round 15: kernels a GPU programmer writes on first contact with simtsafe (Tier 1).

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` below are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1, compiled with NVVM (``simtsafe.check_kernel``: no
                         finding) and run on the CUDA simulator against numpy (``CHECKS``);
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen and
                         the name of its accepted workaround;
* ``BAD_ERRORS``      -- a raw Python/Numba error, a misleading message, or no error at all
                         where one was due;
* ``DOC_GAPS``        -- where the docs promise or imply something that does not hold.

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port15 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port15 NAME...  # simulator + numpy

With no NAME, every case runs. Report: PORT15.md.
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

SOFTMAX = """
BLOCK = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=BLOCK, covers="out",
           requires=["x.shape[0] == out.shape[0]", "x.shape[1] == out.shape[1]"]))
def softmax_rows(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for w in thread.block_row(x):
        m = max(m, x[w])
    m = ss.block.max(m)
    s = np.float32(0)
    for w in thread.block_row(x):
        s += math.exp(x[w] - m)
    s = ss.block.sum(s)
    inv = np.float32(1) / s
    for w in thread.block_row(out):
        out[w] = math.exp(x[w] - m) * inv
"""

LAYERNORM = """
BLOCK = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=BLOCK, covers="out",
           requires=["x.shape[1] == out.shape[1]", "x.shape[0] == out.shape[0]",
                     "gamma.size == x.shape[1]", "beta.size == x.shape[1]"]))
def layernorm(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32], gamma: In[np.float32],
              beta: In[np.float32], eps: np.float32) -> None:
    n = x.shape[1]
    s = np.float32(0)
    for w in thread.block_row(x):
        s += x[w]
    mean = ss.block.sum(s) / np.float32(n)
    v = np.float32(0)
    for w in thread.block_row(x):
        d = x[w] - mean
        v += d * d
    var = ss.block.sum(v) / np.float32(n)
    rstd = np.float32(1) / math.sqrt(var + eps)
    for w in thread.block_row(out):
        out[w] = (x[w] - mean) * rstd * gamma[w.col] + beta[w.col]
"""

TRANSPOSE = """
TILE = 32
ROWS = 8
PER = TILE // ROWS  # tile_2d_strided needs a module constant, not `TILE // ROWS` (FALSE_REFUSALS)


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TILE, ROWS, 1),
           requires=["out.shape[0] == a.shape[1]", "out.shape[1] == a.shape[0]"]))
def transpose_tile(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    t = ss.shared.tile((TILE, TILE), np.float32, pad=1)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for w in thread.block_stride(t):  # t[r, c] = a[bx*32 + r, by*32 + c] (the swapped block)
        r = cuda.blockIdx.x * TILE + w.row
        c = cuda.blockIdx.y * TILE + w.col
        if r < a.shape[0] and c < a.shape[1]:
            t[w] = a[r, c]
    ss.block.sync()
    o = thread.tile_2d_strided(out, PER, 1)  # rows by*32 + ty + 8k, column bx*32 + tx
    for k in range(PER):
        o[k, 0] = t[tx, ty + k * ROWS]
"""

STENCIL3 = """
B1 = 64
H1 = 66  # B1 + 2 halo cells


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B1, requires=["x.size == out.size"]))
def stencil3(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = ss.shared.tile(H1, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    base = cuda.blockIdx.x * B1 - 1
    for w in thread.block_stride(t):  # the block fills all 66 cells, halo included
        g = base + w.index
        t[w] = x[g] if g >= 0 and g < x.size else np.float32(0)
    ss.block.sync()
    c = me.index + 1
    out[i] = np.float32(0.25) * t[c - 1] + np.float32(0.5) * t[c] + np.float32(0.25) * t[c + 1]
"""

STENCIL5 = """
BX = 16
BY = 16
HX = 18


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(BX, BY, 1),
           requires=["a.shape[0] == out.shape[0]", "a.shape[1] == out.shape[1]"]))
def stencil5(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    t = ss.shared.tile((HX, HX), np.float32)
    r0 = cuda.blockIdx.y * BY - 1
    c0 = cuda.blockIdx.x * BX - 1
    for w in thread.block_stride(t):
        r = r0 + w.row
        c = c0 + w.col
        inside = r >= 0 and r < a.shape[0] and c >= 0 and c < a.shape[1]
        t[w] = a[r, c] if inside else np.float32(0)
    ss.block.sync()
    w = thread.index_2d()
    ty = cuda.threadIdx.y + 1
    tx = cuda.threadIdx.x + 1
    out[w] = t[ty, tx] * np.float32(-4) + t[ty - 1, tx] + t[ty + 1, tx] + t[ty, tx - 1] + t[ty, tx + 1]
"""

SGEMM = """
TS = 16


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TS, TS, 1),
           requires=["a.shape[1] == b.shape[0]", "c.shape[0] == a.shape[0]",
                     "c.shape[1] == b.shape[1]"]))
def sgemm_tiled(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    As = ss.shared.tile((TS, TS), np.float32)
    Bs = ss.shared.tile((TS, TS), np.float32)
    w = thread.index_2d()
    me = thread.local_index_2d()
    row = w.row
    col = w.col
    tx = me.col
    ty = me.row
    K = a.shape[1]
    acc = np.float32(0)
    for k0 in range(0, K, TS):
        ka = k0 + tx
        kb = k0 + ty
        As[me] = a[row, ka] if row < a.shape[0] and ka < K else np.float32(0)
        Bs[me] = b[kb, col] if kb < K and col < b.shape[1] else np.float32(0)
        ss.block.sync()
        for k in range(TS):
            acc += As[ty, k] * Bs[k, tx]
        ss.block.sync()
    c[w] = acc
"""

REDUCE = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def block_sum_max(psum: DisjointSlice[np.float32, PerBlock], pmax: DisjointSlice[np.float32, PerBlock],
                  x: In[np.float32]) -> None:
    s = np.float32(0)
    m = np.float32(-np.inf)
    for w in thread.grid_stride(x):
        v = x[w]
        s += v
        m = max(m, v)
    s = ss.block.sum(s)
    m = ss.block.max(m)
    lead = thread.block_leader()
    psum[lead] = s
    pmax[lead] = m


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def grid_sum(total: Accumulate[np.float32], x: In[np.float32]) -> None:
    s = np.float32(0)
    for w in thread.grid_stride(x):
        s += x[w]
    s = ss.block.sum(s)
    if cuda.threadIdx.x == 0:
        total.add(0, s)
"""

ARGMAX_TWO_COLLECTIVES = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def block_argmax(best: DisjointSlice[np.int64, PerBlock], x: In[np.float32]) -> None:
    i = thread.index_1d()
    v = x[i] if i.in_bounds(x) else np.float32(-np.inf)
    m = ss.block.max(v)
    cand = i.index if (v == m and i.in_bounds(x)) else x.size  # first index of the max
    best[thread.block_leader()] = ss.block.min(cand)
"""

SCAN = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"], covers="out"))
def scan_blocks(out: DisjointSlice[np.float32], totals: DisjointSlice[np.float32, PerBlock],
                x: In[np.float32]) -> None:
    i = thread.index_1d()
    v = x[i]  # 0 past the end
    s = ss.block.scan(v)
    out[i] = s
    tot = ss.block.sum(v)  # the leader (thread 0) cannot see thread B-1's scan: sum again
    totals[thread.block_leader()] = tot


# The block totals, scanned by ONE block in chunks of B with a carry. Written over a
# (chunks, B) Columns output (column = tid of the single block, row = chunk): the only
# Tier-1 spelling found for "element base + tid in a block-uniform loop" (FALSE_REFUSALS).
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["out.shape[1] == 64"]))
def scan_single_block(out: DisjointSlice[np.float32, Columns], t: In[np.float32]) -> None:
    carry = np.float32(0)
    w = thread.column()
    n = t.size
    for c in range(out.shape[0]):
        q = c * B + w.index
        v = t[q] if q < n else np.float32(0)
        s = ss.block.scan(v, inclusive=False)
        out[c, w] = s + carry
        carry += ss.block.sum(v)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["offs.size >= grid.x"]))
def scan_add_offsets(out: DisjointSlice[np.float32], offs: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = out[i] + offs[cuda.blockIdx.x]
"""

GATHER_HIST = """
B = 64
NBINS = 16


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["idx.size == out.size"], covers="out"))
def gather(out: DisjointSlice[np.float32], x: In[np.float32], idx: In[np.int32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        j = idx[i]
        out[i] = x[j] if j >= 0 and j < x.size else np.float32(0)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def histogram_smem(hist: Accumulate[np.uint32], data: In[np.float32], lo: np.float32, hi: np.float32) -> None:
    bins = ss.shared.accumulator(NBINS, np.uint32)
    scale = np.float32(NBINS) / (hi - lo)
    for w in thread.grid_stride(data):
        bins.add(int((data[w] - lo) * scale), 1)
    ss.block.sync()
    t = cuda.threadIdx.x
    if t < NBINS:
        h = bins[t]
        if h > 0:
            hist.add(t, h)
"""

SPMV = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["rowptr.size == y.size + 1"]))
def spmv_csr_warp(y: DisjointSlice[np.float32, PerWarp], rowptr: In[np.int32], cols: In[np.int32],
                  vals: In[np.float32], x: In[np.float32]) -> None:
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = np.float32(0)
    if row < y.size:
        for j in range(rowptr[row] + lane, rowptr[row + 1], 32):
            acc += vals[j] * x[cols[j]]
    total = ss.warp.sum(acc)
    y[thread.warp_leader()] = total
"""

BATCHED = """
M8 = 8


@ss.kernel(contract=ss.LaunchContract(domain=3, block=(8, 8, 1),
           requires=["a.shape[0] == c.shape[0]", "b.shape[0] == c.shape[0]",
                     "a.shape[1] == c.shape[1]", "b.shape[2] == c.shape[2]",
                     "a.shape[2] == b.shape[1]"]))
def batched_matmul(c: DisjointSlice3D[np.float32], a: In3D[np.float32], b: In3D[np.float32]) -> None:
    w = thread.index_3d()
    if w.in_bounds(c):
        acc = np.float32(0)
        for k in range(a.shape[2]):
            acc += a[w.z, w.y, k] * b[w.z, k, w.x]
        c[w] = acc


# one 8x8 matrix per block through shared tiles (domain=3, block z = 1)
@ss.kernel(contract=ss.LaunchContract(domain=3, block=(M8, M8, 1), covers="c",
           requires=["a.shape[0] == c.shape[0]", "b.shape[0] == c.shape[0]",
                     "a.shape[1] == 8", "a.shape[2] == 8", "b.shape[1] == 8", "b.shape[2] == 8"]))
def batched_matmul_smem(c: DisjointSlice3D[np.float32], a: In3D[np.float32], b: In3D[np.float32]) -> None:
    As = ss.shared.tile((M8, M8), np.float32)
    Bs = ss.shared.tile((M8, M8), np.float32)
    me = thread.local_index_2d()
    w = thread.index_3d()
    bz = cuda.blockIdx.z
    As[me] = a[bz, me.row, me.col]
    Bs[me] = b[bz, me.row, me.col]
    ss.block.sync()
    acc = np.float32(0)
    for k in range(M8):
        acc += As[me.row, k] * Bs[k, me.col]
    c[w] = acc
"""

BF16 = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def bf16_gelu(out: DisjointSlice[BF16], x: In[BF16]) -> None:
    for w in thread.grid_stride(out):
        v = x[w]  # exact float32
        u = np.float32(0.7978845608) * (v + np.float32(0.044715) * v * v * v)
        out[w] = np.float32(0.5) * v * (np.float32(1) + math.tanh(u))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="out"))
def bf16_rowdot(out: DisjointSlice[np.float32, PerBlock], a: In2D[BF16], b: In2D[BF16]) -> None:
    acc = np.float32(0)
    for w in thread.block_row(a):
        acc += a[w] * b[w]
    acc = ss.block.sum(acc)
    out[thread.block_leader()] = acc
"""

VEC_TAIL = """
B = 64


# covers="out" is refused here (FALSE_REFUSALS "covers_counts_threads_not_tile"): say it in requires
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B,
           requires=["x.size == out.size", "grid.x * block.x * 4 >= out.size"]))
def scale_vec(out: DisjointSlice[np.float32], x: In[np.float32], alpha: np.float32) -> None:
    w = thread.index_1d()
    t = thread.tile_1d(out, 4)      # out[4g : 4g + 4]; clipped at the end
    v = ss.vec.load(x, w.index, 4)  # 0 past the end
    ss.vec.store(t, (alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size >= n", "out.size >= n"]))
def saxpy_n(out: DisjointSlice[np.float32], x: In[np.float32], y: In[np.float32], a: np.float32,
            n: np.int32) -> None:
    for w in thread.grid_stride(out):  # grid-stride loop; the tail is the scalar n
        if w.index < n:
            out[w] = a * x[w] + y[w]
"""

ACCEPTED: dict[str, str] = {
    "softmax_rows": SOFTMAX,
    "layernorm": LAYERNORM,
    "transpose_tile": TRANSPOSE,
    "stencil3": STENCIL3,
    "stencil5": STENCIL5,
    "sgemm_tiled": SGEMM,
    "reduce_sum_max": REDUCE,
    "block_argmax": ARGMAX_TWO_COLLECTIVES,
    "scan_three_pass": SCAN,
    "gather_histogram": GATHER_HIST,
    "spmv_csr_warp": SPMV,
    "batched_matmul": BATCHED,
    "bf16": BF16,
    "vec_and_tail": VEC_TAIL,
}

# =============================================================================================
# numpy checks (simulator). Each takes the loaded module and a Generator; returns a bool.
# =============================================================================================


def _check_softmax(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal((5, 150)).astype(np.float32)
    out = _dev(np.full_like(x, np.nan))
    m.softmax_rows.prepare(grid=5, block=64)(out, _dev(x))
    e = np.exp(x - x.max(1, keepdims=True))
    return bool(np.allclose(_host(out), e / e.sum(1, keepdims=True), atol=1e-6))


def _check_layernorm(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal((5, 150)).astype(np.float32)
    g = rng.standard_normal(150).astype(np.float32)
    b = rng.standard_normal(150).astype(np.float32)
    out = _dev(np.full_like(x, np.nan))
    m.layernorm.prepare(grid=5, block=64)(out, _dev(x), _dev(g), _dev(b), np.float32(1e-5))
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    return bool(np.allclose(_host(out), (x - mu) / np.sqrt(var + 1e-5) * g + b, atol=1e-4))


def _check_transpose(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    a = rng.standard_normal((40, 70)).astype(np.float32)
    out = _dev(np.full((70, 40), np.nan, np.float32))
    m.transpose_tile.prepare(grid=(ss.cover(40, 32), ss.cover(70, 32)), block=(32, 8))(out, _dev(a))
    return bool(np.array_equal(_host(out), a.T))


def _stencil3_ref(x: np.ndarray) -> np.ndarray:
    xp = np.concatenate([[0], x, [0]]).astype(np.float32)
    return np.float32(0.25) * xp[:-2] + np.float32(0.5) * xp[1:-1] + np.float32(0.25) * xp[2:]


def _check_stencil3(m: ModuleType, rng: np.random.Generator, name: str = "stencil3") -> bool:
    import simtsafe as ss

    x = rng.standard_normal(200).astype(np.float32)
    out = _dev(np.full(200, np.nan, np.float32))
    getattr(m, name).prepare(grid=ss.cover(200, 64), block=64)(out, _dev(x))
    return bool(np.allclose(_host(out), _stencil3_ref(x), atol=1e-6))


def _check_stencil5(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    a = rng.standard_normal((20, 37)).astype(np.float32)
    out = _dev(np.full_like(a, np.nan))
    m.stencil5.prepare(grid=(ss.cover(37, 16), ss.cover(20, 16)), block=(16, 16))(out, _dev(a))
    p = np.pad(a, 1)
    ref = -4 * p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
    return bool(np.allclose(_host(out), ref, atol=1e-5))


def _check_sgemm(m: ModuleType, rng: np.random.Generator, name: str = "sgemm_tiled") -> bool:
    import simtsafe as ss

    a = rng.standard_normal((20, 37)).astype(np.float32)
    b = rng.standard_normal((37, 18)).astype(np.float32)
    c = _dev(np.full((20, 18), np.nan, np.float32))
    getattr(m, name).prepare(grid=(ss.cover(18, 16), ss.cover(20, 16)), block=(16, 16))(
        c, _dev(a), _dev(b)
    )
    return bool(np.allclose(_host(c), a @ b, atol=1e-4))


def _check_reduce(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    ps, pm = _dev(np.zeros(3, np.float32)), _dev(np.zeros(3, np.float32))
    m.block_sum_max.prepare(grid=3, block=64)(ps, pm, _dev(x))
    tot = _dev(np.zeros(1, np.float32))
    m.grid_sum.prepare(grid=3, block=64)(tot, _dev(x))
    return bool(
        np.isclose(_host(ps).sum(), x.sum(), atol=1e-4)
        and _host(pm).max() == x.max()
        and np.isclose(_host(tot)[0], x.sum(), atol=1e-4)
    )


def _check_argmax(m: ModuleType, rng: np.random.Generator, name: str = "block_argmax") -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    best = _dev(np.full(5, -1, np.int64))
    getattr(m, name).prepare(grid=5, block=64)(best, _dev(x))
    ref = [k * 64 + int(np.argmax(x[k * 64 : (k + 1) * 64])) for k in range(5)]
    return list(_host(best)) == ref


def _check_scan(m: ModuleType, rng: np.random.Generator, first: str = "scan_blocks") -> bool:
    import simtsafe as ss

    n = 300
    x = rng.integers(0, 5, n).astype(np.float32)
    nb = ss.cover(n, 64)
    out = _dev(np.full(n, np.nan, np.float32))
    tot = _dev(np.full(nb, -7, np.float32))
    getattr(m, first).prepare(grid=nb, block=64)(out, tot, _dev(x))
    chunks = ss.cover(nb, 64)
    offs = _dev(np.zeros((chunks, 64), np.float32))  # exclusive scan of the totals
    m.scan_single_block.prepare(grid=1, block=64)(offs, tot)
    m.scan_add_offsets.prepare(grid=nb, block=64)(out, _dev(_host(offs).ravel()[:nb].copy()))
    return bool(np.array_equal(_host(out), np.cumsum(x)))


def _check_gather_hist(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    idx = rng.integers(0, 300, 100).astype(np.int32)
    out = _dev(np.full(100, np.nan, np.float32))
    m.gather.prepare(grid=2, block=64)(out, _dev(x), _dev(idx))
    d = rng.uniform(0, 1, 500).astype(np.float32)
    h = _dev(np.zeros(16, np.uint32))
    m.histogram_smem.prepare(grid=3, block=64)(h, _dev(d), np.float32(0), np.float32(1))
    ref = np.bincount((d * 16).astype(int), minlength=16)
    return bool(np.array_equal(_host(out), x[idx]) and np.array_equal(_host(h), ref))


def _check_spmv(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    dense = rng.standard_normal((13, 40)).astype(np.float32) * (rng.uniform(size=(13, 40)) < 0.3)
    dense[5] = 0  # an empty row
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype(np.int32)
    indices = np.nonzero(dense)[1].astype(np.int32)
    data = dense[dense != 0].astype(np.float32)
    x = rng.standard_normal(40).astype(np.float32)
    y = _dev(np.full(13, np.nan, np.float32))
    m.spmv_csr_warp.prepare(grid=ss.cover(13, 2), block=64)(
        y, _dev(indptr), _dev(indices), _dev(data), _dev(x)
    )
    return bool(np.allclose(_host(y), dense @ x, atol=1e-5))


def _check_batched(m: ModuleType, rng: np.random.Generator) -> bool:
    a = rng.standard_normal((3, 9, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5, 10)).astype(np.float32)
    c = _dev(np.full((3, 9, 10), np.nan, np.float32))
    m.batched_matmul.prepare(grid=(2, 2, 3), block=(8, 8, 1))(c, _dev(a), _dev(b))
    ok = np.allclose(_host(c), a @ b, atol=1e-5)
    a8 = rng.standard_normal((3, 8, 8)).astype(np.float32)
    b8 = rng.standard_normal((3, 8, 8)).astype(np.float32)
    c8 = _dev(np.full((3, 8, 8), np.nan, np.float32))
    m.batched_matmul_smem.prepare(grid=(1, 1, 3), block=(8, 8, 1))(c8, _dev(a8), _dev(b8))
    return bool(ok and np.allclose(_host(c8), a8 @ b8, atol=1e-5))


def _check_bf16(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    bf = ss.bfloat16
    x = rng.standard_normal(500).astype(bf)
    out = _dev(np.zeros(500, bf))
    m.bf16_gelu.prepare(grid=2, block=64)(out, _dev(x))
    v = x.astype(np.float32)
    u = np.float32(0.7978845608) * (v + np.float32(0.044715) * v * v * v)
    ref = (np.float32(0.5) * v * (np.float32(1) + np.tanh(u))).astype(bf)
    ok1 = np.array_equal(_host(out).view(np.uint16), ref.view(np.uint16)) or np.allclose(
        _host(out).astype(np.float32), ref.astype(np.float32), rtol=8e-3, atol=1e-3
    )
    a = rng.standard_normal((4, 100)).astype(bf)
    b = rng.standard_normal((4, 100)).astype(bf)
    r = _dev(np.full(4, np.nan, np.float32))
    m.bf16_rowdot.prepare(grid=4, block=64)(r, _dev(a), _dev(b))
    ok2 = np.allclose(
        _host(r), (a.astype(np.float32) * b.astype(np.float32)).sum(1), rtol=1e-5, atol=1e-4
    )
    return bool(ok1 and ok2)


def _check_vec_tail(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = rng.standard_normal(203).astype(np.float32)
    out = _dev(np.full(203, np.nan, np.float32))
    m.scale_vec.prepare(grid=ss.cover(ss.cover(203, 4), 64), block=64)(out, _dev(x), np.float32(2))
    y = rng.standard_normal(203).astype(np.float32)
    out2 = _dev(np.zeros(203, np.float32))
    m.saxpy_n.prepare(grid=1, block=64)(out2, _dev(x), _dev(y), np.float32(2), np.int32(190))
    o2 = _host(out2)
    return bool(
        np.allclose(_host(out), 2 * x)
        and np.allclose(o2[:190], 2 * x[:190] + y[:190])
        and (o2[190:] == 0).all()
    )


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "softmax_rows": _check_softmax,
    "layernorm": _check_layernorm,
    "transpose_tile": _check_transpose,
    "stencil3": _check_stencil3,
    "stencil5": _check_stencil5,
    "sgemm_tiled": _check_sgemm,
    "reduce_sum_max": _check_reduce,
    "block_argmax": _check_argmax,
    "scan_three_pass": _check_scan,
    "gather_histogram": _check_gather_hist,
    "spmv_csr_warp": _check_spmv,
    "batched_matmul": _check_batched,
    "bf16": _check_bf16,
    "vec_and_tail": _check_vec_tail,
}

FALSE_REFUSALS: dict[str, dict[str, Any]] = {}
BAD_ERRORS: dict[str, dict[str, Any]] = {}
DOC_GAPS: dict[str, dict[str, Any]] = {}

# =============================================================================================
# FALSE_REFUSALS: natural, safe kernels that simtsafe refuses. "message": the text seen (a
# fragment); "workaround": the ACCEPTED case that computes the same thing.
# =============================================================================================

FR_TILE_SIZE_EXPR = """
TILE = 32
ROWS = 8


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TILE, ROWS, 1),
           requires=["out.shape[0] == a.shape[1]", "out.shape[1] == a.shape[0]"]))
def transpose_tile(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    t = ss.shared.tile((TILE, TILE), np.float32, pad=1)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for w in thread.block_stride(t):
        r = cuda.blockIdx.x * TILE + w.row
        c = cuda.blockIdx.y * TILE + w.col
        if r < a.shape[0] and c < a.shape[1]:
            t[w] = a[r, c]
    ss.block.sync()
    o = thread.tile_2d_strided(out, TILE // ROWS, 1)  # BAD: refused (int64, not a constant)
    for k in range(TILE // ROWS):
        o[k, 0] = t[tx, ty + k * ROWS]
"""

FR_ARGMAX_PAIR = """
B = 64


@ss.device
def argmax_op(a, b):
    if a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]):
        return a
    return b


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def block_argmax(best: DisjointSlice[np.int64, PerBlock], x: In[np.float32]) -> None:
    i = thread.index_1d()
    v = x[i] if i.in_bounds(x) else np.float32(-np.inf)
    r = ss.block.reduce((v, i.index), argmax_op)  # BAD: collectives take one scalar
    best[thread.block_leader()] = r[1]
"""

FR_SCAN_CHUNKED = """
B = 64


# The textbook single-block scan with a carry: a block-uniform chunk loop (every thread runs
# it ceil(n / B) times, so the collectives are reached uniformly), guarded writes of element
# base + tid. Safe: one block, each element base + tid has one writer. No witness names it.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["t.size == out.size"]))
def scan_single_block(out: DisjointSlice[np.float32], t: In[np.float32]) -> None:
    carry = np.float32(0)
    tid = cuda.threadIdx.x
    n = t.size
    for base in range(0, n, B):
        q = base + tid
        v = t[q] if q < n else np.float32(0)
        s = ss.block.scan(v, inclusive=False)
        if q < n:
            out[q] = s + carry  # BAD: int index
        carry += ss.block.sum(v)
"""

FR_SCAN_GRID_STRIDE = """
B = 64


# What a user tries next: the grid-stride witness (one block). Refused, and rightly so when
# n % B != 0 (threads run the loop different numbers of times). A contract cannot say
# "n is a multiple of 64" ('%' is not in the requires grammar), and the launch's sizes are
# not used by the uniformity proof, so even n = 128 is refused.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["t.size == out.size", "grid.x == 1"]))
def scan_single_block(out: DisjointSlice[np.float32], t: In[np.float32]) -> None:
    carry = np.float32(0)
    for w in thread.grid_stride(out):
        v = t[w]
        s = ss.block.scan(v, inclusive=False)  # BAD
        out[w] = s + carry
        carry += ss.block.sum(v)
"""

FR_COVERS_TILE = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"], covers="out"))
def scale_vec(out: DisjointSlice[np.float32], x: In[np.float32], alpha: np.float32) -> None:
    w = thread.index_1d()
    t = thread.tile_1d(out, 4)      # each thread owns 4 elements ...
    v = ss.vec.load(x, w.index, 4)
    ss.vec.store(t, (alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]))
    # ... but covers="out" counts one element per thread (launch with cover(cover(n, 4), B))
"""

FR_TREE_TILE = """
B = 64


# The classic shared-memory tree: in each step thread t < s writes t[t] and reads t[t + s],
# which no thread writes in that step (t + s >= s); a barrier separates the steps.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def tree_sum_tile(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    t = ss.shared.tile(B, np.float32)
    i = thread.index_1d()
    me = thread.local_index()
    t[me] = x[i]
    ss.block.sync()
    s = B // 2
    while s > 0:
        if me.index < s:
            t[me] = t[me] + t[me.index + s]  # BAD
        ss.block.sync()
        s //= 2
    partial[thread.block_leader()] = t[0]
"""

FR_STENCIL_CUDA_STYLE = """
B1 = 64
H1 = 66


# The CUDA halo load: t[tid + 1] = x[i]; thread 0 and thread B1-1 load the two halo cells.
# Every tile element has exactly one writer.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B1, requires=["x.size == out.size"]))
def stencil3_cuda_style(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = ss.shared.tile(H1, np.float32)
    i = thread.index_1d()
    tid = cuda.threadIdx.x
    n = x.size
    t[tid + 1] = x[i]  # BAD: a tile is written through a Local1D witness only
    if tid == 0:
        t[0] = x[i.index - 1] if i.index > 0 else np.float32(0)
    if tid == B1 - 1:
        t[H1 - 1] = x[i.index + 1] if i.index + 1 < n else np.float32(0)
    ss.block.sync()
    out[i] = np.float32(0.25) * t[tid] + np.float32(0.5) * t[tid + 1] + np.float32(0.25) * t[tid + 2]
"""

FALSE_REFUSALS.update(
    {
        "tile_size_const_expr": {
            "source": FR_TILE_SIZE_EXPR,
            "where": "compile (typing)",
            "message": "thread.tile_2d_strided(): tile sizes must be positive compile-time ints "
            "(literals or module constants), got int64",
            "workaround": "transpose_tile (PER = TILE // ROWS as a module constant)",
        },
        "argmax_pair_reduce": {
            "source": FR_ARGMAX_PAIR,
            "where": "compile (typing)",
            "message": "block.reduce(v) takes a number (an int, float or bool scalar); got "
            "Tuple(float32, int64). Collectives exchange one scalar per thread: reduce "
            "arrays element by element",
            "workaround": "block_argmax (block.max, then block.min of the candidate indices)",
            "fixed": "tuple states in block.reduce / warp.reduce: accepted as written "
            "(tests/sim/test_tuple_reduce_sim.py runs it against numpy)",
        },
        "scan_chunked_single_block": {
            "source": FR_SCAN_CHUNKED,
            "where": "compile (typing)",
            "message": "a DisjointSlice is written only through a ThreadIndex witness of its space "
            "(Index1D); got an index of type int64",
            "workaround": "scan_three_pass.scan_single_block (a (chunks, B) Columns output)",
        },
        "scan_grid_stride_single_block": {
            "source": FR_SCAN_GRID_STRIDE,
            "where": "compile (uniformity)",
            "message": "`block.scan` needs every thread of the block to reach it, but control flow "
            "here is thread-dependent: the loop whose exit is at line N runs a different "
            "number of times in different threads",
            "workaround": "scan_three_pass.scan_single_block (a (chunks, B) Columns output)",
        },
        "covers_counts_threads_not_tile": {
            "source": FR_COVERS_TILE,
            "where": "launch",
            "message": "CoverageError: kernel 'scale_vec' must cover every element of 'out' by its "
            "launch contract, but the launch owns 64 along axis 0 and 'out' has 203. "
            "Prepare with a larger grid (simtsafe.cover(n, block) blocks).",
            "workaround": "vec_and_tail.scale_vec (requires 'grid.x * block.x * 4 >= out.size')",
            "fixed": "covers counts a tile's elements a thread (tests/sim/test_covers_tiles_sim.py)",
        },
        "tree_reduction_shared_tile": {
            "source": FR_TREE_TILE,
            "where": "decoration (tile-phase)",
            "message": "shared tile `t` is read by index at line N and filled at line N with no block "
            "barrier between them (on some path): another thread may be writing the "
            "element being read. Put simtsafe.block.sync() between the fill and the reads",
            "workaround": "reduce_sum_max (ss.block.sum); documented in porting.md section 10",
        },
        "stencil_halo_cuda_style": {
            "source": FR_STENCIL_CUDA_STYLE,
            "where": "compile (typing)",
            "message": "a shared tile (SharedTile[float32, 66]) is filled only through a block-local "
            "witness of its space (Local1D): each element then has one writer. Got an "
            "index of type int64; use thread.local_index() or `for w in "
            "thread.block_stride(tile)`",
            "workaround": "stencil3 (block_stride over the whole 66-cell tile)",
        },
    }
)
CHECKS.update(
    {
        "tile_size_const_expr": _check_transpose,
        "argmax_pair_reduce": _check_argmax,
        "scan_chunked_single_block": lambda m, r: _check_scan_single(m, r),
        "scan_grid_stride_single_block": lambda m, r: _check_scan_single(m, r),
        "covers_counts_threads_not_tile": lambda m, r: _check_scale_vec_covers(m, r),
        "tree_reduction_shared_tile": lambda m, r: _check_tree(m, r),
        "stencil_halo_cuda_style": lambda m, r: _check_stencil3(m, r, "stencil3_cuda_style"),
    }
)


def _check_scan_single(m: ModuleType, rng: np.random.Generator) -> bool:
    t = rng.integers(0, 5, 128).astype(np.float32)
    out = _dev(np.full(128, np.nan, np.float32))
    m.scan_single_block.prepare(grid=1, block=64)(out, _dev(t))
    return bool(np.array_equal(_host(out), np.cumsum(t) - t))


def _check_scale_vec_covers(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    x = rng.standard_normal(203).astype(np.float32)
    out = _dev(np.full(203, np.nan, np.float32))
    m.scale_vec.prepare(grid=ss.cover(ss.cover(203, 4), 64), block=64)(out, _dev(x), np.float32(2))
    return bool(np.allclose(_host(out), 2 * x))


def _check_tree(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(300).astype(np.float32)
    p = _dev(np.zeros(5, np.float32))
    m.tree_sum_tile.prepare(grid=5, block=64)(p, _dev(x))
    return bool(np.isclose(_host(p).sum(), x.sum(), atol=1e-4))


FR_GRID_STRIDE_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 4, 1),
           requires=["a.shape[0] == out.shape[0]", "a.shape[1] == out.shape[1]"]))
def grid_stride_2d(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    for w in thread.grid_stride(out):  # BAD: "needs a 1D launch" -- and there is no 2D form
        out[w] = a[w] * np.float32(2)
"""

GRID_STRIDE_FLAT = """
B = 64


# The workaround for a 2D grid-stride loop: pass out.reshape(-1) and walk it in 1D.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B,
           requires=["a.shape[0] * a.shape[1] == out.size"]))
def grid_stride_flat(out: DisjointSlice[np.float32], a: In2D[np.float32]) -> None:
    cols = a.shape[1]
    for w in thread.grid_stride(out):
        r = w.index // cols
        c = w.index - r * cols
        out[w] = a[r, c] * np.float32(2)
"""
ACCEPTED["grid_stride_flat"] = GRID_STRIDE_FLAT


def _check_grid_stride_flat(m: ModuleType, rng: np.random.Generator) -> bool:
    a = rng.standard_normal((13, 29)).astype(np.float32)
    out = _dev(np.full(a.size, np.nan, np.float32))
    m.grid_stride_flat.prepare(grid=2, block=64)(out, _dev(a))
    return bool(np.array_equal(_host(out).reshape(a.shape), 2 * a))


def _check_grid_stride_2d(m: ModuleType, rng: np.random.Generator) -> bool:
    a = rng.standard_normal((13, 29)).astype(np.float32)
    out = _dev(np.full(a.shape, np.nan, np.float32))
    m.grid_stride_2d.prepare(grid=(1, 1), block=(16, 4))(out, _dev(a))
    return bool(np.array_equal(_host(out), 2 * a))


FALSE_REFUSALS["grid_stride_2d"] = {
    "source": FR_GRID_STRIDE_2D,
    "where": "decoration",
    "message": "thread.grid_stride() needs a 1D launch, but the launch contract has domain=2; use "
    "the witness of the contract's domain, or change the contract to domain=1",
    "workaround": "grid_stride_flat (reshape the output to 1D on the host, divide the index)",
}
CHECKS["grid_stride_flat"] = _check_grid_stride_flat
CHECKS["grid_stride_2d"] = _check_grid_stride_2d

# =============================================================================================
# BAD_ERRORS: raw errors, misleading messages, or silence where an error was due.
# =============================================================================================

BAD_LEADER_OTHER_THREAD = SCAN.replace(
    """    tot = ss.block.sum(v)  # the leader (thread 0) cannot see thread B-1's scan: sum again
    totals[thread.block_leader()] = tot""",
    """    if cuda.threadIdx.x == B - 1:  # BAD: the last thread holds the block total (CUDA idiom)
        totals[thread.block_leader()] = s  # an invalid witness there: writes nothing, silently""",
)
assert BAD_LEADER_OTHER_THREAD != SCAN

BAD_COLUMNS_2D_ALIAS = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def scan_single_block(out: DisjointSlice2D[np.float32, Columns], t: In[np.float32]) -> None:  # BAD
    w = thread.column()
    for c in range(out.shape[0]):
        out[c, w] = t[c * B + w.index]
"""

BAD_WITNESS_COMPARE = """
B = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def guard_compare(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    if i < out.size:  # BAD: the message suggests w.index, not w.in_bounds(out) (or nothing)
        out[i] = x[i] * np.float32(2)
"""

BAD_ERRORS.update(
    {
        "block_leader_in_other_thread": {
            "source": BAD_LEADER_OTHER_THREAD,
            "where": "nowhere (accepted; sim.check: no findings)",
            "message": "(none) totals keep their old contents; the three-pass scan is wrong",
            "why": "block_leader() is valid in thread 0 only, documented; but a witness made under "
            "`threadIdx.x == B - 1` (B - 1 != 0) is provably never valid: a warning at "
            "decoration, or a sim.check finding 'write through an invalid witness', would "
            "catch the CUDA idiom 'the last thread writes the block total'",
        },
        "columns_2d_alias": {
            "source": BAD_COLUMNS_2D_ALIAS,
            "where": "import (typing module)",
            "message": "TypeError: Too many arguments for simtsafe._views.DisjointSlice[~T, "
            "simtsafe._spaces.Index2D]; actual 2, expected 1",
            "why": "a Columns (and BlockRow/WarpRow) output is 2D but spelled DisjointSlice[T, Columns]; "
            "the 2D alias is the natural guess and the raw typing error names private classes",
        },
        "witness_compare_guard": {
            "source": BAD_WITNESS_COMPARE,
            "where": "compile (typing)",
            "message": "Numba cannot type `lt(ThreadIndex[Index1D], int64)`: a witness (ThreadIndex) "
            "has no arithmetic, comparison or conversion ... Use w.index / w.row ...",
            "why": "the user is writing the CUDA tail guard; the message should say it is not "
            "needed (writes are bounds-checked) or point to w.in_bounds(out)",
        },
    }
)
CHECKS["block_leader_in_other_thread"] = _check_scan
CHECKS["columns_2d_alias"] = lambda m, r: True

# =============================================================================================
# DOC_GAPS
# =============================================================================================

GAP_TILE_IN_GRID_STRIDE = """
B = 64


# A grid-stride loop over vector runs (the standard CUDA form of a vectorized elementwise
# kernel with a tail). tile_1d names run g only, so every iteration stores into the SAME
# run: accepted, safe, silently wrong for a grid smaller than n / 4 threads. There is no
# grid-stride form of vec.store; docs show vec.store only with one tile per thread.
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["x.size == out.size"]))
def scale_vec_gs(out: DisjointSlice[np.float32], x: In[np.float32], alpha: np.float32) -> None:
    t = thread.tile_1d(out, 4)
    for j in range(cuda.grid(1), (x.size + 3) // 4, cuda.gridsize(1)):
        v = ss.vec.load(x, j, 4)
        ss.vec.store(t, (alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]))  # BAD
"""


def _check_scale_vec_gs(m: ModuleType, rng: np.random.Generator) -> bool:
    x = rng.standard_normal(603).astype(np.float32)  # 151 runs, 64 threads
    out = _dev(np.full(603, np.nan, np.float32))
    m.scale_vec_gs.prepare(grid=1, block=64)(out, _dev(x), np.float32(2))
    return bool(np.allclose(_host(out), 2 * x))


DOC_GAPS.update(
    {
        "vec_store_grid_stride": {
            "source": GAP_TILE_IN_GRID_STRIDE,
            "where": "accepted; wrong result",
            "doc": "docs/cooperation.md 'Vector stores', docs/api.md simtsafe.vec",
            "what": "no Tier-1 spelling of a grid-stride loop of vector stores; nothing warns that "
            "tile_1d inside a loop is the same tile every iteration",
        },
        "covers_with_output_tiles": {
            "source": FR_COVERS_TILE,
            "where": "launch",
            "doc": "docs/contracts.md 'covers' (capacity table); CoverageError's advice",
            "what": "the capacity table counts one element per thread; an output reached only "
            "through thread.tile_1d(out, n) (which the decorator knows) is covered by n "
            "elements per thread. The error's fix 'simtsafe.cover(n, block) blocks' "
            "launches n times too many threads",
        },
        "chunked_block_loop_idiom": {
            "source": FR_SCAN_CHUNKED,
            "where": "compile (typing)",
            "doc": "docs/porting.md section 10 ('What goes to Tier 2')",
            "what": "'element base + tid in a block-uniform loop' (chunked scans/reductions with a "
            "carry, one block walking an array) is not in the table; the Columns output "
            "(documented only for KV appends) is the Tier-1 spelling; examples/scan.py uses "
            "an (n, 1) view with block (1, 256, 1) and tile_2d_strided instead",
        },
    }
)
CHECKS["vec_store_grid_stride"] = _check_scale_vec_gs
CHECKS["covers_with_output_tiles"] = CHECKS["covers_counts_threads_not_tile"]
CHECKS["chunked_block_loop_idiom"] = CHECKS["scan_chunked_single_block"]

# =============================================================================================
# Runner
# =============================================================================================


_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=15)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
