"""What ``cuda.const.array_like`` accepts in Tier 1: one rule for the decorator, the compiled
form and the simulator (their messages are the same text)."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_BYTES", "READ_ONLY", "bad_index", "refused_array", "snapshot"]

#: The constant bank a kernel's ``__constant__`` data lives in (64 KiB on every GPU Numba
#: targets): one array larger than this cannot be loaded.
MAX_BYTES = 64 * 1024

#: The refusal of any write (``c[i] = v`` and its kin), on both targets.
READ_ONLY = (
    "a constant array (`cuda.const.array_like`) is read-only: it lives in the GPU's constant "
    "memory, which no thread may write. Read it into a local (`x = c[i]`) or a thread-private "
    "array (`cuda.local.array`) and write an output through a witness"
)


def bad_index(ndim: int) -> str:
    """The refusal of an index that is not one int per axis (a slice, a witness, a float)."""
    ints = "an int" if ndim == 1 else f"{ndim} ints"
    spelled = "t[" + ", ".join("ijklmnopqrstuvwxyzabcdefgh"[:ndim]) + "]"
    return (
        f"a {ndim}D constant array is read with {ints}, one element at a time ({spelled}); it "
        "has no rows or slices (read a row's elements one by one; at a witness's element, "
        "w.index, or (w.row, w.col))"
    )


def refused_array(value: Any) -> str | None:
    """Why ``value`` cannot be made a constant array (None: a numpy array it accepts).

    A numpy array of bool, integers, floats or complex numbers, with at least one axis,
    of at most ``MAX_BYTES``. Records are refused: a record element read from an array
    is a reference into it, whose fields would need rules of their own; one constant
    array per field does the same.
    """
    import numpy as np

    if isinstance(value, tuple):
        return (
            "takes a module-level numpy array, got builtins.tuple; index the tuple itself "
            "(a module-level tuple of numbers is a compile-time constant: `TAPS[k]`)"
        )
    if not isinstance(value, np.ndarray):
        return (
            f"takes a module-level numpy array, got {type(value).__module__}."
            f"{type(value).__qualname__}; pass device data as an In[...] parameter"
        )
    # the base class's own view: a subclass may say otherwise of its dtype, size, shape or
    # bytes (attack round 28: a 160000-byte table whose class said size = 4)
    real = np.ndarray.view(value, np.ndarray)
    dtype = real.dtype
    if dtype.names is not None:
        return (
            f"takes an array of numbers; an array of records ({dtype}) is not supported: "
            "give each field its own constant array (`cuda.const.array_like(ARR_X)`, "
            "`cuda.const.array_like(ARR_Y)`)"
        )
    if (
        dtype.kind not in "biufc"
        or type(dtype).__module__ != "numpy.dtypes"
        or (dtype.kind in "fc" and dtype.itemsize > {"f": 8, "c": 16}[dtype.kind])
    ):  # numpy's longdouble / clongdouble: no GPU type (attack round 23)
        return (
            f"takes an array of numbers (bool, integers, floats, complex); got dtype {dtype}. "
            "Pass such data as an In[...] parameter"
        )
    if real.ndim < 1:
        return "takes an array with at least one axis (a 0-d array is a number: use a constant)"
    nbytes = real.size * dtype.itemsize
    if nbytes > MAX_BYTES:
        return (
            f"takes at most {MAX_BYTES} bytes (the GPU's constant bank), got an array of "
            f"{nbytes} bytes; pass it as an In[...] parameter"
        )
    return None


def snapshot(value: Any) -> Any:
    """The read-only copy a kernel compiles of an array ``refused_array`` accepts: numpy's
    own ndarray of the base class's view (never the subclass's word for its contents), C
    order, native byte order (Numba types no other)."""
    import numpy as np

    real = np.ndarray.view(value, np.ndarray)
    copy = np.array(real, dtype=real.dtype.newbyteorder("="), order="C", copy=True)
    copy.setflags(write=False)
    return copy
