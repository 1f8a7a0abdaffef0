"""Rule: a value of the wrong element type cannot be stored."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(
    out: DisjointSlice[np.float32],
    n: DisjointSlice[np.int32],
    a: In[np.float32],
    ai: In[np.int32],
    d: In[np.float64],
) -> None:
    i = thread.index_1d()
    out[i] = "1.0"  # type: ignore[call-overload]
    out[i] = i  # type: ignore[call-overload]
    out[i] = ai[i]  # type: ignore[call-overload]
    out[i] = d[i]  # type: ignore[deprecated]
    out[i] = a[i] * d[i]  # type: ignore[deprecated]
    n[i] = 1.5  # type: ignore[call-overload]
    n[i] = a[i]  # type: ignore[call-overload]
    out.unchecked[0] = "x"  # type: ignore[call-overload]
