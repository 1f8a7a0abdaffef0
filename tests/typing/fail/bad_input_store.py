"""Rule: any store into an In / In2D is an error."""

import numpy as np

from simtsafe import (
    In,
    In2D,
    thread,
)


def k(a: In[np.float32], b: In2D[np.float32]) -> None:
    i = thread.index_1d()
    j = thread.index_2d()
    a[i] = np.float32(1)  # type: ignore[index]
    a[0] = np.float32(1)  # type: ignore[index]
    b[j] = np.float32(1)  # type: ignore[index]
    b[0, 0] = np.float32(1)  # type: ignore[index]
