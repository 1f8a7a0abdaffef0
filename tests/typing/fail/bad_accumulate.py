"""Rule: accumulators are updated only by add/min/max with an int index; shared ones read."""

import numpy as np

import simtsafe as ss
from simtsafe import Accumulate, In, thread


def k(h: Accumulate[np.uint32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    x = h[0]  # type: ignore[index]
    h[0] = 1  # type: ignore[index]
    h.add(a[i], 1)  # type: ignore[arg-type]
    h.add(i, 1)  # type: ignore[arg-type]
    h.add(0, "one")  # type: ignore[arg-type]
    h.sub(0, 1)  # type: ignore[attr-defined]
    bins = ss.shared.accumulator(8, np.uint32)
    bins[0] = 1  # type: ignore[index]
