"""``simtsafe.shared.fill_async`` (cp.async) and ``fill_transposed``: the accepted kernels and
the refusals, with the fragment of each message and the line marked ``# BAD``.

Refused kernels fail at decoration (the tile's phases, ``rule="tile-phase"``) or when compiled
/ run (typing). The accepted kernels:

* ``ONE_STAGE``: ``k(out, a, r0, c0)`` fills a 4 x 16 tile padded to rows of 20 from the 2D
  input ``a`` at ``(r0, c0)`` (zeros past its edges), waits, syncs, and thread ``t`` of a
  64-thread block writes ``t[t // 16, t % 16]``.
* ``DOUBLE_BUFFER``: ``k(out, a, n)`` sums ``n`` (even) stages of 64 elements of the 1D ``a``
  through two tiles: stage ``s + 1`` is copied while stage ``s`` is read (the loop is written
  for two stages per iteration, so each tile has its own lines: the phase analysis follows
  tiles by name, not the parity of a stage number). Thread ``t`` adds ``a[64 s + (t + s) % 64]``.
* ``TRANSPOSED``: ``k(out, a, r0, c0)`` fills the 8 x 16 tile with ``t[c, r] = a[r0 + r,
  c0 + c]``; thread ``t`` of a 128-thread block writes ``t[t // 16, t % 16]``.
* ``DYNAMIC``: ``k(out, a, start)`` fills the launch's dynamic tile (its length chosen by
  ``shared_mem``, any number of floats) from the 1D ``a`` at ``start``; thread ``t`` of a
  64-thread block writes ``t[t]`` (0 past the tile's end).
* ``RECORD_TILES``: ``k(out, a, r0, c0)`` fills a 4 x 8 tile of records (8 or 16 bytes, whole
  elements a run) from the 2D ``a`` of those records at ``(r0, c0)`` (``fill_transposed``:
  an 8 x 4 tile, ``t[c, r] = a[r0 + r, c0 + c]``); thread ``t`` of a 32-thread block writes
  ``t[t // 8, t % 8]`` (transposed: ``t[t // 4, t % 4]``), a whole record.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DOUBLE_BUFFER",
    "DYNAMIC",
    "ONE_STAGE",
    "PAIR",
    "PAIR_EARLY_READ",
    "PAIR_REFUSAL",
    "PAIR_REFUSED",
    "RECORD_DTYPES",
    "RECORD_TILES",
    "RECORD_WRITTEN_DURING_THE_FILL",
    "REFUSED",
    "STEPPED",
    "TRANSPOSED",
    "UNPAIRED",
]


def _k(sig: str, block: int, body: str) -> str:
    return (
        f"@ss.kernel(contract=ss.LaunchContract(domain=1, block={block}))\n"
        f"def k(out: DisjointSlice[np.float32], {sig}) -> None:\n"
        "    w = thread.index_1d()\n"
        + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    )


_SIG2 = "a: In2D[np.float32], r0: np.int64, c0: np.int64"
_TILE = "t = ss.shared.tile((4, 16), np.float32, pad=4)\n"
_FILL = "ss.shared.fill_async(t, a, (r0, c0))\n"
_READ = "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]\n"

ONE_STAGE = _k(
    _SIG2,
    64,
    _TILE + _FILL + "ss.shared.commit_group()\nss.shared.wait_group(0)\nss.block.sync()\n" + _READ,
)


def _double(first_wait: str = "ss.shared.wait_group(1)", bad: str = "read") -> str:
    read_mark, fill_mark = ("  # BAD", "") if bad == "read" else ("", "  # BAD")
    barrier = "" if bad == "fill" else "    ss.block.sync()\n"
    return _k(
        "a: In[np.float32], n: np.int64",
        64,
        "t0 = ss.shared.tile(64, np.float32)\n"
        "t1 = ss.shared.tile(64, np.float32)\n"
        "acc = np.float32(0)\n"
        "ss.shared.fill_async(t0, a, 0)\n"
        "ss.shared.commit_group()\n"
        "for s in range(0, n, 2):\n"
        "    ss.shared.fill_async(t1, a, (s + 1) * 64)\n"
        "    ss.shared.commit_group()\n"
        f"    {first_wait}\n"
        "    ss.block.sync()\n"
        f"    acc += t0[(cuda.threadIdx.x + s) % 64]{read_mark}\n"
        f"{barrier}"
        f"    ss.shared.fill_async(t0, a, (s + 2) * 64){fill_mark}\n"
        "    ss.shared.commit_group()\n"
        "    ss.shared.wait_group(1)\n"
        "    ss.block.sync()\n"
        "    acc += t1[(cuda.threadIdx.x + s + 1) % 64]\n"
        "    ss.block.sync()\n"
        "ss.shared.wait_all()\n"
        "out[w] = acc\n",
    )


DOUBLE_BUFFER = _double().replace("  # BAD", "")

#: ``STEPPED[rows]``: a 256-thread block fills a ``rows`` x 64 float tile (``rows / 16`` runs
#: of 16 bytes a thread) from ``a`` at ``(r0, c0)``, waits and syncs; thread ``t`` writes the
#: sum of column ``t % 64`` over rows ``t // 64, t // 64 + 4, ...`` (every element read once).
STEPPED = {
    rows: _k(
        _SIG2,
        256,
        f"t = ss.shared.tile(({rows}, 64), np.float32)\n"
        + _FILL
        + "ss.shared.commit_group()\nss.shared.wait_group(0)\nss.block.sync()\n"
        + "s = np.float32(0)\n"
        + f"for i in range(cuda.threadIdx.x // 64, {rows}, 4):\n"
        + "    s += t[i, cuda.threadIdx.x % 64]\n"
        + "out[w] = s\n",
    )
    for rows in (64, 128)
}

#: A 4 x 16 tile filled from ``a`` at ``(r0, k)`` for k = 0, 16, 32, ... < a's width (the
#: origin column steps by whole 16-byte runs); thread ``t`` sums its element over the steps.
STEPPED_LOOP = _k(
    _SIG2,
    64,
    "t = ss.shared.tile((4, 16), np.float32)\n"
    "s = np.float32(0)\n"
    "for k in range(0, a.shape[1], 16):\n"
    "    ss.shared.fill_async(t, a, (r0, k))\n"
    "    ss.shared.wait_all()\n"
    "    ss.block.sync()\n"
    "    s += t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]\n"
    "    ss.block.sync()\n"
    "out[w] = s\n",
)

TRANSPOSED = _k(
    _SIG2,
    128,
    "t = ss.shared.tile((8, 16), np.float32)\n"
    "ss.shared.fill_transposed(t, a, (r0, c0))\n"
    "ss.block.sync()\n"
    "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]\n",
)

DYNAMIC = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, dynamic_shared=(0, 4096)))\n"
    "def k(out: DisjointSlice[np.float32], a: In[np.float32], start: np.int64) -> None:\n"
    "    w = thread.index_1d()\n"
    "    t = ss.shared.dynamic_tile(np.float32)\n"
    "    ss.shared.fill_async(t, a, start)\n"
    "    ss.shared.wait_all()\n"
    "    ss.block.sync()\n"
    "    out[w] = t[cuda.threadIdx.x]\n"
)

#: ``PAIR``: ``k(out, a, b, r0, c0, r1, c1)``: two consecutive fills, joined by the decorator
#: into one pair (``decoration._fillpairs``): an 8 x 64 float tile ``t`` from ``a`` at
#: ``(r0, c0)`` and ``u`` from ``b`` at ``(r1, c1)`` (one 16-byte run of each a thread, 128
#: threads a block). In each of 8 blocks, element ``e = 128 * block + thread`` of ``out`` is
#: ``t``'s element ``e`` (row-major) for ``e < 512``, else ``u``'s element ``e - 512``.
#: ``UNPAIRED``: the same with a statement between the two fills (two calls, as written).
_PAIR_FILLS = _k(
    "a: In2D[np.float32], b: In2D[np.float32], r0: np.int64, c0: np.int64, "
    "r1: np.int64, c1: np.int64",
    128,
    "t = ss.shared.tile((8, 64), np.float32, pad=4)\n"
    "u = ss.shared.tile((8, 64), np.float32, pad=4)\n"
    "ss.shared.fill_async(t, a, (r0, c0))\n"
    "ss.shared.fill_async(u, b, (r1, c1))  # FILL\n"
    "ss.shared.commit_group()\n",
)
PAIR = _PAIR_FILLS.replace("  # FILL", "") + (
    "    ss.shared.wait_group(0)\n"
    "    ss.block.sync()\n"
    "    e = cuda.blockIdx.x * 128 + cuda.threadIdx.x\n"
    "    if e < 512:\n"
    "        out[w] = t[e // 64, e % 64]\n"
    "    else:\n"
    "        out[w] = u[(e - 512) // 64, (e - 512) % 64]\n"
)
UNPAIRED = PAIR.replace(
    "    ss.shared.fill_async(u, b", "    e = cuda.blockIdx.x\n    ss.shared.fill_async(u, b"
)
#: PAIR whose second fill is refused (``b`` holds float64, the tile float32): the refusal
#: names that call's line, not the pair's.
PAIR_REFUSED = PAIR.replace("b: In2D[np.float32]", "b: In2D[np.float64]").replace(
    "fill_async(u, b, (r1, c1))\n", "fill_async(u, b, (r1, c1))  # BAD\n"
)
#: The two fills, then a read of ``u`` (the second fill's tile) before the wait for its
#: copies: refused, the fill (the line marked ``# FILL``) named at its own line, by the
#: compiled form too.
PAIR_EARLY_READ = _PAIR_FILLS + (
    "    ss.block.sync()\n    out[w] = u[cuda.threadIdx.x // 64, cuda.threadIdx.x % 64]  # BAD\n"
)
PAIR_REFUSAL = "shared.fill_async copies bytes: the tile's element type must be the input's"

_ASYNC_READ = "filled asynchronously at line"

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "read-before-the-wait": (
        _k(
            _SIG2, 64, _TILE + _FILL + "ss.shared.commit_group()\nss.block.sync()\n" + _READ
        ).replace("% 16]\n", "% 16]  # BAD\n"),
        _ASYNC_READ,
    ),
    "wait-without-a-barrier": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.commit_group()\nss.shared.wait_group(0)\n" + _READ,
        ).replace("% 16]\n", "% 16]  # BAD\n"),
        "and after the wait for it",
    ),
    "barrier-before-the-wait": (
        _k(
            _SIG2,
            64,
            _TILE
            + _FILL
            + "ss.shared.commit_group()\nss.block.sync()\nss.shared.wait_all()\n"
            + _READ,
        ).replace("% 16]\n", "% 16]  # BAD\n"),
        _ASYNC_READ,
    ),
    "wait-leaves-its-group-in-flight": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.commit_group()\nss.shared.wait_group(1)\n"
            "ss.block.sync()\n" + _READ,
        ).replace("% 16]\n", "% 16]  # BAD\n"),
        _ASYNC_READ,
    ),
    "group-never-closed": (
        _k(_SIG2, 64, _TILE + _FILL + "ss.shared.wait_group(0)\nss.block.sync()\n" + _READ).replace(
            "% 16]\n", "% 16]  # BAD\n"
        ),
        _ASYNC_READ,
    ),
    "double-buffer-reads-the-stage-in-flight": (
        _double(first_wait="ss.shared.wait_group(2)"),
        _ASYNC_READ,
    ),
    "fill-into-the-tile-being-read": (
        _double(bad="fill"),
        "is read by index at line",
    ),
    "fill-again-while-in-flight": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.fill_async(t, a, (r0, c0 + 16))  # BAD\n"
            "ss.shared.wait_all()\nss.block.sync()\n" + _READ,
        ),
        "is filled again while its asynchronous fill at line",
    ),
    "witness-write-during-the-fill": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "v = thread.local_index_2d()\nt[v] = np.float32(1)  # BAD\n"
            "ss.shared.wait_all()\nss.block.sync()\n" + _READ,
        ),
        "is filled asynchronously at line",
    ),
    "own-element-read-back": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.wait_all()\nv = thread.local_index_2d()\n"
            "out[w] = t[v]  # BAD\n",
        ),
        "is read through a witness at line",
    ),
    "wait-count-not-a-literal": (
        _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.commit_group()\nss.shared.wait_group(r0)  # BAD\n"
            "ss.block.sync()\n" + _READ,
        ),
        "shared.wait_group(n) takes one int literal n",
    ),
    # A module constant too: the phase analysis reads the number written in the call.
    "wait-count-a-module-constant": (
        "STAGES = 0\n"
        + _k(
            _SIG2,
            64,
            _TILE + _FILL + "ss.shared.commit_group()\nss.shared.wait_group(STAGES)  # BAD\n"
            "ss.block.sync()\n" + _READ,
        ),
        "got `ss.shared.wait_group(STAGES)`. A literal, because the decorator proves which "
        "asynchronous fills have landed from the source before anything is compiled",
    ),
    "transposed-read-without-a-barrier": (
        TRANSPOSED.replace("    ss.block.sync()\n", "").replace("% 16]\n", "% 16]  # BAD\n"),
        "filled (transposed) at line",
    ),
    "transposed-and-witness-fill": (
        TRANSPOSED.replace(
            "    ss.block.sync()\n",
            "    v = thread.local_index_2d()\n    t[v] = np.float32(0)  # BAD\n    ss.block.sync()\n",
        ),
        "is filled transposed at line",
    ),
    "from-an-output": (
        _k(
            _SIG2,
            64,
            "t = ss.shared.tile(16, np.float32)\n"
            "ss.shared.fill_async(t, out, 0)  # BAD\nss.shared.wait_all()\n"
            "ss.block.sync()\nout[w] = t[0]\n",
        ),
        "copies from an In[...] input array",
    ),
    "another-element-type": (
        _k(
            "a: In2D[np.float64], r0: np.int64, c0: np.int64",
            64,
            _TILE + "ss.shared.fill_async(t, a, (r0, c0))  # BAD\nss.shared.wait_all()\n"
            "ss.block.sync()\n" + _READ,
        ),
        "the tile's element type must be the input's",
    ),
    # A dynamic tile is 1D: the transposed fill needs a 2D tile of a static shape.
    "transposed-into-a-dynamic-tile": (
        DYNAMIC.replace(
            "    ss.shared.fill_async(t, a, start)\n    ss.shared.wait_all()\n",
            "    ss.shared.fill_transposed(t, a, (start, start))  # BAD\n",
        ).replace("a: In[np.float32]", "a: In2D[np.float32]"),
        "shared.fill_transposed fills a tile of a static shape (shared.tile); a dynamic tile's "
        "length is known only at launch",
    ),
    "dynamic-tile-before-the-wait": (
        DYNAMIC.replace("    ss.shared.wait_all()\n", "").replace(
            "t[cuda.threadIdx.x]\n", "t[cuda.threadIdx.x]  # BAD\n"
        ),
        _ASYNC_READ,
    ),
    "rows-not-a-multiple-of-4-bytes": (
        _k(
            "a: In2D[np.int16], r0: np.int64, c0: np.int64",
            64,
            "t = ss.shared.tile((4, 3), np.int16)\n"
            "ss.shared.fill_async(t, a, (r0, c0))  # BAD\nss.shared.wait_all()\n"
            "ss.block.sync()\nout[w] = t[0, 0]\n",
        ),
        "must be a multiple of 4 bytes long",
    ),
}


#: The record dtypes of ``RECORD_TILES`` (the kernels' module defines them by these names).
#: Field names no aligned record of the tests has: numpy finds a packed and an aligned dtype
#: of the same fields and offsets equal (one hash), and Numba's cache of dtypes then gives
#: one the other's type, whose alignment differs.
RECORD_DTYPES = {
    "rec8": np.dtype([("fx", np.float32), ("fn", np.int32)]),
    "rec16": np.dtype([("fx", np.float32), ("fn", np.int32), ("fd", np.float64)]),
}


def _record_kernel(rec: str, body: str) -> str:
    return "".join(f"{name} = np.dtype({dt.descr!r})\n" for name, dt in RECORD_DTYPES.items()) + (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))\n"
        f"def k(out: DisjointSlice[{rec}], a: In2D[{rec}], r0: np.int64, c0: np.int64) -> None:\n"
        "    w = thread.index_1d()\n"
        + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    )


def _record_fill(rec: str, between: str = "") -> str:
    return _record_kernel(
        rec,
        f"t = ss.shared.tile((4, 8), {rec})\n"
        "ss.shared.fill_async(t, a, (r0, c0))\n"
        + between
        + "ss.shared.wait_all()\nss.block.sync()\n"
        "out[w] = t[cuda.threadIdx.x // 8, cuda.threadIdx.x % 8]\n",
    )


#: A tile of 8- or 16-byte records filled by ``fill_async`` (whole records a run; where a run
#: is not one copy, each record is copied by the thread as one integer of its bytes) or by
#: ``fill_transposed``: accepted (before, the per-element path's record stores lost their
#: fill's marker when LLVM split them and the compiled form refused the kernel).
RECORD_TILES: dict[str, str] = {
    **{f"{rec}-fill-async": _record_fill(rec) for rec in RECORD_DTYPES},
    **{
        f"{rec}-fill-transposed": _record_kernel(
            rec,
            f"t = ss.shared.tile((8, 4), {rec})\n"
            "ss.shared.fill_transposed(t, a, (r0, c0))\n"
            "ss.block.sync()\n"
            "out[w] = t[cuda.threadIdx.x // 4, cuda.threadIdx.x % 4]\n",
        )
        for rec in RECORD_DTYPES
    },
}

#: The rejected twins: a record written into the tile through a witness while its fill's
#: copies are in flight (a write the fill did not emit: refused, by the source analysis and
#: by the compiled form).
RECORD_WRITTEN_DURING_THE_FILL: dict[str, tuple[str, str]] = {
    f"{rec}-written-during-the-fill": (
        _record_fill(rec, "v = thread.local_index_2d()\nt[v] = a[0, 0]  # BAD\n"),
        "is filled asynchronously at line",
    )
    for rec in RECORD_DTYPES
}
