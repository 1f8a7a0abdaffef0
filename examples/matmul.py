"""Naive matrix multiply C = A @ B, one output element per thread (Tier 1)."""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

BLOCK = (16, 16, 1)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=BLOCK,
        requires=[
            "a.shape[1] == b.shape[0]",
            "c.shape[0] == a.shape[0]",
            "c.shape[1] == b.shape[1]",
        ],
        covers="c",
    )
)
def matmul(c: DisjointSlice2D[np.float32], a: In2D[np.float32], b: In2D[np.float32]) -> None:
    w = thread.index_2d()
    if w.in_bounds(c):
        acc = np.float32(0.0)
        for k in range(a.shape[1]):
            acc += a[w.row, k] * b[k, w.col]
        c[w] = acc


def run(m: int = 500, k: int = 300, n: int = 400) -> bool:
    """C = A @ B for random m x k and k x n matrices; compare with numpy."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    d_c = cuda.to_device(np.full((m, n), np.nan, dtype=np.float32))
    grid = (ss.cover(n, BLOCK[0]), ss.cover(m, BLOCK[1]))
    matmul.prepare(grid=grid, block=BLOCK)(d_c, cuda.to_device(a), cuda.to_device(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-4))


if __name__ == "__main__":
    print("matmul matches numpy:", run())
