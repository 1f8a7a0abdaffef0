"""Monte Carlo estimate of pi with numba-cuda's xoroshiro128+ generator (Tier 1).

The port of numba-cuda's documentation example: each thread draws points in
the unit square from its own generator state and counts those inside the
quarter circle. The state array is an output (``DisjointSlice``): a thread
advances only the state its witness owns, so no two threads share one.
The raw Numba kernel with the same body (``compute_pi_raw``) draws the same
numbers from the same seed: the two must agree exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

import simtsafe as ss
from simtsafe import DisjointSlice, thread

BLOCK = 64


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=BLOCK, requires=["out.size == states.size"], covers="out"
    )
)
def compute_pi(states: ss.random.States, iterations: int, out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(states):  # one check: the draws below then keep the state in registers
        inside = 0
        for _ in range(iterations):
            x = ss.random.uniform_float32(states, w)
            y = ss.random.uniform_float32(states, w)
            if x * x + y * y <= 1.0:
                inside += 1
        out[w] = 4.0 * inside / iterations


@cuda.jit
def compute_pi_raw(rng_states: Any, iterations: int, out: Any) -> None:
    """numba-cuda's documentation example, unchanged: the reference."""
    thread_id = cuda.grid(1)
    inside = 0
    for _ in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x**2 + y**2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def run(threads: int = BLOCK * 1024, iterations: int = 1000) -> bool:
    """Estimate pi with both kernels from one seed; they must agree and be near numpy's pi."""
    blocks = ss.cover(threads, BLOCK)
    out = cuda.to_device(np.full(threads, np.nan, dtype=np.float32))
    compute_pi.prepare(grid=blocks, block=BLOCK)(
        create_xoroshiro128p_states(threads, seed=7), iterations, out
    )
    ref = cuda.to_device(np.zeros(threads, dtype=np.float32))
    with ss.unsafe("SAFETY: the documentation kernel, one thread per state, grid covers n"):
        compute_pi_raw[blocks, BLOCK](create_xoroshiro128p_states(threads, seed=7), iterations, ref)
    got, want = out.copy_to_host(), ref.copy_to_host()
    tolerance = 8.0 / np.sqrt(threads * iterations)  # about 5 standard deviations
    return bool(np.array_equal(got, want) and abs(got.mean() - np.pi) < tolerance)


if __name__ == "__main__":
    print("monte_carlo_pi matches the raw kernel and numpy's pi:", run())
