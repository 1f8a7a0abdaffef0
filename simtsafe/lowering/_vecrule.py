"""What ``simtsafe.vec.load`` and ``vec.store`` accept: one rule for the compiled form and the
simulator."""

from __future__ import annotations

__all__ = [
    "MAX_RUNS",
    "VEC_BYTES",
    "VEC_LENGTHS",
    "vec_refusal",
    "vec_store_at_refusal",
    "vec_store_refusal",
]

#: Run lengths (elements) and run sizes (bytes) a vector access may have.
VEC_LENGTHS = (2, 4, 8)
VEC_BYTES = (4, 8, 16)
#: The most runs one ``vec.load_runs`` reads.
MAX_RUNS = 16


def vec_refusal(
    ndim: int, contiguous: bool, kind: str, itemsize: int, n: object, what: str = "vec.load"
) -> str | None:
    """Why ``vec.load`` refuses an array of this shape and dtype with run length ``n``, or None.

    Args:
        ndim: the array's rank.
        contiguous: whether its last axis is contiguous (C layout).
        kind: the dtype's kind (numpy's ``"f"``, ``"i"``, ``"u"``...).
        itemsize: the element size in bytes.
        n: the run length as typed (an int when it is a compile-time constant).
        what: the API named in the message.
    """
    if ndim not in (1, 2):
        return f"{what} reads 1D or 2D inputs; got a {ndim}D array"
    if not contiguous:
        return (
            f"{what} reads C-contiguous inputs (a run is consecutive in memory); got a "
            "non-contiguous array. Pass a contiguous copy (np.ascontiguousarray)"
        )
    if kind not in ("f", "i", "u"):
        verb = "writes" if what.startswith("vec.store") else "reads"
        return f"{what} {verb} float, int and uint elements; got dtype kind {kind!r}"
    if not isinstance(n, int) or isinstance(n, bool) or n not in VEC_LENGTHS:
        return (
            f"{what}'s run length n must be a compile-time int in {VEC_LENGTHS}; got {n!r}. "
            "Write a literal (vec.load(a, j, 4)) or a global constant"
        )
    if n * itemsize not in VEC_BYTES:
        fits = [f"n = {m} ({m * itemsize} bytes)" for m in VEC_LENGTHS if m * itemsize in VEC_BYTES]
        return (
            f"{what}'s run must be 4, 8 or 16 bytes; {n} elements of {itemsize} bytes are "
            f"{n * itemsize}. Use "
            + (" or ".join(fits) if fits else "scalar " + what.removeprefix("vec.") + "s")
        )
    return None


def vec_store_refusal(
    tile_kind: str, tile: tuple[int, ...], kind: str, itemsize: int, nvalues: int
) -> str | None:
    """Why ``vec.store`` refuses a tile of ``tile_kind`` ("1d", "2d", "2d_strided") and
    shape, of elements of dtype kind ``kind`` and ``itemsize`` bytes, given ``nvalues``
    values; or None."""
    if tile_kind != "1d":
        text = (
            "vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got a "
            f"{tile_kind} tile of " + " x ".join(str(n) for n in tile) + ". Write its "
            "elements with t[r, c] = v"
        )
        if tile_kind == "2d" and tile[0] == 1 and tile[1] in VEC_LENGTHS:
            # A run of one row: the same run of the flat view is a 1D tile, whole when the
            # rows are a multiple of n long (porting round 21: a paged KV-cache gather).
            text += (
                f", or keep the vector store: pass the output's C-order flat view "
                f"(`out.reshape(-1)`, a DisjointSlice) and take `t = thread.tile_1d(out, "
                f"{tile[1]})` -- thread g owns the run [{tile[1]} g, {tile[1]} g + {tile[1]}), "
                f"row g // (cols // {tile[1]}) when the rows are a multiple of {tile[1]} long"
            )
        return text
    if tile[0] not in VEC_LENGTHS:
        return (
            f"vec.store writes a tile of {VEC_LENGTHS} elements; this one has {tile[0]}. "
            "Make the tile with thread.tile_1d(out, 2|4|8), or write t[k] = v"
        )
    refusal = vec_refusal(1, True, kind, itemsize, tile[0], "vec.store")
    if refusal is not None:
        return refusal
    if nvalues != tile[0]:
        return f"vec.store writes the whole tile: {tile[0]} values; got {nvalues}"
    return None


def vec_store_at_refusal(
    what: str, ndim: int, contiguous: bool, kind: str, itemsize: int, nvalues: int
) -> str | None:
    """Why ``vec.store_at`` refuses to write ``nvalues`` values into an array, or None.

    Args:
        what: ``"raw"`` for a writable array (``out.unchecked``, a shared array),
            ``"input"`` for a read-only one (``In[...]``), ``"view"`` for a
            ``DisjointSlice``, anything else names the type it got.
        ndim: the array's rank; contiguous: its last axis is contiguous;
        kind: its dtype's kind; itemsize: its element size in bytes.
    """
    if what == "view":
        return (
            "vec.store_at writes a raw array: pass out.unchecked (inside the unsafe region), "
            "not the DisjointSlice itself; a thread's own run of an output is written in Tier 1 "
            "with vec.store(thread.tile_1d(out, n), values)"
        )
    if what == "input":
        return "vec.store_at cannot write a read-only input (In[...]); inputs are never written"
    if what != "raw":
        return f"vec.store_at writes a raw 1D array (out.unchecked, a shared array); got {what}"
    if ndim != 1:
        return f"vec.store_at writes 1D arrays; got a {ndim}D array"
    if not contiguous:
        return (
            "vec.store_at writes C-contiguous arrays (a run is consecutive in memory); got a "
            "strided view. Write its elements one by one"
        )
    if nvalues not in VEC_LENGTHS:
        return f"vec.store_at writes a run of {VEC_LENGTHS} values; got a tuple of {nvalues}"
    return vec_refusal(1, True, kind, itemsize, nvalues, "vec.store_at")
