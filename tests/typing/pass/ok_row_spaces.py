"""Rule: a row space's output is written through its own row walk's witness."""

import numpy as np

from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, RowChunk, WarpRow, thread


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
    carry = np.float32(0.0)
    for c in thread.block_row_chunks(ob):
        assert_type(c, RowChunk[BlockRow])
        val = x[c]
        ob[c] = ss.block.scan(val) + carry
        carry += ss.block.sum(val)
        if c.valid:
            ob[c] = x[c.row, c.col] + c.chunk
    for d in thread.warp_row_chunks(x):
        ow[d] = ss.warp.scan(x[d])
        assert_type(d.valid, bool)
