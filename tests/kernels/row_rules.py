"""Row spaces (``BlockRow``, ``WarpRow``): refused kernels and their accepted twins.

Each refused kernel decorates and fails when it is compiled (tests/ptx) or
when it runs on the simulator (tests/sim), with the fragment given; the
refused line is marked ``# BAD``. Each has an accepted twin in ACCEPTED that
does the allowed thing next to it. Kernels are named ``k`` and take ``out``
(2D float32) and ``x`` (2D float32 input, 4 x 37); launched with 4 blocks
of 64 threads (``GRID``, ``BLOCK``), a 1D launch.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "BLOCK", "COLLECTIVES", "GRID", "REFUSED", "ROWS", "COLS", "source"]

GRID, BLOCK, ROWS, COLS = 4, 64, 4, 37

_IMPORT = "from simtsafe import BlockRow, WarpRow\n\n\n"
_C1 = "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
_FREE = "@ss.kernel\n"
_BR = "def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:\n"
_WR = "def k(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:\n"
_I2 = "def k(out: DisjointSlice2D[np.float32], x: In2D[np.float32]) -> None:\n"
_BR1 = "def k(out: DisjointSlice[np.float32, BlockRow], x: In[np.float32]) -> None:\n"


def source(header: str, body: str) -> str:
    return _IMPORT + header + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "block-row-output-written-by-index-2d": (
        source(_FREE + _BR, "w = thread.index_2d()\nout[w] = x[w]  # BAD"),
        "a ThreadIndex[Index2D] witness cannot write a DisjointSlice of space BlockRow: its "
        "uniqueness is proven for Index2D only. Use `for w in thread.block_row(out)`",
    ),
    "block-row-output-written-by-warp-row": (
        source(_C1 + _BR, "for w in thread.warp_row(x):\n    out[w] = x[w]  # BAD"),
        "a ThreadIndex[WarpRow] witness cannot write a DisjointSlice of space BlockRow: its "
        "uniqueness is proven for WarpRow only. Use `for w in thread.block_row(out)`",
    ),
    "warp-row-output-written-by-block-row": (
        source(_C1 + _WR, "for w in thread.block_row(x):\n    out[w] = x[w]  # BAD"),
        "a ThreadIndex[BlockRow] witness cannot write a DisjointSlice of space WarpRow: its "
        "uniqueness is proven for BlockRow only. Use `for w in thread.warp_row(out)`",
    ),
    "index-2d-output-written-by-block-row": (
        source(_C1 + _I2, "for w in thread.block_row(x):\n    out[w] = x[w]  # BAD"),
        "a ThreadIndex[BlockRow] witness cannot write a DisjointSlice of space Index2D",
    ),
    "warp-row-walk-of-a-block-row-output": (
        source(_C1 + _BR, "for w in thread.warp_row(out):  # BAD\n    out[w] = x[w]"),
        "thread.warp_row() walks a DisjointSlice of space WarpRow (or a 2D input); got one of "
        "space BlockRow",
    ),
    "block-row-walk-of-a-1d-input": (
        source(_C1 + _BR1, "for w in thread.block_row(x):  # BAD\n    out[w] = x[w.col]"),
        "thread.block_row() walks the row of a 2D array; got a 1D one",
    ),
}

#: case -> accepted twin (its result: out == x, on the rows the launch owns)
ACCEPTED: dict[str, str] = {
    "block-row-output-written-by-block-row": source(
        _FREE + _BR, "for w in thread.block_row(x):\n    out[w] = x[w]"
    ),
    "block-row-walk-of-the-output": source(
        _C1 + _BR, "for w in thread.block_row(out):\n    out[w] = x[w]"
    ),
    "warp-row-output-written-by-warp-row": source(
        _C1 + _WR, "for w in thread.warp_row(out):\n    out[w] = x[w]"
    ),
    "index-2d-output-written-by-index-2d": source(
        _FREE + _I2, "w = thread.index_2d()\nout[w] = x[w]"
    ),
    "block-row-walk-of-a-2d-input-coordinates": source(
        _C1 + _BR, "for w in thread.block_row(x):\n    out[w] = x[w.row, w.col]"
    ),
}

#: case -> (source, None if accepted else the refusal's fragment): a block collective
#: after the row loop (each thread's trip count differs, every thread reaches it) and
#: inside it (threads reach it a different number of times).
COLLECTIVES: dict[str, tuple[str, str | None]] = {
    "block-sum-after-the-row-loop": (
        source(
            _C1 + _BR,
            "s = np.float32(0.0)\nfor w in thread.block_row(x):\n    s += x[w]\n"
            "s = ss.block.sum(s)\nfor w in thread.block_row(out):\n    out[w] = s",
        ),
        None,
    ),
    "block-sum-inside-the-row-loop": (
        source(
            _C1 + _BR,
            "for w in thread.block_row(x):\n    s = ss.block.sum(x[w])  # BAD\n    out[w] = s",
        ),
        "needs every thread of the block to reach it",
    ),
    "warp-sum-after-the-row-loop": (
        source(
            _C1 + _WR,
            "s = np.float32(0.0)\nfor w in thread.warp_row(x):\n    s += x[w]\n"
            "s = ss.warp.sum(s)\nfor w in thread.warp_row(out):\n    out[w] = s",
        ),
        None,
    ),
    "warp-sum-inside-the-row-loop": (
        source(
            _C1 + _WR,
            "for w in thread.warp_row(x):\n    s = ss.warp.sum(x[w])  # BAD\n    out[w] = s",
        ),
        "needs every thread of the warp to reach it",
    ),
}
