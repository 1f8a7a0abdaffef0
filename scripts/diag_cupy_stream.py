"""Diagnostic: which step of the CuPy side-stream scenario blocks the host?

Runs tests/gpu/test_execution_gpu.py's CuPy scenario twice in a fresh process,
timing each host call; a step that takes as long as the spin kernel blocked
the host until the producer stream drained (so nothing ran concurrently).
"""

import time

import cupy as cp
import numpy as np

import simtsafe as ss
from tests.gpu.test_execution_gpu import GRID, N, scale, spin

for round_ in (1, 2, 3):
    x = cp.zeros(N, dtype=cp.float32)
    out = cp.full(N, -7, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    launch = scale.prepare(grid=GRID, block=128, stream=consumer)
    marks = [time.perf_counter()]
    with ss.configure(cai_sync=False):
        with producer:
            spin(producer.ptr)
            marks.append(time.perf_counter())
            x.fill(5)
            marks.append(time.perf_counter())
            launch(out, x, np.float32(2))
            marks.append(time.perf_counter())
            busy = not producer.done
        cp.cuda.Device().synchronize()
        marks.append(time.perf_counter())
    steps = ("spin", "fill", "launch", "drain")
    times = ", ".join(
        f"{s} {1e3 * (b - a):.2f} ms" for s, a, b in zip(steps, marks[:-1], marks[1:], strict=True)
    )
    print(
        f"round {round_}: {times}; producer busy after launch: {busy};"
        f" out[0] = {float(out[0])} (0: ran concurrently, 10: waited)"
    )
