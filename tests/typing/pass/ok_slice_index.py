"""Rule: a DisjointSlice is indexed only by a witness of its own space."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    DisjointSlice2D,
    In,
    PerBlock,
    thread,
)


def k(
    out: DisjointSlice[np.float32],
    o2: DisjointSlice2D[np.float32],
    pb: DisjointSlice[np.float32, PerBlock],
    a: In[np.float32],
) -> None:
    i = thread.index_1d()
    out[i] = a[i]
    for w in thread.grid_stride(out):
        out[w] = a[w]
    j = thread.index_2d()
    o2[j] = np.float32(0)
    pb[thread.block_leader()] = out[i]
