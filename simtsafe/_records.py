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

__all__ = ["array_field", "record_field_refusal"]


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
