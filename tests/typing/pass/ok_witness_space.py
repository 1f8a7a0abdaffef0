"""Rule: the witness's index space matches the slice's."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In2D,
    Index2D,
    thread,
)


def k(
    o1: DisjointSlice[np.float32], o2: DisjointSlice[np.float32, Index2D], b: In2D[np.float32]
) -> None:
    j = thread.index_2d()
    o2[j] = b[j]
    o2[j] = b[j.row, j.col]
    o1[thread.index_1d()] = b[0, 0]
