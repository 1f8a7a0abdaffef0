"""Rule: a witness has no arithmetic or comparison; its plain ints do."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.index + 1 < a.size and i.index % 2 == 0:
        out[i] = a[i.index + 1]
