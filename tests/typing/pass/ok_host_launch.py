"""Host side: prepare takes ints or tuples of ints and returns a PreparedLaunch."""

from __future__ import annotations

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i]


def host(n: int) -> None:
    launch = k.prepare(grid=ss.cover(n, 256), block=256)
    assert_type(launch, ss.PreparedLaunch)
    k.prepare(grid=(4, 2), block=(256, 1, 1), shared_mem=0)
    k.prepare(grid=np.int64(4), block=256)
