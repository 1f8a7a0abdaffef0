"""Rule: a shared tile is filled through a block-local witness of its space, read with it or ints."""

from typing import assert_type

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, Local1D, Local2D, SharedTile, thread


def k(out: DisjointSlice[np.float32], out2: DisjointSlice2D[np.float32]) -> None:
    t = ss.shared.tile(256, np.float32)
    assert_type(t, SharedTile[np.float32, Local1D])
    w = thread.local_index()
    t[w] = np.float32(1.0)
    t[w] = 2.0
    for v in thread.block_stride(t):
        t[v] = t[v] + 1
    ss.block.sync()
    x: np.float32 = t[255 - w.index]
    out[thread.index_1d()] = x + t[w] + len(t)

    t2 = ss.shared.tile((16, 16), np.float32)
    assert_type(t2, SharedTile[np.float32, Local2D])
    w2 = thread.local_index_2d()
    t2[w2] = np.float32(w2.row)
    ss.block.sync()
    out2[thread.index_2d()] = t2[w2.col, w2.row] + t2.shape[0]

    d = ss.shared.dynamic_tile(np.float32)
    assert_type(d, SharedTile[np.float32, Local1D])
    d[w] = 0.0
