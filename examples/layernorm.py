"""LayerNorm, one row per block (Tier 1, no unsafe code, any width).

``out[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]``.
``thread.block_row(x)`` walks this block's row; ``ss.block.sum`` after each
loop gives the row's mean, then its variance (two passes: no cancellation);
the last loop writes the output row. ``gamma`` and ``beta`` are read at
``w.col``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, thread

BLOCK = 256


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), covers="out"))
def layernorm(
    out: DisjointSlice[np.float32, BlockRow],
    x: In2D[np.float32],
    gamma: In[np.float32],
    beta: In[np.float32],
    eps: np.float32,
) -> None:
    n = np.float32(x.shape[1])
    s = np.float32(0.0)
    for w in thread.block_row(x):
        s += x[w]
    mean = ss.block.sum(s) / n
    q = np.float32(0.0)
    for w in thread.block_row(x):
        d = x[w] - mean
        q += d * d
    rstd = np.float32(1.0) / math.sqrt(ss.block.sum(q) / n + eps)
    for w in thread.block_row(out):
        out[w] = (x[w] - mean) * rstd * gamma[w.col] + beta[w.col]


def reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """numpy LayerNorm over the last axis, in float64."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    result: np.ndarray = (x64 - mean) / np.sqrt(var + eps) * gamma + beta
    return result


def run(rows: int = 37, cols: int = 1_000) -> bool:
    """LayerNorm of a rows x cols float32 matrix; compare with numpy."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    gamma = rng.standard_normal(cols).astype(np.float32)
    beta = rng.standard_normal(cols).astype(np.float32)
    eps = np.float32(1e-5)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    args = (cuda.to_device(x), cuda.to_device(gamma), cuda.to_device(beta), eps)
    layernorm.prepare(grid=rows, block=BLOCK)(d_out, *args)
    ok = np.allclose(
        d_out.copy_to_host(), reference(x, gamma, beta, float(eps)), rtol=1e-4, atol=1e-5
    )
    return bool(ok)


if __name__ == "__main__":
    print("layernorm matches numpy:", run())
