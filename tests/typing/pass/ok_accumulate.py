"""Rule: accumulators are updated only by add/min/max with an int index; shared ones read."""

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import Accumulate, DisjointSlice, In, thread


def k(h: Accumulate[np.uint32], out: DisjointSlice[np.float32], a: In[np.int32]) -> None:
    i = thread.index_1d()
    h.add(a[i], 1)
    h.max(3, np.uint32(7))
    h.min(-1, 0)
    assert_type(h.size, int)
    assert_type(len(h), int)
    bins = ss.shared.accumulator(256, np.float32)
    assert_type(bins, ss.SharedAccumulator[np.float32])
    bins.add(i.index % 256, 1.5)
    bins.max(a[i], 2)
    ss.block.sync()
    assert_type(bins[0], np.float32)
    out[i] = bins[i.index % 256]
