"""Rule: a witness of another index space cannot index a DisjointSlice."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    DisjointSlice2D,
    In,
    PerBlock,
    thread,
)


def k(
    o1: DisjointSlice[np.float32],
    o2: DisjointSlice2D[np.float32],
    pb: DisjointSlice[np.float32, PerBlock],
    a: In[np.float32],
) -> None:
    i = thread.index_1d()
    j = thread.index_2d()
    o1[j] = a[i]  # type: ignore[index]
    o2[i] = a[i]  # type: ignore[index]
    pb[i] = a[i]  # type: ignore[index]
    o1[thread.warp_leader()] = a[i]  # type: ignore[index]
    x = o2[i]  # type: ignore[index]
    y = a[j]  # type: ignore[index]
