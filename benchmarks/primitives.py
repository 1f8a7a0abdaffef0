"""Device-wide primitives at the hardware limit (issue 20): simtsafe vs raw vs torch/CuPy, one run.

    python benchmarks/primitives.py [--reps 20] [--size full|quick|tiny]

| primitive | size | simtsafe | raw twin | what a user would pick | rate counted |
|---|---|---|---|---|---|
| inclusive scan | 2^28 int32, float32 | ``ss.lib.inclusive_scan`` (checked library launch) | the same two kernels launched unchecked | ``torch.cumsum``, ``cupy.cumsum`` | GB/s: read once + written once, vs the copy ceiling |
| histogram, 256 bins | 2^30 uint8, uniform and skewed (90% in 3 bins) | examples/histogram_vec.py (Tier 1) | the same schedule in raw Numba | ``torch.bincount``, ``torch.histc``, ``cupy.bincount`` | GB/s: bytes read once, vs the read ceiling |
| sum | 2^28 float32 | examples/sum_vec.py (Tier 1, one launch, deterministic) | the same schedule in raw Numba (scalar loads) | ``torch.sum``, ``cupy.sum`` | GB/s: bytes read once, vs the read ceiling |

Ceilings, measured in the same run: the **copy ceiling** is the best of
``cuMemcpyDtoD`` and ``cupy.copyto`` (read + write); the **read ceiling** is
the best of a CUDA C read probe (16-byte loads, grid-stride, no atomics;
through CuPy's ``RawKernel``) and the same probe written with simtsafe
(Tier 1, ``vec.load``). Extra rows (``variant ...``) are schedules of the
same code with other launch parameters, kept for tuning; ``candidate ...``
rows are other schedules, measured beside the current ones before one
replaces them. For the scan: other parameters of the library's schedule
(``_scan_kernels._make_scan_staged``: threads x runs per tile, register caps,
``SCAN_STAGED``), the previous schedule (``variant raw, old schedule``: the
figures in results/primitives.md before issue 20's tuning; also its
persistent variant); the look-back by one warp with the runs in registers
(``candidate raw, warp look-back`` in results/primitives_scan_h100.md) was
measured there and removed. For the histogram, ``histogram_vec_2runs`` (two
16-byte runs per step, the example before it loaded four; Tier 1) and
``histogram_flat`` (two runs and the bins in a flat accumulator, one more
SASS instruction a byte; Tier 1). ``histogram_vec_pf`` (two runs, the next
step's loaded before this step's updates) was measured on an H100
(results/primitives_histogram_h100_s14c.md: no faster than two runs) and
removed.

Timing as benchmarks/coop.py: CUDA events around a batch of calls, after
warm-up; before each batch a one-thread kernel keeps the GPU busy while the
host enqueues, so host overhead (the library's checks and two launches per
scan) is not timed as GPU idle time. Median of ``--reps`` batches; the
simtsafe and raw rows are timed twice (the spread is the noise). Every
row's result is checked against numpy once before it is timed.

torch and CuPy are optional (their rows are left out without them);
``--size tiny`` is a smoke test of this script that runs on the simulator
too (set ``OUT`` to keep the committed results). Targets (issue 20): scan
>= 90% of the copy ceiling, histogram >= 85% and sum >= 95% of the read
ceiling, simtsafe/raw >= 0.99. Results: $OUT (or benchmarks/results)/primitives.{json,md,png}.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numba import cuda, float32, int64, uint32

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_batched, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from simtsafe import DisjointSlice, In, thread  # noqa: E402

try:
    import cupy as cp
except ImportError:  # the CuPy rows are left out
    cp = None
try:
    import torch
except ImportError:  # the torch rows are left out
    torch = None

SAFE, RAW = "simtsafe", "raw"
Make = Callable[[], tuple[Callable[[], None], Callable[[], bool]]]


class Bench:
    """Rows of one run: (primitive, impl) -> measurements, or the error that prevented them."""

    def __init__(self, reps: int, smoke: bool) -> None:
        self.reps = reps
        self.smoke = smoke  # one call per batch, no warm-up: checks this script, times nothing
        self.rows: list[dict[str, Any]] = []

    def run(self, prim: str, impl: str, make: Make, *, nbytes: float, batch: int) -> None:
        """``make()`` -> (launch, check); times ``launch`` if ``check`` passes once."""
        row: dict[str, Any] = {"primitive": prim, "impl": impl, "bytes": nbytes}
        try:
            launch, check = make()
            launch()
            cuda.synchronize()
            row["correct"] = bool(check())
            batch = 1 if self.smoke else batch
            warmup = 0 if self.smoke else 3
            row["seconds"] = time_batched(launch, self.reps, batch, warmup)
            row["GBps"] = nbytes / row["seconds"] / 1e9
            if impl in (SAFE, RAW):
                row["seconds_repeat"] = time_batched(launch, self.reps, batch, warmup)
        except Exception as exc:  # a missing library or feature: report it, keep going
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            traceback.print_exc()
        self.rows.append(row)
        shown = f"{row['GBps']:.1f} GB/s" if "GBps" in row else row["error"]
        print(f"  {prim:24s} {impl:34s} {shown}", flush=True)

    def rate(self, prim: str, impl: str) -> float | None:
        for row in self.rows:
            if row["primitive"] == prim and row["impl"] == impl and "GBps" in row:
                return float(row["GBps"])
        return None


def _example(name: str) -> ModuleType:
    return importlib.import_module(name)


def _sms() -> int:
    return 1 if ss.SIMULATOR else int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


# ------------------------------------------------------------------ ceilings


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def read_probe(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    """The read ceiling in simtsafe: each thread adds its 16-byte runs, writes one float."""
    p = cuda.gridsize(1)
    runs = (x.size + 3) // 4
    a0 = np.float32(0)
    a1 = np.float32(0)
    r = cuda.grid(1)
    while r + p < runs:
        u = ss.vec.load(x, r, 4)
        v = ss.vec.load(x, r + p, 4)
        a0 += (u[0] + u[1]) + (u[2] + u[3])
        a1 += (v[0] + v[1]) + (v[2] + v[3])
        r += 2 * p
    while r < runs:
        u = ss.vec.load(x, r, 4)
        a0 += (u[0] + u[1]) + (u[2] + u[3])
        r += p
    out[thread.index_1d()] = a0 + a1


_READ_PROBE_C = r"""
extern "C" __global__ void read_probe(const float4* __restrict__ x, long long runs, float* out) {
    long long p = (long long)gridDim.x * blockDim.x;
    float a0 = 0.f, a1 = 0.f;
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; r + p < runs; r += 2 * p) {
        float4 u = x[r], v = x[r + p];
        a0 += (u.x + u.y) + (u.z + u.w);
        a1 += (v.x + v.y) + (v.z + v.w);
    }
    for (; r < runs; r += p) { float4 u = x[r]; a0 += (u.x + u.y) + (u.z + u.w); }
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1;
}
"""


def ceilings(reps: int, log2n: int, batch: int) -> tuple[dict[str, float], dict[str, float]]:
    """(copy rates, read rates) in GB/s of 2^log2n floats."""
    n = 1 << log2n
    src = cuda.to_device(np.ones(n, np.float32))
    dst = cuda.device_array(n, np.float32)
    copy = {"cuMemcpyDtoD": 8 * n / time_batched(lambda: dst.copy_to_device(src), reps, batch)}
    if cp is not None:
        csrc, cdst = cp.asarray(src), cp.asarray(dst)
        copy["cupy.copyto"] = 8 * n / time_batched(lambda: cp.copyto(cdst, csrc), reps, batch)
    blocks = 8 * _sms()
    out = cuda.device_array(blocks * 256, np.float32)
    probe = read_probe.prepare(grid=blocks, block=256)
    read = {"simtsafe read probe": 4 * n / time_batched(lambda: probe(out, src), reps, batch)}
    if cp is not None:
        kernel = cp.RawKernel(_READ_PROBE_C, "read_probe")
        cout = cp.asarray(out)
        args = (csrc, np.int64(n // 4), cout)
        read["CUDA C read probe"] = (
            4 * n / time_batched(lambda: kernel((blocks,), (256,), args), reps, batch)
        )
    return {k: v / 1e9 for k, v in copy.items()}, {k: v / 1e9 for k, v in read.items()}


# ------------------------------------------------------------------ candidates


HIST_STEP = 4  # 16-byte runs loaded per step by the example (this candidate: 2)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def histogram_vec_2runs(
    counts: ss.Accumulate[np.uint32], words: In[np.uint32], data: In[np.uint8]
) -> None:
    """Candidate: examples/histogram_vec.py with two 16-byte runs per step (the example before
    it loaded four; s14b / s14c: 85.4% / 92.5% and 85.0% / 92.7% of the read ceiling on an
    H100, against four runs' 90.1% / 94.2% and 90.0% / 93.9%)."""
    h = ss.shared.accumulator((256, 32), np.uint32)  # zeroed by the block before use
    lane = cuda.threadIdx.x & 31
    p = cuda.gridsize(1)
    runs = words.size // 4  # whole 16-byte runs
    r = cuda.grid(1)
    while r + p < runs:  # two 16-byte loads per step, both in flight
        u = ss.vec.load(words, r, 4)
        v = ss.vec.load(words, r + p, 4)
        h.add((u[0] & 0xFF, lane), 1)
        h.add(((u[0] >> 8) & 0xFF, lane), 1)
        h.add(((u[0] >> 16) & 0xFF, lane), 1)
        h.add((u[0] >> 24, lane), 1)
        h.add((u[1] & 0xFF, lane), 1)
        h.add(((u[1] >> 8) & 0xFF, lane), 1)
        h.add(((u[1] >> 16) & 0xFF, lane), 1)
        h.add((u[1] >> 24, lane), 1)
        h.add((u[2] & 0xFF, lane), 1)
        h.add(((u[2] >> 8) & 0xFF, lane), 1)
        h.add(((u[2] >> 16) & 0xFF, lane), 1)
        h.add((u[2] >> 24, lane), 1)
        h.add((u[3] & 0xFF, lane), 1)
        h.add(((u[3] >> 8) & 0xFF, lane), 1)
        h.add(((u[3] >> 16) & 0xFF, lane), 1)
        h.add((u[3] >> 24, lane), 1)
        h.add((v[0] & 0xFF, lane), 1)
        h.add(((v[0] >> 8) & 0xFF, lane), 1)
        h.add(((v[0] >> 16) & 0xFF, lane), 1)
        h.add((v[0] >> 24, lane), 1)
        h.add((v[1] & 0xFF, lane), 1)
        h.add(((v[1] >> 8) & 0xFF, lane), 1)
        h.add(((v[1] >> 16) & 0xFF, lane), 1)
        h.add((v[1] >> 24, lane), 1)
        h.add((v[2] & 0xFF, lane), 1)
        h.add(((v[2] >> 8) & 0xFF, lane), 1)
        h.add(((v[2] >> 16) & 0xFF, lane), 1)
        h.add((v[2] >> 24, lane), 1)
        h.add((v[3] & 0xFF, lane), 1)
        h.add(((v[3] >> 8) & 0xFF, lane), 1)
        h.add(((v[3] >> 16) & 0xFF, lane), 1)
        h.add((v[3] >> 24, lane), 1)
        r += 2 * p
    while r < runs:  # at most once
        u = ss.vec.load(words, r, 4)
        h.add((u[0] & 0xFF, lane), 1)
        h.add(((u[0] >> 8) & 0xFF, lane), 1)
        h.add(((u[0] >> 16) & 0xFF, lane), 1)
        h.add((u[0] >> 24, lane), 1)
        h.add((u[1] & 0xFF, lane), 1)
        h.add(((u[1] >> 8) & 0xFF, lane), 1)
        h.add(((u[1] >> 16) & 0xFF, lane), 1)
        h.add((u[1] >> 24, lane), 1)
        h.add((u[2] & 0xFF, lane), 1)
        h.add(((u[2] >> 8) & 0xFF, lane), 1)
        h.add(((u[2] >> 16) & 0xFF, lane), 1)
        h.add((u[2] >> 24, lane), 1)
        h.add((u[3] & 0xFF, lane), 1)
        h.add(((u[3] >> 8) & 0xFF, lane), 1)
        h.add(((u[3] >> 16) & 0xFF, lane), 1)
        h.add((u[3] >> 24, lane), 1)
        r += p
    i = cuda.grid(1)
    q = 4 * runs + i  # the words past the last whole run (at most 3)
    if q < words.size:
        a = words[q]
        h.add((a & 0xFF, lane), 1)
        h.add(((a >> 8) & 0xFF, lane), 1)
        h.add(((a >> 16) & 0xFF, lane), 1)
        h.add((a >> 24, lane), 1)
    t = 4 * words.size + i  # the bytes past the last whole word (at most 3)
    if t < data.size:
        h.add((np.int32(data[t]), lane), 1)
    ss.block.sync()  # the block's updates end here; reads follow
    # Warp w adds up bins w, w + 8, ...: lane l reads copy l (bank l), warp.sum adds the 32.
    # (The loop's trip count is the same in every thread: the analysis sees it uniform.)
    for k in range(256 // 8):
        j = k * 8 + cuda.threadIdx.x // 32
        total = ss.warp.sum(h[j, lane])
        if lane == 0 and total != 0:
            counts.add(j, total)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def histogram_words(
    counts: ss.Accumulate[np.uint32], words: In[np.uint32], data: In[np.uint8]
) -> None:
    """Candidate: the raw twin's schedule (``histogram_raw``) in Tier 1 -- one 16-byte run a
    step as four word reads, bins in the 2D accumulator. Its reads need no bounds check (the
    compiled form proves ``4 * r + k < words.size`` from ``r < words.size // 4``): four
    ``ld.global.u32`` and sixteen ``atom.shared.add`` a step, as in the raw twin's PTX. The
    raw twin ran at 94.2% of the read ceiling on uniform bytes where the example's four
    16-byte runs in flight ran at 89.7% (results/primitives_histogram_h100_s17a.md)."""
    h = ss.shared.accumulator((256, 32), np.uint32)  # zeroed by the block before use
    lane = cuda.threadIdx.x & 31
    p = cuda.gridsize(1)
    runs = words.size // 4  # whole 16-byte runs
    r = cuda.grid(1)
    while r < runs:
        for k in range(4):
            a = words[4 * r + k]
            for s in range(0, 32, 8):  # the word's four bytes
                h.add(((a >> s) & 0xFF, lane), 1)
        r += p
    i = cuda.grid(1)
    q = 4 * runs + i  # the words past the last whole run (at most 3)
    if q < words.size:
        a = words[q]
        for s in range(0, 32, 8):
            h.add(((a >> s) & 0xFF, lane), 1)
    t = 4 * words.size + i  # the bytes past the last whole word (at most 3)
    if t < data.size:
        h.add((np.int32(data[t]), lane), 1)
    ss.block.sync()  # the block's updates end here; reads follow
    for k in range(256 // 8):
        j = k * 8 + cuda.threadIdx.x // 32
        total = ss.warp.sum(h[j, lane])
        if lane == 0 and total != 0:
            counts.add(j, total)


# The flat-bins candidate: examples/histogram_vec.py as it was before 2D accumulators,
# beside it in the same run. (The lane-register candidates, histogram_lane_x4/_x2, were
# measured on an H100 -- results/primitives_histogram_h100_s14.md -- slower than
# the four-runs schedule the example now has, and removed.)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def histogram_flat(
    counts: ss.Accumulate[np.uint32], words: In[np.uint32], data: In[np.uint8]
) -> None:
    """Candidate (the example before the 2D accumulator): the same per-lane bins in a flat
    accumulator, counter ``b * 32 + lane``. LLVM folds the index into a shift, a mask and an
    or, then ptxas multiplies by 4 and adds the base: 5 SASS instructions a byte against the
    2D accumulator's 4 (one multiply-add from the lane's base)."""
    h = ss.shared.accumulator(8192, np.uint32)
    lane = cuda.threadIdx.x & 31
    p = cuda.gridsize(1)
    runs = words.size // 4  # whole 16-byte runs
    r = cuda.grid(1)
    while r + p < runs:  # two 16-byte loads per step, both in flight
        u = ss.vec.load(words, r, 4)
        v = ss.vec.load(words, r + p, 4)
        h.add((u[0] & 0xFF) * 32 + lane, 1)
        h.add(((u[0] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[0] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[0] >> 24) * 32 + lane, 1)
        h.add((u[1] & 0xFF) * 32 + lane, 1)
        h.add(((u[1] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[1] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[1] >> 24) * 32 + lane, 1)
        h.add((u[2] & 0xFF) * 32 + lane, 1)
        h.add(((u[2] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[2] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[2] >> 24) * 32 + lane, 1)
        h.add((u[3] & 0xFF) * 32 + lane, 1)
        h.add(((u[3] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[3] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[3] >> 24) * 32 + lane, 1)
        h.add((v[0] & 0xFF) * 32 + lane, 1)
        h.add(((v[0] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((v[0] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((v[0] >> 24) * 32 + lane, 1)
        h.add((v[1] & 0xFF) * 32 + lane, 1)
        h.add(((v[1] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((v[1] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((v[1] >> 24) * 32 + lane, 1)
        h.add((v[2] & 0xFF) * 32 + lane, 1)
        h.add(((v[2] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((v[2] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((v[2] >> 24) * 32 + lane, 1)
        h.add((v[3] & 0xFF) * 32 + lane, 1)
        h.add(((v[3] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((v[3] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((v[3] >> 24) * 32 + lane, 1)
        r += 2 * p
    while r < runs:  # at most once
        u = ss.vec.load(words, r, 4)
        h.add((u[0] & 0xFF) * 32 + lane, 1)
        h.add(((u[0] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[0] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[0] >> 24) * 32 + lane, 1)
        h.add((u[1] & 0xFF) * 32 + lane, 1)
        h.add(((u[1] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[1] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[1] >> 24) * 32 + lane, 1)
        h.add((u[2] & 0xFF) * 32 + lane, 1)
        h.add(((u[2] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[2] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[2] >> 24) * 32 + lane, 1)
        h.add((u[3] & 0xFF) * 32 + lane, 1)
        h.add(((u[3] >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((u[3] >> 16) & 0xFF) * 32 + lane, 1)
        h.add((u[3] >> 24) * 32 + lane, 1)
        r += p
    i = cuda.grid(1)
    q = 4 * runs + i  # the words past the last whole run (at most 3)
    if q < words.size:
        a = words[q]
        h.add((a & 0xFF) * 32 + lane, 1)
        h.add(((a >> 8) & 0xFF) * 32 + lane, 1)
        h.add(((a >> 16) & 0xFF) * 32 + lane, 1)
        h.add((a >> 24) * 32 + lane, 1)
    t = 4 * words.size + i  # the bytes past the last whole word (at most 3)
    if t < data.size:
        h.add(np.int32(data[t]) * 32 + lane, 1)
    ss.block.sync()  # the block's updates end here; reads follow
    # Warp w adds up bins w, w + 8, ...: lane l reads copy l (bank l), warp.sum adds the 32.
    # (The loop's trip count is the same in every thread: the analysis sees it uniform.)
    for k in range(256 // 8):
        j = k * 8 + cuda.threadIdx.x // 32
        total = ss.warp.sum(h[j * 32 + lane])
        if lane == 0 and total != 0:
            counts.add(j, total)


# ------------------------------------------------------------------ raw twins


HIST_BLOCK = 256
BLOCKS_PER_SM_C = 6  # the CUDA C references' blocks per SM (32 KB of counters each)


@cuda.jit
def histogram_raw(counts, words, data):  # type: ignore[no-untyped-def]
    """examples/histogram_vec.py's schedule in raw Numba (its 16-byte runs as four word loads)."""
    h = cuda.shared.array(8192, uint32)
    tid = cuda.threadIdx.x
    for j in range(tid, 8192, HIST_BLOCK):
        h[j] = 0
    cuda.syncthreads()
    lane = tid & 31
    p = cuda.gridsize(1)
    runs = words.size // 4
    r = cuda.grid(1)
    while r < runs:
        for k in range(4):
            a = words[4 * r + k]
            cuda.atomic.add(h, (a & 0xFF) * 32 + lane, 1)
            cuda.atomic.add(h, ((a >> 8) & 0xFF) * 32 + lane, 1)
            cuda.atomic.add(h, ((a >> 16) & 0xFF) * 32 + lane, 1)
            cuda.atomic.add(h, (a >> 24) * 32 + lane, 1)
        r += p
    i = cuda.grid(1)
    q = 4 * runs + i
    if q < words.size:
        a = words[q]
        cuda.atomic.add(h, (a & 0xFF) * 32 + lane, 1)
        cuda.atomic.add(h, ((a >> 8) & 0xFF) * 32 + lane, 1)
        cuda.atomic.add(h, ((a >> 16) & 0xFF) * 32 + lane, 1)
        cuda.atomic.add(h, (a >> 24) * 32 + lane, 1)
    t = 4 * words.size + i
    if t < data.size:
        cuda.atomic.add(h, int64(data[t]) * 32 + lane, 1)
    cuda.syncthreads()
    for j in range(tid, 256, HIST_BLOCK):
        s = uint32(0)
        for k in range(32):
            s += h[j * 32 + ((k + j) & 31)]  # rotated: a warp reads 32 banks
        if s != 0:
            cuda.atomic.add(counts, j, s)


#: CUDA C references for the histogram (compiled by CuPy's NVRTC on the GPU machine; not
#: simtsafe): examples/histogram_vec.py's per-lane bins (counter ``bin * 32 + lane``) with
#: ``HIST_STEP`` 16-byte runs in flight per step. ``-DASM`` writes each counter update as
#: inline PTX -- the byte taken with ``bfe``, its counter's 32-bit shared address with one
#: ``mad`` from a per-lane base -- which ptxas turns into three instructions a byte (PRMT,
#: IMAD, ATOMS) against four (plain CUDA C) and five (the Numba-compiled kernels): what the
#: histogram reaches when the issue of the update instructions is not what limits it.
_HIST_C = r"""
#define LANES 32
__device__ __forceinline__ void count4(unsigned* h, unsigned lane, unsigned lanebase, unsigned w) {
#ifdef ASM
    asm volatile(
        "{\n\t.reg .u32 b, a, one;\n\t"
        "mov.u32 one, 1;\n\t"
        "bfe.u32 b, %0, 0, 8;\n\tmad.lo.u32 a, b, 128, %1;\n\tred.shared.add.u32 [a], one;\n\t"
        "bfe.u32 b, %0, 8, 8;\n\tmad.lo.u32 a, b, 128, %1;\n\tred.shared.add.u32 [a], one;\n\t"
        "bfe.u32 b, %0, 16, 8;\n\tmad.lo.u32 a, b, 128, %1;\n\tred.shared.add.u32 [a], one;\n\t"
        "shr.u32 b, %0, 24;\n\tmad.lo.u32 a, b, 128, %1;\n\tred.shared.add.u32 [a], one;\n\t}"
        :: "r"(w), "r"(lanebase) : "memory");
#else
    atomicAdd(&h[(w & 0xffu) * LANES + lane], 1u);
    atomicAdd(&h[((w >> 8) & 0xffu) * LANES + lane], 1u);
    atomicAdd(&h[((w >> 16) & 0xffu) * LANES + lane], 1u);
    atomicAdd(&h[(w >> 24) * LANES + lane], 1u);
#endif
}

extern "C" __global__ void hist_c(const uint4* __restrict__ runs_p, long long runs,
                                  const unsigned* __restrict__ words, long long nwords,
                                  const unsigned char* __restrict__ data, long long nbytes,
                                  unsigned* counts) {
    __shared__ unsigned h[256 * LANES];
    for (int j = threadIdx.x; j < 256 * LANES; j += blockDim.x) h[j] = 0;
    __syncthreads();
    unsigned lane = threadIdx.x & 31;
    unsigned lanebase = (unsigned)__cvta_generic_to_shared(h) + 4 * lane;
    long long p = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long r = i;
    for (; r + (STEP - 1) * p < runs; r += STEP * p) {
        uint4 u[STEP];
#pragma unroll
        for (int s = 0; s < STEP; ++s) u[s] = runs_p[r + s * p];
#pragma unroll
        for (int s = 0; s < STEP; ++s) {
            count4(h, lane, lanebase, u[s].x);
            count4(h, lane, lanebase, u[s].y);
            count4(h, lane, lanebase, u[s].z);
            count4(h, lane, lanebase, u[s].w);
        }
    }
    for (; r < runs; r += p) {
        uint4 u = runs_p[r];
        count4(h, lane, lanebase, u.x);
        count4(h, lane, lanebase, u.y);
        count4(h, lane, lanebase, u.z);
        count4(h, lane, lanebase, u.w);
    }
    long long q = 4 * runs + i;
    if (q < nwords) count4(h, lane, lanebase, words[q]);
    long long t = 4 * nwords + i;
    if (t < nbytes) atomicAdd(&h[data[t] * LANES + lane], 1u);
    __syncthreads();
    for (int j = threadIdx.x; j < 256; j += blockDim.x) {
        unsigned s = 0;
        for (int k = 0; k < 32; ++k) s += h[j * 32 + ((k + j) & 31)];
        if (s) atomicAdd(&counts[j], s);
    }
}
"""

SUM_BLOCK = 256


@cuda.jit
def sum_raw(total, partial, x):  # type: ignore[no-untyped-def]
    """examples/sum_vec.py's schedule in raw Numba: scalar loads (Numba has no vector load),
    a shared-memory tree per block, one grid sync, block 0 adds the partials."""
    p = cuda.gridsize(1)
    n = x.size
    a0 = float32(0)
    a1 = float32(0)
    a2 = float32(0)
    a3 = float32(0)
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
    tile = cuda.shared.array(SUM_BLOCK, float32)
    tid = cuda.threadIdx.x
    tile[tid] = (a0 + a1) + (a2 + a3)
    cuda.syncthreads()
    s = SUM_BLOCK // 2
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = tile[0]
    cuda.cg.this_grid().sync()
    if cuda.blockIdx.x == 0:
        acc = float32(0)
        for b in range(tid, cuda.gridDim.x, SUM_BLOCK):
            acc += partial[b]
        cuda.syncthreads()
        tile[tid] = acc
        cuda.syncthreads()
        s = SUM_BLOCK // 2
        while s > 0:
            if tid < s:
                tile[tid] += tile[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            total[0] = tile[0]


# ------------------------------------------------------------------ primitives


#: Other parameters of the library's schedule (``sk._make_scan_staged``: the tile staged in
#: shared memory by cp.async, the look-back by one warp): threads per block, 16-byte runs per
#: lane (a tile is threads * runs * 4 elements, threads * runs * 16 bytes of shared memory),
#: max_registers. Registers from nvJitLink (CUDA 13, sm_90), int32 / float32, and blocks per
#: SM (64K registers, 228 KB of shared memory): the library's 256 x 8 capped at 48: 48 / 48,
#: 5 blocks (160 KB of tiles); uncapped: 56 / 48, 4 / 5 blocks; capped at 40: 40 (int32 with
#: an 8-12 byte spill), 6 blocks; 128 x 8: 56 / 48, 9 / 10 blocks; 128 x 16: 77, 6 blocks
#: (192 KB of tiles, 768 threads); 256 x 4: 48, 5 blocks (80 KB).
SCAN_STAGED: list[dict[str, int]] = [
    {"threads": 256, "runs": 8},
    {"threads": 256, "runs": 8, "max_registers": 40},
    {"threads": 128, "runs": 8},
    {"threads": 128, "runs": 16},
    {"threads": 256, "runs": 4, "max_registers": 48},
]
#: Persistent variants of the old schedule (blocks per SM, max_registers); measured at
#: 32-34% of the copy ceiling (benchmarks/results/primitives.md), so only one is kept.
SCAN_PERSISTENT: list[tuple[int, int | None]] = [(4, None)]


def bench_scan(b: Bench, log2n: int, dtype: type) -> None:
    from simtsafe.lib import _scan
    from simtsafe.lib import _scan_kernels as sk

    n = 1 << log2n
    name = np.dtype(dtype).name
    prim = f"scan {name}"
    rng = np.random.default_rng(2)
    if dtype is np.float32:
        x_host = rng.random(n, dtype=np.float32)
    else:
        x_host = rng.integers(0, 4, n, dtype=dtype)
    want = np.cumsum(x_host, dtype=np.float64 if dtype is np.float32 else dtype)
    x = cuda.to_device(x_host)
    out = cuda.device_array(n, dtype)

    def close(got: Any) -> bool:
        got = np.asarray(got)
        if dtype is np.float32:
            return bool(np.allclose(got, want, rtol=1e-4, atol=1e-2))
        return bool(np.array_equal(got, want))

    def safe() -> tuple[Callable[[], None], Callable[[], bool]]:
        return (lambda: ss.lib.inclusive_scan(out, x)), lambda: close(out.copy_to_host())

    def raw_of(
        kernel: Any, grid: int = 0, schedule: Any = None
    ) -> Callable[[], tuple[Callable[[], None], Callable[[], bool]]]:
        """Launches of ``kernel`` (the library's schedule) or of another ``schedule``
        (an ``sk.Schedule``: its own kernel, block size, tile and shared memory)."""
        if schedule is not None:
            kernel, block, tile, shared = schedule
        else:  # the library's kernel
            block, tile, shared = sk.BLOCK, sk.TILE, sk.SLOT_BYTES
        tiles = -(-n // tile)

        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            status = cuda.device_array(tiles, np.uint64)
            ctl = cuda.device_array(1, np.int32)
            reset_grid = (tiles + sk.BLOCK - 1) // sk.BLOCK
            with ss.unsafe(
                "SAFETY: the grids and blocks are those the kernel's contract asks for (its "
                "block size, one block per tile -- or fewer blocks for the persistent variant, "
                "which takes tiles until none is left --, reset over the tiles); out and x are "
                "distinct device arrays of n elements of one dtype, status has a word per tile, "
                "ctl one counter"
            ):
                reset = sk.reset_scratch.unchecked[reset_grid, sk.BLOCK]
                scan = kernel.unchecked[grid or tiles, block, 0, shared]

            def launch() -> None:
                with ss.unsafe("SAFETY: as above"):
                    reset(status, ctl, np.int64(tiles))
                    scan(out, x, status, ctl)

            return launch, lambda: close(out.copy_to_host())

        return make

    nbytes = 2.0 * n * 4  # read once + written once
    _scan._SCRATCH.clear()
    b.run(prim, SAFE, safe, nbytes=nbytes, batch=10)
    b.run(prim, RAW, raw_of(sk.SCAN[np.dtype(dtype)]), nbytes=nbytes, batch=10)
    dt = np.dtype(dtype)
    # The library's schedule with other parameters (sk._make_scan_staged).
    for cfg in SCAN_STAGED:
        label = "variant raw, staged, " + ", ".join(f"{k} {v}" for k, v in cfg.items())
        b.run(prim, label, raw_of(None, schedule=sk._make_scan_staged(dt, **cfg)),
              nbytes=nbytes, batch=10)  # fmt: skip
    # The old schedule (the library's until issue 20's tuning: runs in registers, the look-back
    # by threads 0..31 with block-wide reductions), as measured in primitives.md before.
    for regs in (None, 48):
        options = {} if regs is None else {"max_registers": regs}
        old = sk.Schedule(
            sk._make_scan(dt, **options), sk.OLD_BLOCK, sk.OLD_TILE, sk.OLD_SLOT_BYTES
        )
        label = "variant raw, old schedule (256 x 16 in registers, block look-back)" + (
            f", max_registers={regs}" if regs else ""
        )
        b.run(prim, label, raw_of(None, schedule=old), nbytes=nbytes, batch=10)
    for per_sm, regs in SCAN_PERSISTENT:
        options = {} if regs is None else {"max_registers": regs}
        variant = sk._make_scan(dt, persistent=True, **options)
        old = sk.Schedule(variant, sk.OLD_BLOCK, sk.OLD_TILE, sk.OLD_SLOT_BYTES)
        grid = min(-(-n // sk.OLD_TILE), per_sm * _sms())
        label = f"variant raw, old schedule persistent {per_sm} blocks/SM" + (
            f", regs {regs}" if regs else ""
        )
        b.run(prim, label, raw_of(None, grid, old), nbytes=nbytes, batch=10)
    if torch is not None and not ss.SIMULATOR:
        tx = torch.as_tensor(x, device="cuda")
        tout = torch.empty(n, dtype=tx.dtype, device="cuda")

        def lib_torch() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: torch.cumsum(tx, 0, dtype=tx.dtype, out=tout)  # noqa: E731
            return launch, lambda: close(tout.cpu().numpy())

        b.run(prim, "torch.cumsum", lib_torch, nbytes=nbytes, batch=10)
    if cp is not None and not ss.SIMULATOR:
        cx = cp.asarray(x)
        cout = cp.empty(n, cx.dtype)

        def lib_cupy() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: cp.cumsum(cx, dtype=cx.dtype, out=cout)  # noqa: E731
            return launch, lambda: close(cout.get())

        b.run(prim, "cupy.cumsum", lib_cupy, nbytes=nbytes, batch=10)


def _bytes(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(6)
    if kind == "uniform":
        return rng.integers(0, 256, n, dtype=np.uint8)
    # skewed: 90% of the bytes in 3 bins (one of them 60%), the rest uniform
    pick = rng.random(n)
    out = rng.integers(0, 256, n, dtype=np.uint8)
    out[pick < 0.9] = 200
    out[pick < 0.3] = 7
    out[pick < 0.15] = 0
    return out


def bench_histogram(b: Bench, log2n: int, kind: str) -> None:
    n = 1 << log2n
    prim = f"histogram {kind}"
    data_host = _bytes(kind, n)
    want = np.bincount(data_host, minlength=256)
    data = cuda.to_device(data_host)
    counts = cuda.to_device(np.zeros(256, np.uint32))
    zeros = cuda.to_device(np.zeros(256, np.uint32))
    check = lambda: bool(np.array_equal(counts.copy_to_host(), want))  # noqa: E731
    ex = _example("histogram_vec")
    words = ex.as_words(data)
    blocks = ex.grid_blocks()

    def safe_with(grid: int, kernel: Any = None) -> Make:
        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = (kernel or ex.histogram_vec).prepare(grid=grid, block=ex.BLOCK)

            def run() -> None:
                counts.copy_to_device(zeros)  # an Accumulate output starts at zero
                launch(counts, words, data)

            return run, check

        return make

    def raw() -> tuple[Callable[[], None], Callable[[], bool]]:
        k = histogram_raw[blocks, HIST_BLOCK]

        def run() -> None:
            counts.copy_to_device(zeros)
            k(counts, words, data)

        return run, check

    def tier1_one_copy() -> tuple[Callable[[], None], Callable[[], bool]]:
        old = _example("histogram")
        launch = old.histogram.prepare(grid=8 * _sms(), block=old.BLOCK)

        def run() -> None:
            counts.copy_to_device(zeros)
            launch(counts, words, data)

        return run, check

    nbytes = 1.0 * n
    b.run(prim, SAFE, safe_with(blocks), nbytes=nbytes, batch=5)
    b.run(prim, RAW, raw, nbytes=nbytes, batch=5)
    b.run(prim, "variant simtsafe, 4 blocks/SM", safe_with(4 * _sms()), nbytes=nbytes, batch=5)
    b.run(prim, "variant simtsafe, 5 blocks/SM", safe_with(5 * _sms()), nbytes=nbytes, batch=5)
    label = "candidate simtsafe, 2 runs per step, 6 blocks/SM"
    b.run(prim, label, safe_with(blocks, histogram_vec_2runs), nbytes=nbytes, batch=5)
    label = "candidate simtsafe, the raw twin's schedule (one run: four word reads), 6 blocks/SM"
    b.run(prim, label, safe_with(blocks, histogram_words), nbytes=nbytes, batch=5)
    label = "candidate simtsafe, flat bins (b * 32 + lane), 2 runs per step, 6 blocks/SM"
    b.run(prim, label, safe_with(blocks, histogram_flat), nbytes=nbytes, batch=5)
    b.run(prim, "examples/histogram.py (one copy)", tier1_one_copy, nbytes=nbytes, batch=5)
    if cp is not None and not ss.SIMULATOR:
        cwords, cdata_u8 = cp.asarray(words), cp.asarray(data)
        ccounts = cp.asarray(counts)
        runs = int(words.size) // 4
        args = (cwords, np.int64(runs), cwords, np.int64(words.size), cdata_u8,
                np.int64(data.size), ccounts)  # fmt: skip
        for label, opts in (
            ("reference CUDA C, per-lane bins", ()),
            ("reference CUDA C, per-lane bins, inline-PTX updates", ("-DASM",)),
        ):

            def cuda_c(
                opts: tuple[str, ...] = opts,
            ) -> tuple[Callable[[], None], Callable[[], bool]]:
                kernel = cp.RawKernel(_HIST_C, "hist_c", options=(f"-DSTEP={HIST_STEP}", *opts))
                grid = (BLOCKS_PER_SM_C * _sms(),)

                def run() -> None:
                    counts.copy_to_device(zeros)
                    kernel(grid, (HIST_BLOCK,), args)

                return run, check

            b.run(prim, f"{label}, {HIST_STEP} runs per step", cuda_c, nbytes=nbytes, batch=5)
    if torch is not None and not ss.SIMULATOR:
        tdata = torch.as_tensor(data, device="cuda")
        box: dict[str, Any] = {}

        def bincount() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: box.__setitem__("r", torch.bincount(tdata, minlength=256))  # noqa: E731
            return launch, lambda: bool(np.array_equal(box["r"].cpu().numpy(), want))

        b.run(prim, "torch.bincount", bincount, nbytes=nbytes, batch=2)
        tfloat = tdata.float()  # histc takes floats: converted once, outside the timing

        def histc() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: box.__setitem__("h", torch.histc(tfloat, 256, 0, 256))  # noqa: E731
            return launch, lambda: bool(np.array_equal(box["h"].cpu().numpy(), want))

        b.run(prim, "torch.histc (float32 input)", histc, nbytes=nbytes, batch=2)
    if cp is not None and not ss.SIMULATOR:
        cdata = cp.asarray(data)
        cbox: dict[str, Any] = {}

        def cbincount() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: cbox.__setitem__("r", cp.bincount(cdata, minlength=256))  # noqa: E731
            return launch, lambda: bool(np.array_equal(cbox["r"].get(), want))

        b.run(prim, "cupy.bincount", cbincount, nbytes=nbytes, batch=2)


def bench_sum(b: Bench, log2n: int) -> None:
    n = 1 << log2n
    prim = "sum float32"
    x_host = np.random.default_rng(1).random(n, dtype=np.float32)
    want = x_host.astype(np.float64).sum()
    x = cuda.to_device(x_host)
    close = lambda v: bool(np.isclose(float(v), want, rtol=1e-4))  # noqa: E731
    ex = _example("sum_vec")

    def safe_with(blocks: int) -> Make:
        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            total = cuda.to_device(np.full(1, np.nan, np.float32))
            return ex.make_sum(x, total, blocks), lambda: close(total.copy_to_host()[0])

        return make

    def raw() -> tuple[Callable[[], None], Callable[[], bool]]:
        blocks = ex.grid_blocks()
        total = cuda.to_device(np.full(1, np.nan, np.float32))
        partial = cuda.device_array(blocks, np.float32)
        k = sum_raw[blocks, SUM_BLOCK]
        return (lambda: k(total, partial, x)), lambda: close(total.copy_to_host()[0])

    nbytes = 4.0 * n
    b.run(prim, SAFE, safe_with(0), nbytes=nbytes, batch=10)
    if not ss.SIMULATOR:  # Numba's simulator runs a raw grid sync as a block barrier
        b.run(prim, RAW, raw, nbytes=nbytes, batch=10)
    for per_sm in (2, 6):
        b.run(prim, f"variant simtsafe, {per_sm} blocks/SM", safe_with(per_sm * _sms()),
              nbytes=nbytes, batch=10)  # fmt: skip
    if torch is not None and not ss.SIMULATOR:
        tx = torch.as_tensor(x, device="cuda")
        box: dict[str, Any] = {}

        def tsum() -> tuple[Callable[[], None], Callable[[], bool]]:
            return (lambda: box.__setitem__("r", torch.sum(tx))), lambda: close(box["r"].item())

        b.run(prim, "torch.sum", tsum, nbytes=nbytes, batch=10)
    if cp is not None and not ss.SIMULATOR:
        cx = cp.asarray(x)
        cbox: dict[str, Any] = {}

        def csum() -> tuple[Callable[[], None], Callable[[], bool]]:
            return (lambda: cbox.__setitem__("r", cp.sum(cx))), lambda: close(cbox["r"].get())

        b.run(prim, "cupy.sum", csum, nbytes=nbytes, batch=10)


# ------------------------------------------------------------------ report

#: primitive -> (ceiling: "copy" or "read", share of it the simtsafe row must reach)
TARGETS = {
    "scan int32": ("copy", 0.90),
    "scan float32": ("copy", 0.90),
    "histogram uniform": ("read", 0.85),
    "histogram skewed": ("read", 0.85),
    "sum float32": ("read", 0.95),
}


def report(
    b: Bench, copies: dict[str, float], reads: dict[str, float], reps: int, name: str
) -> bool:
    device = "the CUDA simulator" if ss.SIMULATOR else device_name()
    copy, read = max(copies.values()), max(reads.values())
    lines = [
        f"Device-wide primitives on {device}, median of {reps} batches; copy ceiling "
        f"{copy:.0f} GB/s read + write ("
        + ", ".join(f"{k} {v:.0f}" for k, v in copies.items())
        + f"); read ceiling {read:.0f} GB/s ("
        + ", ".join(f"{k} {v:.0f}" for k, v in reads.items())
        + "); torch "
        + (torch.__version__ if torch is not None else "not installed")
        + ", CuPy "
        + (cp.__version__ if cp is not None else "not installed"),
        "",
        "| primitive | impl | time (ms) | repeat (ms) | GB/s | % of ceiling | simtsafe/raw "
        "| matches numpy |",
        "|---|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for row in b.rows:
        prim, impl = row["primitive"], row["impl"]
        if "error" in row:
            lines.append(f"| {prim} | {impl} | - | - | - | - | - | {row['error']} |")
            continue
        kind = TARGETS[prim][0]
        ceiling = copy if kind == "copy" else read
        raw = b.rate(prim, RAW)
        ratio = f"{row['GBps'] / raw:.3f}" if raw and impl == SAFE else "-"
        rep = row.get("seconds_repeat")
        lines.append(
            f"| {prim} | {impl} | {row['seconds'] * 1e3:.3f} | "
            + (f"{rep * 1e3:.3f}" if rep is not None else "-")
            + f" | {row['GBps']:.1f} | {100 * row['GBps'] / ceiling:.1f} ({kind}) | {ratio} | "
            + ("yes" if row["correct"] else "NO")
            + " |"
        )
    lines += ["", "| target | measured | met |", "|---|---:|:---:|"]
    met_all = True
    for prim, (kind, need) in TARGETS.items():
        if not any(r["primitive"] == prim for r in b.rows):
            continue  # a part not run (--parts)
        safe, raw = b.rate(prim, SAFE), b.rate(prim, RAW)
        ceiling = copy if kind == "copy" else read
        ok = safe is not None and safe / ceiling >= need
        lines.append(
            f"| {prim}: >= {100 * need:.0f}% of the {kind} ceiling | "
            + (f"{100 * safe / ceiling:.1f}%" if safe else "-")
            + f" | {'yes' if ok else 'NO'} |"
        )
        ratio_ok = safe is not None and raw is not None and safe / raw >= 0.99
        lines.append(
            f"| {prim}: simtsafe/raw >= 0.99 | "
            + (f"{safe / raw:.3f}" if safe and raw else "-")
            + f" | {'yes' if ratio_ok else 'NO'} |"
        )
        met_all = met_all and ok and ratio_ok
    write_results(
        name,
        {
            "device": device,
            "torch": torch.__version__ if torch is not None else None,
            "cupy": cp.__version__ if cp is not None else None,
            "simtsafe": ss.__version__,
            "reps": reps,
            "copy_GBps": copies,
            "read_GBps": reads,
            "rows": b.rows,
        },
        "\n".join(lines),
        bars={
            f"{r['primitive']}/{r['impl']}": 100
            * r["GBps"]
            / (copy if TARGETS[r["primitive"]][0] == "copy" else read)
            for r in b.rows
            if "GBps" in r
        },
        unit="% of the ceiling (copy for scans, read otherwise)",
    )
    return met_all and all(r.get("correct") for r in b.rows)


#: --size: (log2 scan, log2 histogram, log2 sum, log2 ceilings)
SIZES = {
    "full": (28, 30, 28, 28),
    "quick": (22, 24, 22, 24),
    "tiny": (13, 12, 12, 12),  # a smoke test of this script, on the simulator too
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny" if ss.SIMULATOR else "full")
    parser.add_argument(
        "--parts", default="scan,histogram,sum", help="comma-separated: scan, histogram, sum"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts - {"scan", "histogram", "sum"}:
        parser.error(f"--parts: unknown {sorted(parts - {'scan', 'histogram', 'sum'})}")
    s_scan, s_hist, s_sum, s_ceil = SIZES[args.size]
    smoke = args.size == "tiny"
    reps = 1 if smoke else args.reps
    b = Bench(reps, smoke)
    print(f"primitives on {'the CUDA simulator' if ss.SIMULATOR else device_name()}", flush=True)
    copies, reads = ceilings(reps, s_ceil, batch=1 if smoke else 5)
    print(f"  copy {copies}  read {reads}", flush=True)
    for dtype in (np.int32, np.float32) if "scan" in parts else ():
        bench_scan(b, s_scan, dtype)
    for kind in ("uniform", "skewed") if "histogram" in parts else ():
        bench_histogram(b, s_hist, kind)
    if "sum" in parts:
        bench_sum(b, s_sum)
    whole = parts == {"scan", "histogram", "sum"}
    name = "primitives" if whole else "primitives_" + "_".join(sorted(parts))
    met = report(b, copies, reads, reps, name)
    print("all targets met" if met else "some targets missed or rows failed: see the table")
    return 0 if all(r.get("correct") for r in b.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
