"""``simtsafe.vec.store_at`` (Tier 2): refused kernels, their accepted twins, a racy kernel.

Each refused kernel fails at decoration, when compiled (tests/ptx) or when
it runs on the simulator (tests/sim) with the fragment given, at the line
marked ``# BAD``. Kernels are named ``k`` and take ``out`` and ``a`` (1D
float32, SIZE elements unless the case says otherwise), launched as 3 blocks
of BLOCK threads. Accepted twins copy ``a`` into ``out`` (``out == a``).
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "BLOCK", "RACY", "REFUSED", "SIZE", "run_source"]

SIZE, BLOCK = 37, 16

_C1 = "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
_SIG = "def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:\n"
_SIG2 = "def k(out: DisjointSlice2D[np.float32], a: In[np.float32]) -> None:\n"
_SIGC = "def k(out: DisjointSlice[np.complex64], a: In[np.float32]) -> None:\n"
_WHY = 'with ss.unsafe("SAFETY: thread i alone writes run i of out (distinct runs per thread)"):\n'


def _src(body: str, sig: str = _SIG, header: str = _C1) -> str:
    return header + sig + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


def _in_region(body: str) -> str:
    return "i = cuda.grid(1)\n" + _WHY + "".join(f"    {b}\n" for b in body.splitlines())


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "outside-an-unsafe-region": (
        _src("i = cuda.grid(1)\nss.vec.store_at(a, i, (1.0, 2.0, 3.0, 4.0))  # BAD"),
        "(vec.store_at) is allowed only inside `with simtsafe.unsafe(",
    ),
    "an-input": (
        _src(_in_region("ss.vec.store_at(a, i, (1.0, 2.0, 3.0, 4.0))  # BAD")),
        "vec.store_at cannot write a read-only input (In[...])",
    ),
    "the-view-itself": (
        _src(_in_region("ss.vec.store_at(out, i, (1.0, 2.0, 3.0, 4.0))  # BAD")),
        "vec.store_at writes a raw array: pass out.unchecked",
    ),
    "three-values": (
        _src(_in_region("ss.vec.store_at(out.unchecked, i, (1.0, 2.0, 3.0))  # BAD")),
        "vec.store_at writes a run of (2, 4, 8) values; got a tuple of 3",
    ),
    "a-32-byte-run": (
        _src(_in_region("ss.vec.store_at(out.unchecked, i, (1.0,) * 8)  # BAD")),
        "vec.store_at's run must be 4, 8 or 16 bytes; 8 elements of 4 bytes are 32",
    ),
    "a-2d-array": (
        _src(
            _in_region("ss.vec.store_at(out.unchecked, i, (1.0, 2.0, 3.0, 4.0))  # BAD"),
            _SIG2,
            "@ss.kernel(contract=ss.LaunchContract(domain=2))\n",
        ),
        "vec.store_at writes 1D arrays; got a 2D array",
    ),
    "complex-elements": (
        _src(_in_region("ss.vec.store_at(out.unchecked, i, (1.0, 2.0))  # BAD"), _SIGC),
        "vec.store_at writes float, int and uint elements; got dtype kind 'c'",
    ),
    "a-strided-view": (
        _src(_in_region("ss.vec.store_at(out.unchecked[::2], i, (1.0, 2.0, 3.0, 4.0))  # BAD")),
        "vec.store_at writes C-contiguous arrays",
    ),
}

#: case -> accepted twin (out[i] == a[i] for every i < SIZE)
ACCEPTED: dict[str, str] = {
    "a-run-of-four": _src(_in_region("ss.vec.store_at(out.unchecked, i, ss.vec.load(a, i, 4))")),
    "a-run-of-two": _src(_in_region("ss.vec.store_at(out.unchecked, i, ss.vec.load(a, i, 2))")),
    "through-a-helper": (
        "@ss.device\n"
        "def put(raw, j, v):\n"
        '    with ss.unsafe("SAFETY: the caller passes the run its thread alone writes"):\n'
        "        ss.vec.store_at(raw, j, v)\n"
        "\n" + _src(_in_region("put(out.unchecked, i, ss.vec.load(a, i, 4))"))
    ),
}

#: Two threads write each run (thread i writes run i // 2): sim.check reports the race.
RACY = _src(
    "i = cuda.grid(1)\n"
    'with ss.unsafe("SAFETY: claimed: every run has one writer"):\n'
    "    ss.vec.store_at(out.unchecked, i // 2, (1.0, 2.0, 3.0, 4.0))  # BAD\n"
)


def run_source(dt: str, n: int) -> str:
    """A kernel ``k(out, a)`` of ``dt`` elements copying ``a`` in runs of ``n`` with store_at."""
    return (
        "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
        f"def k(out: DisjointSlice[{dt}], a: In[{dt}]) -> None:\n"
        "    i = cuda.grid(1)\n"
        "    " + _WHY + f"        ss.vec.store_at(out.unchecked, i, ss.vec.load(a, i, {n}))\n"
    )
