"""Diagnostic: does a CuPy consumer launch really run concurrently with a producer's spin?"""

import time

import cupy as cp
import numpy as np

import simtsafe as ss
from simtsafe.lowering._launching import stream_handle
from tests.gpu.test_execution_gpu import GRID, N, scale, spin

x = cp.zeros(N, dtype=cp.float32)
out = cp.full(N, -7, dtype=cp.float32)
cp.cuda.Device().synchronize()
producer = cp.cuda.Stream(non_blocking=True)
consumer = cp.cuda.Stream(non_blocking=True)
launch = scale.prepare(grid=GRID, block=128, stream=consumer)
print(
    "consumer ptr",
    consumer.ptr,
    "plan stream",
    stream_handle(launch.stream),
    "producer",
    producer.ptr,
)
with ss.configure(cai_sync=False):
    with producer:
        t0 = time.perf_counter()
        spin(producer.ptr)
        x.fill(5)
        t1 = time.perf_counter()
        launch(out, x, np.float32(2))
        t2 = time.perf_counter()
    consumer.synchronize()
    t3 = time.perf_counter()
    cp.cuda.Device().synchronize()
    t4 = time.perf_counter()
print(
    f"enqueue spin+fill {1e3 * (t1 - t0):.2f} ms, launch {1e3 * (t2 - t1):.2f} ms, consumer done after {1e3 * (t3 - t2):.2f} ms, all done {1e3 * (t4 - t2):.2f} ms"
)
print("out[0] =", float(out[0]), "(0 = stale read, i.e. ran concurrently)")
