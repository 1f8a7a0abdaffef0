"""Kernels used by the GPU tests (module level: the decorator reads their source)."""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), requires=["a.size == out.size"]))
def scale(out: DisjointSlice[np.float32], a: In[np.float32], k: np.float32) -> None:
    i = thread.index_1d()
    out[i] = a[i] * k


@ss.kernel
def fill_checked(out: DisjointSlice[np.int32], v: np.int32) -> None:
    i = thread.index_1d()  # no contract: checked witness
    out[i] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=1024, dynamic_shared=(0, 256 * 1024)))
def shared_copy(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: each thread writes and reads back only its own slot buf[tid.x]"):
        buf = cuda.shared.array(0, np.float32)
        t = cuda.threadIdx.x
        buf[t] = a[i]
        out[i] = buf[t]
