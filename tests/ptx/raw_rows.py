"""Raw ``numba.cuda.jit`` twins of the row examples (softmax, rmsnorm, layernorm).

Written the way one writes a block-per-row kernel without simtsafe: the row
is ``blockIdx.x``, the thread strides over its columns, a warp-shuffle plus
shared-memory block reduction after each loop. Also the benchmark's raw
baseline (benchmarks/rows.py).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

__all__ = [
    "layernorm_raw",
    "rmsnorm_raw",
    "softmax_raw",
    "softmax_warp_raw",
]

FULL = 0xFFFFFFFF


@cuda.jit(device=True, inline="always")
def _warp_sum(v):  # type: ignore[no-untyped-def]
    off = 16
    while off > 0:
        v += cuda.shfl_xor_sync(FULL, v, off)
        off //= 2
    return v


@cuda.jit(device=True, inline="always")
def _warp_max(v):  # type: ignore[no-untyped-def]
    off = 16
    while off > 0:
        v = max(v, cuda.shfl_xor_sync(FULL, v, off))
        off //= 2
    return v


@cuda.jit(device=True, inline="always")
def _block_sum(v):  # type: ignore[no-untyped-def]
    buf = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x % 32
    wid = cuda.threadIdx.x // 32
    v = _warp_sum(v)
    if lane == 0:
        buf[wid] = v
    cuda.syncthreads()
    v = buf[lane] if lane < (cuda.blockDim.x + 31) // 32 else np.float32(0.0)
    v = _warp_sum(v)
    cuda.syncthreads()
    return v


@cuda.jit(device=True, inline="always")
def _block_max(v):  # type: ignore[no-untyped-def]
    buf = cuda.shared.array(32, np.float32)
    lane = cuda.threadIdx.x % 32
    wid = cuda.threadIdx.x // 32
    v = _warp_max(v)
    if lane == 0:
        buf[wid] = v
    cuda.syncthreads()
    v = buf[lane] if lane < (cuda.blockDim.x + 31) // 32 else np.float32(-np.inf)
    v = _warp_max(v)
    cuda.syncthreads()
    return v


def softmax_raw(out, x):  # type: ignore[no-untyped-def]
    row = cuda.blockIdx.x
    n = x.shape[1]
    m = np.float32(-np.inf)
    if row < x.shape[0]:
        for c in range(cuda.threadIdx.x, n, cuda.blockDim.x):
            m = max(m, x[row, c])
    m = _block_max(m)
    s = np.float32(0.0)
    if row < x.shape[0]:
        for c in range(cuda.threadIdx.x, n, cuda.blockDim.x):
            s += math.exp(x[row, c] - m)
    s = _block_sum(s)
    if row < out.shape[0] and row < x.shape[0]:
        for c in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
            out[row, c] = math.exp(x[row, c] - m) / s


def softmax_warp_raw(out, x):  # type: ignore[no-untyped-def]
    row = cuda.blockIdx.x * ((cuda.blockDim.x + 31) // 32) + cuda.threadIdx.x // 32
    lane = cuda.threadIdx.x % 32
    n = x.shape[1]
    m = np.float32(-np.inf)
    if row < x.shape[0]:
        for c in range(lane, n, 32):
            m = max(m, x[row, c])
    m = _warp_max(m)
    s = np.float32(0.0)
    if row < x.shape[0]:
        for c in range(lane, n, 32):
            s += math.exp(x[row, c] - m)
    s = _warp_sum(s)
    if row < out.shape[0] and row < x.shape[0]:
        for c in range(lane, out.shape[1], 32):
            out[row, c] = math.exp(x[row, c] - m) / s


def rmsnorm_raw(out, x, weight, eps):  # type: ignore[no-untyped-def]
    row = cuda.blockIdx.x
    s = np.float32(0.0)
    if row < x.shape[0]:
        for c in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
            v = x[row, c]
            s += v * v
    s = _block_sum(s)
    scale = np.float32(1.0) / math.sqrt(s / np.float32(x.shape[1]) + eps)
    if row < out.shape[0] and row < x.shape[0]:
        for c in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
            out[row, c] = x[row, c] * scale * weight[c]


def layernorm_raw(out, x, gamma, beta, eps):  # type: ignore[no-untyped-def]
    row = cuda.blockIdx.x
    n = np.float32(x.shape[1])
    s = np.float32(0.0)
    if row < x.shape[0]:
        for c in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
            s += x[row, c]
    mean = _block_sum(s) / n
    q = np.float32(0.0)
    if row < x.shape[0]:
        for c in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
            d = x[row, c] - mean
            q += d * d
    rstd = np.float32(1.0) / math.sqrt(_block_sum(q) / n + eps)
    if row < out.shape[0] and row < x.shape[0]:
        for c in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
            out[row, c] = (x[row, c] - mean) * rstd * gamma[c] + beta[c]
