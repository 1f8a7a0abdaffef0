"""Inclusive prefix sum of an int32 array, reduce-then-scan (Tier 1: no unsafe code).

``out[i] = x[0] + ... + x[i]`` (int32, wrapping like numpy's
``cumsum(dtype=np.int32)``). The array is cut into tiles of ``TILE = 256 x 9``
consecutive elements, one block per tile:

1. ``tile_totals``: each block sums its tile (nine coalesced loads per
   thread, all in flight at once, then ``simtsafe.block.sum``); the block
   leader writes the tile's total.
2. The tile totals are scanned by the same two kernels, recursively (2^26
   elements: 29,128 totals, then 13, then one tile).
3. ``tile_scan``: each block loads its tile again into a shared tile
   (coalesced, through ``thread.block_stride``), each thread adds up its nine
   *consecutive* elements, ``simtsafe.block.scan`` gives every thread the sum
   of the threads before it, the running sums go into a second shared tile
   and come back out coalesced, plus the total of the tiles before this one.

The input is read twice and the output written once: 3 n element transfers,
where a single-pass scan (CUB's decoupled look-back, which CuPy's
``cumsum`` uses) needs 2 n -- it makes each block wait for a flag written by
the block before it, a cross-block handshake that no Tier-1 proof covers
(it needs ``simtsafe.unsafe`` for the spin-wait and the flag atomics). So
this schedule can reach about two thirds of CuPy's bandwidth, not more.

Why the block is ``(1, 256, 1)`` and the output is passed as an ``(n, 1)``
view: ownership in Tier 1 comes from the thread's coordinates. A 1D tile
filled with ``block_stride`` gives thread t the elements t, t + 256, ...
(coalesced); a ``(256, 9)`` tile filled with ``block_stride`` in a block whose
256 threads run along y gives thread t row t -- its nine consecutive
elements. And ``thread.tile_2d_strided(out2, 9, 1)`` over an ``(n, 1)`` view
gives thread t of block b the rows ``b * TILE + t + 256 r``: the coalesced
store of the tile. (The grid runs along y, so one launch covers at most
65,535 tiles: 150,991,360 elements.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, In, PerBlock, thread

BLOCK = 256
ITEMS = 9  # odd: thread t's consecutive elements t*9 .. t*9+8 sit in distinct banks
TILE = BLOCK * ITEMS


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), covers="totals"))
def tile_totals(totals: DisjointSlice[np.int32, PerBlock], x: In[np.int32]) -> None:
    t = cuda.threadIdx.x
    n = x.size
    base = cuda.blockIdx.x * TILE
    s = np.int32(0)
    for k in range(ITEMS):  # nine independent, coalesced loads
        q = base + k * BLOCK + t
        if q < n:
            s += x[q]
    total = ss.block.sum(np.int32(s))
    w = thread.block_leader()
    totals[w] = total


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=(1, BLOCK, 1),
        requires=["out2.shape[0] == x.size", "out2.shape[1] == 1", "prefix.size >= 1"],
    )
)
def tile_scan(out2: DisjointSlice2D[np.int32], x: In[np.int32], prefix: In[np.int32]) -> None:
    t = cuda.threadIdx.y
    b = cuda.blockIdx.y
    n = x.size
    base = b * TILE
    a = ss.shared.tile(TILE, np.int32)
    for w in thread.block_stride(a):  # fill: thread t takes t, t + 256, ... (coalesced)
        q = base + w.index
        a[w] = x[q] if q < n else np.int32(0)
    ss.block.sync()
    tot = np.int32(0)
    for j in range(ITEMS):  # read phase: this thread's nine consecutive elements
        tot += a[t * ITEMS + j]
    run = ss.block.scan(np.int32(tot), inclusive=False)  # sum of the threads before t
    if b > 0:
        run += prefix[b - 1]  # total of the tiles before this one
    scanned = ss.shared.tile((BLOCK, ITEMS), np.int32)
    for v in thread.block_stride(scanned):  # fill: thread t takes row t, columns 0..8 in order
        run += a[v.row * ITEMS + v.col]
        scanned[v] = run
    ss.block.sync()
    o = thread.tile_2d_strided(out2, ITEMS, 1)  # rows base + t + 256 r of the (n, 1) view
    for r in range(ITEMS):
        pos = r * BLOCK + t
        o[r, 0] = scanned[pos // ITEMS, pos % ITEMS]


def make_scan(x: Any, out: Any) -> Callable[[], None]:
    """Prepared launches of an inclusive scan of ``x`` into ``out``; temporaries made once."""
    steps: list[tuple[Any, tuple[Any, ...]]] = []

    def plan(dst: Any, src: Any) -> None:
        blocks = max(1, math.ceil(src.size / TILE))
        scan_launch = tile_scan.prepare(grid=(1, blocks), block=(1, BLOCK, 1))
        dst2 = dst.reshape(dst.size, 1)
        if blocks == 1:
            steps.append((scan_launch, (dst2, src, cuda.to_device(np.zeros(1, np.int32)))))
            return
        totals = cuda.device_array(blocks, np.int32)
        prefix = cuda.device_array(blocks, np.int32)
        steps.append((tile_totals.prepare(grid=blocks, block=BLOCK), (totals, src)))
        plan(prefix, totals)
        steps.append((scan_launch, (dst2, src, prefix)))

    plan(out, x)

    def launch() -> None:
        for prepared, args in steps:
            prepared(*args)

    return launch


def run(n: int = 1_000_003) -> bool:
    """Scan n random small ints; compare with numpy's cumsum (exact)."""
    x = np.random.default_rng(12).integers(0, 4, n, dtype=np.int32)
    d_out = cuda.to_device(np.full(n, -1, np.int32))
    make_scan(cuda.to_device(x), d_out)()
    return bool(np.array_equal(d_out.copy_to_host(), np.cumsum(x, dtype=np.int32)))


if __name__ == "__main__":
    print("scan matches numpy:", run())
