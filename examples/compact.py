"""Stream compaction: keep the elements above a threshold, in Tier 1 (no unsafe code).

Each thread walks its elements (``thread.grid_stride``); an element that
passes wins a slot of the output with ``out.claim()``: one atomic fetch-add
on the output's counter (one per warp: the lanes that pass together share
it), which gives every claim its own slot. The witness it returns writes
that slot and nothing else; a claim past the output's end writes nothing
and is still counted, so the host learns how many elements were dropped
(``simtsafe.appended`` raises ``CapacityExceeded``; ``append_result`` gives
the numbers).

The slots are handed out in whatever order the warps reach the atomic: the
output holds the selected elements in no particular order (sort them, or
use a scan-based compaction when the order matters).

``compact_raw`` is the same kernel written with plain ``numba.cuda.jit`` (Tier
3: nothing checked): one ``cuda.atomic.add`` per selected element and a
hand-written bounds check, as a Numba user writes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import In, thread

BLOCK = 256


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), appends={"out": "count"}))
def compact(
    out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32], threshold: np.float32
) -> None:
    for w in thread.grid_stride(x):
        v = x[w]
        if v > threshold:
            slot = out.claim()  # unique: the counter gave it to this thread alone
            out[slot] = v  # past the end: nothing written, the claim still counted


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

    d_raw = cuda.device_array(n, np.float32)
    d_rcount = cuda.to_device(np.zeros(1, np.uint64))
    compact_raw[blocks, BLOCK](d_raw, d_rcount, d_x, threshold)
    raw_kept = int(d_rcount.copy_to_host()[0])
    ok = ok and raw_kept == want.size
    return bool(ok and np.array_equal(np.sort(d_raw.copy_to_host()[:raw_kept]), want))


if __name__ == "__main__":
    print("compaction matches numpy:", run())
