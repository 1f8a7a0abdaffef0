"""One explicit heat-diffusion step on a 3D grid: a 7-point stencil (Tier 1, 3D witnesses).

Interior points move towards the mean of their six neighbours,
``out = u + alpha * (sum of the 6 neighbours - 6 u)``; boundary points are
copied. Each thread owns one (z, y, x) element of the output: array axis 0
follows the launch's z, axis 1 y, axis 2 (the contiguous one) x, so
consecutive x threads touch consecutive elements. Neighbours are read from
the input with plain ints.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice3D, In3D, thread

BLOCK = (32, 4, 2)  # x, y, z threads per block
SIX = np.float32(6.0)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=3,
        block=BLOCK,
        requires=[
            "u.shape[0] == out.shape[0]",
            "u.shape[1] == out.shape[1]",
            "u.shape[2] == out.shape[2]",
        ],
        covers="out",
    )
)
def heat_step(out: DisjointSlice3D[np.float32], u: In3D[np.float32], alpha: np.float32) -> None:
    w = thread.index_3d()  # (z, y, x), unique per thread of the 3D launch
    if w.in_bounds(out):
        c = u[w]  # witness read: bounds-checked against u's own shape
        z = w.z
        y = w.y
        x = w.x
        nz, ny, nx = out.shape
        if z == 0 or y == 0 or x == 0 or z == nz - 1 or y == ny - 1 or x == nx - 1:
            out[w] = c
        else:
            around = (
                u[z - 1, y, x]
                + u[z + 1, y, x]
                + u[z, y - 1, x]
                + u[z, y + 1, x]
                + u[z, y, x - 1]
                + u[z, y, x + 1]
            )
            out[w] = c + alpha * (around - SIX * c)


def reference(u: np.ndarray, alpha: np.float32) -> np.ndarray:
    out = u.copy()
    c = u[1:-1, 1:-1, 1:-1]
    around = (
        u[:-2, 1:-1, 1:-1]
        + u[2:, 1:-1, 1:-1]
        + u[1:-1, :-2, 1:-1]
        + u[1:-1, 2:, 1:-1]
        + u[1:-1, 1:-1, :-2]
        + u[1:-1, 1:-1, 2:]
    )
    out[1:-1, 1:-1, 1:-1] = c + alpha * (around - SIX * c)
    return out


def run(nz: int = 64, ny: int = 96, nx: int = 130) -> bool:
    """One step on a random nz x ny x nx grid; compare with numpy."""
    u = np.random.default_rng(3).standard_normal((nz, ny, nx)).astype(np.float32)
    alpha = np.float32(0.1)
    d_out = cuda.to_device(np.full_like(u, np.nan))
    grid = (ss.cover(nx, BLOCK[0]), ss.cover(ny, BLOCK[1]), ss.cover(nz, BLOCK[2]))
    heat_step.prepare(grid=grid, block=BLOCK)(d_out, cuda.to_device(u), alpha)
    return bool(np.allclose(d_out.copy_to_host(), reference(u, alpha), rtol=1e-5, atol=1e-5))


if __name__ == "__main__":
    print("heat3d matches numpy:", run())
