"""Refuse a store to a record field that is not the thread's own output element, as Numba
compiles it.

A record read from an array is a reference to the array's bytes, and ``r.field = v``
writes them. simtsafe admits that store on one record only: the element of a
``DisjointSlice`` (or of a view written by witnesses: an ``AppendBuffer`` by its claim's
witness, ``HashValues`` by its insert's) read through a witness of its space (``out[w].field = v``, or a field of
a record nested in it, ``out[w].inner.field = v``), in a kernel or in a
``@simtsafe.device`` helper that is handed the output and the witness. The subscript types
only with such a witness (``_cuda``), and out of range it gives a zero scratch record of
the thread, so the store lands in the thread's element or nowhere.

The decoration's check (``decoration._rewrite._own_record_field``) words the early
message from the source; it cannot know what a helper is called with. This check
decides, on Numba's typed IR of every function simtsafe builds (``_lowerchecks``):
the record a ``setattr`` writes must be defined -- on every path that assigns it -- by a
witness subscript of a ``DisjointSlice``, by a record field of such a record, or by a
copy of one. A helper's parameter, an input's element, a tile's or a local array's
element, another thread's witness space: all are refused here, whatever the spelling.
Inside a ``simtsafe.unsafe`` region of the function the store is the author's.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGE", "UNSAFE_LINES", "check"]

#: The attribute that carries a built function's unsafe regions: ((first, last) line, ...).
UNSAFE_LINES = "__simtsafe_unsafe_lines__"

#: What the refusal says; the store and what the record is are filled in.
MESSAGE = (
    "simtsafe: `{store}` writes a field of {what}, not of this thread's own output element: "
    "a record field is written only as `out[w].field = v` (or `out[w].inner.field = v`), "
    "with `out` a DisjointSlice output and `w` the thread's witness of its space -- in the "
    "kernel, or in a @simtsafe.device helper given that output and witness. Write the "
    "field of the output's element, or build the record in locals and store it whole"
)


def check(lower: Any, inst: Any) -> None:
    from numba.cuda import types
    from numba.cuda.core import errors, ir

    if not isinstance(inst, ir.SetAttr):
        return
    typemap = lower.fndesc.typemap
    if not isinstance(typemap.get(inst.target.name), types.Record):
        return
    if _in_unsafe(lower, inst.loc):
        return
    what = _not_own(lower, inst.target.name, set())
    if what is None:
        return
    store = f"{_spelled(lower, inst.target.name, 0)}.{inst.attr}"
    raise errors.TypingError(MESSAGE.format(store=store, what=what), loc=inst.loc)


def _spelled(lower: Any, name: str, depth: int) -> str:
    """The record as the source names it: ``r``, ``o[...]``, ``o[...].inner``."""
    from numba.cuda.core import ir

    base = name.split(".")[0]
    if not base.startswith("$"):
        return base
    values = _definitions(lower).get(name, [])
    value = values[0] if len(values) == 1 else None
    if depth < 4 and isinstance(value, ir.Expr):
        if value.op in ("getitem", "static_getitem"):
            return f"{_spelled(lower, value.value.name, depth + 1)}[...]"
        if value.op == "getattr":
            return f"{_spelled(lower, value.value.name, depth + 1)}.{value.attr}"
    return "the record"


def _in_unsafe(lower: Any, loc: Any) -> bool:
    func = getattr(getattr(lower.func_ir, "func_id", None), "func", None)
    line = getattr(loc, "line", None)
    regions = getattr(func, UNSAFE_LINES, ())
    return line is not None and any(first <= line <= last for first, last in regions)


def _definitions(lower: Any) -> dict[str, list[Any]]:
    """Every value assigned to each variable of the function (after SSA, a variable that
    was a phi is assigned once on each incoming path)."""
    from numba.cuda.core import ir

    cached = getattr(lower, "_ss_record_defs", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    defs: dict[str, list[Any]] = {}
    for block in lower.func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                defs.setdefault(stmt.target.name, []).append(stmt.value)
    lower._ss_record_defs = defs
    return defs


def _not_own(lower: Any, name: str, open_: set[str]) -> str | None:
    """None when every definition of ``name`` is the thread's own output element (or a
    record inside it); else what one of them is, for the message."""
    from numba.cuda import types
    from numba.cuda.core import ir

    from ._cuda import DisjointSliceType, ThreadIndexType, _witness_view

    if name in open_:  # a copy cycle: its other definitions decide
        return None
    open_.add(name)
    typemap = lower.fndesc.typemap
    values = _definitions(lower).get(name, [])
    if not values:
        return "a record this function was given (a parameter)"
    for value in values:
        if isinstance(value, ir.Var):
            found = _not_own(lower, value.name, open_)
            if found is not None:
                return found
            continue
        if isinstance(value, ir.Arg):
            return "a record this function was given (a parameter)"
        if not isinstance(value, ir.Expr):
            return "a record simtsafe cannot trace to the thread's output element"
        if value.op == "getattr" and isinstance(typemap.get(name), types.Record):
            found = _not_own(lower, value.value.name, open_)  # a nested record field
            if found is not None:
                return found
            continue
        if value.op in ("getitem", "static_getitem"):
            view = typemap.get(value.value.name)
            index = typemap.get(value.index.name) if value.op == "getitem" else None
            if _witness_view(view) and _witness(view, index, ThreadIndexType):
                continue  # a DisjointSlice, AppendBuffer or HashValues, by its witness
            held = value.value.name.split(".")[0]
            held = "" if held.startswith("$") else f" `{held}`"
            if isinstance(view, types.Array) and not view.mutable:
                return f"an element of the input{held} (read-only)"
            if isinstance(view, DisjointSliceType):
                return f"an element of the output{held} read without the thread's witness"
            return f"an element of{held or ' a value'} of type {view}"
        return "a record simtsafe cannot trace to the thread's output element"
    return None


def _witness(view: Any, index: Any, witness_type: Any) -> bool:
    """``index`` is a witness of ``view``'s space (for a Columns output, ``(row, w)``)."""
    from numba.cuda import types

    if isinstance(index, witness_type):
        return bool(index.space == view.space)
    if view.space == "Columns" and isinstance(index, types.BaseTuple) and len(index) == 2:
        return isinstance(index.types[0], types.Integer) and isinstance(
            index.types[1], witness_type
        )
    return False
