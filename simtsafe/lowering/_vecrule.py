"""What ``simtsafe.vec.load`` accepts: one rule for the compiled form and the simulator."""

from __future__ import annotations

__all__ = ["VEC_BYTES", "VEC_LENGTHS", "vec_refusal"]

#: Run lengths (elements) and run sizes (bytes) a vector access may have.
VEC_LENGTHS = (2, 4, 8)
VEC_BYTES = (4, 8, 16)


def vec_refusal(ndim: int, contiguous: bool, kind: str, itemsize: int, n: object) -> str | None:
    """Why ``vec.load`` refuses an array of this shape and dtype with run length ``n``, or None.

    Args:
        ndim: the array's rank.
        contiguous: whether its last axis is contiguous (C layout).
        kind: the dtype's kind (numpy's ``"f"``, ``"i"``, ``"u"``...).
        itemsize: the element size in bytes.
        n: the run length as typed (an int when it is a compile-time constant).
    """
    if ndim not in (1, 2):
        return f"vec.load reads 1D or 2D inputs; got a {ndim}D array"
    if not contiguous:
        return (
            "vec.load reads C-contiguous inputs (a run is consecutive in memory); got a "
            "non-contiguous array. Pass a contiguous copy (np.ascontiguousarray)"
        )
    if kind not in ("f", "i", "u"):
        return f"vec.load reads float, int and uint elements; got dtype kind {kind!r}"
    if not isinstance(n, int) or isinstance(n, bool) or n not in VEC_LENGTHS:
        return (
            f"vec.load's run length n must be a compile-time int in {VEC_LENGTHS}; got {n!r}. "
            "Write a literal (vec.load(a, j, 4)) or a global constant"
        )
    if n * itemsize not in VEC_BYTES:
        fits = [f"n = {m} ({m * itemsize} bytes)" for m in VEC_LENGTHS if m * itemsize in VEC_BYTES]
        return (
            f"vec.load's run must be 4, 8 or 16 bytes; {n} elements of {itemsize} bytes are "
            f"{n * itemsize}. Use " + (" or ".join(fits) if fits else "scalar reads")
        )
    return None
