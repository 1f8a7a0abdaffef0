"""saxpy: out = alpha * x + y, with a grid-stride loop (Tier 1).

A fixed, small grid walks an array of any length: each thread takes the
elements i, i + P, i + 2P, ... where P is the number of threads in the
launch, which ``thread.grid_stride`` reads from the launch itself.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

BLOCK = 256


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=(BLOCK, 1, 1), requires=["x.size == out.size", "y.size == out.size"]
    )
)
def saxpy(
    out: DisjointSlice[np.float32], alpha: np.float32, x: In[np.float32], y: In[np.float32]
) -> None:
    for i in thread.grid_stride(out):  # this thread's elements only
        out[i] = alpha * x[i] + y[i]


def run(n: int = 1_000_003, blocks: int = 64) -> bool:
    """saxpy on n random elements with a fixed grid of `blocks` blocks; compare with numpy."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    alpha = np.float32(2.5)
    d_out = cuda.to_device(np.full(n, np.nan, dtype=np.float32))
    saxpy.prepare(grid=blocks, block=BLOCK)(d_out, alpha, cuda.to_device(x), cuda.to_device(y))
    return bool(np.allclose(d_out.copy_to_host(), alpha * x + y, rtol=1e-6, atol=1e-6))


if __name__ == "__main__":
    print("saxpy matches numpy:", run())
