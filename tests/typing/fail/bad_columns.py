"""Rule: a Columns output takes (row, column witness); the witness alone or another space is refused."""

import numpy as np

from simtsafe import Columns, DisjointSlice, In, thread


def k(
    cache: DisjointSlice[np.float32, Columns],
    out: DisjointSlice[np.float32],
    kv: In[np.float32],
) -> None:
    w = thread.column()
    cache[w] = kv[w]  # type: ignore[deprecated]
    cache[0, thread.index_1d()] = kv[w]  # type: ignore[index]
    cache[0, w.index] = kv[w]  # type: ignore[index]
    out[0, thread.index_1d()] = kv[w]  # type: ignore[call-overload]
    out[w] = kv[w]  # type: ignore[index]
    v = cache[0, thread.index_1d()]  # type: ignore[index]
    u = cache[w]  # type: ignore[deprecated]
    out[thread.index_1d()] = v + u
