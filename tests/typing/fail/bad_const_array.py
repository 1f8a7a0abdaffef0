"""Rule: a constant array is read-only: any store into it is an error."""

import numpy as np
from numba import cuda

from simtsafe import thread

LUT = np.zeros((3, 4), dtype=np.float32)


def k() -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
    t[0, 1] = np.float32(1)  # type: ignore[index]
    t[i.index, 0] = np.float32(1)  # type: ignore[index]
