"""``simtsafe.vec.store``: refused kernels, their accepted twins, and a copy kernel.

Each refused kernel fails when compiled (tests/ptx) or when it runs on the
simulator (tests/sim) with the fragment given, at the line marked ``# BAD``.
Kernels are named ``k`` and take ``out`` and ``a`` (1D float32, SIZE
elements), launched as 3 blocks of BLOCK threads. ``copy_source(dt, n)`` is
a kernel ``k`` that copies ``a`` into ``out`` in runs of ``n`` (one vector
load, one vector store per thread).
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "BLOCK", "REFUSED", "SIZE", "copy_source"]

SIZE, BLOCK = 37, 16

_C1 = "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
_SIG = "def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:\n"
_SIG2 = "def k(out: DisjointSlice2D[np.float32], a: In[np.float32]) -> None:\n"
_SIGC = "def k(out: DisjointSlice[np.complex64], a: In[np.float32]) -> None:\n"


def _src(body: str, sig: str = _SIG, header: str = _C1) -> str:
    return header + sig + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "a-2d-tile": (
        _src(
            "t = thread.tile_2d(out, 1, 4)\nss.vec.store(t, (1.0, 2.0, 3.0, 4.0))  # BAD",
            _SIG2,
            "@ss.kernel(contract=ss.LaunchContract(domain=2))\n",
        ),
        "vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got a 2d tile of 1 x 4",
    ),
    "a-tile-of-three": (
        _src("t = thread.tile_1d(out, 3)\nss.vec.store(t, (1.0, 2.0, 3.0))  # BAD"),
        "vec.store writes a tile of (2, 4, 8) elements; this one has 3",
    ),
    "too-few-values": (
        _src("t = thread.tile_1d(out, 4)\nss.vec.store(t, (1.0, 2.0))  # BAD"),
        "vec.store writes the whole tile: 4 values; got 2",
    ),
    "a-32-byte-run": (
        _src("t = thread.tile_1d(out, 8)\nss.vec.store(t, (1.0,) * 8)  # BAD"),
        "vec.store's run must be 4, 8 or 16 bytes; 8 elements of 4 bytes are 32",
    ),
    "complex-elements": (
        _src("t = thread.tile_1d(out, 2)\nss.vec.store(t, (1.0, 2.0))  # BAD", _SIGC),
        "vec.store writes float, int and uint elements; got dtype kind 'c'",
    ),
    "the-output-itself": (
        _src("ss.vec.store(out, (1.0, 2.0, 3.0, 4.0))  # BAD"),
        "vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got",
    ),
}

#: case -> accepted twin (out[i] == a[i] for every i < SIZE)
ACCEPTED: dict[str, str] = {
    "a-tile-of-four": _src(
        "w = thread.index_1d()\nt = thread.tile_1d(out, 4)\nss.vec.store(t, ss.vec.load(a, w.index, 4))"
    ),
    "a-tile-of-two": _src(
        "w = thread.index_1d()\nt = thread.tile_1d(out, 2)\nss.vec.store(t, ss.vec.load(a, w.index, 2))"
    ),
    "element-stores-of-a-tile-of-three": _src(
        "w = thread.index_1d()\nt = thread.tile_1d(out, 3)\nfor k in range(3):\n"
        "    if w.index * 3 + k < a.size:\n        t[k] = a[w.index * 3 + k]"
    ),
}


def copy_source(dt: str, n: int) -> str:
    """A kernel ``k(out, a)`` of ``dt`` elements copying ``a`` in runs of ``n``."""
    return (
        "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
        f"def k(out: DisjointSlice[{dt}], a: In[{dt}]) -> None:\n"
        "    w = thread.index_1d()\n"
        f"    t = thread.tile_1d(out, {n})\n"
        f"    ss.vec.store(t, ss.vec.load(a, w.index, {n}))\n"
    )
