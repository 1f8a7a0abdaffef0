"""Sum of a float32 (or int32) array at read bandwidth, in one launch (Tier 1: no unsafe code).

Schedule: a cooperative grid (``BLOCKS_PER_SM`` blocks of 256 threads per
SM, all resident at once) walks the input grid-stride in 16-byte runs
(``simtsafe.vec.load``: one ``ld.global.v4`` each), four runs per step into
four independent accumulators, so each thread keeps 64 bytes of loads in
flight; ``simtsafe.block.sum`` adds the block's threads; each block leader
writes the block's partial; ``simtsafe.grid.sync()`` waits for every block;
block 0 reads the partials (``simtsafe.grid.read``: a read of other
threads' writes, allowed in a grid phase that does not write them) and
adds them up; its leader writes the total.

**Deterministic**: every thread adds the same elements in the same order on
every run (the runs it reads depend only on the grid), the block sums fold
in warp order, and block 0 adds the partials in block order -- for a given
grid, the float32 result is the same bit for bit on every run (no float
atomics). A different grid (another GPU) adds in another order.

int32 input: summed in int64 (numpy's ``x.sum()`` of int32 is int64 too),
exactly.

Why cooperative: the total needs every block's partial, so either a second
launch (examples/reduce_sum.py), a "last block" handshake through an atomic
ticket (Tier 2: an unsafe region), or a grid barrier -- which Tier 1 has
(``cooperative=True``: ``prepare`` checks that every block is resident).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, PerBlock, thread

BLOCK = 256
BLOCKS_PER_SM = 4  # 1024 threads per SM, 64 bytes of loads in flight each


@ss.device
def runs_sum_f32(x: In[np.float32]) -> np.float32:
    """This thread's grid-stride share of ``x``, read in 16-byte runs (0 past the end)."""
    p = cuda.gridsize(1)
    runs = (x.size + 3) // 4
    a0 = np.float32(0.0)
    a1 = np.float32(0.0)
    a2 = np.float32(0.0)
    a3 = np.float32(0.0)
    r = cuda.grid(1)
    while r + 3 * p < runs:  # four independent 16-byte loads per step
        u = ss.vec.load(x, r, 4)
        v = ss.vec.load(x, r + p, 4)
        w = ss.vec.load(x, r + 2 * p, 4)
        z = ss.vec.load(x, r + 3 * p, 4)
        a0 += (u[0] + u[1]) + (u[2] + u[3])
        a1 += (v[0] + v[1]) + (v[2] + v[3])
        a2 += (w[0] + w[1]) + (w[2] + w[3])
        a3 += (z[0] + z[1]) + (z[2] + z[3])
        r += 4 * p
    while r < runs:
        u = ss.vec.load(x, r, 4)
        a0 += (u[0] + u[1]) + (u[2] + u[3])
        r += p
    return (a0 + a1) + (a2 + a3)


@ss.device
def runs_sum_i32(x: In[np.int32]) -> np.int64:
    """As ``runs_sum_f32``, for int32 elements added in int64."""
    p = cuda.gridsize(1)
    runs = (x.size + 3) // 4
    a0 = np.int64(0)
    a1 = np.int64(0)
    r = cuda.grid(1)
    while r + p < runs:
        u = ss.vec.load(x, r, 4)
        v = ss.vec.load(x, r + p, 4)
        a0 += np.int64(u[0]) + np.int64(u[1]) + np.int64(u[2]) + np.int64(u[3])
        a1 += np.int64(v[0]) + np.int64(v[1]) + np.int64(v[2]) + np.int64(v[3])
        r += 2 * p
    while r < runs:
        u = ss.vec.load(x, r, 4)
        a0 += np.int64(u[0]) + np.int64(u[1]) + np.int64(u[2]) + np.int64(u[3])
        r += p
    return a0 + a1


CONTRACT = ss.LaunchContract(
    domain=1,
    block=BLOCK,
    cooperative=True,
    requires=["partial.size >= grid.x", "total.size >= 1"],
)


@ss.kernel(contract=CONTRACT)
def sum_f32(
    total: DisjointSlice[np.float32, PerBlock],
    partial: DisjointSlice[np.float32, PerBlock],
    x: In[np.float32],
) -> None:
    leader = thread.block_leader()
    s: np.float32 = ss.block.sum(runs_sum_f32(x))
    partial[leader] = s
    ss.grid.sync()  # every partial is written
    if cuda.blockIdx.x == 0:  # block-uniform: the whole of block 0 adds the partials
        acc = np.float32(0.0)
        for b in range(cuda.threadIdx.x, cuda.gridDim.x, BLOCK):
            acc += ss.grid.read(partial, b)
        t: np.float32 = ss.block.sum(acc)
        total[leader] = t  # block 0's leader: total[0]


@ss.kernel(contract=CONTRACT)
def sum_i32(
    total: DisjointSlice[np.int64, PerBlock],
    partial: DisjointSlice[np.int64, PerBlock],
    x: In[np.int32],
) -> None:
    leader = thread.block_leader()
    s: np.int64 = ss.block.sum(runs_sum_i32(x))
    partial[leader] = s
    ss.grid.sync()
    if cuda.blockIdx.x == 0:
        acc = np.int64(0)
        for b in range(cuda.threadIdx.x, cuda.gridDim.x, BLOCK):
            acc += ss.grid.read(partial, b)
        t: np.int64 = ss.block.sum(acc)
        total[leader] = t


def grid_blocks() -> int:
    """Blocks of the cooperative grid on the current GPU (2 on the simulator)."""
    if ss.SIMULATOR:
        return 2
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT) * BLOCKS_PER_SM


def make_sum(x: Any, total: Any, blocks: int = 0) -> Callable[[], None]:
    """A prepared launch writing ``sum(x)`` into ``total[0]`` (float32 -> float32, int32 -> int64)."""
    blocks = blocks or grid_blocks()
    kernel = sum_f32 if x.dtype == np.float32 else sum_i32
    partial = cuda.device_array(blocks, total.dtype)
    launch = kernel.prepare(grid=blocks, block=BLOCK)
    return lambda: launch(total, partial, x)


def run(n: int = 1_000_003, blocks: int = 0) -> bool:
    """Sum n random floats and n random ints; compare with numpy (and with a second run, bitwise)."""
    rng = np.random.default_rng(21)
    x = rng.random(n, dtype=np.float32)
    d_x = cuda.to_device(x)
    total = cuda.to_device(np.full(1, np.nan, np.float32))
    launch = make_sum(d_x, total, blocks)
    launch()
    first = total.copy_to_host()[0]
    launch()
    again = total.copy_to_host()[0]
    ok = bool(np.isclose(first, x.astype(np.float64).sum(), rtol=1e-5)) and first == again
    xi = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
    itotal = cuda.to_device(np.zeros(1, np.int64))
    make_sum(cuda.to_device(xi), itotal, blocks)()
    return ok and int(itotal.copy_to_host()[0]) == int(xi.astype(np.int64).sum())


if __name__ == "__main__":
    print("sum_vec matches numpy:", run())
