"""One 5-point Jacobi step on a 2D grid (Tier 1, 2D witnesses).

Interior points become the mean of their four neighbours; boundary points
are copied. Each thread owns one (row, col) of the output; neighbours are
read from the input with plain ints (reads of inputs are not restricted).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

BLOCK = (32, 8, 1)
QUARTER = np.float32(0.25)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=BLOCK,
        requires=["u.shape[0] == out.shape[0]", "u.shape[1] == out.shape[1]"],
        covers="out",
    )
)
def jacobi_step(out: DisjointSlice2D[np.float32], u: In2D[np.float32]) -> None:
    w = thread.index_2d()  # (row, col), unique per thread of the 2D launch
    if w.in_bounds(out):
        r = w.row
        c = w.col
        if r == 0 or c == 0 or r == out.shape[0] - 1 or c == out.shape[1] - 1:
            out[w] = u[w]
        else:
            out[w] = QUARTER * (u[r - 1, c] + u[r + 1, c] + u[r, c - 1] + u[r, c + 1])


def reference(u: np.ndarray) -> np.ndarray:
    out = u.copy()
    out[1:-1, 1:-1] = QUARTER * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def run(rows: int = 1000, cols: int = 1500) -> bool:
    """One step on a random rows x cols grid; compare with numpy."""
    u = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    d_out = cuda.to_device(np.full_like(u, np.nan))
    grid = (ss.cover(cols, BLOCK[0]), ss.cover(rows, BLOCK[1]))
    jacobi_step.prepare(grid=grid, block=BLOCK)(d_out, cuda.to_device(u))
    return bool(np.allclose(d_out.copy_to_host(), reference(u), rtol=1e-5, atol=1e-6))


if __name__ == "__main__":
    print("jacobi matches numpy:", run())
