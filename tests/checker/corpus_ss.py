"""Checker corpus, simtsafe Tier 2: buggy kernels and their fixed twins (``*_bug`` / ``*_ok``).

Each kernel keeps its shared memory, barriers, warp intrinsics, atomics
and ``.unchecked`` writes inside ``with ss.unsafe("SAFETY: ...")``; the
buggy twin's reason is the claim the checker refutes. ``# BUG`` marks the
line the checker must report.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, In, In2D, PerBlock, thread

B = 64
T = 8
T_PAD = T + 1  # Numba needs shared-array shapes as plain constants
FULL = 0xFFFFFFFF

C1 = ss.LaunchContract(domain=1, block=(B, 1, 1))
C2 = ss.LaunchContract(domain=2, block=(T, T, 1))


@ss.kernel(contract=C1)
def ss_reduce_bug(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe("SAFETY: thread t writes tile[t] before the barrier; each step halves s"):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        s = B // 2
        while s > 0:
            if tid < s:
                tile[tid] += tile[tid + s]  # BUG
            s //= 2
        partial[w] = tile[0]


@ss.kernel(contract=C1)
def ss_reduce_ok(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe(
        "SAFETY: thread t writes tile[t] before the first barrier; in each step threads t < s "
        "write tile[t] and read tile[t + s], which no thread writes in that step; every thread "
        "reaches every barrier"
    ):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        s = B // 2
        while s > 0:
            if tid < s:
                tile[tid] += tile[tid + s]
            cuda.syncthreads()
            s //= 2
        partial[w] = tile[0]


@ss.kernel(contract=C1)
def ss_branch_barrier_bug(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe("SAFETY: the barrier orders each step (claimed)"):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        s = B // 2
        while s > 0:
            if tid < s:
                tile[tid] += tile[tid + s]
                cuda.syncthreads()  # BUG
            s //= 2
        partial[w] = tile[0]


ss_branch_barrier_ok = ss_reduce_ok


@ss.kernel(contract=C1)
def ss_hist_bug(hist: DisjointSlice[np.int32], data: In[np.int32]) -> None:
    with ss.unsafe("SAFETY: bins are small (claimed to need no atomics)"):
        i = cuda.grid(1)
        if i < data.size:
            hist.unchecked[data[i]] += 1  # BUG


@ss.kernel(contract=C1)
def ss_hist_ok(hist: DisjointSlice[np.int32], data: In[np.int32]) -> None:
    with ss.unsafe("SAFETY: every bin update is an atomic add; data values are < hist.size"):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(hist.unchecked, data[i], 1)


@ss.kernel(contract=C1)
def ss_warp_mask_bug(partial: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    with ss.unsafe("SAFETY: every lane of the full warp takes part in each shuffle (claimed)"):
        i = cuda.grid(1)
        v = x[i]
        off = 16
        while off > 0:
            v += cuda.shfl_xor_sync(0x7FFFFFFF, v, off)  # BUG
            off //= 2
        if cuda.laneid == 0:
            partial.unchecked[i // 32] = v


@ss.kernel(contract=C1)
def ss_warp_mask_ok(partial: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    with ss.unsafe(
        "SAFETY: the contract fixes a block of two full warps; every lane takes part in each "
        "shuffle; lane 0 of warp k alone writes partial[k]"
    ):
        i = cuda.grid(1)
        v = x[i]
        off = 16
        while off > 0:
            v += cuda.shfl_xor_sync(FULL, v, off)
            off //= 2
        if cuda.laneid == 0:
            partial.unchecked[i // 32] = v


@ss.kernel(contract=C1)
def ss_neighbor_bug(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = x[w]
    with ss.unsafe("SAFETY: the smoothing write stays in this thread's pair (claimed)"):
        i = w.index
        if i + 1 < out.size:
            out.unchecked[i + 1] = x[i]  # BUG


@ss.kernel(contract=C1)
def ss_neighbor_ok(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = x[w]


@ss.kernel(contract=C1)
def ss_scan_bug(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    with ss.unsafe("SAFETY: each step reads before it writes (claimed)"):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[w]
        cuda.syncthreads()
        off = 1
        while off < B:
            t = np.float32(0)
            if tid >= off:
                t = tile[tid - off]
            if tid >= off:
                tile[tid] += t  # BUG
            cuda.syncthreads()
            off *= 2
        out[w] = tile[tid]


@ss.kernel(contract=C1)
def ss_scan_ok(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    with ss.unsafe(
        "SAFETY: in each step every thread reads tile[t - off], a barrier, then writes tile[t] "
        "(its own), then a barrier; all threads run every step"
    ):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[w]
        cuda.syncthreads()
        off = 1
        while off < B:
            t = np.float32(0)
            if tid >= off:
                t = tile[tid - off]
            cuda.syncthreads()
            if tid >= off:
                tile[tid] += t
            cuda.syncthreads()
            off *= 2
        out[w] = tile[tid]


@ss.kernel(contract=C2)
def ss_transpose_bug(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    with ss.unsafe("SAFETY: each thread reads the tile element it wrote (claimed)"):
        tile = cuda.shared.array((T, T_PAD), np.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bx = cuda.blockIdx.x * T
        by = cuda.blockIdx.y * T
        tile[ty, tx] = a[by + ty, bx + tx]
        out.unchecked[bx + ty, by + tx] = tile[tx, ty]  # BUG


@ss.kernel(contract=C2)
def ss_transpose_ok(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    with ss.unsafe(
        "SAFETY: thread (tx, ty) writes tile[ty, tx] before the barrier and reads tile[tx, ty] "
        "after it; out[bx + ty, by + tx] is distinct per thread; the grid covers the square"
    ):
        tile = cuda.shared.array((T, T_PAD), np.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bx = cuda.blockIdx.x * T
        by = cuda.blockIdx.y * T
        tile[ty, tx] = a[by + ty, bx + tx]
        cuda.syncthreads()
        out.unchecked[bx + ty, by + tx] = tile[tx, ty]


@ss.kernel(contract=C1)
def ss_oob_bug(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    with ss.unsafe("SAFETY: one thread per element (claimed to need no guard)"):
        i = cuda.grid(1)
        out.unchecked[i] = 2 * x[i]  # BUG


@ss.kernel(contract=C1)
def ss_oob_ok(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    with ss.unsafe("SAFETY: one thread per element i < out.size; x has out.size elements"):
        i = cuda.grid(1)
        if i < out.size:
            out.unchecked[i] = 2 * x[i]


@ss.kernel(contract=C1)
def ss_uninit_bug(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe("SAFETY: the leader sums the tile after the barrier (claimed complete)"):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        if tid < B // 2:
            tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        if tid == 0:
            acc = np.float32(0)
            for k in range(B):
                acc += tile[k]  # BUG
            partial[w] = acc


@ss.kernel(contract=C1)
def ss_uninit_ok(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe(
        "SAFETY: every thread writes tile[tid] before the barrier; the leader reads after it"
    ):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        if tid == 0:
            acc = np.float32(0)
            for k in range(B):
                acc += tile[k]
            partial[w] = acc


@ss.kernel(contract=C2)
def ss_matmul_bug(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    w = thread.index_2d()
    with ss.unsafe("SAFETY: one barrier per tile suffices (claimed)"):
        sa = cuda.shared.array((T, T), np.float32)
        sb = cuda.shared.array((T, T), np.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        acc = np.float32(0)
        for t in range(a.shape[1] // T):
            sa[ty, tx] = a[w.row, t * T + tx]
            sb[ty, tx] = b[t * T + ty, w.col]
            cuda.syncthreads()
            for k in range(T):
                acc += sa[ty, k] * sb[k, tx]  # BUG
        c[w] = acc


@ss.kernel(contract=C2)
def ss_matmul_ok(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    w = thread.index_2d()
    with ss.unsafe(
        "SAFETY: thread (tx, ty) fills sa[ty, tx] and sb[ty, tx]; a barrier before the tiles are "
        "read and one after, before they are refilled; the shapes are multiples of T"
    ):
        sa = cuda.shared.array((T, T), np.float32)
        sb = cuda.shared.array((T, T), np.float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        acc = np.float32(0)
        for t in range(a.shape[1] // T):
            sa[ty, tx] = a[w.row, t * T + tx]
            sb[ty, tx] = b[t * T + ty, w.col]
            cuda.syncthreads()
            for k in range(T):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        c[w] = acc


@ss.kernel(contract=C1)
def ss_last_thread_total_bug(
    partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]
) -> None:
    s = ss.block.sum(x[thread.index_1d()])
    if cuda.threadIdx.x == B - 1:  # the CUDA habit: the last thread holds the block's total
        partial[thread.block_leader()] = s  # BUG


@ss.kernel(contract=C1)
def ss_last_thread_total_ok(
    partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]
) -> None:
    s = ss.block.sum(x[thread.index_1d()])
    partial[thread.block_leader()] = s  # every thread may write: only the leader's lands
