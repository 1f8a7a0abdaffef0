"""Checker corpus, raw Numba: buggy kernels and their fixed twins (``*_bug`` / ``*_ok``).

Every buggy kernel marks the line the checker must report with ``# BUG``;
its fixed twin differs only where the bug is. All are valid Numba CUDA
kernels: ``benchmarks/sanitizer_corpus.py`` launches them on a GPU so that
compute-sanitizer can be run over the same corpus.
"""

from __future__ import annotations

import numba
from numba import cuda

FULL = 0xFFFFFFFF
B = 64  # block size of most cases: two warps
T = 8  # tile edge of the 2D cases
B_HALO = B + 2  # Numba needs shared-array shapes as plain constants
T_PAD = T + 1


# --------------------------------------------------------------------------- tree reduction


@cuda.jit
def reduce_nobarrier_bug(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]  # BUG
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


@cuda.jit
def reduce_nobarrier_ok(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


@cuda.jit
def reduce_branch_barrier_bug(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
            cuda.syncthreads()  # BUG
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


reduce_branch_barrier_ok = reduce_nobarrier_ok


@cuda.jit
def reduce_oob_shared_bug(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]  # BUG
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


reduce_oob_shared_ok = reduce_nobarrier_ok


# --------------------------------------------------------------------------- warp shuffles


@cuda.jit
def warp_wrong_mask_bug(out, x):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0x0000FFFF, v, off)  # BUG
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def warp_wrong_mask_ok(out, x):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def warp_partial_bug(out, x):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)  # BUG
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def warp_partial_ok(out, x):
    i = cuda.grid(1)
    warp = cuda.threadIdx.x // 32
    nlanes = min(32, cuda.blockDim.x - warp * 32)
    mask = FULL if nlanes == 32 else (1 << nlanes) - 1
    v = x[i]
    off = 16
    while off > 0:
        t = cuda.shfl_down_sync(mask, v, off)
        if cuda.laneid + off < nlanes:
            v += t
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def shfl_in_branch_bug(out, x):
    i = cuda.grid(1)
    v = x[i]
    if cuda.laneid < 16:
        v = cuda.shfl_sync(FULL, v, 0)  # BUG
    out[i] = v


@cuda.jit
def shfl_in_branch_ok(out, x):
    i = cuda.grid(1)
    v = x[i]
    if cuda.laneid < 16:
        v = cuda.shfl_sync(0x0000FFFF, v, 0)
    out[i] = v


@cuda.jit
def ballot_after_exit_bug(out, x):
    i = cuda.grid(1)
    if x[i] < 0:
        return
    votes = cuda.ballot_sync(FULL, x[i] > 1)  # BUG
    if cuda.laneid == 0:
        out[i // 32] = votes


@cuda.jit
def ballot_after_exit_ok(out, x):
    i = cuda.grid(1)
    votes = cuda.ballot_sync(FULL, x[i] > 1)
    if cuda.laneid == 0:
        out[i // 32] = votes


@cuda.jit
def warp_smem_nosyncwarp_bug(out, x):
    sh = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    sh[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    if tid < 32:
        off = 32
        while off > 0:
            sh[tid] += sh[tid + off]  # BUG
            off //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def warp_smem_nosyncwarp_ok(out, x):
    sh = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    sh[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    if tid < 32:
        off = 32
        while off > 0:
            v = sh[tid] + sh[tid + off]
            cuda.syncwarp()
            sh[tid] = v
            cuda.syncwarp()
            off //= 2
        if tid == 0:
            out[cuda.blockIdx.x] = sh[0]


@cuda.jit
def syncwarp_mask_bug(out, x):
    sh = cuda.shared.array(32, numba.float32)
    lane = cuda.threadIdx.x
    sh[lane] = x[cuda.grid(1)]
    cuda.syncwarp(0x0000FFFF)  # BUG
    out[cuda.grid(1)] = sh[31 - lane]


@cuda.jit
def syncwarp_mask_ok(out, x):
    sh = cuda.shared.array(32, numba.float32)
    lane = cuda.threadIdx.x
    sh[lane] = x[cuda.grid(1)]
    cuda.syncwarp(FULL)
    out[cuda.grid(1)] = sh[31 - lane]


# --------------------------------------------------------------------------- scan


@cuda.jit
def scan_bug(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i]
    cuda.syncthreads()
    off = 1
    while off < B:
        t = numba.float32(0)
        if tid >= off:
            t = tile[tid - off]
        if tid >= off:
            tile[tid] += t  # BUG
        cuda.syncthreads()
        off *= 2
    out[i] = tile[tid]


@cuda.jit
def scan_ok(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i]
    cuda.syncthreads()
    off = 1
    while off < B:
        t = numba.float32(0)
        if tid >= off:
            t = tile[tid - off]
        cuda.syncthreads()
        if tid >= off:
            tile[tid] += t
        cuda.syncthreads()
        off *= 2
    out[i] = tile[tid]


# --------------------------------------------------------------------------- stencils


@cuda.jit
def stencil_halo_bug(out, x):
    tile = cuda.shared.array(B_HALO, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.shape[0]
    tile[tid + 1] = x[i]
    if tid == 0:
        tile[0] = x[i - 1] if i > 0 else numba.float32(0)
    if tid == B - 1:
        tile[B + 1] = x[i + 1] if i + 1 < n else numba.float32(0)
    out[i] = tile[tid] + tile[tid + 1] + tile[tid + 2]  # BUG


@cuda.jit
def stencil_halo_ok(out, x):
    tile = cuda.shared.array(B_HALO, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.shape[0]
    tile[tid + 1] = x[i]
    if tid == 0:
        tile[0] = x[i - 1] if i > 0 else numba.float32(0)
    if tid == B - 1:
        tile[B + 1] = x[i + 1] if i + 1 < n else numba.float32(0)
    cuda.syncthreads()
    out[i] = tile[tid] + tile[tid + 1] + tile[tid + 2]


@cuda.jit
def halo_uninit_bug(out, x):
    tile = cuda.shared.array(B_HALO, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid + 1] = x[i]
    cuda.syncthreads()
    out[i] = tile[tid] + tile[tid + 1] + tile[tid + 2]  # BUG


halo_uninit_ok = stencil_halo_ok


@cuda.jit
def halo_oob_bug(out, x):
    i = cuda.grid(1)
    out[i] = x[i - 1] + x[i] + x[i + 1]  # BUG


@cuda.jit
def halo_oob_ok(out, x):
    i = cuda.grid(1)
    n = x.shape[0]
    if 0 < i < n - 1:
        out[i] = x[i - 1] + x[i] + x[i + 1]


@cuda.jit
def stencil2d_oob_bug(out, a):
    x, y = cuda.grid(2)
    v = a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1]  # BUG
    out[y, x] = v - 4 * a[y, x]


@cuda.jit
def stencil2d_oob_ok(out, a):
    x, y = cuda.grid(2)
    h, w = a.shape
    if 0 < y < h - 1 and 0 < x < w - 1:
        v = a[y - 1, x] + a[y + 1, x] + a[y, x - 1] + a[y, x + 1]
        out[y, x] = v - 4 * a[y, x]


# --------------------------------------------------------------------------- histograms


@cuda.jit
def hist_global_bug(hist, data):
    i = cuda.grid(1)
    if i < data.shape[0]:
        hist[data[i]] += 1  # BUG


@cuda.jit
def hist_global_ok(hist, data):
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def hist_shared_uninit_bug(hist, data):
    bins = cuda.shared.array(16, numba.int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)  # BUG
    cuda.syncthreads()
    if tid < 16:
        cuda.atomic.add(hist, tid, bins[tid])


@cuda.jit
def hist_shared_uninit_ok(hist, data):
    bins = cuda.shared.array(16, numba.int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if tid < 16:
        bins[tid] = 0
    cuda.syncthreads()
    if i < data.shape[0]:
        cuda.atomic.add(bins, data[i], 1)
    cuda.syncthreads()
    if tid < 16:
        cuda.atomic.add(hist, tid, bins[tid])


@cuda.jit
def atomic_plain_read_bug(out, counter, x):
    i = cuda.grid(1)
    if x[i] > 0:
        cuda.atomic.add(counter, 0, 1)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = counter[0]  # BUG


@cuda.jit
def atomic_plain_read_ok(out, counter, x):
    i = cuda.grid(1)
    if x[i] > 0:
        cuda.atomic.add(counter, 0, 1)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = cuda.atomic.add(counter, 0, 0)


# --------------------------------------------------------------------------- transposes, tiled matmul


@cuda.jit
def transpose_bug(out, a):
    tile = cuda.shared.array((T, T_PAD), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * T
    by = cuda.blockIdx.y * T
    tile[ty, tx] = a[by + ty, bx + tx]
    out[bx + ty, by + tx] = tile[tx, ty]  # BUG


@cuda.jit
def transpose_ok(out, a):
    tile = cuda.shared.array((T, T_PAD), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * T
    by = cuda.blockIdx.y * T
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    out[bx + ty, by + tx] = tile[tx, ty]


@cuda.jit
def matmul_tiled_bug(c, a, b):
    sa = cuda.shared.array((T, T), numba.float32)
    sb = cuda.shared.array((T, T), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for t in range(a.shape[1] // T):
        sa[ty, tx] = a[row, t * T + tx]
        sb[ty, tx] = b[t * T + ty, col]
        cuda.syncthreads()
        for k in range(T):
            acc += sa[ty, k] * sb[k, tx]  # BUG
    c[row, col] = acc


@cuda.jit
def matmul_tiled_ok(c, a, b):
    sa = cuda.shared.array((T, T), numba.float32)
    sb = cuda.shared.array((T, T), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for t in range(a.shape[1] // T):
        sa[ty, tx] = a[row, t * T + tx]
        sb[ty, tx] = b[t * T + ty, col]
        cuda.syncthreads()
        for k in range(T):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


# --------------------------------------------------------------------------- between blocks


@cuda.jit
def neighbor_write_bug(out, x):
    i = cuda.grid(1)
    out[i] = x[i]
    if cuda.threadIdx.x == cuda.blockDim.x - 1 and i + 1 < out.shape[0]:
        out[i + 1] = x[i]  # BUG


@cuda.jit
def neighbor_write_ok(out, x):
    i = cuda.grid(1)
    out[i] = x[i]


@cuda.jit
def last_block_bug(partial, count, result, x):
    tile = cuda.shared.array(B, numba.float32)
    last = cuda.shared.array(1, numba.int32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = tile[0]
        ticket = cuda.atomic.inc(count, 0, cuda.gridDim.x)
        last[0] = ticket == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0] and tid == 0:
        acc = numba.float32(0)
        for b in range(cuda.gridDim.x):
            acc += partial[b]  # BUG
        result[0] = acc
        count[0] = 0


@cuda.jit
def last_block_ok(partial, count, result, x):
    tile = cuda.shared.array(B, numba.float32)
    last = cuda.shared.array(1, numba.int32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = tile[0]
        cuda.threadfence()
        ticket = cuda.atomic.inc(count, 0, cuda.gridDim.x)
        last[0] = ticket == cuda.gridDim.x - 1
    cuda.syncthreads()
    if last[0] and tid == 0:
        acc = numba.float32(0)
        for b in range(cuda.gridDim.x):
            acc += partial[b]
        result[0] = acc
        count[0] = 0


@cuda.jit
def grid_neighbor_bug(out, x):
    i = cuda.grid(1)
    out[i] = x[i] * 2
    n = cuda.gridsize(1)
    x[i] = out[(i + cuda.blockDim.x) % n]  # BUG


@cuda.jit
def grid_neighbor_ok(out, x):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = x[i] * 2
    g.sync()
    n = cuda.gridsize(1)
    x[i] = out[(i + cuda.blockDim.x) % n]


@cuda.jit
def grid_sync_divergent_bug(out, x):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = x[i]
    if cuda.blockIdx.x == cuda.gridDim.x - 1:
        return  # BUG
    g.sync()
    x[i] = out[(i + 1) % cuda.gridsize(1)]


@cuda.jit
def grid_sync_divergent_ok(out, x):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = x[i]
    g.sync()
    x[i] = out[(i + 1) % cuda.gridsize(1)]


# --------------------------------------------------------------------------- barriers and exits


@cuda.jit
def early_return_bug(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return  # BUG
    tile[tid] = x[i]
    cuda.syncthreads()
    out[i] = tile[(tid + 1) % B]


@cuda.jit
def early_return_ok(out, x):
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i] if i < x.shape[0] else numba.float32(0)
    cuda.syncthreads()
    if i < x.shape[0]:
        out[i] = tile[(tid + 1) % B]


@cuda.jit
def count_in_branch_bug(out, x):
    i = cuda.grid(1)
    c = 0
    if x[i] > 0:
        c = cuda.syncthreads_count(1)  # BUG
    out[i] = c


@cuda.jit
def count_in_branch_ok(out, x):
    i = cuda.grid(1)
    c = cuda.syncthreads_count(numba.int32(x[i] > 0))
    out[i] = c


# --------------------------------------------------------------------------- local memory


@cuda.jit
def local_uninit_bug(out, x):
    i = cuda.grid(1)
    acc = cuda.local.array(4, numba.float32)
    for k in range(8):
        acc[k % 4] += x[(i * 8 + k) % x.shape[0]]  # BUG
    out[i] = acc[0] + acc[1] + acc[2] + acc[3]


@cuda.jit
def local_uninit_ok(out, x):
    i = cuda.grid(1)
    acc = cuda.local.array(4, numba.float32)
    for k in range(4):
        acc[k] = 0
    for k in range(8):
        acc[k % 4] += x[(i * 8 + k) % x.shape[0]]
    out[i] = acc[0] + acc[1] + acc[2] + acc[3]
