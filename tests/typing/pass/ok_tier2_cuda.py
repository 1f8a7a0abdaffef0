"""Rule: numba.cuda intrinsics (Tier 2) are called with the right types."""

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import (
    DisjointSlice,
    In,
    thread,
)


def k(out: DisjointSlice[np.float32], hist: DisjointSlice[np.int32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    tile = cuda.shared.array(256, np.float32)
    tile[cuda.threadIdx.x] = a[i]
    cuda.syncthreads()
    v = tile[cuda.threadIdx.x]
    v = cuda.shfl_down_sync(0xFFFFFFFF, v, 16)
    full: bool = cuda.all_sync(cuda.activemask(), v > 0)
    votes: int = cuda.ballot_sync(0xFFFFFFFF, full)
    n: int = cuda.syncthreads_count(v > 0) + votes + cuda.laneid + cuda.warpsize
    cuda.syncwarp()
    cuda.threadfence()
    with ss.unsafe("SAFETY: atomics serialize the concurrent updates"):
        old = cuda.atomic.add(out.unchecked, 0, v)
        cuda.atomic.add(hist.unchecked, n % 8, 1)
        cuda.atomic.max(out.unchecked, 1, 2.0)
        cuda.atomic.cas(hist.unchecked, 0, 0, 1)
    out[i] = old + np.float32(
        cuda.grid(1) + cuda.gridsize(1) + cuda.blockIdx.x * cuda.blockDim.x + cuda.gridDim.y
    )


@cuda.jit
def raw(x: int) -> None:
    pass


@cuda.jit(device=True, inline="always", fastmath=True, lineinfo=True)
def dev(x: float) -> float:
    return x * 2.0


def host() -> None:
    d = cuda.to_device(np.zeros(4, dtype=np.float32))
    h = d.copy_to_host()
    e = cuda.device_array_like(h)
    s = cuda.stream()
    raw[1, 32](3)
    raw[(1, 1), (32, 1), s, 0](3)
    y: float = dev(1.0)
    ok: bool = cuda.is_available() and not cuda.config.ENABLE_CUDASIM
    cc: tuple[int, int] = cuda.get_current_device().compute_capability
    ptx, _ = cuda.compile_ptx(dev.py_func, "float64(float64)", device=True)
    cuda.synchronize()
    ev = cuda.event()
    ev.record(s)
    print(d.shape, d.dtype, d.size, d.ndim, e.__cuda_array_interface__, ok, cc, ptx, y)
