"""Rule: stores into a DisjointSlice take its element type or a same-kind Python scalar."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(
    out: DisjointSlice[np.float32],
    d: DisjointSlice[np.float64],
    n: DisjointSlice[np.int32],
    fl: DisjointSlice[np.bool_],
    a: In[np.float32],
    alpha: float,
    m: int,
) -> None:
    i = thread.index_1d()
    out[i] = a[i]
    out[i] = a[i] * 2.0
    out[i] = alpha * a[i] + a[i]
    out[i] = 0.0
    out[i] = 0
    out[i] = alpha
    out[i] = np.float32(alpha)
    d[i] = a[i]
    d[i] = np.float64(1.5)
    d[i] = 1.5
    n[i] = m
    n[i] = np.int32(m)
    fl[i] = True
    fl[i] = a[i] > 0
