"""Kernels that pin the checker's CUDA semantics (tests/checker/test_semantics.py)."""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda
from numba.cuda import syncthreads as barrier

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

FULL = 0xFFFFFFFF
TABLE = np.arange(4, dtype=np.int32)


@cuda.jit
def shuffles(out):
    lane = cuda.laneid
    v = lane * 10
    out[lane, 0] = cuda.shfl_sync(FULL, v, (lane + 3) % 32)
    out[lane, 1] = cuda.shfl_up_sync(FULL, v, 1)
    out[lane, 2] = cuda.shfl_down_sync(FULL, v, 1)
    out[lane, 3] = cuda.shfl_xor_sync(FULL, v, 1)
    out[lane, 4] = cuda.shfl_down_sync(FULL, v, 2, width=8)
    out[lane, 5] = cuda.shfl_sync(FULL, v, 9, width=8)


@cuda.jit
def votes(out):
    lane = cuda.laneid
    out[lane, 0] = cuda.ballot_sync(FULL, lane % 2 == 0)
    out[lane, 1] = cuda.all_sync(FULL, lane < 32)
    out[lane, 2] = cuda.any_sync(FULL, lane == 5)
    out[lane, 3] = cuda.eq_sync(FULL, lane < 3)
    out[lane, 4] = cuda.match_any_sync(FULL, lane // 8)
    bits, same = cuda.match_all_sync(FULL, 7)
    out[lane, 5] = bits
    out[lane, 6] = same
    bits, same = cuda.match_all_sync(FULL, lane)
    out[lane, 7] = bits
    out[lane, 8] = cuda.lanemask_lt()
    m = 0
    if lane < 10:
        m = cuda.activemask()
    out[lane, 9] = m


@cuda.jit
def block_votes(out, x):
    tid = cuda.threadIdx.x
    out[tid, 0] = cuda.syncthreads_count(x[tid] > 0)
    out[tid, 1] = cuda.syncthreads_and(x[tid] > -100)
    out[tid, 2] = cuda.syncthreads_or(x[tid] > 100)


@cuda.jit
def atomics(old, a, f):
    old[0] = cuda.atomic.add(a, 0, 5)
    old[1] = cuda.atomic.sub(a, 1, 2)
    old[2] = cuda.atomic.max(a, 2, 9)
    old[3] = cuda.atomic.min(a, 3, -9)
    old[4] = cuda.atomic.exch(a, 4, 42)
    old[5] = cuda.atomic.inc(a, 5, 3)
    old[6] = cuda.atomic.dec(a, 6, 3)
    old[7] = cuda.atomic.cas(a, 7, 7, 70)
    old[8] = cuda.atomic.and_(a, 8, 6)
    old[9] = cuda.atomic.or_(a, 9, 6)
    old[10] = cuda.atomic.xor(a, 10, 6)
    old[11] = cuda.atomic.compare_and_swap(a[11:], 11, 110)
    cuda.atomic.nanmax(f, 0, 3.0)
    cuda.atomic.nanmin(f, 1, -3.0)
    cuda.atomic.add(a, (12,), 1)


@cuda.jit
def bits(out, v):
    out[0] = cuda.popc(v[0])
    out[1] = cuda.clz(v[0])
    out[2] = cuda.ffs(v[0])
    out[3] = cuda.brev(v[1])
    out[4] = cuda.selp(v[0] > 0, 11, 22)
    out[5] = cuda.fma(v[0], 2, 1)


@cuda.jit
def negative_index(out, x):
    i = cuda.grid(1)
    out[i] = x[i - 1]


@cuda.jit
def column_overflow(out, a):
    out[0] = a[0, 20]


@cuda.jit
def dynamic_alias(out):
    a = cuda.shared.array(0, numba.float32)
    b = cuda.shared.array(0, numba.float32)
    tid = cuda.threadIdx.x
    a[tid] = tid
    out[tid] = b[tid]


@cuda.jit
def global_table(out):
    i = cuda.grid(1)
    out[i] = TABLE[i]


@cuda.jit
def const_table(out, x):
    c = cuda.const.array_like(x)
    i = cuda.grid(1)
    out[i] = c[i % 4]


@cuda.jit(device=True)
def bump(arr, k):
    arr[k] += 1


@cuda.jit
def via_device_function(out):
    bump(out, 0)


@cuda.jit
def aliased_barrier(out, x):
    sh = cuda.shared.array(64, numba.float32)
    tid = cuda.threadIdx.x
    sh[tid] = x[tid]
    barrier()
    out[tid] = sh[63 - tid]


@cuda.jit
def shuffle_is_no_fence(out):
    sh = cuda.shared.array(32, numba.int32)
    lane = cuda.laneid
    sh[lane] = lane
    cuda.shfl_sync(FULL, lane, 0)
    out[lane] = sh[(lane + 1) % 32]


@cuda.jit
def syncwarp_fences(out):
    sh = cuda.shared.array(32, numba.int32)
    lane = cuda.laneid
    sh[lane] = lane
    cuda.syncwarp()
    out[lane] = sh[(lane + 1) % 32]


@cuda.jit
def different_barriers(out):
    tid = cuda.threadIdx.x
    if tid < 16:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[tid] = tid


@cuda.jit
def spin(flag):
    while flag[0] == 0:
        pass


@cuda.jit
def busy():
    k = 0
    while k >= 0:
        k += 1


@cuda.jit
def divide(out, x):
    i = cuda.grid(1)
    out[i] = 10 // int(x[i])


@ss.device
def ss_bump(out: DisjointSlice[np.float32]) -> None:
    with ss.unsafe("SAFETY: claimed single writer"):
        out.unchecked[0] += 1


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def ss_calls_helper(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = x[w]
    ss_bump(out)


@cuda.jit
def exch_initializes(out):
    flag = cuda.shared.array(1, numba.int32)
    if cuda.threadIdx.x == 0:
        cuda.atomic.exch(flag, 0, 0)
    cuda.syncthreads()
    cuda.atomic.add(flag, 0, 1)
    cuda.syncthreads()
    out[cuda.threadIdx.x] = flag[0]


@cuda.jit
def add_on_garbage(out):
    flag = cuda.shared.array(1, numba.int32)
    cuda.atomic.add(flag, 0, 1)
    cuda.syncthreads()
    out[cuda.threadIdx.x] = flag[0]


@cuda.jit
def wait_for_next_block(flag, out):
    # Block 0 spins until block 1 raises the flag (blocks co-resident on the GPU).
    if cuda.blockIdx.x == 0:
        while cuda.atomic.add(flag, 0, 0) == 0:
            pass
        out[0] = 1
    else:
        cuda.atomic.exch(flag, 0, 1)


@cuda.jit
def ping_pong_blocks(flags, out):
    # Block 0 waits for block 1's flag, passes a barrier, answers; block 1 waits for it.
    tid = cuda.threadIdx.x
    if cuda.blockIdx.x == 0:
        if tid == 0:
            while cuda.atomic.add(flags, 1, 0) == 0:
                pass
        cuda.syncthreads()
        if tid == 0:
            cuda.atomic.exch(flags, 0, 1)
    else:
        if tid == 0:
            cuda.atomic.exch(flags, 1, 1)
            while cuda.atomic.add(flags, 0, 0) == 0:
                pass
            out[0] = 7
