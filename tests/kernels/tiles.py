"""Kernels for the shared-tile, output-tile and local-array tests (sim, PTX, GPU).

Each safe kernel has a raw ``numba.cuda.jit`` twin with the same schedule
(the PTX tests compare them). Barriers are ``simtsafe.block.sync()``; the
phase discipline of every tile below is checked at decoration (fill through
witnesses, barrier, read).

Local arrays are reached through the private intrinsic (what the decorator
rewrites ``cuda.local.array`` outside unsafe regions to) from plain
``numba.cuda.jit`` kernels, with the simulator twin on the simulator.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, In, In2D, PerBlock, thread
from simtsafe.lowering import SIMULATOR

if SIMULATOR:
    from simtsafe.lowering._tiles_sim import builtins as _tile_builtins
else:
    from simtsafe.lowering._tiles import builtins as _tile_builtins  # type: ignore[assignment]

local_array = _tile_builtins(proven_domain=None)["__ss_local_array"]

BLOCK_1D = 128
TILE = 32
TILE_PADDED = 33  # the raw twin's padded row (simtsafe: pad=1)
ROWS = 8  # block (TILE, ROWS): each thread moves TILE // ROWS elements
PER_THREAD = 4  # == TILE // ROWS
TN = 4
TM = 2
LOCAL_N = 8
TRIPLE = 3 * BLOCK_1D  # a tile shape must be a constant, not an expression in the kernel


# ----------------------------------------------------------------------------- 1D tile


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK_1D, 1, 1)))
def reverse_in_block(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    """Each block reverses its chunk of ``a`` through a shared tile."""
    t = ss.shared.tile(BLOCK_1D, np.float32)
    w = thread.local_index()
    i = thread.index_1d()
    t[w] = a[i] if i.in_bounds(a) else np.float32(0)
    ss.block.sync()
    out[i] = t[BLOCK_1D - 1 - w.index]


@cuda.jit
def reverse_in_block_raw(out, a):  # type: ignore[no-untyped-def]
    t = cuda.shared.array(BLOCK_1D, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    t[tid] = a[i] if i < a.shape[0] else np.float32(0)
    cuda.syncthreads()
    if i < out.shape[0]:
        out[i] = t[BLOCK_1D - 1 - tid]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK_1D, 1, 1)))
def block_stride_1d(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    """A 1D tile three times the block, filled by block_stride, read shifted by one."""
    t = ss.shared.tile(TRIPLE, np.float32)
    base = cuda.blockIdx.x * (3 * BLOCK_1D)
    for w in thread.block_stride(t):
        j = base + w.index
        t[w] = a[j] if j < len(a) else np.float32(-1)
    ss.block.sync()
    o = thread.tile_1d(out, 3)
    for k in range(3):
        o[k] = t[3 * thread.local_index().index + k + 1]  # the last one reads past: 0


@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=1024, dynamic_shared=(0, 49152)))
def dynamic_reverse(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    """Like reverse_in_block over the launch's dynamic shared memory (any 1D block)."""
    t = ss.shared.dynamic_tile(np.float32)
    i = thread.index_1d()
    for w in thread.block_stride(t):
        t[w] = a[i] if i.in_bounds(a) else np.float32(0)
    ss.block.sync()
    out[i] = t[len(t) - 1 - thread.local_index().index]


# ----------------------------------------------------------------------------- 2D tiles


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TILE, ROWS, 1)))
def transpose(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    """out = a.T through a padded shared tile; block (32, 8), 4 elements per thread."""
    # pad=1: rows of 33 floats, so the column reads below hit 32 different banks.
    t = ss.shared.tile((TILE, TILE), np.float32, pad=1)
    r0 = cuda.blockIdx.x * TILE  # the input tile is the output tile transposed
    c0 = cuda.blockIdx.y * TILE
    for w in thread.block_stride(t):
        r = r0 + w.row
        c = c0 + w.col
        if r < a.shape[0] and c < a.shape[1]:
            t[w] = a[r, c]
    ss.block.sync()
    me = thread.local_index_2d()
    o = thread.tile_2d_strided(out, PER_THREAD, 1)
    for k in range(PER_THREAD):
        o[k, 0] = t[me.col, me.row + k * ROWS]


@cuda.jit
def transpose_raw(out, a):  # type: ignore[no-untyped-def]
    t = cuda.shared.array((TILE, TILE_PADDED), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r0 = cuda.blockIdx.x * TILE
    c0 = cuda.blockIdx.y * TILE
    for j in range(0, TILE, ROWS):
        r = r0 + ty + j
        c = c0 + tx
        if r < a.shape[0] and c < a.shape[1]:
            t[ty + j, tx] = a[r, c]
    cuda.syncthreads()
    for k in range(PER_THREAD):
        row = cuda.blockIdx.y * TILE + ty + k * ROWS
        col = cuda.blockIdx.x * TILE + tx
        if row < out.shape[0] and col < out.shape[1]:
            out[row, col] = t[tx, ty + k * ROWS]


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(TILE, TILE, 1)))
def transpose_one_each(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    """out = a.T with block (32, 32): one element per thread, local_index_2d fills."""
    t = ss.shared.tile((TILE, TILE), np.float32, pad=1)
    w = thread.local_index_2d()
    r = cuda.blockIdx.x * TILE + w.row
    c = cuda.blockIdx.y * TILE + w.col
    t[w] = a[r, c] if r < a.shape[0] and c < a.shape[1] else np.float32(0)
    ss.block.sync()
    o = thread.index_2d()
    out[o] = t[w.col, w.row]


@ss.kernel
def block_stride_2d_any_block(out: DisjointSlice[np.int64, PerBlock]) -> None:
    """Per block: the number of elements of a 2D tile that block_stride does not visit
    exactly once (0 expected, for every block shape, z included)."""
    t = ss.shared.tile((5, 7), np.int64)
    for w in thread.block_stride(t):
        t[w] = 0
    ss.block.sync()
    for w in thread.block_stride(t):
        t[w] = t[w] + 1  # a thread reads back its own element only
    ss.block.sync()
    bad = 0
    for k in range(35):
        if t[k // 7, k % 7] != 1:
            bad += 1
    out[thread.block_leader()] = bad


# ----------------------------------------------------------------------------- output tiles


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1)))
def scale_tile_1d(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    """Each thread writes TN consecutive elements (edge tiles clipped)."""
    o = thread.tile_1d(out, TN)
    g = thread.index_1d().index * TN
    for k in range(TN):
        j = g + k
        o[k] = a[j] * np.float32(2) if j < len(a) else np.float32(0)
    o[TN] = np.float32(-7)  # out of the tile: never written


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def fill_tile_2d(out: DisjointSlice2D[np.int32]) -> None:
    """Each thread writes its TM x TN tile with its own flat coordinates."""
    o = thread.tile_2d(out, TM, TN)
    w = thread.index_2d()
    for r in range(TM):
        for c in range(TN):
            o[r, c] = (w.row * TM + r) * 10000 + w.col * TN + c
    o[-1, 0] = -5  # negative local index: nothing


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def fill_tile_2d_strided(out: DisjointSlice2D[np.int32]) -> None:
    """Each thread writes its strided TM x TN sub-tile; value = owner's linear thread id + 1."""
    o = thread.tile_2d_strided(out, TM, TN)
    me = thread.local_index().index + 1
    for r in range(TM):
        for c in range(TN):
            o[r, c] = me
            o[r, c] = o[r, c] * 1  # reading its own element back


@ss.kernel
def fill_tile_2d_strided_unproven(out: DisjointSlice2D[np.int32]) -> None:
    """Without a contract: a launch with blockDim.z > 1 makes the tile invalid."""
    o = thread.tile_2d_strided(out, TM, TN)
    for r in range(TM):
        for c in range(TN):
            o[r, c] = 1


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8, 1)))
def store_tile_full(out: DisjointSlice2D[np.float32], v: np.float32) -> None:
    """The PTX probe for the one-check-per-tile claim: 8x8 stores per thread."""
    o = thread.tile_2d_strided(out, 8, 8)
    for r in range(8):
        for c in range(8):
            o[r, c] = v + np.float32(r * 8 + c)


@cuda.jit
def store_tile_full_raw(out, v):  # type: ignore[no-untyped-def]
    # The same stores with no check at all (correct only for full tiles).
    r0 = cuda.blockIdx.y * 8 * cuda.blockDim.y + cuda.threadIdx.y
    c0 = cuda.blockIdx.x * 8 * cuda.blockDim.x + cuda.threadIdx.x
    for r in range(8):
        for c in range(8):
            out[r0 + r * cuda.blockDim.y, c0 + c * cuda.blockDim.x] = v + np.float32(r * 8 + c)


# ----------------------------------------------------------------------------- local arrays


@cuda.jit
def local_sum_safe(out, a):  # type: ignore[no-untyped-def]
    """Static loops over a thread-private array: every index provably in range."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        buf = local_array(LOCAL_N, np.float32)
        for k in range(LOCAL_N):
            buf[k] = a[i] * np.float32(k)
        s = np.float32(0)
        for k in range(LOCAL_N):
            s += buf[k]
        out[i] = s


@cuda.jit
def local_sum_raw(out, a):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.shape[0]:
        buf = cuda.local.array(LOCAL_N, np.float32)
        for k in range(LOCAL_N):
            buf[k] = a[i] * np.float32(k)
        s = np.float32(0)
        for k in range(LOCAL_N):
            s += buf[k]
        out[i] = s


@cuda.jit
def local_2d_safe(out, a):  # type: ignore[no-untyped-def]
    """A 2D accumulator tile (as in a register-blocked GEMM)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        acc = local_array((TM, TN), np.float32)
        for r in range(TM):
            for c in range(TN):
                acc[r, c] = np.float32(0)
        for r in range(TM):
            for c in range(TN):
                acc[r, c] += a[i] * np.float32(r + c)
        s = np.float32(0)
        for r in range(TM):
            for c in range(TN):
                s += acc[r, c]
        out[i] = s


@cuda.jit
def local_2d_raw(out, a):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.shape[0]:
        acc = cuda.local.array((TM, TN), np.float32)
        for r in range(TM):
            for c in range(TN):
                acc[r, c] = np.float32(0)
        for r in range(TM):
            for c in range(TN):
                acc[r, c] += a[i] * np.float32(r + c)
        s = np.float32(0)
        for r in range(TM):
            for c in range(TN):
                s += acc[r, c]
        out[i] = s


# A thread-private array filled in one helper and read in another (the shape of a GEMM's
# fragments: sgemm_async's frags/fmas written with arrays instead of tuples). Each step a
# thread reads 8 values of a and 8 of b, as two runs of 4 each, into af and bf, and does
# the 64 products acc[r, c] += af[r] * bf[c]; its tile of 64 holds the sum over the steps.
HELPER_STEPS = 2
HELPER_FRAG = 8
HELPER_TILE = HELPER_FRAG * HELPER_FRAG


@ss.device
def local_frags(af, bf, a, b, step):  # type: ignore[no-untyped-def]
    """Step ``step``'s values: af[0:4], af[4:8] from a, bf[0:4], bf[4:8] from b."""
    x0 = ss.vec.load(a, 2 * step, 4)
    x1 = ss.vec.load(a, 2 * step + 1, 4)
    y0 = ss.vec.load(b, 2 * step, 4)
    y1 = ss.vec.load(b, 2 * step + 1, 4)
    for i in range(4):
        af[i] = x0[i]
        af[4 + i] = x1[i]
        bf[i] = y0[i]
        bf[4 + i] = y1[i]


@ss.device
def local_fmas(acc, af, bf):  # type: ignore[no-untyped-def]
    for r in range(HELPER_FRAG):
        for c in range(HELPER_FRAG):
            acc[r, c] += af[r] * bf[c]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def local_through_helpers(
    out: DisjointSlice[np.float32], a: In[np.float32], b: In[np.float32]
) -> None:
    o = thread.tile_1d(out, HELPER_TILE)
    first = thread.index_1d().index * HELPER_STEPS
    acc = cuda.local.array((HELPER_FRAG, HELPER_FRAG), np.float32)
    for r in range(HELPER_FRAG):
        for c in range(HELPER_FRAG):
            acc[r, c] = np.float32(0)
    af = cuda.local.array(HELPER_FRAG, np.float32)
    bf = cuda.local.array(HELPER_FRAG, np.float32)
    local_frags(af, bf, a, b, first)
    local_fmas(acc, af, bf)
    local_frags(af, bf, a, b, first + 1)
    local_fmas(acc, af, bf)
    for r in range(HELPER_FRAG):
        for c in range(HELPER_FRAG):
            o[r * HELPER_FRAG + c] = acc[r, c]


@cuda.jit(device=True)
def _frags_raw(af, bf, a, b, step):  # type: ignore[no-untyped-def]
    for i in range(HELPER_FRAG):
        af[i] = a[HELPER_FRAG * step + i]
        bf[i] = b[HELPER_FRAG * step + i]


@cuda.jit(device=True)
def _fmas_raw(acc, af, bf):  # type: ignore[no-untyped-def]
    for r in range(HELPER_FRAG):
        for c in range(HELPER_FRAG):
            acc[r, c] += af[r] * bf[c]


@cuda.jit
def local_through_helpers_raw(out, a, b):  # type: ignore[no-untyped-def]
    """Plain Numba, the same helpers (full tiles only: no checks at all)."""
    g = cuda.grid(1)
    if (g + 1) * HELPER_TILE <= out.shape[0]:
        acc = cuda.local.array((HELPER_FRAG, HELPER_FRAG), np.float32)
        for r in range(HELPER_FRAG):
            for c in range(HELPER_FRAG):
                acc[r, c] = np.float32(0)
        af = cuda.local.array(HELPER_FRAG, np.float32)
        bf = cuda.local.array(HELPER_FRAG, np.float32)
        _frags_raw(af, bf, a, b, g * HELPER_STEPS)
        _fmas_raw(acc, af, bf)
        _frags_raw(af, bf, a, b, g * HELPER_STEPS + 1)
        _fmas_raw(acc, af, bf)
        for r in range(HELPER_FRAG):
            for c in range(HELPER_FRAG):
                out[g * HELPER_TILE + r * HELPER_FRAG + c] = acc[r, c]


def local_through_helpers_expected(a: np.ndarray, b: np.ndarray, threads: int) -> np.ndarray:
    """numpy: thread g's tile is the sum over its steps s of outer(a run, b run)."""
    steps = threads * HELPER_STEPS
    av = a[: steps * HELPER_FRAG].astype(np.float64).reshape(threads, HELPER_STEPS, HELPER_FRAG)
    bv = b[: steps * HELPER_FRAG].astype(np.float64).reshape(threads, HELPER_STEPS, HELPER_FRAG)
    return np.einsum("gsr,gsc->grc", av, bv).reshape(-1)


@cuda.jit
def local_out_of_range(out, idx):  # type: ignore[no-untyped-def]
    """Writes and reads at data-dependent indices, some out of range: nothing leaks."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        guard_lo = local_array(4, np.int64)
        buf = local_array(4, np.int64)
        guard_hi = local_array(4, np.int64)
        for k in range(4):
            guard_lo[k] = 7
            buf[k] = 0
            guard_hi[k] = 7
        j = idx[i]
        buf[j] = 99  # out of range: nothing written (not the guards either)
        total = buf[j]  # out of range: 0
        for k in range(4):
            total += buf[k] * 1000 + guard_lo[k] + guard_hi[k]
        out[i] = total


@cuda.jit
def local_dynamic_index_raw(out, idx):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.shape[0]:
        buf = cuda.local.array(LOCAL_N, np.float32)
        for k in range(LOCAL_N):
            buf[k] = np.float32(k)
        out[i] = buf[idx[i]]


@cuda.jit
def local_dynamic_index_safe(out, idx):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.shape[0]:
        buf = local_array(LOCAL_N, np.float32)
        for k in range(LOCAL_N):
            buf[k] = np.float32(k)
        out[i] = buf[idx[i]]


# ----------------------------------------------------------------------------- tiled SGEMM
#
# The Tier-1 schedule of a register-blocked SGEMM, written as the decorator's
# rewrite emits it (view prologue, .reqntid stamp, block_stride expanded,
# cuda.local.array -> __ss_local_array), because the rewrite of local arrays
# outside unsafe regions is not in the decorator yet. Block (16, 16), each
# thread computes an 8 x 8 strided sub-tile of a 128 x 128 block tile; A and
# B tiles of depth 8 in shared memory, filled by block_stride, read with ints.

if SIMULATOR:
    from simtsafe.lowering._sim import builtins as _all_builtins
else:
    from simtsafe.lowering._cuda import builtins as _all_builtins  # type: ignore[assignment]

_B2 = _all_builtins(proven_domain=2)
_require_block = _B2["__ss_require_block"]
_view_out2 = _B2["__ss_view_Index2D"]
_view_in = _B2["__ss_view_in"]
_shared_tile = _B2["__ss_shared_tile"]
_bs_row_start, _bs_rows, _bs_row_step = (
    _B2[f"__ss_bs_{n}"] for n in ("row_start", "rows", "row_step")
)
_bs_col_start, _bs_cols, _bs_col_step = (
    _B2[f"__ss_bs_{n}"] for n in ("col_start", "cols", "col_step")
)
_mint_local = _B2["__ss_mint_local"]
_local_index_2d = _B2["__ss_local_index_2d"]
_tile_2d_strided = _B2["__ss_tile_2d_strided"]
_local_array2 = _B2["__ss_local_array"]

GB = 16  # block (GB, GB)
GT = 8  # per-thread sub-tile GT x GT
GK = 8  # depth of the shared tiles
GM = GB * GT  # block tile GM x GM
G_A = GM * GK  # elements of one shared tile


@cuda.jit
def sgemm_tier1(c, a, b):  # type: ignore[no-untyped-def]
    _require_block(GB, GB, 1)
    c = _view_out2(c)
    a = _view_in(a)
    b = _view_in(b)
    at = _shared_tile(G_A, np.float32)  # A tile, row-major: e = m * GK + kk
    bt = _shared_tile(G_A, np.float32)  # B tile, row-major: e = kk * GM + n
    acc = _local_array2((GT, GT), np.float32)
    ra = _local_array2(GT, np.float32)
    rb = _local_array2(GT, np.float32)
    me = _local_index_2d()
    ty = me.row
    tx = me.col
    row0 = cuda.blockIdx.y * GM
    col0 = cuda.blockIdx.x * GM
    m_all = a.shape[0]
    k_all = a.shape[1]
    n_all = b.shape[1]
    for i in range(GT):
        for j in range(GT):
            acc[i, j] = np.float32(0)
    for k0 in range(0, k_all, GK):
        for r1 in range(_bs_row_start(at), _bs_rows(at), _bs_row_step(at)):
            for c1 in range(_bs_col_start(at), _bs_cols(at), _bs_col_step(at)):
                w = _mint_local(at, r1, c1)
                m = row0 + w.index // GK
                kk = k0 + w.index % GK
                at[w] = a[m, kk] if m < m_all and kk < k_all else np.float32(0)
        for r2 in range(_bs_row_start(bt), _bs_rows(bt), _bs_row_step(bt)):
            for c2 in range(_bs_col_start(bt), _bs_cols(bt), _bs_col_step(bt)):
                w = _mint_local(bt, r2, c2)
                kk = k0 + w.index // GM
                n = col0 + w.index % GM
                bt[w] = b[kk, n] if kk < k_all and n < n_all else np.float32(0)
        cuda.syncthreads()
        for kk in range(GK):
            for i in range(GT):
                ra[i] = at[(ty + i * GB) * GK + kk]
            for j in range(GT):
                rb[j] = bt[kk * GM + tx + j * GB]
            for i in range(GT):
                for j in range(GT):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()
    o = _tile_2d_strided(c, GT, GT)
    for i in range(GT):
        for j in range(GT):
            o[i, j] = acc[i, j]


@cuda.jit(**({} if SIMULATOR else {"launch_bounds": GB * GB}))
def sgemm_raw(c, a, b):  # type: ignore[no-untyped-def]
    at = cuda.shared.array(G_A, np.float32)
    bt = cuda.shared.array(G_A, np.float32)
    acc = cuda.local.array((GT, GT), np.float32)
    ra = cuda.local.array(GT, np.float32)
    rb = cuda.local.array(GT, np.float32)
    ty = cuda.threadIdx.y
    tx = cuda.threadIdx.x
    tid = ty * GB + tx
    row0 = cuda.blockIdx.y * GM
    col0 = cuda.blockIdx.x * GM
    m_all = a.shape[0]
    k_all = a.shape[1]
    n_all = b.shape[1]
    for i in range(GT):
        for j in range(GT):
            acc[i, j] = np.float32(0)
    for k0 in range(0, k_all, GK):
        for e in range(tid, G_A, GB * GB):
            m = row0 + e // GK
            kk = k0 + e % GK
            at[e] = a[m, kk] if m < m_all and kk < k_all else np.float32(0)
        for e in range(tid, G_A, GB * GB):
            kk = k0 + e // GM
            n = col0 + e % GM
            bt[e] = b[kk, n] if kk < k_all and n < n_all else np.float32(0)
        cuda.syncthreads()
        for kk in range(GK):
            for i in range(GT):
                ra[i] = at[(ty + i * GB) * GK + kk]
            for j in range(GT):
                rb[j] = bt[kk * GM + tx + j * GB]
            for i in range(GT):
                for j in range(GT):
                    acc[i, j] += ra[i] * rb[j]
        cuda.syncthreads()
    for i in range(GT):
        for j in range(GT):
            r = cuda.blockIdx.y * GM + ty + i * GB
            col = cuda.blockIdx.x * GM + tx + j * GB
            if r < c.shape[0] and col < c.shape[1]:
                c[r, col] = acc[i, j]
