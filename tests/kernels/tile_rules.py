"""Typing rules of shared tiles, block-local witnesses, output tiles: refused kernels and twins.

Each refused kernel decorates (the rules are about types) and fails when it
is compiled (tests/ptx) or when the line runs (tests/sim), with the fragment
given. Each rule has an accepted twin below (ACCEPTED) that does the allowed
thing next to it. Kernels are named ``k``, marked ``# BAD`` on the refused
line, and take ``out`` (1D float32) or ``out2`` (2D float32) outputs.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "COMPILE_TIME_ONLY", "REFUSED", "source"]

_1D = "@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))\ndef k(out: DisjointSlice[np.float32]) -> None:\n"
_2D = "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 8, 1)))\ndef k(out2: DisjointSlice2D[np.float32]) -> None:\n"
_BARRIER = "ss.block.sync()\n"


def source(header: str, body: str) -> str:
    return header + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "tile-store-int": (
        source(
            _1D,
            "t = ss.shared.tile(32, np.float32)\nt[3] = np.float32(1.0)  # BAD\nss.block.sync()\nout[thread.index_1d()] = t[0]",
        ),
        "is filled only through a block-local witness of its space (Local1D)",
    ),
    "tile-store-global-witness": (
        source(
            _1D,
            "t = ss.shared.tile(32, np.float32)\ni = thread.index_1d()\nt[i] = np.float32(1.0)  # BAD\nss.block.sync()\nout[i] = t[0]",
        ),
        "is filled only through a block-local witness of its space (Local1D)",
    ),
    "tile-store-other-rank": (
        source(
            _2D,
            "t = ss.shared.tile((8, 8), np.float32)\nt[thread.local_index()] = np.float32(1.0)  # BAD\nss.block.sync()\nout2[thread.index_2d()] = t[0, 0]",
        ),
        "block-local witness of its space (Local2D)",
    ),
    "tile-read-other-witness": (
        source(
            _2D,
            "t = ss.shared.tile((8, 8), np.float32)\nw = thread.local_index_2d()\nt[w] = np.float32(1.0)\nss.block.sync()\nout2[thread.index_2d()] = t[thread.index_2d()]  # BAD",
        ),
        "cannot index a SharedTile[float32, 8x8]",
    ),
    "tile-slice": (
        source(
            _1D,
            "t = ss.shared.tile(32, np.float32)\nt[thread.local_index()] = np.float32(1.0)\nss.block.sync()\nout[thread.index_1d()] = t[1:3][0]  # BAD",
        ),
        "tiles have no slices",
    ),
    "tile-iteration": (
        source(
            _1D,
            "t = ss.shared.tile(32, np.float32)\nt[thread.local_index()] = np.float32(1.0)\nss.block.sync()\ns = np.float32(0)\nfor x in t:  # BAD\n    s += x\nout[thread.index_1d()] = s",
        ),
        "`t` is a shared tile or accumulator",
    ),
    "tile-shape-not-static": (
        source(
            _1D,
            "n = len(out)\nt = ss.shared.tile(n, np.float32)  # BAD\nt[thread.local_index()] = np.float32(1.0)\nss.block.sync()\nout[thread.index_1d()] = t[0]",
        ),
        "needs a static shape",
    ),
    "tile-3d": (
        source(
            _1D,
            "t = ss.shared.tile((2, 2, 2), np.float32)  # BAD\nout[thread.index_1d()] = t[0, 0, 0]",
        ),
        "a tile is 1D or 2D",
    ),
    "tile-pad-1d": (
        source(
            _1D,
            "t = ss.shared.tile(32, np.float32, pad=1)  # BAD\nt[thread.local_index()] = np.float32(1.0)\nss.block.sync()\nout[thread.index_1d()] = t[0]",
        ),
        "pads the rows of a 2D tile",
    ),
    "output-local-witness": (
        source(_1D, "out[thread.local_index()] = np.float32(1.0)  # BAD"),
        "cannot write a DisjointSlice: it is unique within a block only",
    ),
    "out-tile-witness-index": (
        source(_1D, "o = thread.tile_1d(out, 2)\no[thread.index_1d()] = np.float32(1.0)  # BAD"),
        "is written with local indices (t[k] = v)",
    ),
    "out-tile-1d-pair-index": (
        source(_1D, "o = thread.tile_1d(out, 2)\no[0, 1] = np.float32(1.0)  # BAD"),
        "is written with local indices (t[k] = v)",
    ),
    "out-tile-size-not-static": (
        source(_1D, "n = len(out)\no = thread.tile_1d(out, n)  # BAD\no[0] = np.float32(1.0)"),
        "tile sizes must be positive compile-time ints",
    ),
    "out-tile-iteration": (
        source(_1D, "o = thread.tile_1d(out, 2)\nfor x in o:  # BAD\n    pass"),
        "cannot be iterated",
    ),
}

#: Rules about compile-time values: the simulator runs Python, where a constant
#: and a run-time int look the same, so only the compiled kernel refuses these.
COMPILE_TIME_ONLY = frozenset({"tile-shape-not-static", "out-tile-size-not-static"})

#: case -> kernel source that compiles and runs (the accepted twins).
ACCEPTED: dict[str, str] = {
    "tile-fill-witness-read-ints": source(
        _1D,
        "t = ss.shared.tile(32, np.float32)\nw = thread.local_index()\nt[w] = np.float32(w.index)\n"
        + _BARRIER
        + "out[thread.index_1d()] = t[31 - w.index] + t[w]",
    ),
    "tile-2d-witness-and-pair": source(
        _2D,
        "t = ss.shared.tile((8, 8), np.float32, pad=1)\nw = thread.local_index_2d()\n"
        "t[w] = np.float32(w.row * 8 + w.col)\n"
        + _BARRIER
        + "out2[thread.index_2d()] = t[w.col, w.row] + t[w] * 0 + len(t) * 0 + t.shape[1] * 0",
    ),
    "out-tile-local-indices": source(
        _1D, "o = thread.tile_1d(out, 2)\no[0] = np.float32(1.0)\no[1] = o[0] + np.float32(len(o))"
    ),
}
