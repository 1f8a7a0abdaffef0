"""Rule: output tiles take an output of their rank and local int indices only."""

import numpy as np

from simtsafe import DisjointSlice, DisjointSlice2D, thread


def k(out: DisjointSlice[np.float32], out2: DisjointSlice2D[np.float32]) -> None:
    thread.tile_1d(out2, 4)  # type: ignore[arg-type]
    thread.tile_2d(out, 2, 2)  # type: ignore[arg-type]
    thread.tile_2d_strided(out, 2, 2)  # type: ignore[arg-type]
    t = thread.tile_1d(out, 4)
    t[thread.index_1d()] = np.float32(1.0)  # type: ignore[index]
    s = thread.tile_2d(out2, 2, 2)
    s[0] = np.float32(1.0)  # type: ignore[index]
    s[thread.index_2d()] = np.float32(1.0)  # type: ignore[index]
