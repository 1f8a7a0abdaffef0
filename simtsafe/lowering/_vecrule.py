"""What ``simtsafe.vec.load`` and ``vec.store`` accept: one rule for the compiled form and the
simulator."""

from __future__ import annotations

__all__ = ["VEC_BYTES", "VEC_LENGTHS", "vec_refusal", "vec_store_refusal"]

#: Run lengths (elements) and run sizes (bytes) a vector access may have.
VEC_LENGTHS = (2, 4, 8)
VEC_BYTES = (4, 8, 16)


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
        verb = "writes" if what == "vec.store" else "reads"
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
        return (
            "vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got a "
            f"{tile_kind} tile of " + " x ".join(str(n) for n in tile) + ". Write its "
            "elements with t[r, c] = v"
        )
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
