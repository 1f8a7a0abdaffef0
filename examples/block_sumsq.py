"""Per-block sum of squares with one writer per block (Tier 1, no shared memory).

``thread.block_leader()`` is valid in thread (0, 0, 0) of each block only,
so each block's partial result has exactly one writer. The leader loops
over its block's range of the input; the host adds the partials. (A
shared-memory tree reduction is faster; it needs ``simtsafe.unsafe``.)
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, PerBlock, thread

BLOCK = 256


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=(BLOCK, 1, 1), requires=["partial.size * 256 >= x.size"], covers="partial"
    )
)
def block_sumsq(partial: DisjointSlice[np.float64, PerBlock], x: In[np.float32]) -> None:
    w = thread.block_leader()  # one writer per block
    if w.in_bounds(partial):
        start = w.index * BLOCK
        stop = min(start + BLOCK, x.size)
        acc = 0.0
        for k in range(start, stop):
            v = np.float64(x[k])
            acc += v * v
        partial[w] = acc


def run(n: int = 1_000_000) -> bool:
    """Sum of squares of n random values via per-block partials; compare with numpy."""
    x = np.random.default_rng(4).standard_normal(n).astype(np.float32)
    blocks = ss.cover(n, BLOCK)
    d_partial = cuda.to_device(np.full(blocks, np.nan))
    block_sumsq.prepare(grid=blocks, block=BLOCK)(d_partial, cuda.to_device(x))
    total = d_partial.copy_to_host().sum()
    return bool(np.isclose(total, np.sum(x.astype(np.float64) ** 2), rtol=1e-9))


if __name__ == "__main__":
    print("block_sumsq matches numpy:", run())
