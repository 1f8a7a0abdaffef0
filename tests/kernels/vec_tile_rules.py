"""``simtsafe.vec.load`` of a shared tile: a run read in the tile's read phase.

Refused kernels fail at decoration (the tile's phases, ``rule="tile-phase"``) or when
compiled / run (typing), with the fragment given, at the line marked ``# BAD``. The accepted
kernel ``k(out, a)`` fills an 8 x 64 tile padded to rows of 68 from ``a`` (row-major), then
thread ``t`` of a 64-thread block reads the run ``(t % 8, t // 8 + SHIFT)`` of 4 and writes
its sum: runs past a row's 64 logical columns (into the padding) read 0.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "ACCEPTED_RUNS", "REFUSED", "SHIFT"]

SHIFT = 10  # thread t reads run t // 8 + 10: threads 48..63 read runs 16, 17, past the 64 columns

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))\n"
    "def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:\n"
    "    w = thread.index_1d()\n"
)


def _k(body: str) -> str:
    return _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


_FILL = (
    "t = ss.shared.tile((8, 64), np.float32, pad=4)\n"
    "for v in thread.block_stride(t):\n"
    "    t[v] = a[v.row * 64 + v.col]\n"
)

ACCEPTED = _k(
    _FILL
    + "ss.block.sync()\n"
    + f"r = ss.vec.load(t, (cuda.threadIdx.x % 8, cuda.threadIdx.x // 8 + {SHIFT}), 4)\n"
    + "out[w] = r[0] + r[1] + r[2] + r[3]\n"
)

#: ACCEPTED with its run read by vec.load_runs (a tuple of one run): the same values.
ACCEPTED_RUNS = ACCEPTED.replace("r = ss.vec.load(t, (", "(r,) = ss.vec.load_runs(t, ((").replace(
    f" + {SHIFT}), 4)", f" + {SHIFT}),), 4)"
)

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "read-in-the-fill-phase": (
        _k(_FILL + "r = ss.vec.load(t, (0, cuda.threadIdx.x % 16), 4)  # BAD\nout[w] = r[0]"),
        "shared tile `t` is read by index at line",
    ),
    "fill-after-the-read": (
        _k(
            _FILL
            + "ss.block.sync()\n"
            + "r = ss.vec.load(t, (0, cuda.threadIdx.x % 16), 4)\n"
            + "for v in thread.block_stride(t):\n"
            + "    t[v] = r[0]  # BAD\n"
            + "out[w] = r[1]"
        ),
        "shared tile `t` is read by index at line",
    ),
    "runs-read-in-the-fill-phase": (
        _k(
            _FILL + "rs = ss.vec.load_runs(t, ((0, 1), (1, cuda.threadIdx.x % 16)), 4)  # BAD\n"
            "out[w] = rs[1][0]"
        ),
        "shared tile `t` is read by index at line",
    ),
    "runs-of-a-thread-private-array": (
        _k(
            "p = cuda.local.array(8, np.float32)\n"
            "rs = ss.vec.load_runs(p, (0, 1), 4)  # BAD\nout[w] = rs[0][0]"
        ),
        "vec.load_runs reads an In[...] input array or a shared tile",
    ),
    "a-thread-private-array": (
        _k("p = cuda.local.array(8, np.float32)\nr = ss.vec.load(p, 0, 4)  # BAD\nout[w] = r[0]"),
        "vec.load reads an In[...] input array or a shared tile",
    ),
}
