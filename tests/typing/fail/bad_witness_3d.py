"""Rule: a 3D witness writes only 3D slices, and has no row/col/index; others cannot write 3D."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    DisjointSlice2D,
    DisjointSlice3D,
    In3D,
    thread,
)


def k(
    o1: DisjointSlice[np.float32],
    o2: DisjointSlice2D[np.float32],
    o3: DisjointSlice3D[np.float32],
    a3: In3D[np.float32],
) -> None:
    w = thread.index_3d()
    v = thread.index_2d()
    o3[v] = a3[w]  # type: ignore[index]
    o3[thread.index_1d()] = a3[w]  # type: ignore[index]
    o2[w] = a3[w]  # type: ignore[index]
    o1[w] = a3[w]  # type: ignore[index]
    x = a3[v]  # type: ignore[index]
    y = a3[0, 0]  # type: ignore[index]
    a3[w] = np.float32(1)  # type: ignore[index]
    r = w.row  # type: ignore[misc]
    c = w.index  # type: ignore[misc]
    z = v.z  # type: ignore[misc]
    u = w + 1  # type: ignore[operator]
