"""Rule: inputs are read, never written."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    In2D,
    thread,
)


def k(out: DisjointSlice[np.float32], a: In[np.float32], b: In2D[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] + a[0] + b[0, 1] + np.float32(a.size + len(a) + b.shape[0])
