"""Kernels used by the GPU tests (module level: the decorator reads their source)."""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice3D, In, In3D, PerBlock, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), requires=["a.size == out.size"]))
def scale(out: DisjointSlice[np.float32], a: In[np.float32], k: np.float32) -> None:
    i = thread.index_1d()
    out[i] = a[i] * k


@ss.kernel
def fill_checked(out: DisjointSlice[np.int32], v: np.int32) -> None:
    i = thread.index_1d()  # no contract: checked witness
    out[i] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=1024, dynamic_shared=(0, 256 * 1024)))
def shared_copy(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: each thread writes and reads back only its own slot buf[tid.x]"):
        buf = cuda.shared.array(0, np.float32)
        t = cuda.threadIdx.x
        buf[t] = a[i]
        out[i] = buf[t]


# Differential test kernels: every thread participates only through its block's leader,
# so any grid/block shape is meaningful; `out` has one element per block.
@ss.kernel
def diff_free(out: DisjointSlice[np.int32, PerBlock]) -> None:
    w = thread.block_leader()
    out[w] = 1


@ss.kernel(contract=ss.LaunchContract(domain=3, block=(8, 4, 2)))
def diff_exact(out: DisjointSlice[np.int32, PerBlock]) -> None:
    w = thread.block_leader()
    out[w] = 1


@ss.kernel(contract=ss.LaunchContract(domain=3, dynamic_shared=(0, 1 << 20)))
def diff_shared(out: DisjointSlice[np.int32, PerBlock]) -> None:
    w = thread.block_leader()
    out[w] = 1


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), cluster=(2, 1, 1)))
def clustered_fill(out: DisjointSlice[np.int32]) -> None:
    i = thread.index_1d()
    out[i] = 3


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), cooperative=True))
def coop_reverse(
    out: DisjointSlice[np.float32], tmp: DisjointSlice[np.float32], a: In[np.float32]
) -> None:
    i = thread.index_1d()
    tmp[i] = a[i] * np.float32(2.0)
    with ss.unsafe(
        "SAFETY: every thread reaches grid.sync() (no early return before it), so tmp is fully "
        "written when it is read; the reversed index n - 1 - i is in bounds because i is"
    ):
        cuda.cg.this_grid().sync()
        if i.in_bounds(out):
            out[i] = tmp.unchecked[tmp.size - 1 - i.index]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1)))
def coop_undeclared(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: every thread reaches grid.sync(); nothing is read across it"):
        cuda.cg.this_grid().sync()
    out[i] = 1.0


@ss.kernel(contract=ss.LaunchContract(domain=3, block=(8, 4, 4), covers="out"))
def coords3d(out: DisjointSlice3D[np.int32]) -> None:
    w = thread.index_3d()
    out[w] = w.z * 10000 + w.y * 100 + w.x


@ss.kernel
def copy3d_free(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
    w = thread.index_3d()  # no contract: valid in any launch shape
    out[w] = a[w]


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        max_threads=1024,
        requires=["block.x >= 64", "grid.x * block.x >= out.size", "a.size == out.size"],
    )
)
def twice_covering(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] * np.float32(2)
