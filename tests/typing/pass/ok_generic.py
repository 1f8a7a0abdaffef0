"""Rule: a dtype-generic kernel (one TypeVar for several views) type-checks."""

from typing import TypeVar

import numpy as np

from simtsafe import DisjointSlice, In, thread

T = TypeVar("T", np.float32, np.float64)


def axpy(out: DisjointSlice[T], alpha: T, x: In[T], y: In[T]) -> None:
    for w in thread.grid_stride(out):
        out[w] = alpha * x[w] + y[w]
