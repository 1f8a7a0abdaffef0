"""Rule: a shared tile is written only through a block-local witness of its own space."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, thread


def k(out: DisjointSlice[np.float32]) -> None:
    t = ss.shared.tile(256, np.float32)
    t2 = ss.shared.tile((16, 16), np.float32)
    i = thread.index_1d()
    t[3] = np.float32(1.0)  # type: ignore[index]
    t[i] = np.float32(1.0)  # type: ignore[index]
    t[thread.local_index_2d()] = np.float32(1.0)  # type: ignore[index]
    t2[thread.local_index()] = np.float32(1.0)  # type: ignore[index]
    t2[0, 0] = np.float32(1.0)  # type: ignore[index]
    out[i] = t[i]  # type: ignore[index]
