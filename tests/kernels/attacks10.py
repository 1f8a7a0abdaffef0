"""Attack round 10 on whole-tile fills (``shared.fill_async``, ``fill_transposed``, copy groups,
fill pairs), fragments and wgmma: what it found, and the twins that must stay accepted.

No accepted kernel broke a promise. What the round found:

* the source-level phase analysis took a block collective written in an ``assert``'s message
  for a barrier on every path (the message runs only where the assert fails), so two fills
  of one tile that "barrier" seemed to separate passed decoration; and the compiled form did
  not compare two fills of one tile with each other, leaving that to the source analysis.
  Now the message is a branch for the source analysis, and on the compiled form each write
  of a fill carries the map that gives the tile's elements to threads (``!ss.fill``): writes
  of two maps in one interval are refused, and so is an asynchronous fill that starts while
  the thread's earlier copies into the tile may be in flight;
* ``shared.wait_group(n=0)`` (the literal as a keyword) was refused.

Kernels are module bodies for ``tests.kernels.load_kernel_module``; refused lines carry
``# BAD``. One block of 64 threads, ``k(out, a, n)``, ``out`` 64 float32, ``n = 0``.
"""

from __future__ import annotations

__all__ = [
    "ACCEPTED",
    "COMPILED_ONLY",
    "CONSERVATIVE",
    "FLOAT_ACCUMULATORS",
    "MARKERS",
    "REFUSED",
    "SIM_ARGS",
]


def _k(sig: str, body: str) -> str:
    return (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))\n"
        f"def k(out: DisjointSlice[np.float32], {sig}) -> None:\n"
        "    w = thread.index_1d()\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )


_SIG2 = "a: In2D[np.float32], n: np.int64"
_SIG1 = "a: In[np.float32], n: np.int64"
_ASYNC_THEN_TRANSPOSED = (
    "t = ss.shared.tile((16, 16), np.float32)\n"
    "ss.shared.fill_async(t, a, (0, 0))  # FILL\n"
    "ss.shared.wait_all()\n"
    "{between}"
    "ss.shared.fill_transposed(t, a, (0, 0))  # BAD\n"
    "ss.block.sync()\n"
    "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]"
)

#: case -> (kernel, fragment of the refusal at decoration, at the ``# BAD`` line)
REFUSED: dict[str, tuple[str, str]] = {
    # The block.sum in the message runs only where n < 0: where the assert holds no barrier
    # separates thread X's transposed stores from thread Y's copies of the same element.
    "barrier-only-in-an-assert-message": (
        _k(
            _SIG2,
            _ASYNC_THEN_TRANSPOSED.format(between="assert n >= 0, ss.block.sum(np.float32(1))\n"),
        ),
        "is filled asynchronously at line",
    ),
    # A variable is not the literal the analysis reads, by keyword or not.
    "wait-group-by-keyword-not-a-literal": (
        _k(
            _SIG1,
            "t = ss.shared.tile(64, np.float32)\n"
            "ss.shared.fill_async(t, a, n)\n"
            "ss.shared.commit_group()\n"
            "ss.shared.wait_group(n=n)  # BAD\n"
            "ss.block.sync()\n"
            "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
        ),
        "shared.wait_group(n) takes one int literal n",
    ),
}

#: case -> (kernel the source analysis refuses, fragment of the compiled form's refusal):
#: with the source analysis off (tests/ptx/test_tile_phases_ptx.py's fixture), the compiled
#: form refuses each, at the ``# BAD`` or ``# FILL`` line.
COMPILED_ONLY: dict[str, tuple[str, str]] = {
    # Two fills that give element (i, j) to different threads, one interval.
    "async-then-transposed": (
        _k(_SIG2, _ASYNC_THEN_TRANSPOSED.format(between="")),
        "and filled (transposed) at line",
    ),
    # Transposed, then asynchronous: the copies of one thread, the stores of another.
    "transposed-then-async": (
        _k(
            _SIG2,
            "t = ss.shared.tile((16, 16), np.float32)\n"
            "ss.shared.fill_transposed(t, a, (0, 0))  # FILL\n"
            "ss.shared.fill_async(t, a, (0, 0))  # BAD\n"
            "ss.shared.wait_all()\n"
            "ss.block.sync()\n"
            "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]",
        ),
        "filled (transposed) at line",
    ),
    # The thread's own copies of one element, both in flight: they land in either order.
    "async-again-before-the-wait": (
        _k(
            _SIG1,
            "t = ss.shared.tile(64, np.float32)\n"
            "ss.shared.fill_async(t, a, 0)  # FILL\n"
            "ss.shared.fill_async(t, a, 64)  # BAD\n"
            "ss.shared.wait_all()\n"
            "ss.block.sync()\n"
            "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
        ),
        "may still be in flight",
    ),
    # The same, one fill in a loop that never waits inside.
    "async-in-a-loop-without-a-wait": (
        _k(
            _SIG1,
            "t = ss.shared.tile(64, np.float32)\n"
            "for r in range(2):\n"
            "    ss.shared.fill_async(t, a, 64 * r)  # BAD\n"
            "ss.shared.wait_all()\n"
            "ss.block.sync()\n"
            "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
        ),
        "may still be in flight",
    ),
}

#: case -> safe kernel: accepted by decoration and the compiled form, clean under
#: ``sim.check`` with ``SIM_ARGS[case]``.
ACCEPTED: dict[str, str] = {
    # The assert's message has no barrier in it: nothing to join.
    "assert-then-a-barrier": _k(
        _SIG2,
        _ASYNC_THEN_TRANSPOSED.format(between="assert n >= 0\nss.block.sync()\n").replace(
            "  # BAD", ""
        ),
    ),
    "wait-group-by-keyword": _k(
        _SIG1,
        "t = ss.shared.tile(64, np.float32)\n"
        "ss.shared.fill_async(t, a, n)\n"
        "ss.shared.commit_group()\n"
        "ss.shared.wait_group(n=0)\n"
        "ss.block.sync()\n"
        "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
    ),
    # Two asynchronous fills of one tile in one interval, the thread's own wait between: both
    # give run k to thread k mod 64, so each element has one writer, ordered by its wait.
    "async-twice-own-wait-between": _k(
        _SIG1,
        "t = ss.shared.tile(64, np.float32)\n"
        "ss.shared.fill_async(t, a, 0)\n"
        "ss.shared.wait_all()\n"
        "ss.shared.fill_async(t, a, 64)\n"
        "ss.shared.wait_all()\n"
        "ss.block.sync()\n"
        "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
    ),
    # A fill in a loop that waits each time: the next start finds nothing in flight.
    "async-in-a-loop-with-a-wait": _k(
        _SIG1,
        "t = ss.shared.tile(64, np.float32)\n"
        "for r in range(2):\n"
        "    ss.shared.fill_async(t, a, 64 * r)\n"
        "    ss.shared.wait_all()\n"
        "ss.block.sync()\n"
        "out[w] = t[(cuda.threadIdx.x + 1) % 64]",
    ),
    # Two transposed fills of one tile in one interval: one thread writes each element.
    "transposed-twice": _k(
        _SIG2,
        "t = ss.shared.tile((8, 8), np.float32)\n"
        "ss.shared.fill_transposed(t, a, (0, 0))\n"
        "ss.shared.fill_transposed(t, a, (n, n))\n"
        "ss.block.sync()\n"
        "out[w] = t[cuda.threadIdx.x // 8, (cuda.threadIdx.x + 1) % 8]",
    ),
    # Transposed, then asynchronous, a barrier between: one way per interval.
    "transposed-barrier-async": _k(
        _SIG2,
        "t = ss.shared.tile((16, 16), np.float32)\n"
        "ss.shared.fill_transposed(t, a, (0, 0))\n"
        "ss.block.sync()\n"
        "ss.shared.fill_async(t, a, (0, 0))\n"
        "ss.shared.wait_all()\n"
        "ss.block.sync()\n"
        "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]",
    ),
}

#: case -> the arguments after ``out`` of a simulator run of an ACCEPTED kernel
SIM_ARGS: dict[str, str] = {
    "assert-then-a-barrier": "2d",
    "wait-group-by-keyword": "1d",
    "async-twice-own-wait-between": "1d",
    "async-in-a-loop-with-a-wait": "1d",
    "transposed-twice": "2d",
    "transposed-barrier-async": "2d",
}

#: case -> (safe kernel refused on purpose, fragment): the source analysis joins the path on
#: which a loop runs no iteration, even a `range(2)`'s (docs/safety.md, conservative edges).
CONSERVATIVE: dict[str, tuple[str, str]] = {
    "waits-in-a-loop-of-constant-trip-count": (
        _k(
            _SIG1,
            "t = ss.shared.tile(64, np.float32)\n"
            "u = ss.shared.tile(64, np.float32)\n"
            "ss.shared.fill_async(t, a, n)\n"
            "ss.shared.commit_group()\n"
            "ss.shared.fill_async(u, a, n + 64)\n"
            "ss.shared.commit_group()\n"
            "for s in range(2):\n"
            "    if s == 0:\n"
            "        ss.shared.wait_group(1)\n"
            "    else:\n"
            "        ss.shared.wait_group(0)\n"
            "    ss.block.sync()\n"
            "out[w] = t[(cuda.threadIdx.x + 1) % 64] + u[(cuda.threadIdx.x + 1) % 64]  # BAD",
        ),
        "is read by index at line",
    ),
}

#: case -> safe kernel that the compiled form's fill markers must not touch (attack round 11:
#: the markers counted as calls that may write any memory, so every input read counted as
#: thread-dependent and a grid.read as racing with the fill).
MARKERS: dict[str, str] = {
    "collective-under-an-input-branch-with-a-transposed-fill": (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=['a.size >= 1']))\n"
        "def k(out: DisjointSlice[np.float32], a: In[np.float32], b: In2D[np.float32], "
        "n: np.int64) -> None:\n"
        "    w = thread.index_1d()\n"
        "    t = ss.shared.tile((8, 8), np.float32)\n"
        "    m = n\n"
        "    if a[0] > 0:\n"
        "        s = ss.block.sum(np.float32(1))\n"
        "        m = m + 1\n"
        "    ss.shared.fill_transposed(t, b, (0, 0))\n"
        "    ss.block.sync()\n"
        "    out[w] = t[cuda.threadIdx.x // 8, cuda.threadIdx.x % 8] + np.float32(m)\n"
    ),
    "grid-read-in-the-phase-of-a-transposed-fill": (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, cooperative=True))\n"
        "def k(a: DisjointSlice[np.float32], b: DisjointSlice[np.float32], "
        "c: In2D[np.float32], steps: np.int32) -> None:\n"
        "    w = thread.index_1d()\n"
        "    i = w.index\n"
        "    a[w] = np.float32(1)\n"
        "    ss.grid.sync()\n"
        "    t = ss.shared.tile((4, 8), np.float32)\n"
        "    ss.shared.fill_transposed(t, c, (0, 0))\n"
        "    ss.block.sync()\n"
        "    b[w] = ss.grid.read(a, i + 1) + t[cuda.threadIdx.x // 8, cuda.threadIdx.x % 8]\n"
    ),
}


def _float_acc(dtype: str, update: str, barrier: bool) -> str:
    return _k(
        _SIG1,
        f"h = ss.shared.accumulator(64, np.{dtype})\n"
        f"h.{update}(cuda.threadIdx.x, np.{dtype}(1))  # FILL\n"
        + ("ss.block.sync()\n" if barrier else "")
        + "out[w] = np.float32(h[(cuda.threadIdx.x + 1) % 64])  # BAD",
    )


#: case -> a float accumulator updated, then read after a barrier: accepted (attack round 11:
#: Numba's float atomics are calls, which the compiled form took for a read and an unknown
#: write of the accumulator by each update; now they are its updates).
FLOAT_ACCUMULATORS: dict[str, str] = {
    f"{dtype}-{update}": _float_acc(dtype, update, barrier=True)
    for dtype in ("float32", "float64")
    for update in ("add", "min", "max")
}
COMPILED_ONLY["float-accumulator-read-in-its-update-phase"] = (
    _float_acc("float32", "add", barrier=False),
    "and updated atomically at line",
)
