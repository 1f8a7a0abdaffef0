"""pipeline: two stages on two streams, ordered by simtsafe, then replayed as a CUDA graph.

Stage 1 computes ``tmp = alpha * x + y`` on one stream, stage 2
``out = tmp * tmp`` on another. Nothing in the code orders the streams:
simtsafe sees that stage 2 reads what stage 1 wrote and makes the second
stream wait for the first (docs/execution.md). The same two launches are
then recorded once into a CUDA graph -- checked at capture -- and replayed
for new inputs with ``rebind``, which re-checks only the launch that reads
the swapped array.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

BLOCK = 256


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=(BLOCK, 1, 1), requires=["x.size == out.size", "y.size == out.size"]
    )
)
def axpy(
    out: DisjointSlice[np.float32], alpha: np.float32, x: In[np.float32], y: In[np.float32]
) -> None:
    i = thread.index_1d()
    out[i] = alpha * x[i] + y[i]


@ss.kernel(
    contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1), requires=["a.size == out.size"])
)
def square(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] * a[i]


def run(n: int = 1_000_003, steps: int = 3) -> bool:
    """Run the pipeline directly, then as a graph over `steps` inputs; compare with numpy."""
    rng = np.random.default_rng(2)
    alpha = np.float32(0.5)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    tmp = cuda.device_array(n, np.float32)
    out = cuda.device_array(n, np.float32)
    producer, consumer = cuda.stream(), cuda.stream()
    stage1 = axpy.prepare(grid=ss.cover(n, BLOCK), block=BLOCK, stream=producer)
    stage2 = square.prepare(grid=ss.cover(n, BLOCK), block=BLOCK, stream=consumer)

    def expected(xs: np.ndarray) -> np.ndarray:
        t = alpha * xs + y
        return t * t

    stage1(tmp, alpha, d_x, d_y)
    stage2(out, tmp)  # reads tmp on another stream: ordered after stage 1 by simtsafe
    ok = bool(np.allclose(ss.to_host(out), expected(x), rtol=1e-5, atol=1e-6))

    with ss.graph(stream=consumer) as pipeline:  # checked now, run by replay()
        stage1(tmp, alpha, d_x, d_y)
        stage2(out, tmp)
    current = d_x
    for _ in range(steps):
        xs = rng.standard_normal(n).astype(np.float32)
        fresh = cuda.to_device(xs)
        pipeline.rebind(current, fresh)  # re-checks stage 1 only
        current = fresh
        pipeline.replay()
        ok = ok and bool(np.allclose(ss.to_host(out), expected(xs), rtol=1e-5, atol=1e-6))
    return ok


if __name__ == "__main__":
    print("pipeline matches numpy:", run())
