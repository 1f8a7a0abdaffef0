"""Hand-written raw ``numba.cuda.jit`` twins of the example kernels.

Each twin does exactly what the safe kernel does, written the way one
writes it without simtsafe (``cuda.grid`` plus an explicit ``if i < n``
tail guard), so ``test_zero_cost`` can compare the global memory traffic
of the two PTX listings. ``RAW_TWINS`` maps an example module's file stem
to (safe kernel attribute name, raw Python function).
"""

from __future__ import annotations

import numpy as np
from numba import cuda
from numba.cuda.random import xoroshiro128p_uniform_float32

from tests.ptx.raw_rows import layernorm_raw, rmsnorm_raw, softmax_raw, softmax_warp_raw

QUARTER = np.float32(0.25)
SIX = np.float32(6.0)
SUMSQ_BLOCK = 256


def vecadd_raw(out, a, b):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def saxpy_raw(out, alpha, x, y):  # type: ignore[no-untyped-def]
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = alpha * x[i] + y[i]


def jacobi_raw(out, u):  # type: ignore[no-untyped-def]
    c, r = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        if r == 0 or c == 0 or r == out.shape[0] - 1 or c == out.shape[1] - 1:
            out[r, c] = u[r, c]
        else:
            out[r, c] = QUARTER * (u[r - 1, c] + u[r + 1, c] + u[r, c - 1] + u[r, c + 1])


def heat3d_raw(out, u, alpha):  # type: ignore[no-untyped-def]
    x, y, z = cuda.grid(3)
    nz, ny, nx = out.shape
    if z < nz and y < ny and x < nx:
        c = u[z, y, x]
        if z == 0 or y == 0 or x == 0 or z == nz - 1 or y == ny - 1 or x == nx - 1:
            out[z, y, x] = c
        else:
            around = (
                u[z - 1, y, x]
                + u[z + 1, y, x]
                + u[z, y - 1, x]
                + u[z, y + 1, x]
                + u[z, y, x - 1]
                + u[z, y, x + 1]
            )
            out[z, y, x] = c + alpha * (around - SIX * c)


def matmul_raw(c, a, b):  # type: ignore[no-untyped-def]
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = np.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


def block_sumsq_raw(partial, x):  # type: ignore[no-untyped-def]
    if cuda.threadIdx.x == 0:
        blk = cuda.blockIdx.x
        if blk < partial.size:
            start = blk * SUMSQ_BLOCK
            stop = min(start + SUMSQ_BLOCK, x.size)
            acc = 0.0
            for k in range(start, stop):
                v = np.float64(x[k])
                acc += v * v
            partial[blk] = acc


def monte_carlo_pi_raw(states, iterations, out):  # type: ignore[no-untyped-def]
    # numba-cuda's documentation example, with the bounds guard it lacks (an unsigned
    # compare, as a witness's in_bounds): the documentation kernel writes past the
    # states when the grid has more threads than states.
    thread_id = cuda.grid(1)
    if np.uint64(thread_id) < np.uint64(states.shape[0]):
        inside = 0
        for _ in range(iterations):
            x = xoroshiro128p_uniform_float32(states, thread_id)
            y = xoroshiro128p_uniform_float32(states, thread_id)
            if x * x + y * y <= 1.0:
                inside += 1
        if thread_id < out.shape[0]:
            out[thread_id] = 4.0 * inside / iterations


RAW_TWINS = {
    "monte_carlo_pi": ("compute_pi", monte_carlo_pi_raw),
    "vecadd": ("vecadd", vecadd_raw),
    "saxpy": ("saxpy", saxpy_raw),
    "jacobi": ("jacobi_step", jacobi_raw),
    "heat3d": ("heat_step", heat3d_raw),
    "matmul": ("matmul", matmul_raw),
    "block_sumsq": ("block_sumsq", block_sumsq_raw),
    "softmax": ("softmax", softmax_raw),
    "softmax_warp": ("softmax_warp", softmax_warp_raw),  # in examples/softmax.py
    "rmsnorm": ("rmsnorm", rmsnorm_raw),
    "layernorm": ("layernorm", layernorm_raw),
}
