"""Rule: a constant array (cuda.const.array_like of a module-level array) is read by ints."""

from typing import assert_type

import numpy as np
from numba import cuda

from simtsafe import DisjointSlice, thread

LUT = np.zeros((3, 4), dtype=np.float32)


def k(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
    assert_type(t[1, 2], np.float32)
    out[i] = t[0, i.index] + np.float32(t.size + len(t) + t.shape[0] + t.ndim)
