"""Rule: a Columns output is written as out[row, w] with the thread's column witness."""

import numpy as np

from simtsafe import Columns, DisjointSlice, In, thread


def k(
    cache: DisjointSlice[np.float32, Columns],
    kv: In[np.float32],
    pos: In[np.int32],
) -> None:
    w = thread.column()
    p = int(pos[0])
    cache[p, w] = kv[w]
    cache[p + 1, w] = cache[p, w] + 1.0
    cache[w.index % 4, w] = kv[w.index]
