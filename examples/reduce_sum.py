"""Sum of a float32 array with the threads of each block cooperating (Tier 1: no unsafe code).

Schedule (the same as ``coop_raw.reduce_sum_raw``): a fixed grid of
``BLOCKS_PER_SM`` blocks per SM walks the input grid-stride, four elements
per step into four independent accumulators (so four loads per thread are in
flight); ``simtsafe.block.sum`` adds the 256 per-thread sums (warp shuffles
and a small shared buffer); the block leader writes the block's partial.
A second launch of the same kernel, with one block, adds the partials.

Two ways to finish, both Tier 1:

* ``reduce_sum`` + a second launch (``make_reduce_sum``): **deterministic** --
  for a fixed grid, every run adds the same numbers in the same order, so
  the result is bitwise reproducible.
* ``reduce_sum_atomic``: one ``Accumulate.add`` per block into a zeroed
  one-element output, no second launch; the blocks' atomic additions land
  in an order that varies from run to run, so the float32 result can differ
  in its last bits between runs (integer sums would not).

Why no ``thread.grid_stride``: it visits one element per step; the unrolled
loop below reads the input (an ``In``, readable at any index) with plain
integer indices, which Tier 1 allows -- only writes need witnesses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import Accumulate, DisjointSlice, In, PerBlock, thread

BLOCK = 256
BLOCKS_PER_SM = 8


@ss.device
def thread_sum(x: In[np.float32]) -> np.float32:
    """This thread's grid-stride share of ``x``: four independent accumulators."""
    n = x.size
    p = cuda.gridsize(1)
    a0 = np.float32(0.0)
    a1 = np.float32(0.0)
    a2 = np.float32(0.0)
    a3 = np.float32(0.0)
    k = cuda.grid(1)
    while k + 3 * p < n:
        a0 += x[k]
        a1 += x[k + p]
        a2 += x[k + 2 * p]
        a3 += x[k + 3 * p]
        k += 4 * p
    while k < n:
        a0 += x[k]
        k += p
    return (a0 + a1) + (a2 + a3)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), covers="partial"))
def reduce_sum(partial: DisjointSlice[np.float32, PerBlock], x: In[np.float32]) -> None:
    total: np.float32 = ss.block.sum(thread_sum(x))  # every thread gets the block's sum
    w = thread.block_leader()  # thread 0 of each block: one writer per partial
    partial[w] = total


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def reduce_sum_atomic(total: Accumulate[np.float32], x: In[np.float32]) -> None:
    s: np.float32 = ss.block.sum(thread_sum(x))
    if cuda.threadIdx.x == 0:
        total.add(0, s)  # one atomic per block; float order varies run to run


def first_pass_blocks() -> int:
    """Blocks of the first pass on the current GPU: enough to fill every SM."""
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT) * BLOCKS_PER_SM


def make_reduce_sum(x: Any, partial: Any, result: Any) -> Callable[[], None]:
    """Prepared launches for ``result[0] = sum(x)``: ``partial.size`` blocks, then one."""
    first = reduce_sum.prepare(grid=partial.size, block=BLOCK)
    second = reduce_sum.prepare(grid=1, block=BLOCK)

    def launch() -> None:
        first(partial, x)
        second(result, partial)

    return launch


def make_reduce_sum_atomic(x: Any, result: Any, blocks: int) -> Callable[[], None]:
    """A prepared launch of ``blocks`` blocks adding ``sum(x)`` into ``result[0]`` (zero it first)."""
    launch = reduce_sum_atomic.prepare(grid=blocks, block=BLOCK)
    return lambda: launch(result, x)


def run(n: int = 1_000_003, blocks: int = 0) -> bool:
    """Sum n random floats both ways; compare with numpy (float64) to float32 accuracy.

    ``blocks``: blocks of the first pass (0: ``first_pass_blocks()``).
    """
    blocks = blocks or first_pass_blocks()
    x = np.random.default_rng(11).random(n, dtype=np.float32)
    d_x = cuda.to_device(x)
    expected = x.astype(np.float64).sum()
    partial = cuda.to_device(np.full(blocks, np.nan, np.float32))
    result = cuda.to_device(np.full(1, np.nan, np.float32))
    make_reduce_sum(d_x, partial, result)()
    ok = bool(np.isclose(result.copy_to_host()[0], expected, rtol=1e-5))
    acc = cuda.to_device(np.zeros(1, np.float32))
    make_reduce_sum_atomic(d_x, acc, blocks)()
    return ok and bool(np.isclose(acc.copy_to_host()[0], expected, rtol=1e-5))


if __name__ == "__main__":
    print("reduce_sum matches numpy:", run())
