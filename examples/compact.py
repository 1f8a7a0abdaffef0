"""Stream compaction: keep the elements above a threshold, in Tier 1 (no unsafe code).

``compact`` walks the input in rounds of one element per thread, the same
number of rounds in every thread of a block (computed from the size and the
grid, so the loop is block-uniform). In each round every thread of the block
calls ``out.block_claim(keep)``, a block collective: the threads that keep
their element win one slot each, with ONE atomic fetch-add of the block's
total on the output's counter (a ballot per warp and a shared exchange count
and rank them). The witness it returns writes that slot and nothing else; a
thread that keeps nothing gets the invalid witness, which writes nothing; a
claim past the output's end writes nothing and is still counted, so the host
learns how many elements were dropped (``simtsafe.appended`` raises
``CapacityExceeded``; ``append_result`` gives the numbers).

``compact_warp`` is the per-warp form (``out.claim()`` under the branch: one
atomic per warp and round), which needs no uniform control flow but makes 8x
as many atomics on the one counter; on an H200 that atomic rate is the limit
(benchmarks/irregular.py times both).

The slots are handed out in whatever order the blocks reach the atomic: the
output holds the selected elements in no particular order, unlike numpy's or
CuPy's ``x[x > t]`` (sort them, or use a scan-based compaction when the
order matters).

Raw ``numba.cuda.jit`` twins (Tier 3: nothing checked): ``compact_block_raw``
is ``compact``'s schedule by hand (ballot, popc, two alternating shared
buffers, two barriers, thread 0's atomic); ``compact_raw`` makes one
``cuda.atomic.add`` per selected element, as a Numba user writes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import In, thread

BLOCK = 256
WARPS = BLOCK // 32


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), appends={"out": "count"}))
def compact(
    out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32], threshold: np.float32
) -> None:
    n = x.size
    stride = cuda.gridDim.x * BLOCK
    i = cuda.blockIdx.x * BLOCK + cuda.threadIdx.x
    for _ in range((n + stride - 1) // stride):  # the same trip count in the whole block
        v = x[i] if i < n else threshold
        slot = out.block_claim(v > threshold)  # every thread calls it; one atomic per block
        out[slot] = v  # kept nothing, or past the end: nothing written (the claim counted)
        i += stride


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), appends={"out": "count"}))
def compact_warp(
    out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32], threshold: np.float32
) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > threshold:
            slot = out.claim()  # unique: the counter gave it to this thread alone
            out[slot] = v  # past the end: nothing written, the claim still counted


@cuda.jit
def compact_block_raw(out: Any, count: Any, x: Any, threshold: np.float32) -> None:
    exchange = cuda.shared.array((2, 33), np.uint64)  # warp counts, then the block's base
    n = x.size
    stride = cuda.gridDim.x * BLOCK
    tid = cuda.threadIdx.x
    lane = tid & 31
    warp = tid >> 5
    i = cuda.blockIdx.x * BLOCK + tid
    capacity = np.uint64(out.size)  # (uint64 against int64 would compare as float64)
    parity = 0
    for _ in range((n + stride - 1) // stride):
        v = x[i] if i < n else threshold
        keep = v > threshold
        votes = cuda.ballot_sync(0xFFFFFFFF, keep)
        if lane == 0:
            exchange[parity, warp] = np.uint64(cuda.popc(votes))
        cuda.syncthreads()
        prefix = np.uint64(0)
        for j in range(warp):
            prefix += exchange[parity, j]
        if tid == 0:
            total = np.uint64(0)
            for j in range(WARPS):
                total += exchange[parity, j]
            base = np.uint64(0)
            if total > 0:
                base = cuda.atomic.add(count, 0, total)
            exchange[parity, 32] = base
        cuda.syncthreads()
        slot = exchange[parity, 32] + prefix + np.uint64(cuda.popc(votes & cuda.lanemask_lt()))
        if keep and slot < capacity:
            out[slot] = v
        parity ^= 1  # the next round's barrier orders this round's reads before reuse
        i += stride


@cuda.jit
def compact_raw(out: Any, count: Any, x: Any, threshold: np.float32) -> None:
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    capacity = np.uint64(out.size)  # (uint64 against int64 would compare as float64)
    for i in range(start, x.size, step):
        v = x[i]
        if v > threshold:
            slot = cuda.atomic.add(count, 0, np.uint64(1))
            if slot < capacity:
                out[slot] = v


def select(x: np.ndarray[Any, Any], threshold: np.float32) -> np.ndarray[Any, Any]:
    """The reference: numpy's boolean mask (in input order)."""
    return x[x > threshold]


def run(n: int = 1_000_003, blocks: int = 264) -> bool:
    """Compact n normal floats above 0.5 (safe and raw), and overflow a small buffer."""
    x = np.random.default_rng(19).standard_normal(n).astype(np.float32)
    threshold = np.float32(0.5)
    want = np.sort(select(x, threshold))
    d_x = cuda.to_device(x)
    launch = compact.prepare(grid=blocks, block=BLOCK)

    d_out = cuda.device_array(n, np.float32)
    d_count = ss.counter()
    launch(d_out, d_count, d_x, threshold)
    kept = ss.appended(d_out, d_count)  # raises CapacityExceeded if anything was dropped
    ok = kept == want.size and np.array_equal(np.sort(d_out.copy_to_host()[:kept]), want)

    # A buffer for half of them: the first half is stored, the rest is counted as dropped.
    half = want.size // 2
    d_small = cuda.device_array(half, np.float32)
    d_count = ss.counter()
    launch(d_small, d_count, d_x, threshold)
    r = ss.append_result(d_small, d_count)
    got = np.sort(d_small.copy_to_host())
    ok = ok and (r.stored, r.dropped) == (half, want.size - half)
    # The stored items are some of the wanted ones (a multiset: normal floats repeat).
    values, counts = np.unique(got, return_counts=True)
    wvalues, wcounts = np.unique(want, return_counts=True)
    at = np.minimum(np.searchsorted(wvalues, values), wvalues.size - 1)
    ok = ok and bool((wvalues[at] == values).all() and (counts <= wcounts[at]).all())
    try:
        ss.appended(d_small, d_count)
        ok = False
    except ss.CapacityExceeded as exc:
        ok = ok and exc.dropped == want.size - half

    # The per-warp form and the raw twins keep the same elements.
    d_count = ss.counter()
    compact_warp.prepare(grid=blocks, block=BLOCK)(d_out, d_count, d_x, threshold)
    kept = ss.appended(d_out, d_count)
    ok = ok and kept == want.size and np.array_equal(np.sort(d_out.copy_to_host()[:kept]), want)
    # (Numba's simulator has no ballot_sync: the block twin runs on the GPU only.)
    for raw in (compact_raw,) if ss.SIMULATOR else (compact_block_raw, compact_raw):
        d_raw = cuda.device_array(n, np.float32)
        d_rcount = cuda.to_device(np.zeros(1, np.uint64))
        raw[blocks, BLOCK](d_raw, d_rcount, d_x, threshold)
        raw_kept = int(d_rcount.copy_to_host()[0])
        ok = ok and raw_kept == want.size
        ok = ok and np.array_equal(np.sort(d_raw.copy_to_host()[:raw_kept]), want)
    return bool(ok)


if __name__ == "__main__":
    print("compaction matches numpy:", run())
