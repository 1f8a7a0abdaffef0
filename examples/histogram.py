"""256-bin histogram of bytes with per-block shared accumulators (Tier 1: no unsafe code).

Each block counts into its own 256 bins in shared memory
(``simtsafe.shared.accumulator``: atomic adds only, so concurrent updates
of one bin never race), then, after ``simtsafe.block.sync()``, adds its
non-zero bins to the output with one atomic per bin (``Accumulate``): a few
hundred global atomics per block instead of one per byte. Integer atomics
are exact, so the result is the same on every run.

The input is read four bytes at a time: the kernel gets the data twice, as
``uint32`` words (``as_words``: a view, no copy) and as bytes for the at most
three trailing bytes. Both are inputs (``In``), which may alias each other;
the grid-stride loop takes two words per step so that two loads per thread
are in flight. ``counts`` must be zero before the launch (an ``Accumulate``
output is only ever added to).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import Accumulate, In

NBINS = 256
BLOCK = 256


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def histogram(counts: Accumulate[np.uint32], words: In[np.uint32], data: In[np.uint8]) -> None:
    h = ss.shared.accumulator(NBINS, np.uint32)  # zeroed by the block before use
    i = cuda.grid(1)
    p = cuda.gridsize(1)
    nw = words.size
    k = i
    while k + p < nw:
        w0 = words[k]
        w1 = words[k + p]
        h.add(w0 & 0xFF, 1)
        h.add((w0 >> 8) & 0xFF, 1)
        h.add((w0 >> 16) & 0xFF, 1)
        h.add(w0 >> 24, 1)
        h.add(w1 & 0xFF, 1)
        h.add((w1 >> 8) & 0xFF, 1)
        h.add((w1 >> 16) & 0xFF, 1)
        h.add(w1 >> 24, 1)
        k += 2 * p
    while k < nw:
        w0 = words[k]
        h.add(w0 & 0xFF, 1)
        h.add((w0 >> 8) & 0xFF, 1)
        h.add((w0 >> 16) & 0xFF, 1)
        h.add(w0 >> 24, 1)
        k += p
    t = 4 * nw + i  # the trailing bytes past the last whole word
    if t < data.size:
        h.add(data[t], 1)
    ss.block.sync()  # the block's updates end here; reads follow
    for j in range(cuda.threadIdx.x, NBINS, BLOCK):
        v = h[j]
        if v != 0:
            counts.add(j, v)


def as_words(d_data: Any) -> Any:
    """The whole 4-byte words of a uint8 device array, as a uint32 view (no copy)."""
    nw = d_data.size // 4
    return d_data[: 4 * nw].view(np.uint32)


def run(n: int = 1_000_003, blocks: int = 16) -> bool:
    """Histogram of n random bytes on a fixed grid; compare with numpy's bincount (exact)."""
    data = np.random.default_rng(15).integers(0, 256, n, dtype=np.uint8)
    d_data = cuda.to_device(data)
    d_counts = cuda.to_device(np.zeros(NBINS, np.uint32))
    histogram.prepare(grid=blocks, block=BLOCK)(d_counts, as_words(d_data), d_data)
    return bool(np.array_equal(d_counts.copy_to_host(), np.bincount(data, minlength=NBINS)))


if __name__ == "__main__":
    print("histogram matches numpy:", run())
