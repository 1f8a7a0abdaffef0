"""Host side: prepare refuses non-integer dimensions; a kernel is not called directly."""

from __future__ import annotations

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i]


def host(n: int) -> None:
    k.prepare(grid="4", block=256)  # type: ignore[arg-type]
    k.prepare(grid=4.0, block=256)  # type: ignore[arg-type]
    k.prepare(grid=(1, 2, 3, 4), block=256)  # type: ignore[arg-type]
    k.prepare(grid=4, block=256, shared_mem="big")  # type: ignore[arg-type]


def execution() -> None:
    ss.configure(ordering=1)  # type: ignore[arg-type]
    ss.configure("strict")  # type: ignore[call-arg]
