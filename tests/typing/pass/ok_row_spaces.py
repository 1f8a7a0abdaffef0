"""Rule: a row space's output is written through its own row walk's witness."""

import numpy as np

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, WarpRow, thread


def k(
    ob: DisjointSlice[np.float32, BlockRow],
    ow: DisjointSlice[np.float32, WarpRow],
    x: In2D[np.float32],
    g: In[np.float32],
) -> None:
    s = np.float32(0.0)
    for w in thread.block_row(x):
        s += x[w]
    s = ss.block.sum(s)
    for w in thread.block_row(ob):
        ob[w] = x[w] * g[w.col] + s + x[w.row, w.col]
    for v in thread.warp_row(ow):
        ow[v] = x[v]
