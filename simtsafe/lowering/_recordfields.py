"""Refuse a view of a record's array field, as Numba compiles it.

Numba gives a record element read from an array (``t[i]`` of a shared tile, a shared or
local array) as a reference to the array's bytes, and the record's array field (``e.f``,
``e["f"]``, the same field inside a helper it was passed to) as an array over those bytes:
writable, not bounds-checked, owned by nobody. A store through it is a plain ``setitem`` of
an array, which no ownership, tile-phase or bounds rule sees; two threads may write one
element and an index past the field writes past the array. Every spelling of "an array
field of a record" reaches lowering as a statement whose value has Numba's ``NestedArray``
type, so the check runs there, in the lowering of every function simtsafe builds
(``_lowerchecks``), before any code is emitted for it. Kernel parameters of such records
are refused earlier, at decoration (``decoration._params``), and shared tiles of them at
typing (``_tiles``); this check is the one that decides.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGE", "check"]

#: What the refusal says; the field and its type are filled in.
MESSAGE = (
    "simtsafe: {field} is an array field of a record ({ty}): Numba makes it a view into the "
    "memory the record lives in (a shared tile or array, a local array), with no bounds "
    "check and no owner, so a write through it could race with another thread or land "
    "outside the array. Records with array fields are not supported in kernels; give the "
    "tile or array an axis for the field instead (a field of 4 float32 in each of n "
    "elements: `ss.shared.tile((n, 4), np.float32)`)"
)


def check(lower: Any, inst: Any) -> None:
    from numba.cuda.core import errors, ir
    from numba.cuda.types import NestedArray

    if not isinstance(inst, ir.Assign):
        return
    ty = lower.fndesc.typemap.get(inst.target.name)
    if not isinstance(ty, NestedArray):
        return
    raise errors.TypingError(MESSAGE.format(field=_spelled(inst), ty=ty), loc=inst.loc)


def _spelled(inst: Any) -> str:
    """How the statement names the field: ``e.f``, ``e["f"]``, else the variable."""
    from numba.cuda.core import ir

    value = inst.value
    if isinstance(value, ir.Expr) and value.op in ("getattr", "static_getitem"):
        field = value.attr if value.op == "getattr" else value.index
        base = value.value.name.split(".")[0]
        if base.startswith("$"):  # a temporary: the record has no name in the source
            return f"field {field!r}"
        return f"`{base}.{field}`" if value.op == "getattr" else f"`{base}[{field!r}]`"
    return f"`{inst.target.name.split('.')[0]}`"
