"""Kernels for the uninitialized-value rule: undefined values are reported where they are used.

Each ``*_clean`` kernel loads memory no thread wrote but never uses the value
(tests/checker/test_uninit.py asserts no finding); each ``*_used`` kernel
uses such a value, at the line marked ``# USE`` (loaded at ``# LOAD``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, PerBlock, thread

B = 32
FULL = 0xFFFFFFFF


# --------------------------------------------------------------------------- clean


@cuda.jit
def load_discarded_clean(out, x):
    tile = cuda.shared.array(B + 1, numba.float32)
    acc = cuda.local.array(2, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    _spare = tile[B]  # never written, never used
    _scratch = acc[1]  # never written, never used
    out[tid] = tile[tid]


@cuda.jit
def zip_past_end_clean(out, x):
    # The tile has one more slot than x; only len(x) are written. zip(tile, x) fetches
    # tile[B] before it finds x exhausted, and drops it.
    tile = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    if tid == 0:
        acc = numba.float32(0)
        for a, b in zip(tile, x):  # noqa: B905 - Numba has no zip(strict=)
            acc += a * b
        out[0] = acc


@cuda.jit
def copied_not_used_clean(out, x):
    # Garbage copied from one shared tile into another, where nobody reads it.
    tile = cuda.shared.array(B + 1, numba.float32)
    copy = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    copy[tid + 1] = tile[tid + 1] * 2  # thread B - 1 copies tile[B], never written
    cuda.syncthreads()
    if tid < B - 1:
        out[tid] = copy[tid + 1]


# --------------------------------------------------------------------------- used


@cuda.jit
def branch_used(out, x):
    tile = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    v = tile[tid + 1]  # LOAD
    w = v * 2
    if w > 0:  # USE
        out[tid] = 1


@cuda.jit
def index_used(out, x, idx):
    slots = cuda.local.array(4, numba.int32)
    tid = cuda.threadIdx.x
    slots[0] = idx[tid]
    k = slots[1] + 1  # LOAD
    out[tid] = x[k % 4]  # USE


@cuda.jit
def store_used(out, x):
    tile = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    v = tile[tid + 1]  # LOAD
    out[tid] = v + 1  # USE


@cuda.jit
def copied_then_used(out, x):
    # Thread B - 1 copies the garbage of tile[B] into copy[B]; thread 0 uses it.
    tile = cuda.shared.array(B + 1, numba.float32)
    copy = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    copy[tid + 1] = tile[tid + 1]  # LOAD
    cuda.syncthreads()
    if tid == 0:
        if copy[B] > 0:  # USE
            out[0] = 1


@cuda.jit
def shuffle_used(out, x):
    tile = cuda.shared.array(B + 1, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[tid]
    cuda.syncthreads()
    v = tile[tid + 1]  # LOAD
    out[tid] = cuda.shfl_sync(FULL, v, 0)  # USE


@cuda.jit
def race_explains_read(out, x):
    # Thread 0 reads tile[1] before thread 1 (which runs later) writes it, with no
    # barrier between: the race is the bug, not an uninitialized read.
    tile = cuda.shared.array(B, numba.float32)
    tid = cuda.threadIdx.x
    if tid == 0:
        out[0] = tile[1]
    tile[tid] = x[tid]


# --------------------------------------------------------------------------- simtsafe


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def collective_used(out: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe("SAFETY: (wrong) tile[tid + 1] is written by the next thread"):
        tile = cuda.shared.array(B + 1, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        v = tile[tid + 1]  # LOAD
        total = ss.block.sum(v)  # USE
        out[w] = total


@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def collective_clean(out: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()
    with ss.unsafe("SAFETY: thread tid writes tile[tid] before the barrier and reads it after"):
        tile = cuda.shared.array(B + 1, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = x[cuda.grid(1)]
        cuda.syncthreads()
        _spare = tile[B]  # never written, never used
        total = ss.block.sum(tile[tid])
        out[w] = total
