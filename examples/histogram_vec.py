"""256-bin histogram of bytes at read bandwidth, uniform or skewed data (Tier 1: no unsafe code).

examples/histogram.py counts every byte into one shared copy of the 256
bins: the 32 lanes of a warp update random bins, which share banks (uniform
data: a few lanes per bank, each waiting its turn) or the same bin (skewed
data: up to 32 lanes serialized on one address). Here each lane has its
own copy of the bins in the block's 2D shared accumulator: counter ``(b,
l)`` is bin ``b`` of lane ``l``, in bank ``l``. A warp's 32 updates then
hit 32 different banks whatever the data -- no conflict for uniform data,
no serialization for skewed data (the lanes of the 8 warps that share a
copy add atomically, so they stay correct). 8192 counters (32 KB) per
block; at the end each warp adds up the 32 copies of its bins (lane ``l``
reads copy ``l``, ``simtsafe.warp.sum`` adds them) and lane 0 adds each
total to the output with one global atomic.

The 2D accumulator is what makes the update cheap: its counter's address is
the lane's base (computed once) plus ``b`` times the row's 128 bytes, one
multiply-add a byte; the same bins as a flat accumulator indexed ``b * 32 +
lane`` cost a shift, a mask, an or and a multiply-add, as LLVM folds the
index's arithmetic together (benchmarks/primitives.py measures both).

The input is read 16 bytes at a time (``vec.load`` of four ``uint32``
words; ``as_words`` views the bytes as words without a copy), four runs per
step, all loaded before the step's 64 updates so that their latencies
overlap (kept in a thread-private array indexed by constants: registers);
the bytes past the last whole run (at most 15) are counted from the word and
byte views by the first threads. ``counts`` must be zero before
the launch (an ``Accumulate`` output is only ever added to). Integer
atomics are exact: the result is the same on every run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import Accumulate, In

NBINS = 256
BLOCK = 256
LANES = 32
BLOCKS_PER_SM = 6  # 32 KB of counters per block: six blocks fit an SM's shared memory
STEP = 4  # 16-byte runs loaded per step, before their 64 updates
WORDS = 16  # 4 * STEP: the words a step holds (a module constant: local array shapes are)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=BLOCK))
def histogram_vec(counts: Accumulate[np.uint32], words: In[np.uint32], data: In[np.uint8]) -> None:
    h = ss.shared.accumulator((NBINS, LANES), np.uint32)  # zeroed by the block before use
    lane = cuda.threadIdx.x & 31
    p = cuda.gridsize(1)
    runs = words.size // 4  # whole 16-byte runs
    r = cuda.grid(1)
    w = cuda.local.array(WORDS, np.uint32)  # a step's words (constant indices: registers)
    while r + (STEP - 1) * p < runs:  # STEP 16-byte loads per step, all in flight
        for k in range(STEP):
            u = ss.vec.load(words, r + k * p, 4)
            w[4 * k] = u[0]
            w[4 * k + 1] = u[1]
            w[4 * k + 2] = u[2]
            w[4 * k + 3] = u[3]
        for k in range(WORDS):
            a = w[k]
            for s in range(0, 32, 8):  # the word's four bytes
                h.add(((a >> s) & 0xFF, lane), 1)
        r += STEP * p
    while r < runs:  # at most STEP - 1 times
        u = ss.vec.load(words, r, 4)
        w[0] = u[0]
        w[1] = u[1]
        w[2] = u[2]
        w[3] = u[3]
        for k in range(4):
            a = w[k]
            for s in range(0, 32, 8):  # the word's four bytes
                h.add(((a >> s) & 0xFF, lane), 1)
        r += p
    i = cuda.grid(1)
    q = 4 * runs + i  # the words past the last whole run (at most 3)
    if q < words.size:
        a = words[q]
        for s in range(0, 32, 8):  # the word's four bytes
            h.add(((a >> s) & 0xFF, lane), 1)
    t = 4 * words.size + i  # the bytes past the last whole word (at most 3)
    if t < data.size:
        h.add((np.int32(data[t]), lane), 1)
    ss.block.sync()  # the block's updates end here; reads follow
    # Warp w adds up bins w, w + 8, ...: lane l reads copy l (bank l), warp.sum adds the 32.
    # (The loop's trip count is the same in every thread: the analysis sees it uniform.)
    for k in range(NBINS // (BLOCK // 32)):
        j = k * (BLOCK // 32) + cuda.threadIdx.x // 32
        total = ss.warp.sum(h[j, lane])
        if lane == 0 and total != 0:
            counts.add(j, total)


def as_words(d_data: Any) -> Any:
    """The whole 4-byte words of a uint8 device array, as a uint32 view (no copy)."""
    nw = d_data.size // 4
    return d_data[: 4 * nw].view(np.uint32)


def grid_blocks() -> int:
    """Blocks of the grid-stride launch on the current GPU (2 on the simulator)."""
    if ss.SIMULATOR:
        return 2
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT) * BLOCKS_PER_SM


def run(n: int = 1_000_003, blocks: int = 0) -> bool:
    """Histograms of n uniform and n skewed bytes; compare with numpy's bincount (exact)."""
    rng = np.random.default_rng(16)
    blocks = blocks or grid_blocks()
    launch = histogram_vec.prepare(grid=blocks, block=BLOCK)
    ok = True
    for data in (
        rng.integers(0, 256, n, dtype=np.uint8),  # uniform
        np.where(rng.random(n) < 0.9, 7, rng.integers(0, 256, n)).astype(np.uint8),  # skewed
    ):
        d_data = cuda.to_device(data)
        d_counts = cuda.to_device(np.zeros(NBINS, np.uint32))
        launch(d_counts, as_words(d_data), d_data)
        ok = ok and bool(
            np.array_equal(d_counts.copy_to_host(), np.bincount(data, minlength=NBINS))
        )
    return ok


if __name__ == "__main__":
    print("histogram_vec matches numpy:", run())
