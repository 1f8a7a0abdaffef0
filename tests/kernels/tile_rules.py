"""Typing rules of shared tiles, block-local witnesses, output tiles: refused kernels and twins.

Each refused kernel decorates (the rules are about types) and fails when it
is compiled (tests/ptx) or when the line runs (tests/sim), with the fragment
given. Each rule has an accepted twin below (ACCEPTED) that does the allowed
thing next to it. Kernels are named ``k``, marked ``# BAD`` on the refused
line, and take ``out`` (1D float32) or ``out2`` (2D float32) outputs.
"""

from __future__ import annotations

from tests.kernels import HEADER

__all__ = ["ACCEPTED", "COMPILE_TIME_ONLY", "REFUSED", "source"]

_1D = "@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))\ndef k(out: DisjointSlice[np.float32]) -> None:\n"
_2D = "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 8, 1)))\ndef k(out2: DisjointSlice2D[np.float32]) -> None:\n"
_BARRIER = "ss.block.sync()\n"
#: The line of a kernel's first body line in the written module (HEADER, decorator, def).
_BODY = HEADER.count("\n") + 3
_HELPER = "@ss.device\ndef put(o, i, v):\n    o[i] = v\n\n\n"
_MAKER = "@ss.device\ndef fill(o):\n    t = thread.tile_1d(o, 2)  # BAD\n    t[0] = np.float32(1.0)\n\n\n"
_TWICE = "@ss.device\ndef twice(v):\n    return v * np.float32(2.0)\n\n\n"


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
    "out-tile-and-witness-write": (
        source(
            _1D,
            "o = thread.tile_1d(out, 2)\no[0] = np.float32(1.0)\nout[thread.index_1d()] = np.float32(2.0)  # BAD",
        ),
        f"output tile made at line {_BODY} (thread.tile_1d) and is also written by index here",
    ),
    "out-tile-witness-write-before-the-tile": (
        source(
            _1D,
            "out[thread.index_1d()] = np.float32(2.0)  # BAD\no = thread.tile_1d(out, 2)\no[0] = np.float32(1.0)",
        ),
        f"output tile made at line {_BODY + 1} (thread.tile_1d) and is also written by index here",
    ),
    "out-tile-and-read-by-index": (
        source(_1D, "o = thread.tile_1d(out, 2)\no[0] = out[thread.index_1d()]  # BAD"),
        f"output tile made at line {_BODY} (thread.tile_1d) and is also read by index here",
    ),
    "out-tile-two-tiles": (
        source(
            _1D,
            "o2 = thread.tile_1d(out, 2)\no3 = thread.tile_1d(out, 3)  # BAD\no2[0] = np.float32(1.0)\no3[0] = np.float32(2.0)",
        ),
        f"output tile made at line {_BODY} (thread.tile_1d) and another output tile of it is made here",
    ),
    "out-tile-2d-strided-and-witness": (
        source(
            _2D,
            "o = thread.tile_2d_strided(out2, 2, 2)\no[0, 0] = np.float32(1.0)\nout2[thread.index_2d()] = np.float32(2.0)  # BAD",
        ),
        f"made at line {_BODY} (thread.tile_2d_strided) and is also written by index here",
    ),
    "out-tile-alias": (
        source(
            _1D,
            "o = thread.tile_1d(out, 2)\nalias = out  # BAD\nalias[thread.index_1d()] = np.float32(2.0)",
        ),
        f"output tile made at line {_BODY} (thread.tile_1d) and `out` is also used here as a value",
    ),
    "out-tile-and-passed-to-a-helper": (
        source(
            _HELPER + _1D,
            "o = thread.tile_1d(out, 2)\no[0] = np.float32(1.0)\nput(out, thread.index_1d(), np.float32(2.0))  # BAD",
        ),
        f"output tile made at line {_BODY + 5} (thread.tile_1d) and `out` is also used here as a value",
    ),
    "out-tile-of-a-local": (
        source(_1D, "v = out\no = thread.tile_1d(v, 2)  # BAD\no[0] = np.float32(1.0)"),
        "thread.tile_1d() takes one of the kernel's output parameters by its name",
    ),
    "out-tile-made-in-a-helper": (
        source(_MAKER + _1D, "fill(out)"),
        "thread.tile_1d() is made in a kernel's own body, not in a @simtsafe.device helper",
    ),
    "out-tile-too-large": (
        source(_1D, "o = thread.tile_1d(out, 65537)  # BAD\no[0] = np.float32(1.0)"),
        "a tile of 65537 elements is too large: a thread owns at most 65536 (2**16)",
    ),
    "out-tile-2d-too-large-in-all": (
        source(_2D, "o = thread.tile_2d(out2, 256, 257)  # BAD\no[0, 0] = np.float32(1.0)"),
        "a tile of 256 x 257 elements is too large",
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
    "out-tile-attributes-and-len": source(
        _1D,
        "o = thread.tile_1d(out, 2)\nn = len(out) + out.shape[0] + out.size\no[0] = np.float32(n)\no[1] = o[0]",
    ),
    "out-tile-one-call-site-in-a-loop": source(
        _1D, "for r in range(2):\n    o = thread.tile_1d(out, 2)\n    o[r] = np.float32(r + 1)"
    ),
    "out-tile-helper-gets-values": source(
        _TWICE + _1D, "o = thread.tile_1d(out, 2)\no[0] = twice(np.float32(1.0))"
    ),
    "out-tile-2d-strided-and-shape": source(
        _2D, "o = thread.tile_2d_strided(out2, 1, 1)\no[0, 0] = np.float32(out2.shape[1])"
    ),
    "out-tile-largest": source(_1D, "o = thread.tile_1d(out, 65536)\no[0] = np.float32(1.0)"),
    "out-tile-2d-largest": source(
        _2D, "o = thread.tile_2d(out2, 256, 256)\no[0, 0] = np.float32(1.0)"
    ),
}
