"""Rule: bf16 (ss.bfloat16, ml_dtypes' type) and fp16 element types; fp32 accumulation.

Type checkers see ``ss.bfloat16`` as a ``np.floating`` subclass (ml_dtypes ships no
types for it): floats store into a bf16 output; a bf16 value widens with
``np.float32(...)`` to accumulate in fp32.
"""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, In, In2D, thread


def k(
    out: DisjointSlice[ss.bfloat16],
    out2: DisjointSlice2D[ss.bfloat16],
    f: DisjointSlice[np.float32],
    h: DisjointSlice[np.float16],
    x: In[ss.bfloat16],
    m: In2D[ss.bfloat16],
    xh: In[np.float16],
    alpha: float,
) -> None:
    i = thread.index_1d()
    j = thread.index_2d()
    out[i] = x[i]
    out[i] = 1.5
    out[i] = alpha
    out2[j] = m[j]
    f[i] = x[i]  # a witness read is a float32 at runtime
    out[i] = float(np.float32(x[i]) * np.float32(2))
    f[i] = ss.block.sum(np.float32(x[i]) + np.float32(xh[i]))
    f[i] = ss.warp.sum(np.float32(m[0, 0]))
    h[i] = xh[i]
    h[i] = np.float16(np.float32(xh[i]) * np.float32(0.5))
