"""Wall time of ``simtsafe.sim.check`` on the CPU (no GPU needed).

Targets (issue 9): a 1-block x 256-thread shared-memory reduction in under
5 s and 8 blocks x 256 threads in under 60 s, on a 2-core machine. Also
timed: a warp-shuffle reduction, an atomic histogram, a tiled matmul and a
cooperative kernel with grid syncs (all blocks live at once).

    python benchmarks/checker_cpu.py            # writes benchmarks/results/checker_cpu.{json,md}
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simtsafe import sim  # noqa: E402

FULL = 0xFFFFFFFF


@cuda.jit
def reduce256(out, x):
    tile = cuda.shared.array(256, numba.float32)
    tid = cuda.threadIdx.x
    tile[tid] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            tile[tid] += tile[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = tile[0]


@cuda.jit
def warp_reduce(out, x):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit
def histogram(hist, data):
    i = cuda.grid(1)
    cuda.atomic.add(hist, data[i], 1)


@cuda.jit
def matmul16(c, a, b):
    sa = cuda.shared.array((16, 16), numba.float32)
    sb = cuda.shared.array((16, 16), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = numba.float32(0)
    for t in range(a.shape[1] // 16):
        sa[ty, tx] = a[row, t * 16 + tx]
        sb[ty, tx] = b[t * 16 + ty, col]
        cuda.syncthreads()
        for k in range(16):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


@cuda.jit
def grid_steps(x, y):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    n = cuda.gridsize(1)
    for _ in range(4):
        y[i] = x[(i + 1) % n]
        g.sync()
        x[i] = y[i]
        g.sync()


def _cases() -> list[tuple[str, Callable[[], sim.CheckReport], float | None]]:
    f32 = np.float32
    x = np.ones(2048, f32)
    data = np.random.default_rng(0).integers(0, 16, 2048).astype(np.int32)
    a = np.ones((64, 64), f32)
    return [
        ("shared reduction, 1 block x 256", lambda: sim.check(reduce256, 1, 256, np.zeros(1, f32), x[:256]), 5.0),
        ("shared reduction, 8 blocks x 256", lambda: sim.check(reduce256, 8, 256, np.zeros(8, f32), x), 60.0),
        ("warp-shuffle reduction, 8 blocks x 256", lambda: sim.check(warp_reduce, 8, 256, np.zeros(64, f32), x), None),
        ("atomic histogram, 8 blocks x 256", lambda: sim.check(histogram, 8, 256, np.zeros(16, np.int32), data), None),
        ("tiled matmul 64x64, 4x4 blocks x 16x16", lambda: sim.check(matmul16, (4, 4), (16, 16), np.zeros((64, 64), f32), a, a), None),
        ("cooperative, 8 grid syncs, 8 blocks x 256", lambda: sim.check(grid_steps, 8, 256, x.copy(), np.zeros(2048, f32)), None),
    ]  # fmt: skip


def main() -> int:
    rounds = int(os.environ.get("ROUNDS", "3"))
    rows: list[dict[str, Any]] = []
    for name, run, target in _cases():
        times: list[float] = []
        report = None
        for _ in range(rounds):
            start = time.perf_counter()
            report = run()
            times.append(time.perf_counter() - start)
        assert report is not None and report.ok, str(report)
        rows.append(
            {
                "case": name,
                "threads": report.stats["threads"],
                "accesses": report.stats["accesses"],
                "barriers": report.stats["barriers"],
                "warp_ops": report.stats["warp_ops"],
                "grid_syncs": report.stats["grid_syncs"],
                "median_s": statistics.median(times),
                "min_s": min(times),
                "max_s": max(times),
                "target_s": target,
            }
        )
        print(f"{name}: {statistics.median(times):.2f} s", flush=True)
    machine = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "processor": platform.processor() or platform.machine(),
        "simulator_env": os.environ.get("NUMBA_ENABLE_CUDASIM", "0"),
    }
    lines = [
        f"simtsafe.sim.check wall time on the CPU ({machine['affinity'] or machine['cpus']} "
        f"cores usable, {machine['processor']}, Python {machine['python']}; median of {rounds} "
        "runs)",
        "",
        "| kernel | threads | accesses | barriers | warp ops | median s | min..max s | target s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        target = f"< {r['target_s']:g}" if r["target_s"] else ""
        lines.append(
            f"| {r['case']} | {r['threads']} | {r['accesses']} | {r['barriers']} | "
            f"{r['warp_ops']} | {r['median_s']:.2f} | {r['min_s']:.2f}..{r['max_s']:.2f} | "
            f"{target} |"
        )
    out = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "checker_cpu.json").write_text(
        json.dumps({"machine": machine, "rounds": rounds, "rows": rows}, indent=2) + "\n"
    )
    table = "\n".join(lines)
    (out / "checker_cpu.md").write_text(table + "\n")
    print(table)
    missed = [r["case"] for r in rows if r["target_s"] and r["median_s"] >= r["target_s"]]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
