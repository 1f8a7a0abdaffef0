"""Host overhead per launch: Numba dispatch vs simtsafe vs CuPy / PyTorch arrays, in one run.

    python benchmarks/launch_latency.py [--launches 20000] [--rounds 5]

A 1024-element vecadd (3 array arguments; the GPU work is a few
microseconds) is launched back to back (and a kernel of 12 arguments, six arrays and six
scalars, to compare an application's launches with launches of the same arity); the host time per launch is
measured with the whole batch synchronized at the end. Rounds interleave
the variants, and the median round is reported. simtsafe runs with every
per-launch check on (argument kinds, dtypes, ranks, layout, aliasing,
requires, covers) and with stream ordering on (the default, "auto"); the
"ordering off" rows run the same launches with the ordering ledger off
(``configure(ordering="off")`` inside ``simtsafe.unsafe``), which measures
what the ordering costs on the fast path.

Targets: a checked launch <= 0.35 x Numba's dispatch launch; Numba-array
rows with ordering on within 10% of ordering off; CuPy and PyTorch arrays
<= 0.35 x Numba's dispatch and <= 1.5 x CuPy's RawKernel launch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, write_results  # noqa: E402
from vecadd import vecadd  # noqa: E402

import simtsafe as ss  # noqa: E402

N = 1024
BLOCK = 256

CUDA_SRC = r"""
extern "C" __global__ void vecadd(float* out, const float* a, const float* b, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""


@cuda.jit
def vecadd_raw(out, a, b):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def twelve(
    out: ss.DisjointSlice[np.float32],
    a: ss.In[np.float32],
    b: ss.In[np.float32],
    c: ss.In[np.float32],
    d: ss.In[np.float32],
    e: ss.In[np.float32],
    n0: int,
    n1: int,
    n2: int,
    n3: int,
    n4: int,
    s: np.float32,
) -> None:
    """A kernel of twelve arguments (six arrays, six scalars: the decode attention's count),
    to compare an application's launches with a launch of the same arity."""
    i = ss.thread.index_1d()
    out[i] = (a[i] + b[i] + c[i] + d[i] + e[i]) * s + (n0 + n1 + n2 + n3 + n4)


CUDA_TWELVE = r"""
extern "C" __global__ void twelve(float* out, const float* a, const float* b, const float* c,
                                  const float* d, const float* e, long long n0, long long n1,
                                  long long n2, long long n3, long long n4, float s,
                                  long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (a[i] + b[i] + c[i] + d[i] + e[i]) * s + (float)(n0 + n1 + n2 + n3 + n4);
}
"""


def per_launch_us(fn: Callable[[], None], launches: int) -> float:
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        fn()
    cuda.synchronize()
    return (time.perf_counter() - t0) / launches * 1e6


def per_launch_us_unordered(fn: Callable[[], None], launches: int) -> float:
    """``per_launch_us`` with the ordering ledger off for the whole batch."""
    with ss.unsafe("SAFETY: benchmark: every launch of the batch is on the default stream"):
        settings = ss.configure(ordering="off")
    with settings:
        return per_launch_us(fn, launches)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = cuda.to_device(rng.standard_normal(N, dtype=np.float32))
    b = cuda.to_device(rng.standard_normal(N, dtype=np.float32))
    out = cuda.device_array(N, np.float32)
    grid = ss.cover(N, BLOCK)

    preconfigured = vecadd_raw[grid, BLOCK]
    prepared = vecadd.prepare(grid=grid, block=BLOCK)
    # Ping-pong buffers (two argument sets alternately): both stay in the memo.
    pair = [(out, a, b), (cuda.device_array(N, np.float32), a, b)]
    # Sixteen argument sets in rotation: more than the memo holds, so every launch
    # runs all argument checks (on cached Numba array metadata).
    ring = [(cuda.device_array(N, np.float32), a, b) for _ in range(16)]
    turn = [0]

    def ping_pong() -> None:
        turn[0] += 1
        prepared(*pair[turn[0] & 1])

    def rotating() -> None:
        turn[0] += 1
        prepared(*ring[turn[0] & 15])

    prepared12 = twelve.prepare(grid=grid, block=BLOCK)
    arrays12 = [cuda.to_device(rng.standard_normal(N, dtype=np.float32)) for _ in range(5)]
    args12 = (out, *arrays12, 1, 2, 3, 4, 5, np.float32(0.5))

    variants: dict[str, Callable[[], None]] = {
        "numba kernel[grid, block](...)": lambda: vecadd_raw[grid, BLOCK](out, a, b),
        "numba pre-configured launcher": lambda: preconfigured(out, a, b),
        "simtsafe PreparedLaunch, same arrays (checks memoized)": lambda: prepared(out, a, b),
        "simtsafe PreparedLaunch, ping-pong arrays (checks memoized)": ping_pong,
        "simtsafe PreparedLaunch, 16 rotating arrays (checks re-run)": rotating,
        "simtsafe PreparedLaunch, 12 arguments, same arrays (checks memoized)": lambda: prepared12(
            *args12
        ),
        "simtsafe BoundLaunch (prepared.bind), same arrays": prepared.bind(out, a, b),
        "simtsafe BoundLaunch (prepared.bind), 12 arguments": prepared12.bind(*args12),
    }
    batched: dict[str, Callable[[], None]] = {}  # variants that switch a setting per batch
    try:
        import cupy as cp

        raw = cp.RawKernel(CUDA_SRC, "vecadd")
        ca, cb, cout = cp.asarray(a), cp.asarray(b), cp.asarray(out)
        n64 = np.int64(N)
        cring = [(cp.empty(N, dtype=cp.float32), ca, cb) for _ in range(16)]

        def cupy_rotating() -> None:
            turn[0] += 1
            prepared(*cring[turn[0] & 15])

        class CaiOnly:  # the generic path: facts read from a __cuda_array_interface__ dict
            def __init__(self, x: object) -> None:
                self.x = x

            @property
            def __cuda_array_interface__(self) -> object:
                return self.x.__cuda_array_interface__  # type: ignore[attr-defined]

        wo, wa, wb = CaiOnly(cout), CaiOnly(ca), CaiOnly(cb)
        variants["cupy RawKernel"] = lambda: raw((grid,), (BLOCK,), (cout, ca, cb, n64))
        raw12 = cp.RawKernel(CUDA_TWELVE, "twelve")
        cargs12 = (cout, *[cp.asarray(x) for x in arrays12], *map(np.int64, args12[6:11]))
        cargs12 = (*cargs12, np.float32(0.5), n64)
        variants["cupy RawKernel, 12 arguments"] = lambda: raw12((grid,), (BLOCK,), cargs12)
        variants["simtsafe PreparedLaunch, CuPy arrays (native facts, memoized)"] = lambda: (
            prepared(cout, ca, cb)
        )
        variants["simtsafe PreparedLaunch, CuPy arrays, 16 rotating (native facts)"] = cupy_rotating
        variants["simtsafe PreparedLaunch, CAI-dict objects (generic path)"] = lambda: prepared(
            wo, wa, wb
        )
    except ImportError:
        print("cupy not installed: skipping the CuPy rows")
    try:
        import torch

        ta = torch.as_tensor(a, device="cuda")
        tb = torch.as_tensor(b, device="cuda")
        tout = torch.as_tensor(out, device="cuda")
        tring = [(torch.empty(N, device="cuda"), ta, tb) for _ in range(16)]

        def torch_rotating() -> None:
            turn[0] += 1
            prepared(*tring[turn[0] & 15])

        variants["simtsafe PreparedLaunch, PyTorch tensors (native facts, memoized)"] = lambda: (
            prepared(tout, ta, tb)
        )
        variants["simtsafe PreparedLaunch, PyTorch tensors, 16 rotating (native facts)"] = (
            torch_rotating
        )
    except ImportError:
        print("torch not installed: skipping the PyTorch rows")
    batched["simtsafe PreparedLaunch, same arrays (checks memoized), ordering off"] = lambda: (
        prepared(out, a, b)
    )
    batched["simtsafe PreparedLaunch, 16 rotating arrays (checks re-run), ordering off"] = rotating

    for fn in [*variants.values(), *batched.values()]:  # warm up: compile, load modules
        for _ in range(50):
            fn()
    # The floor under every row: the memo entry's own cuLaunchKernel call with its
    # parameters packed once (what a memoized PreparedLaunch calls after its checks).
    memo = prepared._plan._memo.get(tuple(id(x) for x in (out, a, b)))
    if memo is not None:
        variants["cuLaunchKernel, parameters packed once (floor)"] = memo.go
        for _ in range(50):
            memo.go()
    cuda.synchronize()
    expected12 = sum(x.copy_to_host() for x in arrays12) * np.float32(0.5) + 15
    prepared12(*args12)
    assert np.allclose(out.copy_to_host(), expected12, rtol=1e-6)
    expected = a.copy_to_host() + b.copy_to_host()
    prepared(out, a, b)
    assert np.array_equal(out.copy_to_host(), expected)

    samples: dict[str, list[float]] = {k: [] for k in [*variants, *batched]}
    for _ in range(args.rounds):
        for name, fn in variants.items():
            samples[name].append(per_launch_us(fn, args.launches))
        for name, fn in batched.items():  # ordering off for the whole batch
            samples[name].append(per_launch_us_unordered(fn, args.launches))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    base = medians["numba kernel[grid, block](...)"]
    lines = [
        f"Host time per launch on {device_name()} (vecadd, n={N}, 3 arrays; median of "
        f"{args.rounds} rounds of {args.launches} launches)",
        "",
        "| launch path | us / launch | min..max over rounds | x Numba dispatch | x CuPy RawKernel |",
        "|---|---:|---:|---:|---:|",
    ]
    rawkernel = medians.get("cupy RawKernel")
    for name, med in medians.items():
        lo, hi = min(samples[name]), max(samples[name])
        vs_raw = f"{med / rawkernel:.2f}" if rawkernel else "-"
        lines.append(f"| {name} | {med:.2f} | {lo:.2f}..{hi:.2f} | {med / base:.3f} | {vs_raw} |")
    lines.append("")
    for row, off in (
        ("same arrays (checks memoized)", "same arrays (checks memoized), ordering off"),
        ("16 rotating arrays (checks re-run)", "16 rotating arrays (checks re-run), ordering off"),
    ):
        on_us = medians[f"simtsafe PreparedLaunch, {row}"]
        off_us = medians[f"simtsafe PreparedLaunch, {off}"]
        lines.append(f"Ordering on / off, {row}: {on_us / off_us:.3f}  ")
    write_results(
        "launch_latency",
        {"device": device_name(), "n": N, "samples_us": samples, "median_us": medians},
        "\n".join(lines),
        bars=medians,
        unit="host microseconds per launch (lower is better)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
