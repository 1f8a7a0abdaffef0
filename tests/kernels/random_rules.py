"""``simtsafe.random`` draws in 1D, 2D and 3D kernels: refused kernels, accepted twins.

A 2D/3D kernel draws through its ``index_2d()``/``index_3d()`` witness from
the state of its linear thread number (``row * X + col``, ``(z * Y + y) * X +
x``, ``X``/``Y`` the launch's thread extents), from a 1D states array. Each
refused kernel fails when compiled (tests/ptx) or when it runs on the
simulator (tests/sim) with the fragment given, at the line marked ``# BAD``.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "LAUNCH", "REFUSED", "STATES"]

#: name -> (grid, block, output shape) of the accepted twins (output shape = launch extents,
#: so every thread writes the draw of its own state)
LAUNCH = {
    "d1": ((4,), (32,), (128,)),
    "d2": ((2, 2), (8, 4), (8, 16)),
    "d3": ((2, 2, 2), (4, 2, 2), (4, 4, 8)),
}
STATES = 128  # every launch above has 128 threads

_MSG = "takes the xoroshiro128p states as a 1D DisjointSlice[xoroshiro128p_dtype] and this thread's"

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "a-per-block-witness": (
        "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
        "def k(out: DisjointSlice[np.float32, PerBlock], states: ss.random.States) -> None:\n"
        "    w = thread.block_leader()\n"
        "    out[w] = ss.random.uniform_float32(states, w)  # BAD\n",
        _MSG,
    ),
    "2d-states": (
        "from numba.cuda.random import xoroshiro128p_dtype as XO\n\n\n"
        "@ss.kernel(contract=ss.LaunchContract(domain=2))\n"
        "def k(out: DisjointSlice2D[np.float32], states: DisjointSlice2D[XO]) -> None:\n"
        "    w = thread.index_2d()\n"
        "    out[w] = ss.random.uniform_float32(states, w)  # BAD\n",
        _MSG,
    ),
}

#: name -> accepted twin (each thread writes one uniform draw of its state)
ACCEPTED: dict[str, str] = {
    "d1": "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
    "def k(out: DisjointSlice[np.float32], states: ss.random.States) -> None:\n"
    "    w = thread.index_1d()\n"
    "    out[w] = ss.random.uniform_float32(states, w)\n",
    "d2": "@ss.kernel(contract=ss.LaunchContract(domain=2))\n"
    "def k(out: DisjointSlice2D[np.float32], states: ss.random.States) -> None:\n"
    "    w = thread.index_2d()\n"
    "    out[w] = ss.random.uniform_float32(states, w)\n",
    "d3": "@ss.kernel(contract=ss.LaunchContract(domain=3))\n"
    "def k(out: DisjointSlice3D[np.float32], states: ss.random.States) -> None:\n"
    "    w = thread.index_3d()\n"
    "    out[w] = ss.random.uniform_float32(states, w)\n",
}
