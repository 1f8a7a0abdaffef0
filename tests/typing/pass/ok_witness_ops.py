"""Rule: a witness has no arithmetic or comparison; its plain ints do."""
import numpy as np
from numba import cuda

from simtsafe import DisjointSlice, DisjointSlice2D, In, In2D, Index2D, PerBlock, ThreadIndex, thread


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.index + 1 < a.size and i.index % 2 == 0:
        out[i] = a[i.index + 1]
