"""Rule: grid.read reads outputs (never inputs) by plain ints; grid.sync takes no argument."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def k(a: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    ss.grid.sync(1)  # type: ignore[call-arg]
    v = ss.grid.read(x, 0)  # type: ignore[call-overload]
    a[w] = v + ss.grid.read(a, 1.5)  # type: ignore[call-overload]
