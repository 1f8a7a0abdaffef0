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


#: Thread (t, k) (block (n, T)) reads three runs with one vec.load_runs: run j = t - shift of
#: rows 0 and 2 and run j + step of row 1 of the 2D ``a``, and writes element k of each,
#: packed as ``r0 + 100 r1 + 10000 r2`` (``a``'s values below 100: exact in float32).
LOAD_RUNS_SOURCE = """
@ss.kernel
def runs3(
    out: DisjointSlice2D[np.float32], a: In2D[np.float32], shift: np.int64, step: np.int64
) -> None:
    i = thread.index_2d()
    j = cuda.threadIdx.y - shift
    r0, r1, r2 = ss.vec.load_runs(a, ((0, j), (1, j + step), (2, j)), {n})
    k = cuda.threadIdx.x
    out[i] = r0[k] + np.float32(100) * r1[k] + np.float32(10000) * r2[k]
"""


def load_runs_reference(a: np.ndarray, n: int, nthreads: int, shift: int, step: int) -> np.ndarray:
    """What LOAD_RUNS_SOURCE writes: runs of ``a``'s rows, 0 outside ``a``."""

    def run(row: int, j: int, k: int) -> float:
        at = j * n + k
        inside = 0 <= row < a.shape[0] and j >= 0 and at < a.shape[1]
        return float(a[row, at]) if inside else 0.0

    out = np.zeros((nthreads, n), np.float32)
    for t in range(nthreads):
        j = t - shift
        for k in range(n):
            out[t, k] = run(0, j, k) + 100 * run(1, j + step, k) + 10000 * run(2, j, k)
    return out


#: case -> (kernel source, fragment of the refusal) for vec.load_runs.
LOAD_RUNS_REFUSED = {
    "index-not-a-tuple": (
        LOAD_RUNS_SOURCE.format(n=4)
        .replace("((0, j), (1, j + step), (2, j)), 4)", "j, 4)")
        .replace("r0, r1, r2 = ", "r0 = r1 = r2 = "),
        "vec.load_runs takes a tuple of 1 to 16 run indices",
    ),
    "seventeen-runs": (
        LOAD_RUNS_SOURCE.format(n=4)
        .replace("((0, j), (1, j + step), (2, j)), 4)", "(" + "(0, j), " * 17 + "), 4)")
        .replace("r0, r1, r2 = ", "r0 = r1 = r2 = "),
        "vec.load_runs takes a tuple of 1 to 16 run indices",
    ),
    "a-1d-index-of-a-2d-input": (
        LOAD_RUNS_SOURCE.format(n=4).replace("(1, j + step), (2, j)", "j + step, (2, j)"),
        "vec.load_runs of a 2D input takes a pair (row, j) of ints as its index",
    ),
}
