"""Refuse an exception whose message is known only at run time, at the user's line.

Numba turns ``assert cond, msg`` and ``raise E(msg)`` into a *dynamic* raise when ``msg``
is not a compile-time constant (an f-string of a run-time value, a number read from an
array, a string picked by a run-time branch). numba-cuda cannot lower one: its calling
convention has no way to carry run-time values out of a kernel, and it fails with an
``AttributeError`` about its own internals. Every spelling reaches lowering as the same
statement (``DynamicRaise``), so the check runs there, in the lowering of every function
simtsafe builds, before any code is emitted for it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGE", "check"]

#: What the refusal says.
MESSAGE = (
    "simtsafe: this {what}'s message is a value known only at run time ({detail}); a kernel "
    "cannot carry run-time values out in an exception (numba-cuda lowers only messages that "
    "are compile-time constants). Use a constant message (a string literal, or a module-"
    'level string constant): `assert cond, "what went wrong"`; to see the value, write '
    "it to an output"
)


def check(lower: Any, inst: Any) -> None:
    from numba.cuda.core import errors, ir

    if not isinstance(inst, ir.DynamicRaise | ir.DynamicTryRaise):
        return
    exc_class = getattr(inst, "exc_class", None)
    what = "assert" if exc_class is AssertionError else "raise"
    args = [a for a in (inst.exc_args or ()) if isinstance(a, ir.Var)]
    detail = (
        "built from " + ", ".join(f"`{a.name.split('.')[0]}`" for a in args)
        if args and not all(a.name.startswith("$") for a in args)
        else "computed in the kernel"
    )
    raise errors.TypingError(MESSAGE.format(what=what, detail=detail), loc=inst.loc)
