"""Rule: block-local witnesses fill tiles; outputs take witnesses of their own space."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    t = ss.shared.tile(128, np.float32)
    w = thread.local_index()
    i = thread.index_1d()
    t[w] = a[i]
    ss.block.sync()
    out[i] = t[127 - w.index]
