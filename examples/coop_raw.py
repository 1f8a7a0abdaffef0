# pyright: basic
# (raw Numba kernels are untyped, Tier 3; mypy --strict checks this file with them ignored)
"""Raw ``numba.cuda.jit`` twins of the Tier-1 cooperative examples (Tier 3: nothing checked).

Each kernel here is the schedule its Tier-1 example (``reduce_sum.py``,
``scan.py``, ``transpose.py``, ``sgemm.py``, ``histogram.py``) mirrors one to
one: the same global loads and stores, the same shared-memory layout, the
same barriers, the shuffles where the safe version's collectives have them.
They are written the way one writes them without simtsafe, as fast as plain
Numba allows, and serve as the speed reference of ``benchmarks/coop.py``.

* ``reduce_sum_raw`` -- grid-stride loads (four independent accumulators, so
  four loads per thread are in flight), an all-reduce of the block (xor
  butterflies within each warp, the warp totals through a 32-slot shared
  buffer, one barrier, each warp reduces the warp totals), one partial per
  block; a second launch of one block reduces the partials. Deterministic for
  a fixed grid. ``reduce_sum_atomic_raw``: one ``atomicAdd`` per block instead
  of the second launch (float sums in an order that varies run to run).
* ``tile_totals_raw`` / ``tile_scan_raw`` -- inclusive scan, reduce-then-scan:
  tile totals, an inclusive scan of the totals (the same two kernels,
  recursively), then each tile again: coalesced loads into a shared tile,
  each thread's ``ITEMS`` consecutive elements scanned in registers, one
  exclusive block scan of the thread totals, results through a second shared
  tile back to coalesced stores (CUB's block load/store transpose).
* ``transpose_raw`` -- 32x32 shared tile, 32x8 threads, the tile's columns
  XOR-swizzled (element ``(r, c)`` holds input column ``c ^ r``) so both the
  fill and the transposed read are free of bank conflicts without a padding
  column; the full-tile path has no per-element bounds check.
  ``transpose_padded_raw`` is the classic 32x33 padded tile, for comparison.
* ``sgemm_raw`` -- 128x128 block tile, BK = 8, 16x16 threads, each computing
  an 8x8 register micro-tile (rows ``ty + 16 r``, columns ``tx + 16 c``); per
  K-step: store the slices prefetched during the previous step into the two
  shared tiles (all 256 threads, 4 elements each), barrier, issue the next
  slices' global loads into registers, 512 FMAs per thread, barrier; compiled
  with launch bounds for two blocks per SM.
* ``histogram_raw`` -- 256 bins privatized per block in shared memory
  (atomics there), input read four bytes at a time (a ``uint32`` view), one
  global atomic per non-zero bin and block.

Block sizes are multiples of 32 (the warp shuffles use the full mask).
``run()`` checks every kernel against numpy; Numba's simulator has no warp
shuffles, so there the reduction and scan twins are skipped (tests/sim runs
them with a shuffle shim).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

FULL_MASK = 0xFFFFFFFF
float32, int32, uint32, uint64 = np.float32, np.int32, np.uint32, np.uint64

# ------------------------------------------------------------------ shapes (mirrored by the examples)

#: reduce_sum: threads per block; blocks per SM of the first pass.
REDUCE_BLOCK = 256
REDUCE_BLOCKS_PER_SM = 8
#: scan: threads per block, consecutive elements per thread (odd: no bank conflicts), tile.
SCAN_BLOCK = 256
SCAN_ITEMS = 9
SCAN_TILE = SCAN_BLOCK * SCAN_ITEMS
#: transpose: the tile edge, and the rows of threads (block (32, 8)).
TDIM = 32
TROWS = 8
TPAD = TDIM + 1  # the classic padded tile's row length
#: sgemm: block tile, K step, micro-tile, threads per block as (16, 16).
BM = 128
BN = 128
BK = 8
TM = 8
TN = 8
TX = BN // TN  # 16
TY = BM // TM  # 16
FILL = BM * BK // (TX * TY)  # 4: slice elements a thread loads per K step
A_ROWS = BM // 2  # the (128, 8) A slice stored as (64, 16)
A_COLS = 2 * BK
B_ROWS = 2 * BK  # the (8, 128) B slice stored as (16, 64)
B_COLS = BN // 2
#: histogram: bins, threads per block.
NBINS = 256
HIST_BLOCK = 256

# ------------------------------------------------------------------ block collectives, by hand


def _linear_tid() -> Any:
    return cuda.threadIdx.x + cuda.blockDim.x * (
        cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z
    )


_tid = cuda.jit(device=True, inline=True)(_linear_tid)


def _make_block_sum(dtype: Any) -> tuple[Any, Any]:
    zero = dtype(0)

    @cuda.jit(device=True, inline=True)
    def warp_allsum(v):  # type: ignore[no-untyped-def]
        """Sum over the warp, in every lane (xor butterfly: five shuffles)."""
        off = 16
        while off > 0:
            v = dtype(v + cuda.shfl_xor_sync(FULL_MASK, v, off))
            off >>= 1
        return v

    @cuda.jit(device=True, inline=True)
    def block_sum(v):  # type: ignore[no-untyped-def]
        """Sum over the block, in every thread: one barrier, each warp reduces the warp totals."""
        buf = cuda.shared.array(32, dtype)
        tid = _tid()
        nwarps = (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z + 31) >> 5
        lane = tid & 31
        v = warp_allsum(dtype(v))
        if lane == 0:
            buf[tid >> 5] = v
        cuda.syncthreads()
        t = buf[lane] if lane < nwarps else zero
        return warp_allsum(t)

    return warp_allsum, block_sum


warp_allsum_f32, block_sum_f32 = _make_block_sum(float32)
warp_allsum_i32, block_sum_i32 = _make_block_sum(int32)

_SCAN_WARPS = SCAN_BLOCK // 32


@cuda.jit(device=True, inline=True)
def block_exscan_i32(v):  # type: ignore[no-untyped-def]
    """Exclusive prefix sum over the block (SCAN_BLOCK threads) in linear thread order.

    Warp inclusive scans (``shfl_up``), the warp totals through shared
    memory, one barrier; each thread adds the totals of the warps before its
    own (an unrolled, predicated loop over the 8 warps).
    """
    buf = cuda.shared.array(32, int32)
    tid = _tid()
    lane = tid & 31
    warp = tid >> 5
    v = int32(v)
    s = v
    off = 1
    while off < 32:
        y = cuda.shfl_up_sync(FULL_MASK, s, off)
        if lane >= off:
            s += y
        off <<= 1
    if lane == 31:
        buf[warp] = s
    cuda.syncthreads()
    pre = int32(0)
    for w in range(_SCAN_WARPS):
        if w < warp:
            pre += buf[w]
    return int32(pre + s - v)


# ------------------------------------------------------------------ reduction


@cuda.jit
def reduce_sum_raw(partial, x):  # type: ignore[no-untyped-def]
    """partial[b] = sum of the elements this block's threads visit (grid-stride)."""
    n = x.size
    i = cuda.grid(1)
    p = cuda.gridsize(1)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    k = i
    while k + 3 * p < n:
        a0 += x[k]
        a1 += x[k + p]
        a2 += x[k + 2 * p]
        a3 += x[k + 3 * p]
        k += 4 * p
    while k < n:
        a0 += x[k]
        k += p
    total = block_sum_f32((a0 + a1) + (a2 + a3))
    if cuda.threadIdx.x == 0 and cuda.blockIdx.x < partial.size:
        partial[cuda.blockIdx.x] = total


@cuda.jit
def reduce_sum_atomic_raw(out, x):  # type: ignore[no-untyped-def]
    """out[0] += this block's sum (one atomic per block); out must be zeroed first."""
    n = x.size
    i = cuda.grid(1)
    p = cuda.gridsize(1)
    a0 = float32(0.0)
    a1 = float32(0.0)
    a2 = float32(0.0)
    a3 = float32(0.0)
    k = i
    while k + 3 * p < n:
        a0 += x[k]
        a1 += x[k + p]
        a2 += x[k + 2 * p]
        a3 += x[k + 3 * p]
        k += 4 * p
    while k < n:
        a0 += x[k]
        k += p
    total = block_sum_f32((a0 + a1) + (a2 + a3))
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, total)


def make_reduce_sum(x: Any, partial: Any, result: Any) -> Callable[[], None]:
    """Two launches: ``partial`` (one float per block) <- x, then ``result[0]`` <- partial."""
    grid = partial.size

    def launch() -> None:
        # Configured per call: the simulator's kernel[grid, block] returns the kernel itself.
        reduce_sum_raw[grid, REDUCE_BLOCK](partial, x)
        reduce_sum_raw[1, REDUCE_BLOCK](result, partial)

    return launch


# ------------------------------------------------------------------ scan


@cuda.jit
def tile_totals_raw(totals, x):  # type: ignore[no-untyped-def]
    """totals[b] = sum of tile b (SCAN_TILE consecutive elements of x)."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n = x.size
    base = b * SCAN_TILE
    s = int32(0)
    for k in range(SCAN_ITEMS):
        q = base + k * SCAN_BLOCK + t
        if q < n:
            s += x[q]
    s = block_sum_i32(s)
    if t == 0 and b < totals.size:
        totals[b] = s


@cuda.jit
def tile_scan_raw(out, x, prefix):  # type: ignore[no-untyped-def]
    """out = inclusive scan of tile b of x, plus prefix[b - 1] (the totals of tiles before b)."""
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    n = x.size
    base = b * SCAN_TILE
    a = cuda.shared.array(SCAN_TILE, int32)
    bt = cuda.shared.array((SCAN_BLOCK, SCAN_ITEMS), int32)
    for e in range(t, SCAN_TILE, SCAN_BLOCK):  # coalesced: the fill the safe block_stride does
        q = base + e
        a[e] = x[q] if q < n else int32(0)
    cuda.syncthreads()
    tot = int32(0)
    for j in range(SCAN_ITEMS):  # this thread's consecutive elements
        tot += a[t * SCAN_ITEMS + j]
    run = block_exscan_i32(tot)
    if b > 0:
        run += prefix[b - 1]
    for j in range(SCAN_ITEMS):
        run += a[t * SCAN_ITEMS + j]
        bt[t, j] = run
    cuda.syncthreads()
    for r in range(SCAN_ITEMS):  # coalesced stores
        pos = r * SCAN_BLOCK + t
        q = base + pos
        if q < n:
            out[q] = bt[pos // SCAN_ITEMS, pos % SCAN_ITEMS]


def _configured(kernel: Any, block: Any) -> Callable[[int], Callable[..., Any]]:
    """grid -> a launcher of ``kernel[grid, block]``, configured at each call (the
    simulator's ``kernel[grid, block]`` returns the kernel itself, so it cannot be kept)."""

    def at(grid: int) -> Callable[..., Any]:
        return lambda *args: kernel[grid, block](*args)

    return at


def make_scan(
    x: Any,
    out: Any,
    totals_kernel: Callable[[int], Callable[..., Any]] | None = None,
    scan_kernel: Callable[[int], Callable[..., Any]] | None = None,
) -> Callable[[], None]:
    """The launches of an inclusive scan of ``x`` into ``out``, temporaries allocated once.

    ``totals_kernel(grid)`` / ``scan_kernel(grid)`` return launchable
    kernels (default: the raw twins); the safe example passes its prepared
    launches, so both follow one plan. Levels: ``n`` elements -> ``ceil(n /
    SCAN_TILE)`` tile totals -> ... -> one tile.
    """
    tk = totals_kernel or _configured(tile_totals_raw, SCAN_BLOCK)
    sk = scan_kernel or _configured(tile_scan_raw, SCAN_BLOCK)
    steps: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def plan(dst: Any, src: Any) -> None:
        blocks = max(1, math.ceil(src.size / SCAN_TILE))
        if blocks == 1:
            steps.append((sk(1), (dst, src, cuda.device_array(1, np.int32))))
            return
        totals = cuda.device_array(blocks, np.int32)
        prefix = cuda.device_array(blocks, np.int32)
        steps.append((tk(blocks), (totals, src)))
        plan(prefix, totals)
        steps.append((sk(blocks), (dst, src, prefix)))

    plan(out, x)

    def launch() -> None:
        for kernel, args in steps:
            kernel(*args)

    return launch


# ------------------------------------------------------------------ transpose


@cuda.jit
def transpose_raw(out, a):  # type: ignore[no-untyped-def]
    """out = a.T; block (bx, by) writes output tile (by, bx) from input tile (bx, by)."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    in_r0 = cuda.blockIdx.x * TDIM
    in_c0 = cuda.blockIdx.y * TDIM
    rows = a.shape[0]
    cols = a.shape[1]
    tile = cuda.shared.array((TDIM, TDIM), float32)
    full_in = in_r0 + TDIM <= rows and in_c0 + TDIM <= cols
    for r in range(ty, TDIM, TROWS):
        for c in range(tx, TDIM, TDIM):
            gr = in_r0 + r
            gc = in_c0 + (c ^ r)  # swizzle: element (r, c) holds input column c ^ r
            if full_in or (gr < rows and gc < cols):
                tile[r, c] = a[gr, gc]
    cuda.syncthreads()
    out_r0 = in_c0
    out_c0 = in_r0
    full_out = out_r0 + TDIM <= out.shape[0] and out_c0 + TDIM <= out.shape[1]
    for k in range(TDIM // TROWS):
        i = ty + TROWS * k
        v = tile[tx, i ^ tx]  # input (in_r0 + tx, in_c0 + i)
        if full_out or (out_r0 + i < out.shape[0] and out_c0 + tx < out.shape[1]):
            out[out_r0 + i, out_c0 + tx] = v


@cuda.jit
def transpose_padded_raw(out, a):  # type: ignore[no-untyped-def]
    """The classic version: a 32x33 tile (one padding column), per-element guards."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    in_r0 = cuda.blockIdx.x * TDIM
    in_c0 = cuda.blockIdx.y * TDIM
    tile = cuda.shared.array((TDIM, TPAD), float32)
    for k in range(TDIM // TROWS):
        r = ty + TROWS * k
        if in_r0 + r < a.shape[0] and in_c0 + tx < a.shape[1]:
            tile[r, tx] = a[in_r0 + r, in_c0 + tx]
    cuda.syncthreads()
    for k in range(TDIM // TROWS):
        i = ty + TROWS * k
        if in_c0 + i < out.shape[0] and in_r0 + tx < out.shape[1]:
            out[in_c0 + i, in_r0 + tx] = tile[tx, i]


def transpose_grid(out_shape: tuple[int, int]) -> tuple[int, int]:
    """Grid over the output: (column tiles, row tiles)."""
    return (math.ceil(out_shape[1] / TDIM), math.ceil(out_shape[0] / TDIM))


# ------------------------------------------------------------------ sgemm


def _sgemm_raw(c, a, b):  # type: ignore[no-untyped-def]
    """c = a @ b; block (bx, by) computes c[by*128:(by+1)*128, bx*128:(bx+1)*128].

    The schedule of examples/sgemm.py: slices of 8 along K prefetched into
    registers one step ahead, stored by all 256 threads into a (64, 16) A tile
    and a (16, 64) B tile, 8 x 8 outputs per thread; unsigned shared indices
    (no negative-index fix-up per load).
    """
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    a_s = cuda.shared.array((A_ROWS, A_COLS), float32)
    b_s = cuda.shared.array((B_ROWS, B_COLS), float32)
    acc = cuda.local.array((TM, TN), float32)
    af = cuda.local.array(TM, float32)
    bf = cuda.local.array(TN, float32)
    pa = cuda.local.array(FILL, float32)
    pb = cuda.local.array(FILL, float32)
    for r in range(TM):
        for cc in range(TN):
            acc[r, cc] = float32(0.0)
    ar = row0 + 2 * ty + tx // BK
    ak = tx % BK
    bk = ty // 2
    bc = col0 + BN // 2 * (ty % 2) + tx
    inside = row0 + BM <= m and col0 + BN <= n
    for k0 in range(0, kdim + BK, BK):
        if k0 > 0:
            for i in range(FILL):
                a_s[ty + 16 * i, tx] = pa[i]
            for i in range(FILL):
                b_s[ty, tx + 16 * i] = pb[i]
        cuda.syncthreads()
        if k0 < kdim:
            if inside and k0 + BK <= kdim:
                for i in range(FILL):
                    pa[i] = a[ar + 32 * i, k0 + ak]
                for i in range(FILL):
                    pb[i] = b[k0 + bk, bc + 16 * i]
            else:
                for i in range(FILL):
                    gr = ar + 32 * i
                    gk = k0 + ak
                    pa[i] = a[gr, gk] if gr < m and gk < kdim else float32(0.0)
                for i in range(FILL):
                    gk = k0 + bk
                    gc = bc + 16 * i
                    pb[i] = b[gk, gc] if gk < kdim and gc < n else float32(0.0)
        if k0 > 0:
            uty = uint32(ty)
            utx = uint32(tx)
            for k in range(BK):
                kk = uint32(k)
                for r in range(TM):
                    # (numpy unsigned ints as indices: fine for Numba, outside the stubs' int)
                    af[r] = a_s[uty // 2 + uint32(8 * r), uint32(BK) * (uty % 2) + kk]  # type: ignore[index]
                for cc in range(TN):
                    bf[cc] = b_s[uint32(2) * kk + uint32(cc // 4), utx + uint32(16 * (cc % 4))]  # type: ignore[index]
                for r in range(TM):
                    for cc in range(TN):
                        acc[r, cc] += af[r] * bf[cc]
        cuda.syncthreads()
    full = row0 + BM <= m and col0 + BN <= n
    for r in range(TM):
        gr = row0 + ty + TY * r
        for cc in range(TN):
            gc = col0 + tx + TX * cc
            if full or (gr < m and gc < n):
                c[gr, gc] = acc[r, cc]


# Two blocks per SM (128 registers); the simulator takes no launch bounds.
sgemm_raw = (
    cuda.jit(_sgemm_raw)
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"
    else cuda.jit(launch_bounds=(TX * TY, 2))(_sgemm_raw)
)


def sgemm_grid(m: int, n: int) -> tuple[int, int]:
    return (math.ceil(n / BN), math.ceil(m / BM))


# ------------------------------------------------------------------ histogram


@cuda.jit
def histogram_raw(counts, words, data):  # type: ignore[no-untyped-def]
    """counts[v] += occurrences of byte v in data; ``words`` is data viewed as uint32.

    counts must be zeroed first. Bytes past ``4 * words.size`` (the tail)
    are read from ``data``.
    """
    tid = cuda.threadIdx.x
    h = cuda.shared.array(NBINS, uint32)
    for i in range(tid, NBINS, HIST_BLOCK):
        h[i] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    p = cuda.gridsize(1)
    nw = words.size
    k = i
    while k + p < nw:
        w0 = words[k]
        w1 = words[k + p]
        cuda.atomic.add(h, w0 & 0xFF, 1)
        cuda.atomic.add(h, (w0 >> 8) & 0xFF, 1)
        cuda.atomic.add(h, (w0 >> 16) & 0xFF, 1)
        cuda.atomic.add(h, w0 >> 24, 1)
        cuda.atomic.add(h, w1 & 0xFF, 1)
        cuda.atomic.add(h, (w1 >> 8) & 0xFF, 1)
        cuda.atomic.add(h, (w1 >> 16) & 0xFF, 1)
        cuda.atomic.add(h, w1 >> 24, 1)
        k += 2 * p
    while k < nw:
        w0 = words[k]
        cuda.atomic.add(h, w0 & 0xFF, 1)
        cuda.atomic.add(h, (w0 >> 8) & 0xFF, 1)
        cuda.atomic.add(h, (w0 >> 16) & 0xFF, 1)
        cuda.atomic.add(h, w0 >> 24, 1)
        k += p
    t = 4 * nw + i
    if t < data.size:
        cuda.atomic.add(h, data[t], 1)
    cuda.syncthreads()
    for j in range(tid, NBINS, HIST_BLOCK):
        v = h[j]
        if v != 0:
            cuda.atomic.add(counts, j, v)


def as_words(d_data: Any) -> Any:
    """The whole 4-byte words of a uint8 device array, as a uint32 view (no copy)."""
    nw = d_data.size // 4
    return d_data[: 4 * nw].view(np.uint32)


# ------------------------------------------------------------------ checks


def check_reduce_sum(n: int, blocks: int) -> bool:
    """Both reductions (two passes; one atomic per block) of n random floats vs numpy."""
    x = np.random.default_rng(21).random(n, dtype=np.float32)
    d_x = cuda.to_device(x)
    partial = cuda.to_device(np.full(blocks, np.nan, np.float32))
    result = cuda.to_device(np.full(1, np.nan, np.float32))
    make_reduce_sum(d_x, partial, result)()
    expected = x.astype(np.float64).sum()
    ok = bool(np.isclose(result.copy_to_host()[0], expected, rtol=1e-5))
    acc = cuda.to_device(np.zeros(1, np.float32))
    reduce_sum_atomic_raw[blocks, REDUCE_BLOCK](acc, d_x)
    return ok and bool(np.isclose(acc.copy_to_host()[0], expected, rtol=1e-5))


def check_scan(n: int) -> bool:
    """Inclusive scan of n random small ints vs numpy's cumsum (exact)."""
    x = np.random.default_rng(22).integers(0, 4, n, dtype=np.int32)
    d_out = cuda.to_device(np.full(n, -1, np.int32))
    make_scan(cuda.to_device(x), d_out)()
    return bool(np.array_equal(d_out.copy_to_host(), np.cumsum(x, dtype=np.int32)))


def check_transpose(rows: int, cols: int) -> bool:
    """Both transposes (swizzled, padded) of a random rows x cols matrix vs numpy (exact)."""
    a = np.random.default_rng(23).standard_normal((rows, cols)).astype(np.float32)
    d_a = cuda.to_device(a)
    ok = True
    for kernel in (transpose_raw, transpose_padded_raw):
        d_out = cuda.to_device(np.full((cols, rows), np.nan, np.float32))
        kernel[transpose_grid((cols, rows)), (TDIM, TROWS)](d_out, d_a)
        ok = ok and bool(np.array_equal(d_out.copy_to_host(), a.T))
    return ok


def check_sgemm(m: int, k: int, n: int) -> bool:
    """c = a @ b for random matrices vs numpy (float64)."""
    rng = np.random.default_rng(24)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    sgemm_raw[sgemm_grid(m, n), (TX, TY)](d_c, cuda.to_device(a), cuda.to_device(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-3))


def check_histogram(n: int, blocks: int) -> bool:
    """Histogram of n random bytes vs numpy's bincount (exact)."""
    data = np.random.default_rng(25).integers(0, 256, n, dtype=np.uint8)
    d_data = cuda.to_device(data)
    d_counts = cuda.to_device(np.zeros(NBINS, np.uint32))
    histogram_raw[blocks, HIST_BLOCK](d_counts, as_words(d_data), d_data)
    return bool(np.array_equal(d_counts.copy_to_host(), np.bincount(data, minlength=NBINS)))


def run(
    n_reduce: int = 1_000_003,
    n_scan: int = 1_000_003,
    rows: int = 1_001,
    cols: int = 777,
    m: int = 300,
    k: int = 200,
    n: int = 250,
    n_hist: int = 1_000_003,
    blocks: int = 32,
) -> bool:
    """Run every raw twin on random data and compare with numpy.

    ``blocks``: the grid of the reduction's first pass and of the histogram.
    On Numba's simulator (no warp shuffles) the reduction and the scan are
    skipped; tests/sim/test_coop_raw_sim.py runs them there with a shuffle shim.
    """
    import simtsafe

    checks: dict[str, Callable[[], bool]] = {
        "transpose": lambda: check_transpose(rows, cols),
        "sgemm": lambda: check_sgemm(m, k, n),
        "histogram": lambda: check_histogram(n_hist, blocks),
    }
    if not simtsafe.SIMULATOR:
        checks["reduce_sum"] = lambda: check_reduce_sum(n_reduce, blocks)
        checks["scan"] = lambda: check_scan(n_scan)
    results = {name: check() for name, check in checks.items()}
    for name, ok in results.items():
        if not ok:
            print(f"  coop_raw: {name} DOES NOT MATCH numpy")
    return all(results.values())


if __name__ == "__main__":
    print("raw cooperative twins match numpy:", run())
