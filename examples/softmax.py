"""Row softmax, one row per block (Tier 1, no unsafe code, any width).

``thread.block_row(s)`` walks this block's row of a 2D array: block ``b`` owns
row ``b`` and thread ``t`` the columns ``t, t + blockDim.x, ...`` of it, for
any number of columns (no compile-time maximum). The same witness reads the
input row and writes the output row. Three passes over the row: the row
maximum (``ss.block.max`` after the loop), the sum of ``exp(x - max)``
(``ss.block.sum``), then the output. ``softmax_warp`` is the one-row-per-warp
variant (``thread.warp_row``, ``ss.warp.max``/``ss.warp.sum``: no shared
memory), for many short rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import BlockRow, DisjointSlice, In2D, WarpRow, thread

BLOCK = 256
WARP_BLOCK = 128  # 4 warps, 4 rows per block


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), covers="out"))
def softmax(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for w in thread.block_row(x):
        m = max(m, x[w])
    m = ss.block.max(m)
    s = np.float32(0.0)
    for w in thread.block_row(x):
        s += math.exp(x[w] - m)
    s = ss.block.sum(s)
    for w in thread.block_row(out):
        out[w] = math.exp(x[w] - m) / s


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(WARP_BLOCK, 1, 1), covers="out"))
def softmax_warp(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for w in thread.warp_row(x):
        m = max(m, x[w])
    m = ss.warp.max(m)
    s = np.float32(0.0)
    for w in thread.warp_row(x):
        s += math.exp(x[w] - m)
    s = ss.warp.sum(s)
    for w in thread.warp_row(out):
        out[w] = math.exp(x[w] - m) / s


def reference(x: np.ndarray) -> np.ndarray:
    """numpy softmax over the last axis, in float64."""
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    result: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return result


def run(rows: int = 37, cols: int = 1_000) -> bool:
    """Softmax of a rows x cols float32 matrix, per block and per warp; compare with numpy."""
    x = np.random.default_rng(11).standard_normal((rows, cols)).astype(np.float32)
    d_x = cuda.to_device(x)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    softmax.prepare(grid=rows, block=BLOCK)(d_out, d_x)
    ok = np.allclose(d_out.copy_to_host(), reference(x), rtol=1e-4, atol=1e-7)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    softmax_warp.prepare(grid=ss.cover(rows, WARP_BLOCK // 32), block=WARP_BLOCK)(d_out, d_x)
    ok_warp = np.allclose(d_out.copy_to_host(), reference(x), rtol=1e-4, atol=1e-7)
    return bool(ok and ok_warp)


if __name__ == "__main__":
    print("softmax matches numpy:", run())
