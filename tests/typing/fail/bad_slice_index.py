"""Rule: indexing a DisjointSlice with an int or a slice is an error."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[0] = a[i]  # type: ignore[call-overload]
    out[i.index] = a[i]  # type: ignore[call-overload]
    out[1:3] = a[i]  # type: ignore[call-overload]
    x = out[0]  # type: ignore[index]
    y = out[:]  # type: ignore[index]
