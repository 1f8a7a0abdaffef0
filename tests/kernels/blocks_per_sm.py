"""Kernels with a ``blocks_per_sm`` contract (tests/ptx and tests/sim load this module)."""

from __future__ import annotations

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256, blocks_per_sm=2))
def exact(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = a[w] * np.float32(2)


@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=1024, blocks_per_sm=3))
def bounded(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = a[w] * np.float32(2)
