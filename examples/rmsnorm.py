"""RMSNorm, one row per block (Tier 1, no unsafe code, any width).

``out[r, c] = x[r, c] / sqrt(mean(x[r, :] ** 2) + eps) * weight[c]``.
``thread.block_row(x)`` walks this block's row (block ``b`` owns row ``b``,
thread ``t`` the columns ``t, t + blockDim.x, ...``); ``ss.block.sum`` after
the loop adds the block's squares; the last loop writes the output row with
the same kind of witness. The weight (1D) is read at ``w.col``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In, In2D, thread

BLOCK = 256


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), covers="out"))
def rmsnorm(
    out: DisjointSlice[np.float32, BlockRow],
    x: In2D[np.float32],
    weight: In[np.float32],
    eps: np.float32,
) -> None:
    s = np.float32(0.0)
    for w in thread.block_row(x):
        v = x[w]
        s += v * v
    s = ss.block.sum(s)
    scale = np.float32(1.0) / math.sqrt(s / np.float32(x.shape[1]) + eps)
    for w in thread.block_row(out):
        out[w] = x[w] * scale * weight[w.col]


def reference(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """numpy RMSNorm over the last axis, in float64."""
    x64 = x.astype(np.float64)
    result: np.ndarray = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps) * weight
    return result


def run(rows: int = 37, cols: int = 1_000) -> bool:
    """RMSNorm of a rows x cols float32 matrix; compare with numpy."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    weight = rng.standard_normal(cols).astype(np.float32)
    eps = np.float32(1e-6)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    rmsnorm.prepare(grid=rows, block=BLOCK)(d_out, cuda.to_device(x), cuda.to_device(weight), eps)
    return bool(
        np.allclose(d_out.copy_to_host(), reference(x, weight, float(eps)), rtol=1e-4, atol=1e-5)
    )


if __name__ == "__main__":
    print("rmsnorm matches numpy:", run())
