"""A 20-launch sequence of small kernels: Numba dispatch vs PreparedLaunch vs graph replay.

    python benchmarks/graph_replay.py [--sequences 2000] [--rounds 5] [--length 20]

The sequence is a chain of 1024-element vecadds (``x[i+1] = x[i] + b``, the
example kernel, a few microseconds of GPU work each), issued back to back
and synchronized once at the end of a batch. Variants, in one process:

* Numba ``kernel[grid, block](...)`` for each of the 20 launches;
* 20 ``PreparedLaunch`` objects, one per position (each launch repeats its
  argument set: checks memoized -- PreparedLaunch's best case);
* one ``PreparedLaunch`` called with the 20 argument sets in turn (more
  sets than its memo holds: every launch runs all argument checks);
* ``simtsafe.graph()`` recorded once from the same checked launches and
  replayed (one ``cuGraphLaunch`` per sequence, no per-launch Python work).

Three figures per variant (median round): the host time to *submit* one
sequence (a burst of ``--burst`` sequences after a synchronize, timed
without waiting for the GPU: what the host pays), the end-to-end time per
sequence over ``--sequences`` sequences synchronized once (throughput: the
larger of host and GPU time), and the GPU time of one sequence (CUDA
events). With kernels this small the GPU's own time per kernel can bound
the replay's throughput while its host cost is far lower; the first
figure is the one the target is about: replay >= 5x the per-launch rate of
PreparedLaunch (memoized).
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

from _common import device_name, time_gpu, write_results  # noqa: E402
from vecadd import vecadd  # noqa: E402

import simtsafe as ss  # noqa: E402

N = 1024
BLOCK = 256


@cuda.jit
def vecadd_raw(out, a, b):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def submit_us(fn: Callable[[], None], burst: int) -> float:
    """Host time to enqueue one sequence, in a burst that does not wait for the GPU."""
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(burst):
        fn()
    elapsed = time.perf_counter() - t0
    cuda.synchronize()
    return elapsed / burst * 1e6


def per_sequence_us(fn: Callable[[], None], sequences: int) -> float:
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(sequences):
        fn()
    cuda.synchronize()
    return (time.perf_counter() - t0) / sequences * 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--burst", type=int, default=40)
    args = parser.parse_args()
    length = args.length
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(N, dtype=np.float32)
    bh = rng.standard_normal(N, dtype=np.float32)
    b = cuda.to_device(bh)
    xs = [cuda.to_device(x0)] + [cuda.device_array(N, np.float32) for _ in range(length)]
    sets = [(xs[i + 1], xs[i], b) for i in range(length)]
    grid = ss.cover(N, BLOCK)

    one = vecadd.prepare(grid=grid, block=BLOCK)
    per_position = [vecadd.prepare(grid=grid, block=BLOCK) for _ in range(length)]
    with ss.graph() as g:
        for s in sets:
            one(*s)

    def numba_dispatch() -> None:
        for s in sets:
            vecadd_raw[grid, BLOCK](*s)

    def prepared_memoized() -> None:
        for p, s in zip(per_position, sets, strict=True):
            p(*s)

    def prepared_rerun() -> None:
        for s in sets:
            one(*s)

    variants: dict[str, Callable[[], None]] = {
        f"numba kernel[grid, block](...) x {length}": numba_dispatch,
        f"simtsafe PreparedLaunch x {length} (checks memoized)": prepared_memoized,
        f"simtsafe PreparedLaunch x {length} (one launch, checks re-run)": prepared_rerun,
        f"simtsafe graph replay ({length} launches)": g.replay,
    }
    expected = x0.copy()
    for _ in range(length):
        expected = expected + bh
    for name, fn in variants.items():  # warm up and check every variant's result
        for _ in range(20):
            fn()
        cuda.synchronize()
        got = xs[length].copy_to_host()
        assert np.allclose(got, expected, rtol=1e-5, atol=1e-5), name

    samples: dict[str, list[float]] = {k: [] for k in variants}
    submits: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for name, fn in variants.items():
            submits[name].append(submit_us(fn, args.burst))
            samples[name].append(per_sequence_us(fn, args.sequences))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    submit = {k: statistics.median(v) for k, v in submits.items()}
    device_us = {k: time_gpu(fn, reps=20) * 1e6 for k, fn in variants.items()}
    memo_name = f"simtsafe PreparedLaunch x {length} (checks memoized)"
    lines = [
        f"{length}-launch sequence on {device_name()} (vecadd chain, n={N}; median of "
        f"{args.rounds} rounds: host submit time over bursts of {args.burst} sequences, "
        f"end-to-end time over {args.sequences} sequences)",
        "",
        "| launch path | host us / sequence (submit) | us / kernel (submit) | rate x "
        "PreparedLaunch (submit) | end-to-end us / sequence | rate x PreparedLaunch "
        "(end to end) | GPU us / sequence |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, med in medians.items():
        lines.append(
            f"| {name} | {submit[name]:.1f} | {submit[name] / length:.2f} | "
            f"{submit[memo_name] / submit[name]:.2f} | {med:.1f} | {medians[memo_name] / med:.2f} "
            f"| {device_us[name]:.1f} |"
        )
    write_results(
        "graph_replay",
        {
            "device": device_name(),
            "n": N,
            "length": length,
            "samples_us": samples,
            "median_us": medians,
            "submit_samples_us": submits,
            "submit_us": submit,
            "device_us": device_us,
        },
        "\n".join(lines),
        bars=submit,
        unit=f"host microseconds to submit a {length}-launch sequence (lower is better)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
