"""Grid cooperation in Tier 1: ``simtsafe.grid.sync()`` and ``grid.read``, refused and accepted.

Each refused kernel fails when compiled (tests/ptx) or when it runs on the
simulator (tests/sim) with the fragment given, at the line marked ``# BAD``;
each accepted twin runs (cooperatively) with the result its function gives.
Kernels are named ``k``, have a ``cooperative=True`` contract (1D, BLOCK
threads) and take ``a`` and ``b`` (float32 outputs of N elements) and
``steps`` (int32); launched as GRID blocks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["ACCEPTED", "BLOCK", "GRID", "N", "REFUSED", "STEPS", "start"]

GRID, BLOCK, N, STEPS = 2, 32, 64, 3

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, cooperative=True))\n"
    "def k(a: DisjointSlice[np.float32], b: DisjointSlice[np.float32], steps: np.int32) -> None:\n"
    "    w = thread.index_1d()\n"
    "    i = w.index\n"
)


def _k(body: str) -> str:
    return _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


_SAME_PHASE = "grid.read of output 'a' may run in the same grid phase as the write at line"
_DIVERGENT = "`grid.sync` needs every thread of the grid to reach it, but control flow here is"

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "read-without-a-sync": (
        _k("a[w] = np.float32(1)\nb[w] = ss.grid.read(a, i + 1)  # BAD"),
        _SAME_PHASE,
    ),
    "one-sync-in-a-loop": (
        # The next iteration's write runs while slower threads still read.
        _k(
            "for _ in range(steps):\n"
            "    a[w] = a[w] + np.float32(1)\n"
            "    ss.grid.sync()\n"
            "    b[w] = ss.grid.read(a, i + 1)  # BAD"
        ),
        _SAME_PHASE,
    ),
    "write-after-the-read-in-its-phase": (
        _k("ss.grid.sync()\nv = ss.grid.read(a, i + 1)  # BAD\na[w] = v"),
        _SAME_PHASE,
    ),
    "sync-in-a-block-dependent-branch": (
        _k("if cuda.blockIdx.x == 0:\n    ss.grid.sync()  # BAD\na[w] = np.float32(1)"),
        _DIVERGENT + " block-uniform",
    ),
    "sync-after-a-block-collective-branch": (
        _k(
            "if ss.block.sum(np.float32(i)) > np.float32(600):\n"
            "    ss.grid.sync()  # BAD\n"
            "a[w] = np.float32(1)"
        ),
        _DIVERGENT,
    ),
    "sync-in-a-thread-dependent-loop": (
        _k("for _ in range(i % 3):\n    ss.grid.sync()  # BAD\na[w] = np.float32(1)"),
        _DIVERGENT + " thread-dependent",
    ),
    "read-of-an-input": (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, cooperative=True))\n"
        "def k(a: DisjointSlice[np.float32], b: In[np.float32], steps: np.int32) -> None:\n"
        "    w = thread.index_1d()\n"
        "    a[w] = ss.grid.read(b, w.index)  # BAD\n",
        "grid.read(out, i) reads an output (a DisjointSlice parameter)",
    ),
}


def start() -> tuple[np.ndarray, np.ndarray]:
    """The initial a and b of every launch."""
    a = np.zeros(N, np.float32)
    a[N // 2] = 3
    return a, np.arange(N, dtype=np.float32)


def _smooth(x: np.ndarray) -> np.ndarray:
    p = np.pad(x.astype(np.float32), 1)
    return ((p[:-2] + p[1:-1] + p[2:]) / np.float32(3)).astype(np.float32)


def _heat(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    for _ in range(STEPS):
        b = _smooth(a)
        a = _smooth(b)
    return a, b


def _shift(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.ones(N, np.float32)
    return a, np.append(a[1:], np.float32(0))


def _loop_two_syncs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    for _ in range(STEPS):
        a = a + np.float32(1)
        b = np.append(a[1:], np.float32(0))
    return a, b


#: case -> (accepted twin, the final (a, b) from start())
ACCEPTED: dict[str, tuple[str, Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]]]] = {
    "ping-pong-heat-steps": (
        _k(
            "for _ in range(steps):\n"
            "    b[w] = (ss.grid.read(a, i - 1) + ss.grid.read(a, i)"
            " + ss.grid.read(a, i + 1)) / np.float32(3)\n"
            "    ss.grid.sync()\n"
            "    a[w] = (ss.grid.read(b, i - 1) + ss.grid.read(b, i)"
            " + ss.grid.read(b, i + 1)) / np.float32(3)\n"
            "    ss.grid.sync()"
        ),
        _heat,
    ),
    "read-after-a-sync": (
        _k("a[w] = np.float32(1)\nss.grid.sync()\nb[w] = ss.grid.read(a, i + 1)"),
        _shift,
    ),
    "two-syncs-in-a-loop": (
        _k(
            "for _ in range(steps):\n"
            "    a[w] = a[w] + np.float32(1)\n"
            "    ss.grid.sync()\n"
            "    b[w] = ss.grid.read(a, i + 1)\n"
            "    ss.grid.sync()"
        ),
        _loop_two_syncs,
    ),
    "sync-under-a-parameter-branch": (
        _k(
            "a[w] = np.float32(1)\nif steps > 0:\n    ss.grid.sync()\n    b[w] = ss.grid.read(a, i + 1)"
        ),
        _shift,
    ),
}
