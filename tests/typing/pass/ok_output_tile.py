"""Rule: an output tile is made from an output of its rank and written with local ints."""

from typing import assert_type

import numpy as np

from simtsafe import DisjointSlice, DisjointSlice2D, OutTile, OutTile2D, thread


def k(out: DisjointSlice[np.float32], out2: DisjointSlice2D[np.float32]) -> None:
    t = thread.tile_1d(out, 4)
    assert_type(t, OutTile[np.float32])
    for j in range(4):
        t[j] = np.float32(j)
    t[0] = t[1] + len(t)
    s = thread.tile_2d(out2, 2, 2)
    assert_type(s, OutTile2D[np.float32])
    s[1, 1] = 0.5
    u = thread.tile_2d_strided(out2, 8, 8)
    u[7, 7] = u[0, 0]
