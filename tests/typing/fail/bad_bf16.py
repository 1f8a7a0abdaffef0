"""Rule: bf16/fp16 views keep the view and store rules; a bf16 value is not an int."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def k(
    out: DisjointSlice[ss.bfloat16],
    x: In[ss.bfloat16],
    f: DisjointSlice[np.float32],
    h: DisjointSlice[np.float16],
    n: DisjointSlice[np.int32],
    xh: In[np.float16],
) -> None:
    i = thread.index_1d()
    n[i] = x[i]  # type: ignore[call-overload]
    out[0] = x[i]  # type: ignore[call-overload]
    out[i] = "1.0"  # type: ignore[call-overload]
    x[i] = 1.0  # type: ignore[index]
    h[0] = xh[i]  # type: ignore[call-overload]
    n[i] = xh[i]  # type: ignore[call-overload]
