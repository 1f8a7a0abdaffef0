"""vecadd: out = a + b, one element per thread (Tier 1: no unsafe code)."""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

BLOCK = 256


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        block=(BLOCK, 1, 1),
        requires=["a.size == out.size", "b.size == out.size"],
        covers="out",
    )
)
def vecadd(out: DisjointSlice[np.float32], a: In[np.float32], b: In[np.float32]) -> None:
    i = thread.index_1d()  # unique per thread: the contract proves a 1D launch
    out[i] = a[i] + b[i]  # bounds-checked: threads past the end write nothing


def run(n: int = 100_003) -> bool:
    """Launch vecadd on n random elements; return whether it matches numpy."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    d_out = cuda.to_device(np.full(n, np.nan, dtype=np.float32))
    launch = vecadd.prepare(grid=ss.cover(n, BLOCK), block=BLOCK)
    launch(d_out, cuda.to_device(a), cuda.to_device(b))
    return bool(np.array_equal(d_out.copy_to_host(), a + b))


if __name__ == "__main__":
    print("vecadd matches numpy:", run())
