"""Rule: grid.read reads an output by index and gives its element type; grid.sync takes nothing."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, thread


def k(a: DisjointSlice[np.float32], b: DisjointSlice2D[np.float64]) -> None:
    w = thread.index_1d()
    ss.grid.sync()
    v: np.float32 = ss.grid.read(a, w.index + 1)
    u: np.float64 = ss.grid.read(b, (0, w.index))
    a[w] = v + np.float32(u)
