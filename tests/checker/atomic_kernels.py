"""Kernels whose ownership comes from an atomic, for ``simtsafe.sim.check`` (test_atomic_twins).

Tier 1: an append buffer (a slot won by the counter's fetch-add) and an
``Accumulate`` histogram; both are race-free, and the checker must say so
(their atomics are recorded as atomics). The raw twin that computes the slot
with a plain read-then-write of the counter (no atomic) races, and the
checker must say that too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n"}))
def compact(out: ss.AppendBuffer[np.int32], n: ss.Counter, x: In[np.int32], t: np.int32) -> None:
    for w in thread.grid_stride(x):
        if x[w] > t:
            s = out.claim()
            out[s] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def histogram(h: ss.Accumulate[np.uint32], x: In[np.int32]) -> None:
    for w in thread.grid_stride(x):
        h.add(x[w], 1)


@cuda.jit
def compact_plain_counter_bug(out: Any, n: Any, x: Any, t: Any) -> None:
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        if x[i] > t:
            s = n[0]  # BUG: read, then write the counter without an atomic
            n[0] = s + 1
            if s < out.size:
                out[s] = x[i]


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=(32, 1, 1), tables={"keys": {"values": ["vals"], "failed": "nf"}}
    )
)
def insert(
    keys: ss.HashTable[np.int32], vals: ss.HashValues[np.int32], nf: ss.Counter, q: In[np.int32]
) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = q[w] * 2


@cuda.jit
def insert_plain_bug(keys: Any, vals: Any, q: Any) -> None:
    for i in range(cuda.grid(1), q.size, cuda.gridsize(1)):
        k = q[i]
        s = k % keys.size
        while True:
            if keys[s] == -1:  # BUG: test, then set, without a compare-and-swap
                keys[s] = k
                vals[s] = k * 2
                break
            if keys[s] == k:
                break
            s = (s + 1) % keys.size


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), appends={"out": "n"}))
def block_compact(
    out: ss.AppendBuffer[np.int32], n: ss.Counter, x: In[np.int32], t: np.int32
) -> None:
    size = x.size
    stride = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    for _ in range((size + stride - 1) // stride):
        v = x[i] if i < size else t
        s = out.block_claim(v > t)  # one fetch-add per block and round
        out[s] = v
        i += stride


@cuda.jit
def block_compact_missing_barrier_bug(out: Any, n: Any, x: Any, t: Any) -> None:
    """A block-aggregated claim by hand that reads the base before thread 0 wrote it."""
    ex = cuda.shared.array(3, np.uint64)  # 2 warp counts, the base
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    keep = i < x.size and x[i] > t
    votes = cuda.ballot_sync(0xFFFFFFFF, keep)
    if tid % 32 == 0:
        ex[tid // 32] = np.uint64(cuda.popc(votes))
    cuda.syncthreads()
    if tid == 0:
        ex[2] = cuda.atomic.add(n, 0, ex[0] + ex[1])
    # BUG: no barrier here -- the other threads read ex[2] while thread 0 writes it
    prefix = ex[0] if tid >= 32 else np.uint64(0)
    slot = ex[2] + prefix + np.uint64(cuda.popc(votes & cuda.lanemask_lt()))
    if keep and slot < out.size:
        out[slot] = x[i]
