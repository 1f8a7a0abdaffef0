"""Rule: a witness is not an int; w.index is."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def helper(n: int) -> int:
    return n * 2


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[helper(i.index) % a.size]
    for _ in range(i.index):
        pass
