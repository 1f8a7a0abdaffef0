"""Consecutive whole-tile fills lowered together.

Two ``shared.fill_async`` statements one right after the other (the A and B
tiles of a GEMM's step, say) become one call of the private
``__ss_shared_fill_async_pair``, whose compiled form issues every copy of both
fills before either fill's per-run path (``lowering._asyncfill``): the per-run
path is a branch, and a branch between the two fills' copies keeps the
compiler from issuing the second tile's copies right after the first's.

This is a schedule, not a proof: the pair does exactly what the two calls do
(each is typed, checked and copied as one call is), and the compiled-form
phase check (``verify._tilephases``) reads the copies the pair emits like any
others. Only calls whose arguments are plain values (names, constants,
tuples and ``+ - * & | ^ << >>`` of them: nothing that calls, indexes, divides
or could raise) are paired, so evaluating the second call's arguments before
the first call's copies changes nothing; calls filling the same tile name are
left as written.
"""

from __future__ import annotations

import ast

__all__ = ["pair_fills"]

_FILL = "__ss_shared_fill_async"
_PAIR = "__ss_shared_fill_async_pair"
_PURE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)


def _plain(e: ast.expr) -> bool:
    """A value computed without a call, an index, a division or anything that can raise."""
    if isinstance(e, ast.Name | ast.Constant):
        return True
    if isinstance(e, ast.Tuple):
        return all(_plain(v) for v in e.elts)
    if isinstance(e, ast.BinOp):
        return isinstance(e.op, _PURE_OPS) and _plain(e.left) and _plain(e.right)
    if isinstance(e, ast.UnaryOp):
        return isinstance(e.op, ast.USub | ast.UAdd | ast.Invert) and _plain(e.operand)
    return False


def _fill_args(s: ast.stmt) -> list[ast.expr] | None:
    """The three arguments of a ``fill_async`` statement that may be paired, else None."""
    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
        return None
    call = s.value
    if not (isinstance(call.func, ast.Name) and call.func.id == _FILL):
        return None
    if call.keywords or len(call.args) != 3 or not all(_plain(a) for a in call.args):
        return None
    if not isinstance(call.args[0], ast.Name):
        return None
    return list(call.args)


def _pair_list(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    i = 0
    while i < len(body):
        s = _pair_nested(body[i])
        first = _fill_args(s)
        second = _fill_args(body[i + 1]) if first is not None and i + 1 < len(body) else None
        if first is None or second is None:
            out.append(s)
            i += 1
            continue
        tile1, tile2 = first[0], second[0]
        assert isinstance(tile1, ast.Name) and isinstance(tile2, ast.Name)
        if tile1.id == tile2.id:
            out.append(s)
            i += 1
            continue
        line2 = ast.copy_location(ast.Constant(body[i + 1].lineno), body[i + 1])
        call = ast.Call(ast.Name(_PAIR, ast.Load()), [*first, *second, line2], [])
        out.append(ast.copy_location(ast.Expr(ast.copy_location(call, s)), s))
        i += 2
    return out


def _pair_nested(s: ast.stmt) -> ast.stmt:
    for name in ("body", "orelse", "finalbody"):
        inner = getattr(s, name, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            setattr(s, name, _pair_list(inner))
    return s


def pair_fills(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` (a rewritten kernel's or helper's statements, nested ones too) with each two
    consecutive pairable ``fill_async`` statements as one pair call."""
    return _pair_list(body)
