"""Rule: arithmetic, ordering or comparison with a non-witness on a witness is an error."""

import numpy as np

from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    j = i + 1  # type: ignore[operator]
    k2 = 2 * i  # type: ignore[operator]
    if i < 3:  # type: ignore[operator]
        pass
    if i == 3:  # type: ignore[comparison-overlap]
        pass
    if i != a.size:  # type: ignore[comparison-overlap]
        pass
    neg = -i  # type: ignore[operator]
