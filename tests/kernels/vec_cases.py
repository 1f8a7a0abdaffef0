"""Kernels using ``simtsafe.vec.load``, shared by tests/sim, tests/ptx and tests/gpu."""

from __future__ import annotations

import numpy as np

#: One warp per row: y = W x, lanes read runs of 4 with vec.load (W is (N, K)).
GEMV_SOURCE = """
@ss.kernel
def gemv(y: DisjointSlice[np.{dt}, PerWarp], w: In2D[np.{dt}], x: In[np.{dt}]) -> None:
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = np.float32(0)
    for j in range(lane, (w.shape[1] + {n} - 1) // {n}, 32):
        a = ss.vec.load(w, (row, j), {n})
        b = ss.vec.load(x, j, {n})
        acc += {dot}
    total = ss.warp.sum(acc)
    y[thread.warp_leader()] = total
"""

#: Thread (t, k) (block (n, T)) copies element k of the run j = t - shift (any int: negative and past-the-end runs read 0).
RUNS_SOURCE = """
@ss.kernel
def runs(out: DisjointSlice2D[np.{dt}], a: In[np.{dt}], shift: np.int64) -> None:
    i = thread.index_2d()
    j = cuda.threadIdx.y - shift
    v = ss.vec.load(a, j, {n})
    out[i] = v[cuda.threadIdx.x]
"""


def gemv_source(dt: str, n: int) -> str:
    """GEMV_SOURCE for element type ``dt`` and run length ``n`` (the dot product unrolled)."""
    dot = " + ".join(f"np.float32(a[{k}]) * np.float32(b[{k}])" for k in range(n))
    return GEMV_SOURCE.format(dt=dt, n=n, dot=dot)


def gemv_reference(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (w.astype(np.float64) @ x.astype(np.float64)).astype(np.float32)


def runs_reference(a: np.ndarray, n: int, nthreads: int, shift: int) -> np.ndarray:
    """out[t, k] = a[(t - shift) * n + k], 0 outside ``a``."""
    out = np.zeros((nthreads, n), a.dtype)
    for t in range(nthreads):
        for k in range(n):
            at = (t - shift) * n + k
            if t - shift >= 0 and at < a.size:
                out[t, k] = a[at]
    return out
