"""Shared helpers for the GPU benchmarks: event timing, result files."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numba import cuda

import simtsafe as ss


def time_gpu(fn: Callable[[], None], reps: int = 20, warmup: int = 3) -> float:
    """Median device time of one call of ``fn`` in seconds, timed with CUDA events (the simulator has them too)."""
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = cuda.event(), cuda.event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)  # also on the simulator
    return statistics.median(times)


def out_dir() -> Path:
    """Where result files go: $OUT on the device machine, else benchmarks/results."""
    path = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    path.mkdir(parents=True, exist_ok=True)
    return path


def device_name() -> str:
    name = getattr(cuda.get_current_device(), "name", "the CUDA simulator")
    return name.decode() if isinstance(name, bytes) else str(name)


def write_results(
    stem: str,
    payload: dict[str, Any],
    table: str,
    bars: dict[str, float] | None = None,
    unit: str = "",
) -> None:
    """Write <stem>.json, <stem>.md and, when matplotlib is there, a bar chart <stem>.png."""
    d = out_dir()
    (d / f"{stem}.json").write_text(json.dumps(payload, indent=2))
    (d / f"{stem}.md").write_text(table + "\n")
    print(table)
    if not bars:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.2))
    names = list(bars)
    ax.barh(names, [bars[n] for n in names], color="#4c72b0")
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.set_title(table.splitlines()[0], fontsize=8)
    fig.tight_layout()
    fig.savefig(d / f"{stem}.png", dpi=110)


@cuda.jit
def _busy(ns):  # type: ignore[no-untyped-def]
    """One thread sleeping ~ns nanoseconds: the GPU stays busy while the host enqueues."""
    for _ in range(ns // 1000):
        cuda.nanosleep(1000)


def time_batched(fn: Callable[[], None], reps: int, batch: int, warmup: int = 3) -> float:
    """Median GPU seconds per call of ``fn`` over ``reps`` batches of ``batch`` calls."""
    for _ in range(warmup):
        fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        if not ss.SIMULATOR:  # (the simulator has no nanosleep)
            _busy[1, 1](3_000_000)
        start, stop = cuda.event(), cuda.event()
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / batch)
    return statistics.median(times)
