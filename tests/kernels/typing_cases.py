"""Typing-level rules: they fire when the kernel compiles (PTX) or when the line runs (sim).

Each case is a kernel body using the common signature ``SIGNATURE``; the
offending line carries ``# BAD``. ``FRAGMENT`` is text both backends put in
the message. ``sim_args()`` gives host arrays for a 1-block, 32-thread
simulator launch.
"""

from __future__ import annotations

import numpy as np

SIGNATURE = (
    "out: DisjointSlice[np.float32], a: In[np.float32], out2d: DisjointSlice2D[np.float32], "
    "pb: DisjointSlice[np.float32, PerBlock], iout: DisjointSlice[np.int64], "
    "out3d: DisjointSlice3D[np.float32]"
)

# id -> (body, fragment)
CASES: dict[str, tuple[str, str]] = {
    # 1. plain ints on a DisjointSlice
    "grid1-write": (
        "i = cuda.grid(1)\nout[i] = 1.0  # BAD",
        "a DisjointSlice is written only through a ThreadIndex witness of its space (Index1D)",
    ),
    "const-write": (
        "out[3] = 1.0  # BAD",
        "a DisjointSlice is written only through a ThreadIndex witness of its space (Index1D)",
    ),
    "const-read": (
        "x = out[3]  # BAD\ni = thread.index_1d()\nout[i] = x",
        "is read only through a witness of that space",
    ),
    "index-write": (
        "i = thread.index_1d()\nout[i.index] = 1.0  # BAD",
        "a DisjointSlice is written only through a ThreadIndex witness",
    ),
    # 2. witness of another space
    "1d-into-2d": ("out2d[thread.index_1d()] = 1.0  # BAD", "DisjointSlice of space Index2D"),
    "1d-into-perblock": ("pb[thread.index_1d()] = 1.0  # BAD", "DisjointSlice of space PerBlock"),
    "2d-into-1d": ("out[thread.index_2d()] = 1.0  # BAD", "DisjointSlice of space Index1D"),
    "warp-into-block": ("pb[thread.warp_leader()] = 1.0  # BAD", "DisjointSlice of space PerBlock"),
    "read-perblock-1d": ("x = pb[thread.index_1d()]  # BAD", "DisjointSlice of space PerBlock"),
    "1d-into-3d": ("out3d[thread.index_1d()] = 1.0  # BAD", "DisjointSlice of space Index3D"),
    "2d-into-3d": ("out3d[thread.index_2d()] = 1.0  # BAD", "DisjointSlice of space Index3D"),
    "3d-into-2d": ("out2d[thread.index_3d()] = 1.0  # BAD", "DisjointSlice of space Index2D"),
    "3d-into-1d": ("out[thread.index_3d()] = 1.0  # BAD", "DisjointSlice of space Index1D"),
    "read-3d-with-2d": ("x = out3d[thread.index_2d()]  # BAD", "DisjointSlice of space Index3D"),
    "3d-reads-1d-input": (
        "x = a[thread.index_3d()]  # BAD",
        "a ThreadIndex[Index3D] witness addresses 3D elements, but the array is 1D",
    ),
    # 2b. coordinates a witness of that rank does not have
    "row-of-3d": ("w = thread.index_3d()\nr = w.row  # BAD", "a 3D witness has .z, .y and .x"),
    "z-of-2d": ("w = thread.index_2d()\nz = w.z  # BAD", "a 2D witness has .row and .col"),
    "x-of-1d": ("w = thread.index_1d()\nx = w.x  # BAD", "a 1D witness has .index"),
    "index-of-3d": ("w = thread.index_3d()\nk = w.index  # BAD", "has no .index"),
    # 3. arithmetic / comparison / conversion on a witness
    "add": ("i = thread.index_1d()\nout[i + 1] = 1.0  # BAD", "no arithmetic"),
    "eq": (
        "i = thread.index_1d()\nj = thread.index_1d()\nif i == j:  # BAD\n    out[i] = 1.0",
        "no arithmetic",
    ),
    "lt": ("i = thread.index_1d()\nif i < 5:  # BAD\n    out[i] = 1.0", "no arithmetic"),
    "bounds-guard": (
        "i = thread.index_1d()\nif i < out.size:  # BAD\n    out[i] = 1.0",
        "is not needed: a write through a witness outside its output does nothing",
    ),
    "int": ("i = thread.index_1d()\nx = int(i)  # BAD", "no arithmetic"),
    # 4. a witness stored in an array / used as an int
    "store-as-value": ("i = thread.index_1d()\niout[i] = i  # BAD", "ThreadIndex[Index1D]"),
    "range": (
        "i = thread.index_1d()\nfor j in range(i):  # BAD\n    out[i] = 1.0",
        "no arithmetic",
    ),
    # 6. In is read-only
    "in-write-witness": (
        "i = thread.index_1d()\na[i] = 1.0  # BAD",
        "cannot store into a read-only input",
    ),
    "in-write-const": ("a[0] = 1.0  # BAD", "cannot store into a read-only input"),
}

#: Cases whose message must carry the kernel name and the line (checked separately).
LOCATED = ("grid1-write", "add", "in-write-const")


def indent(body: str, spaces: int = 4) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in body.splitlines())


def kernel_source(body: str) -> str:
    return f"@ss.kernel\ndef k({SIGNATURE}) -> None:\n{indent(body)}\n"


def sim_args() -> tuple[np.ndarray, ...]:
    n = 32
    return (
        np.zeros(n, np.float32),
        np.arange(n, dtype=np.float32),
        np.zeros((4, 8), np.float32),
        np.zeros(1, np.float32),
        np.zeros(n, np.int64),
        np.zeros((2, 3, 8), np.float32),
    )


RETURN_WITNESS = """
@ss.device
def mine():
    return thread.index_1d()  # BAD

@ss.kernel
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = mine()
    out[i] = a[i]
"""

RETURN_WITNESS_TUPLE = """
@ss.device
def mine(a):
    return a[0], thread.index_1d()  # BAD

@ss.kernel
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    x, i = mine(a)
    out[i] = x
"""

HELPER_WRITES = """
@ss.device
def put(out, i, v):
    out[i] = v

@ss.kernel
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    put(out, i, a[i] * 2)
"""
