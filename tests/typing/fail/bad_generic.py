"""Rule: in a dtype-generic kernel, a value of another element type cannot be stored."""

from typing import TypeVar

import numpy as np

from simtsafe import DisjointSlice, In, thread

T = TypeVar("T", np.float32, np.float64)


def copy(out: DisjointSlice[T], x: In[np.int32]) -> None:
    i = thread.index_1d()
    out[i] = x[i]  # type: ignore[call-overload]
