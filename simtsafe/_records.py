"""Record (structured) element types: the one property every layer refuses them for.

Numba gives a record's array field (``np.dtype([("f", np.float32, (4,))])``) as a mutable
array over the record's bytes, neither bounds-checked nor owned: a store through it is
seen by no simtsafe rule. Kernel parameters (decoration), shared tiles and local arrays
(typing, and the simulator) of such records are refused by name with :func:`array_field`;
what decides is the compiled-form check of ``lowering._recordfields``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "array_field",
    "element_alignment",
    "misaligned_record",
    "misaligned_refusal",
    "record_field_refusal",
]


def array_field(dtype: np.dtype[Any], prefix: str = "") -> str | None:
    """The (dotted) name of the first field of record ``dtype`` that is an array, at any
    depth of nested records; None for a record without one or a dtype that is no record."""
    if dtype.names is None:
        return None
    for field in dtype.names:
        ftype = dtype.fields[field][0]  # type: ignore[index]
        if ftype.subdtype is not None:
            return prefix + field
        inner = array_field(ftype, f"{prefix}{field}.")
        if inner is not None:
            return inner
    return None


def misaligned_record(dtype: np.dtype[Any]) -> str | None:
    """The (dotted) name of the first nested *aligned* record of ``dtype`` that an element of
    an array of ``dtype`` can hold at an address its alignment does not divide, else None.

    Numba reads and writes the fields of a record made with ``align=True`` at their natural
    alignment; nested at an offset its alignment does not divide (inside a packed record),
    or in an element whose size it does not divide, those accesses are misaligned -- a
    fault on the GPU (attack round 20: ``st.f64`` at ``17 * w + 1``)."""

    def walk(d: np.dtype[Any], offset: int, prefix: str) -> str | None:
        for field in d.names or ():
            ftype, foffset = d.fields[field][:2]  # type: ignore[index]
            at = offset + foffset
            if ftype.names is None:
                continue
            if ftype.isalignedstruct and (at % ftype.alignment or dtype.itemsize % ftype.alignment):
                return prefix + field
            inner = walk(ftype, at, f"{prefix}{field}.")
            if inner is not None:
                return inner
        return None

    return walk(dtype, 0, "")


def misaligned_refusal(where: str, field: str, dtype: np.dtype[Any]) -> str:
    """The refusal of a record dtype whose nested aligned record ``field`` can be misaligned."""
    return (
        f"{where}: the record field {field!r} is a record made with align=True (Numba accesses "
        f"its fields at their natural alignment) at a byte offset or in an element of "
        f"{dtype.itemsize} bytes that its alignment does not divide, so its fields' loads and "
        "stores would be misaligned (a fault on the GPU). Make the outer record with "
        "align=True as well (numpy then pads it), or the nested one without"
    )


def record_field_refusal(what: str, field: str) -> str:
    """The refusal of ``what`` (a tile, a local array) whose record element has array field
    ``field``: at typing and on the simulator alike."""
    return (
        f"{what}: the element's record field {field!r} is an array; Numba gives such a field "
        "as a view of the element's bytes with no bounds check and no owner (a store through "
        "it could race or land outside the array). Use scalar fields, or give the tile or "
        "array an axis for the field (a field of 4 float32 in each of n elements: "
        "`ss.shared.tile((n, 4), np.float32)`)"
    )


def element_alignment(dtype: np.dtype[Any]) -> int:
    """The alignment in bytes the compiled code assumes for an element of ``dtype`` in memory:
    numpy's alignment of the type (a packed record's is 1: Numba reads its fields with
    alignment 1), and for a record the largest of its nested records made with
    ``align=True`` (Numba accesses their fields at their natural alignment)."""
    need = int(dtype.alignment)
    for field in dtype.names or ():
        ftype = dtype.fields[field][0]  # type: ignore[index]
        if ftype.names is not None:
            need = max(need, element_alignment(ftype))
    return need
