"""Rule: passing a ThreadIndex where an int is expected is an error."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def helper(n: int) -> int:
    return n * 2


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    helper(i)  # type: ignore[arg-type]
    for _ in range(i):  # type: ignore[call-overload]
        pass
    n: int = i  # type: ignore[assignment]
    j = thread.index_2d()
    r = j.index  # type: ignore[misc]
    c = i.row  # type: ignore[misc]
