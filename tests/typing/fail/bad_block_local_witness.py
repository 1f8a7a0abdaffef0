"""Rule: a block-local witness never writes an output (it is unique within a block only)."""

import numpy as np

from simtsafe import DisjointSlice, DisjointSlice2D, thread


def k(out: DisjointSlice[np.float32], out2: DisjointSlice2D[np.float32]) -> None:
    out[thread.local_index()] = np.float32(1.0)  # type: ignore[index]
    out2[thread.local_index_2d()] = np.float32(1.0)  # type: ignore[index]
