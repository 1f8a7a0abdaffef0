"""Rule: numba.cuda intrinsics (Tier 2) called with wrong types are errors."""

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: corpus"):
        cuda.atomic.add(out.unchecked, 0, "1")  # type: ignore[arg-type]
        cuda.atomic.add(out.unchecked, i, 1.0)  # type: ignore[arg-type]
        cuda.atomic.add(3, 0, 1.0)  # type: ignore[arg-type]
    v = cuda.shfl_sync(0xFFFFFFFF, "x", 0)  # type: ignore[type-var]
    w = cuda.shfl_down_sync(0xFFFFFFFF, a[0], i)  # type: ignore[arg-type]
    cuda.syncthreads(1)  # type: ignore[call-arg]
    b: bool = cuda.ballot_sync(0xFFFFFFFF, True)  # type: ignore[assignment]
    cuda.threadIdx.x = 3  # type: ignore[misc]
    t = cuda.grid(4)  # type: ignore[call-overload]


@cuda.jit
def raw(x: int) -> None:
    pass


def host() -> None:
    raw[1, 32]("3")  # type: ignore[arg-type]
    raw[1]  # type: ignore[index]
    cuda.jit(device="yes")  # type: ignore[call-overload]
    cuda.to_device(np.zeros(3)).copy_to_host().nope  # type: ignore[attr-defined]
