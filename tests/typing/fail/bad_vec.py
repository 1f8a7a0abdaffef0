"""Rule: vec.load reads inputs only, with the index its rank needs and n in {2, 4, 8};
vec.store writes an output tile a tuple of values; vec.store_at writes a raw array."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, In2D, thread


def k(out: DisjointSlice[np.float32], a: In[np.float32], w: In2D[np.float32], j: int) -> None:
    i = thread.index_1d()
    ss.vec.load(a, j, 3)  # type: ignore[call-overload]
    ss.vec.load(a, (0, j), 4)  # type: ignore[call-overload]
    ss.vec.load(w, j, 4)  # type: ignore[call-overload]
    ss.vec.load(out, j, 4)  # type: ignore[call-overload]
    ss.vec.load_runs(a, j, 4)  # type: ignore[call-overload]
    ss.vec.load_runs(w, (j, j), 4)  # type: ignore[call-overload]
    ss.vec.load_runs(out, (j,), 4)  # type: ignore[call-overload]
    out[i] = a[i]
    ss.vec.store(out, (a[i], a[i]))  # type: ignore[arg-type]
    ss.vec.store(thread.tile_1d(out, 2), [a[i], a[i]])  # type: ignore[arg-type]
    with ss.unsafe("SAFETY: typing corpus"):
        ss.vec.store_at(out, j, (a[i], a[i]))  # type: ignore[arg-type]
        ss.vec.store_at(a, j, (a[i], a[i]))  # type: ignore[arg-type]
