"""Porting round 19: kernels people write for speed, ported to Tier 1 (no ``simtsafe.unsafe``).

Kernels: a padded tiled transpose, a 5-point stencil with a shared halo, a warp top-4 per row
(local scratch arrays and a tuple warp reduce), CSR SpMV (a warp per row), a bitonic sort of
1024 keys in shared memory, LayerNorm backward (two block sums), a cross-entropy loss per row,
an int8 GEMV with int32 accumulation (vector loads), a radix-sort digit histogram per block
(a shared accumulator), stream compaction into an AppendBuffer, RGB -> gray + a 3x3 Gaussian
with a constant filter from a user module, a per-row argmax by tuple reduce per chunk, a byte
lookup table through a user module (``tables.LUT``), and a masked run-time tuple index.

Each kernel is a module body for ``tests.kernels.load_kernel_module`` (HEADER plus
``EXTRA_HEADER`` are prepended). Grouped as

* ``ACCEPTED``        -- ported in Tier 1, compiled with NVVM (``simtsafe.check_kernel``: no
                         finding); on the simulator the port matches numpy (``CHECKS``);
* ``FALSE_REFUSALS``  -- a natural, safe kernel that simtsafe refuses: the message seen, why it
                         is safe, and the workaround;
* ``BAD_ERRORS``      -- a message that misleads or lacks its fix;
* ``DOC_GAPS``        -- where the docs and the behaviour disagree.

Reproduce (from the repository root)::

    PYTHONPATH=. .venv/bin/python -m tests.kernels.port19 NAME...          # NVVM compile
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.port19 NAME...  # simulator

Tests: tests/ptx/test_port19_ptx.py, tests/sim/test_port19_sim.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from tests.kernels.porting import Corpus, replay_clean
from tests.kernels.porting import to_device as _dev
from tests.kernels.porting import to_host as _host

EXTRA_HEADER = "import math\nfrom simtsafe import Accumulate, BlockRow, WarpRow\n"

# =============================================================================================
# ACCEPTED
# =============================================================================================

TRANSPOSE = """
TILE = 32
ROWS = 8


# tiled transpose, a padded shared tile, coalesced reads and writes
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TILE, ROWS, 1),
           requires=["out.shape[0] == a.shape[1]", "out.shape[1] == a.shape[0]"]))
def transpose(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    t = ss.shared.tile((TILE, TILE), np.float32, pad=1)
    r0 = cuda.blockIdx.x * TILE  # block (bx, by) reads a[32bx.., 32by..], writes out[32by.., 32bx..]
    c0 = cuda.blockIdx.y * TILE
    for w in thread.block_stride(t):
        r = r0 + w.row
        c = c0 + w.col
        if r < a.shape[0] and c < a.shape[1]:  # a read by plain int is not bounds-checked
            t[w] = a[r, c]
    ss.block.sync()
    o = thread.tile_2d_strided(out, 4, 1)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    for k in range(4):
        o[k, 0] = t[tx, ty + k * ROWS]
"""


STENCIL5 = """
BX = 32
BY = 8
HX = 34          # BX + 2
HY = 10          # BY + 2


# 5-point Laplacian with a shared halo (zero outside the grid)
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(BX, BY, 1),
           requires=["out.shape[0] == u.shape[0]", "out.shape[1] == u.shape[1]"]))
def stencil5(out: DisjointSlice2D[np.float32], u: In2D[np.float32]) -> None:
    h = ss.shared.tile((HY, HX), np.float32)
    r0 = cuda.blockIdx.y * BY - 1
    c0 = cuda.blockIdx.x * BX - 1
    for w in thread.block_stride(h):
        r = r0 + w.row
        c = c0 + w.col
        v = np.float32(0)
        if r >= 0 and r < u.shape[0] and c >= 0 and c < u.shape[1]:
            v = u[r, c]
        h[w] = v
    ss.block.sync()
    i = thread.index_2d()
    ty = cuda.threadIdx.y + 1
    tx = cuda.threadIdx.x + 1
    out[i] = (h[ty - 1, tx] + h[ty + 1, tx] + h[ty, tx - 1] + h[ty, tx + 1]
              - np.float32(4) * h[ty, tx])
"""


TOPK_WARP = """
K = 4


@ss.device
def best_op(a, b):
    # larger value; among equal values the smaller column
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


# top-4 per row, a warp per row: each lane keeps its sorted top 4 in a local scratch array,
# then 4 rounds of a (value, column) warp reduce; the winning lane pops its head
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="vals",
           requires=["vals.shape[1] == 4", "idx.shape[1] == 4", "vals.shape[0] == idx.shape[0]",
                     "x.shape[0] == vals.shape[0]"]))
def topk4(vals: DisjointSlice[np.float32, WarpRow], idx: DisjointSlice[np.int32, WarpRow],
          x: In2D[np.float32]) -> None:
    tv = cuda.local.array(4, np.float32)
    ti = cuda.local.array(4, np.int32)
    for k in range(K):
        tv[k] = np.float32(-np.inf)
        ti[k] = np.int32(2**30)
    for w in thread.warp_row(x):
        v = x[w]
        c = np.int32(w.col)
        if v > tv[K - 1]:
            p = K - 1
            while p > 0 and v > tv[p - 1]:
                tv[p] = tv[p - 1]
                ti[p] = ti[p - 1]
                p -= 1
            tv[p] = v
            ti[p] = c
    rv = cuda.local.array(4, np.float32)
    ri = cuda.local.array(4, np.int32)
    head = 0
    for k in range(K):
        hv = tv[head] if head < K else np.float32(-np.inf)
        hi = ti[head] if head < K else np.int32(2**30)
        bv, bi = ss.warp.reduce((hv, hi), best_op)
        rv[k] = bv
        ri[k] = bi
        if hi == bi and head < K:
            head += 1
    for w in thread.warp_row(vals):
        vals[w] = rv[w.col]
    for w in thread.warp_row(idx):
        idx[w] = ri[w.col]
"""


SEGREDUCE = """
# segmented reduction by row offsets (CSR SpMV), one warp per row
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="y",
           requires=["indptr.size == y.size + 1", "indices.size == data.size"]))
def csr_spmv(y: DisjointSlice[np.float32, PerWarp], indptr: In[np.int32], indices: In[np.int32],
             data: In[np.float32], x: In[np.float32]) -> None:
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = np.float32(0)
    if row < y.size:
        start = indptr[row]
        end = indptr[row + 1]
        for k in range(start + lane, end, 32):
            acc += data[k] * x[indices[k]]
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


BITONIC = """
N = 1024
B = 128
PER = 8          # N // B


# bitonic sort of 1024 keys per block in shared memory: every compare-exchange step reads
# the partner, then after a barrier each thread writes only its own elements
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, requires=["out.size == keys.size"]))
def bitonic1024(out: DisjointSlice[np.float32], keys: In[np.float32]) -> None:
    t = ss.shared.tile(N, np.float32)
    base = cuda.blockIdx.x * N
    for w in thread.block_stride(t):
        g = base + w.index
        t[w] = keys[g] if g < keys.size else np.float32(np.inf)
    ss.block.sync()
    nv = cuda.local.array(PER, np.float32)
    k = 2
    while k <= N:
        j = k // 2
        while j > 0:
            m = 0
            for w in thread.block_stride(t):
                i = w.index
                p = i ^ j
                a = t[i]
                b = t[p]
                up = (i & k) == 0
                lo = i < p
                take_min = up == lo
                nv[m] = min(a, b) if take_min else max(a, b)
                m += 1
            ss.block.sync()
            m = 0
            for w in thread.block_stride(t):
                t[w] = nv[m]
                m += 1
            ss.block.sync()
            j //= 2
        k *= 2
    o = thread.tile_1d(out, PER)
    me = cuda.threadIdx.x * PER
    for q in range(PER):
        o[q] = t[me + q]
"""


LN_BWD = """
B = 64


# LayerNorm backward (dx) per row: two block reductions, then the row's dx
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="dx",
           requires=["x.shape[0] == dx.shape[0]", "x.shape[1] == dx.shape[1]",
                     "dy.shape[0] == dx.shape[0]", "dy.shape[1] == dx.shape[1]",
                     "gamma.size == dx.shape[1]", "mean.size == dx.shape[0]",
                     "rstd.size == dx.shape[0]"]))
def ln_bwd(dx: DisjointSlice[np.float32, BlockRow], dy: In2D[np.float32], x: In2D[np.float32],
           gamma: In[np.float32], mean: In[np.float32], rstd: In[np.float32]) -> None:
    r = cuda.blockIdx.x
    mu = mean[r]
    rs = rstd[r]
    s1 = np.float32(0)
    s2 = np.float32(0)
    for w in thread.block_row(x):
        g = dy[w] * gamma[w.col]
        xh = (x[w] - mu) * rs
        s1 += g
        s2 += g * xh
    s1 = ss.block.sum(s1)
    s2 = ss.block.sum(s2)
    n = np.float32(x.shape[1])
    for w in thread.block_row(dx):
        g = dy[w] * gamma[w.col]
        xh = (x[w] - mu) * rs
        dx[w] = rs * (g - s1 / n - xh * (s2 / n))
"""


XENT = """
B = 64


# cross-entropy loss per row: max, sum of exp, the label's logit
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="loss",
           requires=["loss.size == x.shape[0]", "labels.size == x.shape[0]"]))
def xent(loss: DisjointSlice[np.float32, PerBlock], x: In2D[np.float32], labels: In[np.int32]) -> None:
    r = cuda.blockIdx.x
    m = np.float32(-np.inf)
    for w in thread.block_row(x):
        m = max(m, x[w])
    m = ss.block.max(m)
    s = np.float32(0)
    for w in thread.block_row(x):
        s += math.exp(x[w] - m)
    s = ss.block.sum(s)
    lab = labels[r]
    loss[thread.block_leader()] = math.log(s) + m - x[r, lab]
"""


GEMV_I8_UNROLLED = """
# int8 GEMV (the 4-product sum written out: the loop form is FALSE_REFUSALS tuple_index_in_range_loop) with int32 accumulation, a warp per row, 4 int8 per vector load
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="y",
           requires=["a.shape[0] == y.size", "a.shape[1] == x.size"]))
def gemv_i8(y: DisjointSlice[np.int32, PerWarp], a: In2D[np.int8], x: In[np.int8]) -> None:
    row = cuda.grid(1) // 32
    acc = np.int32(0)
    if row < y.size:
        for j in range(cuda.laneid, (a.shape[1] + 3) // 4, 32):
            av = ss.vec.load(a, (row, j), 4)
            xv = ss.vec.load(x, j, 4)
            acc += (np.int32(av[0]) * np.int32(xv[0]) + np.int32(av[1]) * np.int32(xv[1])
                    + np.int32(av[2]) * np.int32(xv[2]) + np.int32(av[3]) * np.int32(xv[3]))
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


GEMV_TUPLE_LOOP = """
# int8 GEMV with int32 accumulation, a warp per row, 4 int8 per vector load
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="y",
           requires=["a.shape[0] == y.size", "a.shape[1] == x.size"]))
def gemv_i8(y: DisjointSlice[np.int32, PerWarp], a: In2D[np.int8], x: In[np.int8]) -> None:
    row = cuda.grid(1) // 32
    acc = np.int32(0)
    if row < y.size:
        for j in range(cuda.laneid, (a.shape[1] + 3) // 4, 32):
            av = ss.vec.load(a, (row, j), 4)
            xv = ss.vec.load(x, j, 4)
            for q in range(4):
                acc += np.int32(av[q]) * np.int32(xv[q])
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


RADIX_HIST = """
B = 128
CH = 512        # keys per block
R = 256


# radix-sort digit histogram: each block counts the digit (key >> shift) & 255 of its chunk in
# shared accumulators, then writes its row of the per-block histogram
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="hist",
           requires=["hist.shape[1] == 256"]))
def digit_hist(hist: DisjointSlice[np.uint32, BlockRow], keys: In[np.uint32], shift: np.uint32) -> None:
    bins = ss.shared.accumulator(R, np.uint32)
    base = cuda.blockIdx.x * CH
    end = min(base + CH, keys.size)
    for i in range(base + cuda.threadIdx.x, end, B):
        d = (keys[i] >> shift) & np.uint32(255)
        bins.add(d, 1)
    ss.block.sync()
    for w in thread.block_row(hist):
        hist[w] = bins[w.col]
"""


COMPACT = """
# stream compaction (np.flatnonzero): each kept index claims a slot of an append buffer
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, appends={"out": "count"}))
def nonzero(out: ss.AppendBuffer[np.int32], count: ss.Counter, x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        if x[w] != np.float32(0):
            s = out.claim()
            out[s] = np.int32(w.index)
"""


GRAY_BLUR = """
from tests.kernels import port19_tables as tables

RGB = np.dtype([("r", np.uint8), ("g", np.uint8), ("b", np.uint8)])
BX = 16
BY = 8
HX = 18
HY = 10


# RGB -> grayscale into a shared halo tile, then a 3x3 Gaussian from constant memory
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(BX, BY, 1),
           requires=["out.shape[0] == img.shape[0]", "out.shape[1] == img.shape[1]"]))
def gray_blur(out: DisjointSlice2D[np.float32], img: In2D[RGB]) -> None:
    h = ss.shared.tile((HY, HX), np.float32)
    r0 = cuda.blockIdx.y * BY - 1
    c0 = cuda.blockIdx.x * BX - 1
    for w in thread.block_stride(h):
        r = min(max(r0 + w.row, 0), img.shape[0] - 1)     # clamp to edge
        c = min(max(c0 + w.col, 0), img.shape[1] - 1)
        p = img[r, c]
        h[w] = (np.float32(0.299) * np.float32(p.r) + np.float32(0.587) * np.float32(p.g)
                + np.float32(0.114) * np.float32(p.b))
    ss.block.sync()
    f = cuda.const.array_like(tables.GAUSS3)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    acc = np.float32(0)
    for dr in range(3):
        for dc in range(3):
            acc += f[dr, dc] * h[ty + dr, tx + dc]
    out[thread.index_2d()] = acc
"""


ARGMAX_CHUNKS = """
B = 64


@ss.device
def argmax_op(a, b):
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


# per-row argmax, a block per row: a (value, index) tuple reduce per chunk, carried across chunks
@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="best",
           requires=["best.size == x.shape[0]"]))
def row_argmax(best: DisjointSlice[np.int64, PerBlock], x: In2D[np.float32]) -> None:
    cur = (np.float32(-np.inf), np.int64(x.shape[1]))
    for c in thread.block_row_chunks(x):
        v = x[c] if c.valid else np.float32(-np.inf)
        got = ss.block.reduce((v, np.int64(c.col)), argmax_op)
        cur = argmax_op(cur, got)
    best[thread.block_leader()] = cur[1]
"""


LUT_MODULE = """
from tests.kernels import port19_tables as tables


# gamma correction of bytes through a lookup table kept in a user module
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["out.size == img.size"]))
def gamma_lut(out: DisjointSlice[np.uint8], img: In[np.uint8]) -> None:
    lut = cuda.const.array_like(tables.LUT)
    for w in thread.grid_stride(img):
        out[w] = lut[img[w]]
"""


RGBA_MEAN_TUPLE = """
# per-pixel channel statistics with a tuple indexed by a run-time channel number: mean of the
# 4 channels and the value of the channel the pixel's selector names
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64,
           requires=["img.shape[0] == out.size", "img.shape[1] == 4", "sel.size == out.size"]))
def pick_channel(out: DisjointSlice[np.float32], img: In2D[np.float32], sel: In[np.int32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        px = ss.vec.load(img, (i.index, 0), 4)
        k = sel[i] & 3
        out[i] = px[k] - (px[0] + px[1] + px[2] + px[3]) / np.float32(4)
"""


ACCEPTED: dict[str, str] = {
    "tiled_transpose_pad": TRANSPOSE,
    "stencil5_halo": STENCIL5,
    "warp_topk4": TOPK_WARP,
    "csr_spmv_warp": SEGREDUCE,
    "bitonic_sort_1024": BITONIC,
    "layernorm_backward": LN_BWD,
    "cross_entropy_rows": XENT,
    "gemv_int8_unrolled": GEMV_I8_UNROLLED,
    "radix_digit_hist": RADIX_HIST,
    "compact_nonzero": COMPACT,
    "gray_gauss3_const": GRAY_BLUR,
    "row_argmax_chunks": ARGMAX_CHUNKS,
    "gamma_lut_module": LUT_MODULE,
    "pick_channel_masked_tuple": RGBA_MEAN_TUPLE,
    "gemv_int8_tuple_loop": GEMV_TUPLE_LOOP,
}

# =============================================================================================
# FALSE_REFUSALS
# =============================================================================================


FALSE_REFUSALS: dict[str, dict[str, Any]] = {
    "tuple_index_in_range_loop": {
        "source": GEMV_TUPLE_LOOP,
        "kernel": "gemv_i8",
        "message": "`warp.sum` needs every thread of the warp to reach it, but control flow here is "
        "thread-dependent: the branch at line 22 depends on a value that depends on which way the "
        "branch at line 21 went ... an operation that fails for some threads only, such as a tuple "
        "index out of range ...",
        "why_safe": "`for q in range(4): acc += av[q] * xv[q]` indexes the 4-tuples of "
        "`vec.load(..., 4)` at q in 0..3 only: Numba's IndexError branch can never be taken, so no "
        "lane leaves before `warp.sum`. docs/safety.md lists the bounded tuple indices the compiled "
        "form accepts (`& c`, `|`, `^`, `+`, `%`), not a range-loop variable. The same loop before a "
        "`block.sum` outside a thread-dependent loop is accepted (no finding), so the refusal "
        "depends on where the loop sits",
        "workaround": "`av[q & 3]` (accepted: gemv_i8m) or the products written out "
        "(ACCEPTED gemv_int8_unrolled, as docs/cooperation.md's gemv does)",
        "fixed": "ACCEPTED gemv_int8_tuple_loop: verify/_feasible drops the IndexError default of "
        "a 64-bit switch whose condition verify/_ranges proves in 0..n-1 (Numba's range loop: an "
        "index from 0 paired with a trip counter from a constant N <= n; dominating compares). "
        "range(5) over the 4-tuple, a thread-dependent or parameter bound, an index reassigned "
        "in the body, a while loop incrementing before the index stay refused "
        "(tests/ptx/test_port19_ptx.py)",
    },
    "vec_load_row_pitch_not_a_run": {
        "source": GEMV_I8_UNROLLED,
        "kernel": "gemv_i8",
        "where": "launch (simulator and GPU alike)",
        "message": "ArgumentTypeError: kernel 'gemv_i8' reads input 'a' in 4-byte runs "
        "(simtsafe.vec.load), but its row pitch 0x3 is not a multiple of 4: every run would take "
        "the slow element path. ... copy it, or pad the rows",
        "why_safe": "an int8 GEMV with K = 3 or 130 columns: vec.load reads element by element, 0 "
        "past the row's end, at any alignment (docs/cooperation.md 'Enforced: no read outside the "
        "array, whatever the indices and the alignment'); the launch refusal is for speed only "
        "('speed, not safety'), and there is no opt-in to the slow path for the ragged K an LLM "
        "layer or a test matrix has: the caller must pad the weights",
        "workaround": "pad K to a multiple of 4 on the host, or drop vec.load for scalar reads",
        "fixed": "LaunchContract(vec_alignment='any') runs such launches on the element path "
        "(the refusal names it; tests/sim/test_port19_sim.py, tests/gpu/test_vec_gpu.py); the "
        "default still refuses, for speed",
    },
}

# =============================================================================================
# BAD_ERRORS
# =============================================================================================

BAD_ERRORS: dict[str, dict[str, Any]] = {
    "tuple_index_uniformity_message": {
        "source": GEMV_TUPLE_LOOP,
        "kernel": "gemv_i8",
        "what": "the refusal of FALSE_REFUSALS tuple_index_in_range_loop calls line 22 (`acc = "
        "ss.warp.sum(acc)`, no branch) 'the branch at line 22' and line 21 (`acc += av[q] * xv[q]`, "
        "no branch in the source) 'the branch at line 21'; it never names the tuple index `av[q]` "
        "as the cause or says to mask it (`av[q & 3]`), the one-token fix. Its advice (move the call "
        "out of the branch, make the condition warp-uniform) does not apply: the collective is "
        "already after the loop, at the top level of the kernel",
        "fixed": "a uniformity refusal whose early exit is Numba's tuple-index IndexError (the "
        "switch's default) names the tuple index's line, the IndexError and the fixes (`t[q & 3]`, "
        "or the elements written out) (tests/ptx/test_port19_ptx.py)",
    },
}

# =============================================================================================
# DOC_GAPS
# =============================================================================================

DOC_GAPS: dict[str, dict[str, Any]] = {
    "vec_load_row_pitch": {
        "fixed": "the vec module's and vec.load's docstrings (docs/api.md) now say the launch "
        "refuses a data pointer or row pitch that is not a multiple of the run's bytes",
        "source": GEMV_I8_UNROLLED,
        "doc": "docs/api.md `simtsafe.vec` (the module docstring) and `vec.load`",
        "what": "api.md says vec.load 'reads element by element ... whatever the indices and the "
        "alignment' and never mentions that a launch whose input's data pointer or row pitch is not "
        "a multiple of the run's bytes is refused with ArgumentTypeError (only docs/cooperation.md "
        "'Vector access' says so): an int8 GEMV with K = 130 passes check_kernel and fails at its "
        "first launch",
    },
    "tuple_index_range_loop": {
        "fixed": "docs/safety.md's masked-position paragraph names the range-loop variable (a "
        "constant k no larger than the tuple), and the refusal names the tuple index",
        "source": GEMV_TUPLE_LOOP,
        "doc": "docs/safety.md 'Uniformity' (a tuple indexed at a bounded position)",
        "what": "the list of bounded tuple indices has no `for q in range(len(t))` loop variable, the "
        "commonest way to index a tuple, nor says what happens to it: accepted before a block.sum "
        "at the top level (PROBE below, checked in tests/ptx/test_port19_ptx.py) and refused "
        "before a warp.sum when inside a thread-dependent loop (gemv_i8)",
    },
}

TUPLE_LOOP_ACCEPTED = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def dot4b(y: DisjointSlice[np.int32, PerBlock], a: In[np.int8]) -> None:
    i = thread.index_1d()
    av = ss.vec.load(a, i.index, 4)
    acc = np.int32(0)
    for q in range(4):
        acc += np.int32(av[q])
    acc = ss.block.sum(acc)
    y[thread.block_leader()] = acc
"""

TUPLE_LOOP_MASKED = GEMV_TUPLE_LOOP.replace(
    "av[q]) * np.int32(xv[q])", "av[q & 3]) * np.int32(xv[q & 3])"
)

# =============================================================================================
# numpy checks (simulator): each launches the port on small data (sizes not multiples of the
# block) and compares with numpy; ``_clean`` replays it under ``simtsafe.sim.check``.
# =============================================================================================

#: the last sim.check reports that were not clean (name -> text)
UNCLEAN: dict[str, str] = {}


def _clean(prepared: Any, *args: Any) -> bool:
    """``sim.check`` of one prepared launch with host copies of ``args``: no finding."""
    return replay_clean(prepared, args, UNCLEAN)


def _check_transpose(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    a = rng.standard_normal((37, 70)).astype(np.float32)
    o = _dev(np.full((70, 37), np.nan, np.float32))
    p = m.transpose.prepare(grid=(ss.cover(37, 32), ss.cover(70, 32)), block=(32, 8))
    p(o, _dev(a))
    return bool(np.array_equal(_host(o), a.T))


def _check_stencil5(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    u = rng.standard_normal((19, 45)).astype(np.float32)
    o = _dev(np.full_like(u, np.nan))
    p = m.stencil5.prepare(grid=(ss.cover(45, 32), ss.cover(19, 8)), block=(32, 8))
    p(o, _dev(u))
    z = np.pad(u, 1)
    ref = z[:-2, 1:-1] + z[2:, 1:-1] + z[1:-1, :-2] + z[1:-1, 2:] - 4 * u
    return bool(np.allclose(_host(o), ref, atol=1e-5))


def _check_topk4(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    ok = True
    for cols in (4, 37, 100):
        x = rng.standard_normal((5, cols)).astype(np.float32)
        x[1, 3] = x[1, 35 % cols] = 9.0  # a tie: the smaller column first
        v = _dev(np.full((5, 4), np.nan, np.float32))
        i = _dev(np.full((5, 4), -1, np.int32))
        p = m.topk4.prepare(grid=ss.cover(5, 2), block=64)
        p(v, i, _dev(x))
        ref_i = np.argsort(-x, axis=1, kind="stable")[:, :4]
        ok = ok and np.array_equal(_host(i), ref_i)
        ok = ok and np.array_equal(_host(v), np.take_along_axis(x, ref_i, 1))
    return bool(ok)


def _csr(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    rows, cols = 9, 80
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
    y = _dev(np.full(a.shape[0], np.nan, np.float32))
    p = m.csr_spmv.prepare(grid=ss.cover(a.shape[0], 4), block=128)
    p(y, _dev(indptr), _dev(idx), _dev(data), _dev(x))
    return bool(np.allclose(_host(y), a.astype(np.float64) @ x, atol=1e-4))


def _check_bitonic(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 1024 + 300  # the second block's segment is partial (padded with +inf)
    k = rng.standard_normal(n).astype(np.float32)
    o = _dev(np.full(n, np.nan, np.float32))
    p = m.bitonic1024.prepare(grid=2, block=128)
    p(o, _dev(k))
    h = _host(o)
    return bool(
        np.array_equal(h[:1024], np.sort(k[:1024])) and np.array_equal(h[1024:], np.sort(k[1024:]))
    )


def _check_ln_bwd(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (1, 50, 150):
        x = rng.standard_normal((4, cols)).astype(np.float32)
        dy = rng.standard_normal((4, cols)).astype(np.float32)
        g = rng.standard_normal(cols).astype(np.float32)
        mu = x.mean(1).astype(np.float32)
        rs = (1 / np.sqrt(x.var(1) + 1e-5)).astype(np.float32)
        dx = _dev(np.full_like(x, np.nan))
        p = m.ln_bwd.prepare(grid=4, block=64)
        p(dx, _dev(dy), _dev(x), _dev(g), _dev(mu), _dev(rs))
        x64 = x.astype(np.float64)
        xh = (x64 - mu[:, None]) * rs[:, None]
        gg = dy * g
        ref = rs[:, None] * (gg - gg.mean(1, keepdims=True) - xh * (gg * xh).mean(1, keepdims=True))
        ok = ok and np.allclose(_host(dx), ref, atol=1e-3)
    return bool(ok)


def _check_xent(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (3, 150):
        x = (rng.standard_normal((5, cols)) * 4).astype(np.float32)
        lab = rng.integers(0, cols, 5).astype(np.int32)
        loss = _dev(np.full(5, np.nan, np.float32))
        p = m.xent.prepare(grid=5, block=64)
        p(loss, _dev(x), _dev(lab))
        x64 = x.astype(np.float64)
        mx = x64.max(1)
        ref = np.log(np.exp(x64 - mx[:, None]).sum(1)) + mx - x64[np.arange(5), lab]
        ok = ok and np.allclose(_host(loss), ref, atol=1e-4)
    return bool(ok)


def _gemv_check(kernel: Any) -> bool:
    import simtsafe as ss

    rng = np.random.default_rng(19)
    ok = True
    for cols in (4, 64, 132):  # rows of whole 4-byte runs (DOC_GAPS vec_load_row_pitch)
        a = rng.integers(-128, 128, (6, cols)).astype(np.int8)
        x = rng.integers(-128, 128, cols).astype(np.int8)
        y = _dev(np.full(6, -1, np.int32))
        p = kernel.prepare(grid=ss.cover(6, 4), block=128)
        p(y, _dev(a), _dev(x))
        ok = ok and np.array_equal(_host(y), a.astype(np.int32) @ x.astype(np.int32))
    return bool(ok)


def _check_gemv_i8(m: ModuleType, rng: np.random.Generator) -> bool:
    return _gemv_check(m.gemv_i8)


def _check_digit_hist(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 1100  # 3 blocks of 512 keys, the last partial
    keys = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    ok = True
    for shift in (0, 8, 24):
        h = _dev(np.full((3, 256), 7, np.uint32))
        p = m.digit_hist.prepare(grid=3, block=128)
        p(h, _dev(keys), np.uint32(shift))
        d = (keys >> shift) & 255
        ref = np.stack([np.bincount(d[b * 512 : (b + 1) * 512], minlength=256) for b in range(3)])
        ok = ok and np.array_equal(_host(h), ref.astype(np.uint32))
    return bool(ok)


def _check_nonzero(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    x[rng.random(n) < 0.7] = 0
    out = _dev(np.full(n, -1, np.int32))
    c = ss.counter()
    p = m.nonzero.prepare(grid=2, block=64)  # fewer threads than elements: a grid-stride loop
    p(out, c, _dev(x))
    k = ss.appended(out, c)
    return bool(np.array_equal(np.sort(_host(out)[:k]), np.flatnonzero(x)))


def _gauss_ref(img: np.ndarray, f: np.ndarray) -> np.ndarray:
    g = (
        np.float32(0.299) * img["r"].astype(np.float32)
        + np.float32(0.587) * img["g"].astype(np.float32)
        + np.float32(0.114) * img["b"].astype(np.float32)
    )
    z = np.pad(g, 1, mode="edge")
    h, w = g.shape
    return sum(f[r, c] * z[r : r + h, c : c + w] for r in range(3) for c in range(3))


def _check_gray_blur(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    h, w = 11, 21
    img = np.zeros((h, w), m.RGB)
    for f in "rgb":
        img[f] = rng.integers(0, 256, (h, w))
    o = _dev(np.full((h, w), np.nan, np.float32))
    p = m.gray_blur.prepare(grid=(ss.cover(w, 16), ss.cover(h, 8)), block=(16, 8))
    p(o, _dev(img))
    return bool(np.allclose(_host(o), _gauss_ref(img, m.tables.GAUSS3), atol=1e-3))


def _check_row_argmax(m: ModuleType, rng: np.random.Generator) -> bool:
    ok = True
    for cols in (1, 64, 150):
        x = rng.standard_normal((5, cols)).astype(np.float32)
        if cols > 100:
            x[1, 7] = x[1, 120] = 9.0  # a tie across chunks: the first index wins
        b = _dev(np.full(5, -1, np.int64))
        p = m.row_argmax.prepare(grid=5, block=64)
        p(b, _dev(x))
        ok = ok and np.array_equal(_host(b), np.argmax(x, 1))
    return bool(ok)


def _check_gamma_lut(m: ModuleType, rng: np.random.Generator) -> bool:
    n = 300
    img = rng.integers(0, 256, n).astype(np.uint8)
    o = _dev(np.zeros(n, np.uint8))
    p = m.gamma_lut.prepare(grid=2, block=64)
    p(o, _dev(img))
    return bool(np.array_equal(_host(o), m.tables.LUT[img]))


def _check_pick_channel(m: ModuleType, rng: np.random.Generator) -> bool:
    import simtsafe as ss

    n = 100
    img = rng.standard_normal((n, 4)).astype(np.float32)
    sel = rng.integers(-8, 8, n).astype(np.int32)
    o = _dev(np.full(n, np.nan, np.float32))
    p = m.pick_channel.prepare(grid=ss.cover(n, 64), block=64)
    p(o, _dev(img), _dev(sel))
    ref = img[np.arange(n), sel & 3] - img.mean(1)
    return bool(np.allclose(_host(o), ref, atol=1e-6))


CHECKS: dict[str, Callable[[ModuleType, np.random.Generator], bool]] = {
    "tiled_transpose_pad": _check_transpose,
    "stencil5_halo": _check_stencil5,
    "warp_topk4": _check_topk4,
    "csr_spmv_warp": _check_spmv,
    "bitonic_sort_1024": _check_bitonic,
    "layernorm_backward": _check_ln_bwd,
    "cross_entropy_rows": _check_xent,
    "gemv_int8_unrolled": _check_gemv_i8,
    "radix_digit_hist": _check_digit_hist,
    "compact_nonzero": _check_nonzero,
    "gray_gauss3_const": _check_gray_blur,
    "row_argmax_chunks": _check_row_argmax,
    "gamma_lut_module": _check_gamma_lut,
    "pick_channel_masked_tuple": _check_pick_channel,
    "gemv_int8_tuple_loop": _check_gemv_i8,
}

# =============================================================================================
# Runner
# =============================================================================================

_CORPUS = Corpus(EXTRA_HEADER, ACCEPTED, CHECKS, FALSE_REFUSALS, BAD_ERRORS, DOC_GAPS, seed=19)
load = _CORPUS.load
run_case = _CORPUS.run_case
main = _CORPUS.main


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
