"""Rule: vec.load reads a run of an input (1D: an int j; 2D: (row, j)) with n in {2, 4, 8},
vec.load_runs a tuple of such runs;
vec.store_at writes a run of a raw array (out.unchecked)."""

from typing import assert_type

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, In2D, thread


def k(out: DisjointSlice[np.float32], a: In[np.float32], w: In2D[np.float16], j: int) -> None:
    i = thread.index_1d()
    v = ss.vec.load(a, j, 4)
    assert_type(v, tuple[np.float32, ...])
    assert_type(ss.vec.load(w, (0, j), 8), tuple[np.float16, ...])
    runs = ss.vec.load_runs(w, ((0, j), (1, j)), 8)
    assert_type(runs, tuple[tuple[np.float16, ...], ...])
    assert_type(ss.vec.load_runs(a, (j, j + 1), 4), tuple[tuple[np.float32, ...], ...])
    out[i] = v[0]
    ss.vec.store(thread.tile_1d(out, 4), v)
    with ss.unsafe("SAFETY: thread i alone writes run i"):
        ss.vec.store_at(out.unchecked, i.index, v)


def kt(out: DisjointSlice[np.float32]) -> None:
    t = ss.shared.tile((8, 64), np.float32, pad=4)
    ss.block.sync()
    r = ss.vec.load(t, (0, 2), 4)
    assert_type(r, tuple[np.float32, ...])
    out[thread.index_1d()] = r[0]
