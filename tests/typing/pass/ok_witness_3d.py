"""Rule: 3D witnesses address 3D slices and inputs; their coordinates are z, y, x."""

import numpy as np
from typing_extensions import assert_type

from simtsafe import (
    DisjointSlice2D,
    DisjointSlice3D,
    In3D,
    Index3D,
    ThreadIndex,
    thread,
)


def k(o3: DisjointSlice3D[np.float32], a3: In3D[np.float32], o2: DisjointSlice2D[np.float32]) -> None:
    w = thread.index_3d()
    assert_type(w, ThreadIndex[Index3D])
    o3[w] = a3[w]
    if w.in_bounds(a3) and w.z > 0:
        o3[w] = a3[w.z - 1, w.y, w.x] + o3[w]
    nz, ny, nx = a3.shape
    o3[w] = np.float32(nz * ny * nx)
    v = thread.index_2d()
    o2[v] = a3[0, v.y, v.x] + a3[0, v.row, v.col]
