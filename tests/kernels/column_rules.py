"""The ``Columns`` space: refused kernels and their accepted twins.

A ``Columns`` output is 2D; ``thread.column()`` gives each thread of a 1D
launch one column of it in every row, written as ``out[row, w]`` with any
integer row (a position read on the device: the KV-cache append). Each
refused kernel decorates and fails when it is compiled (tests/ptx) or when it
runs on the simulator (tests/sim) with the fragment given, at the line marked
``# BAD``; each accepted twin runs with its expected result. Kernels are named
``k`` and take ``out`` (ROWS x COLS float32, zero-filled), ``x`` (COLS
float32), ``pos`` (int32 [POS]) and ``x2`` (ROWS x COLS float32); launched as
GRID blocks of BLOCK threads (more threads than columns).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "ACCEPTED",
    "BLOCK",
    "COLS",
    "GRID",
    "POS",
    "RECORD",
    "REFUSED",
    "ROWS",
    "record_expected",
    "source",
]

GRID, BLOCK, ROWS, COLS, POS = 2, 32, 6, 50, 2

_IMPORT = "from simtsafe import Columns\n\n\n"
_C1 = "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
_FREE = "@ss.kernel\n"
_SIG = (
    "def k(out: DisjointSlice[np.float32, Columns], x: In[np.float32], pos: In[np.int32], "
    "x2: In2D[np.float32]) -> None:\n"
)
_SIG1 = (
    "def k(out: DisjointSlice[np.float32], x: In[np.float32], pos: In[np.int32], "
    "x2: In2D[np.float32]) -> None:\n"
)


def source(header: str, body: str, sig: str = _SIG) -> str:
    return (
        _IMPORT + header + sig + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    )


_PAIR = "a Columns output is indexed as out[row, w]: a plain integer row and the thread's column"

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "written-by-an-index-1d-witness": (
        source(_C1, "w = thread.index_1d()\nout[pos[0], w] = x[w]  # BAD"),
        "a ThreadIndex[Index1D] witness cannot write a DisjointSlice of space Columns: its "
        "uniqueness is proven for Index1D only. Use `out[row, thread.column()]`",
    ),
    "written-by-the-witness-alone": (
        source(_C1, "w = thread.column()\nout[w] = x[w]  # BAD"),
        _PAIR,
    ),
    "written-at-plain-ints": (
        source(_C1, "w = thread.column()\nout[pos[0], w.index] = x[w]  # BAD"),
        _PAIR,
    ),
    "row-of-a-float": (
        source(_C1, "w = thread.column()\nout[x[0], w] = x[w]  # BAD"),
        _PAIR,
    ),
    "read-by-an-index-1d-witness": (
        source(_C1, "w = thread.column()\nv = out[0, thread.index_1d()]  # BAD\nout[0, w] = v"),
        "a DisjointSlice of space Columns is read only through a witness of that space "
        "(got ThreadIndex[Index1D])",
    ),
    "pair-index-of-an-index-1d-output": (
        source(_C1, "w = thread.index_1d()\nout[pos[0], w] = x[w]  # BAD", _SIG1),
        "a DisjointSlice of space Index1D is indexed by the witness alone (`out[w]`), not by a "
        "(row, witness) pair",
    ),
    "column-witness-writes-an-index-1d-output": (
        source(_C1, "w = thread.column()\nout[w] = x[w]  # BAD", _SIG1),
        "a ThreadIndex[Columns] witness cannot write a DisjointSlice of space Index1D",
    ),
    "input-indexed-by-row-and-witness": (
        source(_C1, "w = thread.column()\nout[pos[0], w] = x2[pos[0], w]  # BAD"),
        "an input is indexed by a witness alone (`a[w]`) or by plain ints",
    ),
}

_Expect = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _at_pos(x: np.ndarray, x2: np.ndarray) -> np.ndarray:
    out = np.zeros((ROWS, COLS), np.float32)
    out[POS] = x
    return out


def _every_row(x: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return (x[None, :] + np.arange(ROWS, dtype=np.float32)[:, None]).astype(np.float32)


def _per_thread_row(x: np.ndarray, x2: np.ndarray) -> np.ndarray:
    out = np.zeros((ROWS, COLS), np.float32)
    cols = np.arange(COLS)
    out[cols % ROWS, cols] = x
    return out


def _input_row(x: np.ndarray, x2: np.ndarray) -> np.ndarray:
    out = np.zeros((ROWS, COLS), np.float32)
    out[POS] = x2[POS]
    return out


def _accumulated(x: np.ndarray, x2: np.ndarray) -> np.ndarray:
    out = np.zeros((ROWS, COLS), np.float32)
    out[POS] = 2 * x
    return out


#: case -> (accepted twin, its expected output given x and x2)
ACCEPTED: dict[str, tuple[str, _Expect]] = {
    "written-at-a-device-side-row": (
        source(_C1, "w = thread.column()\nout[pos[0], w] = x[w]"),
        _at_pos,
    ),
    "written-at-a-device-side-row-without-a-contract": (
        source(_FREE, "w = thread.column()\nout[pos[0], w] = x[w]"),
        _at_pos,
    ),
    "every-row-of-its-column": (
        source(_C1, "w = thread.column()\nfor r in range(out.shape[0]):\n    out[r, w] = x[w] + r"),
        _every_row,
    ),
    "a-row-that-differs-between-threads": (
        source(_C1, "w = thread.column()\nout[w.index % out.shape[0], w] = x[w]"),
        _per_thread_row,
    ),
    "a-2d-input-read-at-the-column": (
        source(
            _C1,
            "w = thread.column()\nif w.in_bounds(out):\n    out[pos[0], w] = x2[pos[0], w.index]",
        ),
        _input_row,
    ),
    "its-own-column-read-back": (
        source(
            _C1,
            "w = thread.column()\nout[pos[0], w] = x[w]\nout[pos[0], w] = out[pos[0], w] + x[w]",
        ),
        _accumulated,
    ),
}


#: A record field of the thread's own element (out[row, w].x = v), launched with ``pos``.
RECORD = """
from simtsafe import Columns

REC = np.dtype([("x", np.float32), ("n", np.int32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[REC, Columns], pos: In[np.int32]) -> None:
    w = thread.column()
    out[pos[0], w].x = 1.5
    out[pos[0], w].n = w.index
"""


def record_expected(rec: np.dtype) -> np.ndarray:
    expected = np.zeros((ROWS, COLS), rec)
    expected["x"][POS], expected["n"][POS] = 1.5, np.arange(COLS)
    return expected
