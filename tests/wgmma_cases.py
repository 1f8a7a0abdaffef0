"""Running tests/kernels/wgmma_rules.py's small GEMM (one warpgroup per 64 x 64 tile of the
output), shared by the simulator's and the GPU's tests."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
from numba import cuda


def small_gemm(module: Any, m: int, k: int, n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``module.k`` on random bf16 ``a`` (m x k), ``b`` (k x n): (got, numpy's float64)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (m, k)).astype(ml_dtypes.bfloat16)
    b = rng.integers(-4, 5, (k, n)).astype(ml_dtypes.bfloat16)
    out = cuda.to_device(np.full((m, n), np.nan, np.float32))
    d_a = cuda.to_device(a.view(np.uint16)).view(a.dtype)
    d_b = cuda.to_device(b.view(np.uint16)).view(b.dtype)
    grid = (math.ceil(n / 64), math.ceil(m / 64))
    module.k.prepare(grid=grid, block=(128, 1, 1))(out, d_a, d_b)
    return out.copy_to_host(), a.astype(np.float64) @ b.astype(np.float64)
