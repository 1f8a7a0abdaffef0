"""Uniformity: barriers and collectives only where every thread of the block (warp) gets there.

A value is *block-uniform* (U) when every thread of a block has the same one:
constants, scalar parameters, array parameters and their shapes, ``blockIdx``,
``blockDim``, ``gridDim``, ``warpsize``, ``gridsize``, the results of block
collectives (``sum``, ``max``, ``min``, ``reduce``, ``broadcast``), and what is
computed from those alone. *Warp-uniform* (W): also the results of warp
collectives. Everything else is *non-uniform* (N): ``threadIdx``, ``laneid``,
``cuda.grid``, witnesses and their coordinates, anything loaded from memory,
scans, and any value assigned under non-uniform control flow.

Control flow is uniform at a statement when every enclosing ``if``/``while``
condition and ``for`` trip count is, and no ``return`` (anywhere before it),
``break`` or ``continue`` (in an enclosing loop) happens under a non-uniform
condition. Block barriers and collectives need block-uniform control flow;
warp collectives need warp-uniform control flow. The analysis is a fixed
point over variables (flow-insensitive: a variable non-uniform anywhere is
non-uniform everywhere) and over helpers (context-sensitive: a helper is
analyzed with its arguments' uniformity).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import SafetyError

__all__ = ["BLOCK_OPS", "WARP_OPS", "UniformitySummary", "check_uniformity"]

U, W, N = 0, 1, 2  # block-uniform < warp-uniform < non-uniform
_LEVEL = ("block-uniform", "warp-uniform", "thread-dependent")

#: simtsafe kernel-API calls that every thread of the block must reach (a barrier inside).
BLOCK_OPS = frozenset(
    {
        "block.sync",
        "block.sum",
        "block.max",
        "block.min",
        "block.reduce",
        "block.scan",
        "block.broadcast",
        "shared.accumulator",
    }
)
#: ... and every lane of the warp.
WARP_OPS = frozenset(
    {"warp.sum", "warp.max", "warp.min", "warp.reduce", "warp.scan", "warp.broadcast"}
)
_UNIFORM_RESULT = {
    **dict.fromkeys(("block.sum", "block.max", "block.min", "block.reduce", "block.broadcast"), U),
    **dict.fromkeys(("warp.sum", "warp.max", "warp.min", "warp.reduce", "warp.broadcast"), W),
}
_U_GEOMETRY = ("cuda.blockIdx", "cuda.blockDim", "cuda.gridDim", "cuda.warpsize", "cuda.gridsize")
_N_GEOMETRY = ("cuda.threadIdx", "cuda.laneid", "cuda.grid")
_OBJECT_CTORS = frozenset(
    {"shared.tile", "shared.dynamic_tile", "shared.accumulator", "cuda.local.array"}
)


@dataclass
class UniformitySummary:
    """What a function's callers need: its result's level, and which collectives it reaches."""

    result: int = U
    block_op_line: int | None = None
    warp_op_line: int | None = None
    nonuniform_source: bool = False


@dataclass
class _Ctx:
    level: int = U
    why: int | None = None  # line of the condition that made control flow non-uniform


@dataclass
class _State:
    levels: dict[str, int] = field(default_factory=dict)
    changed: bool = False


class _Analysis:
    def __init__(
        self,
        fn: ast.FunctionDef,
        *,
        ref_name: Callable[[ast.expr], str | None],
        helper_of: Callable[[ast.expr], Any],
        helper_summary: Callable[[Any, tuple[int, ...]], UniformitySummary],
        param_levels: dict[str, int],
        fail: Callable[[ast.AST, str, str], SafetyError],
        kernel: str,
    ) -> None:
        self.fn = fn
        self.ref_name = ref_name
        self.helper_of = helper_of
        self.helper_summary = helper_summary
        self.fail = fail
        self.kernel = kernel
        self.levels: dict[str, int] = dict(param_levels)
        self.changed = False
        self.summary = UniformitySummary()
        self.report = False  # second pass: raise on violations

    # ------------------------------------------------------------ values

    def name_level(self, name: str) -> int:
        return self.levels.get(name, U)

    def expr(self, e: ast.expr | None) -> int:
        if e is None or isinstance(e, ast.Constant):
            return U
        if isinstance(e, ast.Name):
            return self.levels.get(e.id, U)
        ref = self.ref_name(e) if isinstance(e, ast.Attribute | ast.Name) else None
        if ref is not None:
            if ref.startswith(_N_GEOMETRY):
                self.summary.nonuniform_source = True
                return N
            return U
        if isinstance(e, ast.Attribute):
            return self.expr(e.value)
        if isinstance(e, ast.Subscript):
            base = e.value
            if isinstance(base, ast.Attribute) and base.attr == "shape":
                return max(self.expr(base), self.expr(e.slice))
            if isinstance(base, ast.Tuple):
                return max(self.expr(base), self.expr(e.slice))
            self.summary.nonuniform_source = True
            return N  # loaded data
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            return max((self.expr(x) for x in e.elts), default=U)
        if isinstance(e, ast.BinOp):
            return max(self.expr(e.left), self.expr(e.right))
        if isinstance(e, ast.BoolOp):
            return max(self.expr(v) for v in e.values)
        if isinstance(e, ast.UnaryOp):
            return self.expr(e.operand)
        if isinstance(e, ast.Compare):
            return max([self.expr(e.left), *(self.expr(c) for c in e.comparators)])
        if isinstance(e, ast.IfExp):
            return max(self.expr(e.test), self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, ast.NamedExpr):
            return self.expr(e.value)
        if isinstance(e, ast.Starred):
            return self.expr(e.value)
        if isinstance(e, ast.Slice):
            return max(self.expr(e.lower), self.expr(e.upper), self.expr(e.step))
        return N

    def call(self, e: ast.Call) -> int:
        args = [*e.args, *(k.value for k in e.keywords)]
        name = self.ref_name(e.func)
        if name is not None:
            if name in _UNIFORM_RESULT:
                return _UNIFORM_RESULT[name]
            if name.startswith(("thread.", "block.scan", "warp.scan")) or name.startswith(
                _N_GEOMETRY
            ):
                self.summary.nonuniform_source = True
                return N
            if name in _OBJECT_CTORS or name.startswith(_U_GEOMETRY):
                return U
        helper = self.helper_of(e.func)
        if helper is not None:
            levels = tuple(self.expr(a) for a in e.args)
            summary = self.helper_summary(helper, levels)
            if summary.nonuniform_source:
                self.summary.nonuniform_source = True
            return max([summary.result, *levels])
        level = max((self.expr(a) for a in args), default=U)
        if isinstance(e.func, ast.Attribute) and name is None:
            level = max(level, self.expr(e.func.value))
        return level

    # ------------------------------------------------------------ bindings

    def bind(self, target: ast.expr, level: int) -> None:
        if isinstance(target, ast.Name):
            if level > self.levels.get(target.id, U):
                self.levels[target.id] = level
                self.changed = True
        elif isinstance(target, ast.Tuple | ast.List):
            for t in target.elts:
                self.bind(t, level)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, level)

    # ------------------------------------------------------------ statements

    def block(self, stmts: Sequence[ast.stmt], ctx: _Ctx, loop: _Ctx | None) -> _Ctx:
        """Walk statements; returns the control context after them (a non-uniform return
        anywhere makes everything after it non-uniform)."""
        for stmt in stmts:
            ctx = self.stmt(stmt, ctx, loop)
        return ctx

    def _exits(self, stmts: Sequence[ast.stmt], ctx: _Ctx, *, loop_exits: bool) -> _Ctx:
        """The worst context under which ``stmts`` may exit early (return; break/continue
        of the loop whose body this is, when ``loop_exits``)."""
        worst = _Ctx(U, None)

        def visit(body: Sequence[ast.stmt], c: _Ctx, depth: int) -> None:
            nonlocal worst
            for s in body:
                if isinstance(s, ast.Return | ast.Raise) or (
                    loop_exits and depth == 0 and isinstance(s, ast.Break | ast.Continue)
                ):
                    if c.level > worst.level:
                        worst = _Ctx(c.level, c.why)
                elif isinstance(s, ast.Assert):  # a failed assert ends the thread: a raise
                    failing = self._cond(c, s.test)
                    if failing.level > worst.level:
                        worst = _Ctx(failing.level, failing.why)
                elif isinstance(s, ast.If):
                    inner = self._cond(c, s.test)
                    visit(s.body, inner, depth)
                    visit(s.orelse, inner, depth)
                elif isinstance(s, ast.For | ast.While):
                    cond = s.iter if isinstance(s, ast.For) else s.test
                    inner = self._cond(c, cond)
                    visit(s.body, inner, depth + 1)
                    visit(s.orelse, inner, depth + 1)
                elif isinstance(s, ast.With):
                    visit(s.body, c, depth)

        visit(stmts, ctx, 0)
        return worst

    def _cond(self, ctx: _Ctx, test: ast.expr) -> _Ctx:
        level = self.expr(test)
        if isinstance(test, ast.Call) and self.ref_name(test.func) in (
            "thread.grid_stride",
            "thread.block_stride",
        ):
            level = N  # each thread its own trip count
        if level > ctx.level:
            return _Ctx(level, test.lineno)
        return ctx

    def stmt(self, s: ast.stmt, ctx: _Ctx, loop: _Ctx | None) -> _Ctx:
        if isinstance(s, ast.Assign):
            level = max(self.expr(s.value), ctx.level)
            for t in s.targets:
                self.bind(t, level)
            self.calls(s.value, ctx)
        elif isinstance(s, ast.AugAssign | ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, max(self.expr(s.value), ctx.level))
                self.calls(s.value, ctx)
        elif isinstance(s, ast.Expr):
            self.calls(s.value, ctx)
        elif isinstance(s, ast.Return | ast.Raise):
            value = s.value if isinstance(s, ast.Return) else s.exc
            if isinstance(s, ast.Return) and s.value is not None:
                self.summary.result = max(self.summary.result, self.expr(s.value), ctx.level)
            if value is not None:
                self.calls(value, ctx)
            if ctx.level > U:
                return ctx  # the threads that stay are only some of them
        elif isinstance(s, ast.Assert):
            self.calls(s.test, ctx)
            failing = self._cond(ctx, s.test)
            if failing.level > ctx.level:
                return failing  # threads whose assert fails leave
        elif isinstance(s, ast.If):
            self.calls(s.test, ctx)
            inner = self._cond(ctx, s.test)
            self.block(s.body, inner, loop)
            self.block(s.orelse, inner, loop)
        elif isinstance(s, ast.For | ast.While):
            head = s.iter if isinstance(s, ast.For) else s.test
            self.calls(head, ctx)
            inner = self._cond(ctx, head)
            if isinstance(s, ast.For):
                self.bind(s.target, max(inner.level, self.expr(s.iter)))
            exits = self._exits(s.body, inner, loop_exits=True)
            if exits.level > inner.level:
                inner = exits  # threads leave or skip iterations at different times
            self.block(s.body, inner, inner)
            self.block(s.orelse, inner, loop)
        elif isinstance(s, ast.With):
            for item in s.items:
                self.calls(item.context_expr, ctx)
            self.block(s.body, ctx, loop)
        if isinstance(s, ast.If | ast.For | ast.While | ast.With):  # raise/assert inside too
            # A return inside, under a thread-dependent condition: after this statement
            # only some threads are left.
            returned = self._exits([s], ctx, loop_exits=False)
            if returned.level > ctx.level:
                return returned
        return ctx

    def calls(self, e: ast.expr, ctx: _Ctx) -> None:
        """Check every collective called in ``e`` against the control context.

        Evaluation order matters: the later operands of ``and``/``or`` and the
        branches of ``x if c else y`` run only for the threads the earlier
        operands (the condition) select, so they are checked under it.
        """
        if isinstance(e, ast.BoolOp):
            inner = ctx
            for value in e.values:
                self.calls(value, inner)
                inner = self._cond(inner, value)
            return
        if isinstance(e, ast.IfExp):
            self.calls(e.test, ctx)
            inner = self._cond(ctx, e.test)
            self.calls(e.body, inner)
            self.calls(e.orelse, inner)
            return
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.calls(child, ctx)
        if isinstance(e, ast.Call):
            self._call(e, ctx)

    def _call(self, node: ast.Call, ctx: _Ctx) -> None:
        name = self.ref_name(node.func)
        helper = self.helper_of(node.func) if name is None else None
        block_op = name in BLOCK_OPS
        warp_op = name in WARP_OPS
        if helper is not None:
            summary = self.helper_summary(helper, tuple(self.expr(a) for a in node.args))
            block_op = summary.block_op_line is not None
            warp_op = summary.warp_op_line is not None
        if block_op:
            self.summary.block_op_line = self.summary.block_op_line or node.lineno
            if self.report and ctx.level > U:
                self._diverges(node, name or f"helper {ast.unparse(node.func)}", "block", ctx)
        elif warp_op:
            self.summary.warp_op_line = self.summary.warp_op_line or node.lineno
            if self.report and ctx.level > W:
                self._diverges(node, name or f"helper {ast.unparse(node.func)}", "warp", ctx)

    def _diverges(self, node: ast.Call, what: str, scope: str, ctx: _Ctx) -> None:
        where = f"line {ctx.why}" if ctx.why is not None else "an earlier line"
        raise self.fail(
            node,
            f"`{what}` needs every thread of the {scope} to reach it, but control flow here "
            f"is {_LEVEL[ctx.level]}: the condition, trip count or early exit at {where} "
            f"depends on the thread (threadIdx, a witness, loaded data...), so some threads "
            f"would skip it or reach it a different number of times. Move the call out of "
            f"that branch or loop (compute per-thread values first, then call it in every "
            f"thread), or use Tier 2 (`simtsafe.unsafe`) if the schedule cannot be expressed",
            "uniformity",
        )

    def run(self) -> UniformitySummary:
        for _ in range(20):  # fixed point over variable levels (monotone, few variables)
            self.changed = False
            self.block(self.fn.body, _Ctx(), None)
            if not self.changed:
                break
        self.report = True
        self.block(self.fn.body, _Ctx(), None)
        return self.summary


def check_uniformity(
    fn: ast.FunctionDef,
    *,
    ref_name: Callable[[ast.expr], str | None],
    helper_of: Callable[[ast.expr], Any],
    helper_summary: Callable[[Any, tuple[int, ...]], UniformitySummary],
    param_levels: dict[str, int],
    fail: Callable[[ast.AST, str, str], SafetyError],
    kernel: str,
) -> UniformitySummary:
    """Check every barrier and collective of ``fn``; return the function's summary.

    Args:
        fn: the function's AST as written.
        ref_name: the allow-list name of a global reference (``block.sum``,
            ``cuda.threadIdx.x``...), None for locals and other objects.
        helper_of: the ``@simtsafe.device`` helper a call target denotes, or None.
        helper_summary: a helper's summary for its arguments' levels.
        param_levels: the uniformity of each parameter (kernels: all uniform).
        fail: builds the SafetyError for a node.
        kernel: the function's name, for messages.

    Raises:
        SafetyError: a barrier or collective under non-uniform control flow
            (``rule="uniformity"``), naming its line and the condition's.
    """
    return _Analysis(
        fn,
        ref_name=ref_name,
        helper_of=helper_of,
        helper_summary=helper_summary,
        param_levels=param_levels,
        fail=fail,
        kernel=kernel,
    ).run()
