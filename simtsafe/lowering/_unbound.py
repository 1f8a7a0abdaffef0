"""Refuse a simtsafe value that may be unbound where it is used, as Numba compiles it.

Python raises ``UnboundLocalError`` for a name used on a path that never bound it; Numba
does not. Its SSA pass gives the name a phi with an undefined incoming value, and the phi
is stripped into an assignment of ``Expr.null()`` -- a zero value -- on that path. For a
number that is only a wrong value; for a simtsafe value it breaks the proof that value
carries: a zero witness is the witness of element 0 (which another thread owns), a zero
output tile is tile 0, a zero shared tile points at the start of shared memory. Every
spelling of "maybe unbound" (the target of a loop that may run no iteration, a name bound
under an ``if``, a ``break`` before the binding, a ``try``) reaches lowering as the same
statement, so the check runs there: in the lowering of every function simtsafe builds,
an assignment of ``Expr.null()`` to a variable whose type is, or holds, a simtsafe type is
refused before any code is emitted for it (deny by default: only the types in ``HARMLESS``,
whose zero value reaches no memory, may be unbound).
"""

from __future__ import annotations

from typing import Any

__all__ = ["check", "holds_simtsafe_type"]

#: What the refusal says; the variable's name is filled in.
MESSAGE = (
    "simtsafe: `{name}` ({what}) may be unbound where it is used: it is bound on some paths "
    "only (in a branch, by a loop that may run no iteration, before a `break`), and Numba "
    "gives a name used where it was never bound the value 0 instead of raising "
    "UnboundLocalError -- {zero}. Bind it on every path before the use, or use it only "
    "where it is bound (inside the loop or the branch)"
)

_ZERO = {
    "ThreadIndexType": "the witness of element 0, which another thread owns",
    "OutTileType": "the output tile at the origin, which another thread owns",
}
_DEFAULT_ZERO = "a value no simtsafe check made, whose accesses would not be proven"


#: simtsafe types whose zero value proves nothing and reaches no memory: a tensor-core
#: fragment is registers of numbers (a zero fragment only changes the numbers computed).
HARMLESS = frozenset({"FragmentType"})


def holds_simtsafe_type(ty: Any) -> Any:
    """The simtsafe type ``ty`` is or holds (in a tuple, at any depth) whose zero value would
    not be a value simtsafe made (a witness, a tile, a view, an accumulator), else None."""
    if type(ty).__module__.startswith("simtsafe.") and type(ty).__name__ not in HARMLESS:
        return ty
    for inner in getattr(ty, "types", ()) or ():
        found = holds_simtsafe_type(inner)
        if found is not None:
            return found
    return None


def _describe(ty: Any) -> tuple[str, str]:
    kind = type(ty).__name__
    what = "a witness" if kind == "ThreadIndexType" else f"a simtsafe value of type {ty}"
    return what, _ZERO.get(kind, _DEFAULT_ZERO)


def check(lower: Any, inst: Any) -> None:
    from numba.cuda.core import ir

    if not isinstance(inst, ir.Assign):
        return
    value = inst.value
    if not (isinstance(value, ir.Expr) and value.op == "null"):
        return
    ty = holds_simtsafe_type(lower.fndesc.typemap.get(inst.target.name))
    if ty is None:
        return
    from numba.cuda.core import errors

    name = inst.target.name.split(".")[0]
    what, zero = _describe(ty)
    loc = _first_use(lower.func_ir, inst.target.name) or inst.loc
    raise errors.TypingError(MESSAGE.format(name=name, what=what, zero=zero), loc=loc)


def _first_use(func_ir: Any, var: str) -> Any:
    """The location of the first statement (by line) that reads ``var``: the null default
    sits in the function's prologue, the user's line is where the name is used."""
    from numba.cuda.core import ir

    best = None
    for block in func_ir.blocks.values():
        for stmt in block.body:
            node = stmt.value if isinstance(stmt, ir.Assign) else stmt
            reads = node.list_vars() if hasattr(node, "list_vars") else ()
            if any(v.name == var for v in reads) and stmt.loc is not None and stmt.loc.line:
                if best is None or stmt.loc.line < best.line:
                    best = stmt.loc
    return best
