"""Uniformity: barriers and collectives only where every thread of the block (warp) gets there.

A value is *block-uniform* (U) when every thread of a block has the same one:
constants, scalar parameters, array parameters and their shapes, ``blockIdx``,
``blockDim``, ``gridDim``, ``warpsize``, ``gridsize``, the results of block
collectives (``sum``, ``max``, ``min``, ``reduce``, ``broadcast``), and what is
computed from those alone. *Warp-uniform* (W): also the results of warp
collectives. Everything else is *non-uniform* (N): ``threadIdx``, ``laneid``,
``cuda.grid``, witnesses and their coordinates, anything loaded from memory,
scans, and any value assigned under non-uniform control flow. A kernel whose
contract pins the block (``block``) also has warp-uniform thread indices,
where every warp of that block shape makes them so (``verify._divergence``'s
``warp_uniform_axes``, the same rule as the compiled form): the warp's number
``threadIdx.x // 2**k``, ``threadIdx.x >> k``, ``int(threadIdx.x / 2**k)``
(k >= 5), ``threadIdx.x & m`` (``m % 32 == 0``), with ``threadIdx.x`` spelled
directly, through ``int``/``np.int32``..., or as a local assigned only that (by a
statement of the kernel's body itself, not under an ``if`` or a loop);
``threadIdx.y`` where block.x % 32 == 0; ``threadIdx.z`` where block.x *
block.y % 32 == 0.

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
from ..verify._divergence import warp_uniform_axes

__all__ = [
    "BLOCK_OPS",
    "GRID_OPS",
    "LOOP_FIXES",
    "WARP_OPS",
    "UniformitySummary",
    "check_uniformity",
    "with_loop_note",
]

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
#: ... and every thread of the launch (checked here as block operations: the source-level
#: levels stop at block-uniform; the compiled form tells grid from block uniformity).
GRID_OPS = frozenset({"grid.sync"})
#: ... and every lane of the warp.
WARP_OPS = frozenset(
    {"warp.sum", "warp.max", "warp.min", "warp.reduce", "warp.scan", "warp.broadcast"}
    | {
        "mma.load_a",
        "mma.load_b",
        "mma.load_b2",
        "mma.mma",
    }  # tensor cores: the warp's lanes together
)
_UNIFORM_RESULT = {
    **dict.fromkeys(("block.sum", "block.max", "block.min", "block.reduce", "block.broadcast"), U),
    **dict.fromkeys(("warp.sum", "warp.max", "warp.min", "warp.reduce", "warp.broadcast"), W),
}
_U_GEOMETRY = ("cuda.blockIdx", "cuda.blockDim", "cuda.gridDim", "cuda.warpsize", "cuda.gridsize")
_N_GEOMETRY = ("cuda.threadIdx", "cuda.laneid", "cuda.grid")


def _thread_geometry(ref: str) -> bool:
    """``ref`` names a thread-dependent geometry value (``cuda.grid(1)``, not ``cuda.gridDim``,
    which shares its prefix)."""
    return ref.startswith(_N_GEOMETRY) and not ref.startswith(_U_GEOMETRY)


#: Methods of kernel values whose result an atomic decides (an append buffer's slot).
_ATOMIC_METHODS = frozenset({"claim", "block_claim", "insert", "insert_or_find"})
#: Methods of kernel values that are block collectives (``buf.block_claim(keep)``: a
#: barrier inside). Recognised by name here for the early message and the simulator; the
#: compiled-form check knows the call by its lowering (a ``"block"`` site).
_BLOCK_METHODS = frozenset({"block_claim"})
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
    #: The worst control level under which calling the function may end the calling
    #: thread (a ``raise`` or failing ``assert``, in it or in a helper it calls): None
    #: when it never does. The default is the worst, so that a summary that was not
    #: computed (a recursive call still pending) assumes the worst.
    exits: int | None = N
    #: The first barrier or collective the source analysis could not prove uniform.
    #: Not raised here: the compiled-form check (simtsafe.verify) decides, and this
    #: finding words its message (or decides alone where no compiled form exists).
    finding: SafetyError | None = None


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
        block: tuple[int, int, int] | None = None,
    ) -> None:
        self.fn = fn
        self.warp_axes = warp_uniform_axes(block)
        self.tid_names = _tid_x_names(fn, ref_name) if "x" in self.warp_axes else frozenset()
        self.ref_name = ref_name
        self.helper_of = helper_of
        self.helper_summary = helper_summary
        self.fail = fail
        self.kernel = kernel
        self.levels: dict[str, int] = dict(param_levels)
        self.changed = False
        self.summary = UniformitySummary(exits=None)
        self.report = False  # second pass: record violations

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
            if ref in ("cuda.threadIdx.y", "cuda.threadIdx.z") and ref[-1] in self.warp_axes:
                self.summary.nonuniform_source = True
                return W
            if _thread_geometry(ref):
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
        if self.warp_number(e):
            self.summary.nonuniform_source = True
            return W
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

    def tid_x(self, e: ast.expr) -> bool:
        """``e`` is ``threadIdx.x`` itself: spelled so, converted to an integer type, or a
        local assigned nothing else (``_tid_x_names``)."""
        return _is_tid_x(e, self.ref_name, self.tid_names)

    def warp_number(self, e: ast.expr) -> bool:
        """``e`` is the same in every lane of a warp because it is ``threadIdx.x`` over 32
        or more (with the contract's block making ``threadIdx.x // 32`` warp-uniform)."""
        if "x" not in self.warp_axes:
            return False
        if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords:
            if self.ref_name(e.func) in _INT_CASTS and isinstance(e.args[0], ast.BinOp):
                inner = e.args[0]
                c = _int_constant(inner.right)
                return (
                    isinstance(inner.op, ast.Div)
                    and c is not None
                    and c >= 32
                    and c & (c - 1) == 0
                    and self.tid_x(inner.left)
                )
            return False
        if not isinstance(e, ast.BinOp) or not self.tid_x(e.left):
            return False
        c = _int_constant(e.right)
        if c is None:
            return False
        if isinstance(e.op, ast.FloorDiv):
            return c >= 32 and c & (c - 1) == 0
        if isinstance(e.op, ast.RShift):
            return 5 <= c < 64
        if isinstance(e.op, ast.BitAnd):
            return c & 31 == 0
        return False

    def arg_levels(self, e: ast.Call) -> tuple[int, ...]:
        """The levels of a helper call's arguments, parameter by parameter.

        Only positional arguments up to the first ``*args`` line up with
        parameters: a starred argument spreads over parameters the call does not
        show, so the levels stop there and the helper's remaining parameters (and
        those passed by keyword) take the worst level.
        """
        levels: list[int] = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                break
            levels.append(self.expr(a))
        return tuple(levels)

    def call(self, e: ast.Call) -> int:
        args = [*e.args, *(k.value for k in e.keywords)]
        name = self.ref_name(e.func)
        if name is not None:
            if name in _UNIFORM_RESULT:
                return _UNIFORM_RESULT[name]
            # vec.load: the compiled form does not prove runs in range (verify/_ranges)
            if name.startswith(
                ("thread.", "block.scan", "warp.scan", "vec.load", "hashing.", "mma.")
            ) or _thread_geometry(name):
                self.summary.nonuniform_source = True
                return N
            if name in _OBJECT_CTORS or name.startswith(_U_GEOMETRY):
                return U
        if isinstance(e.func, ast.Attribute) and name is None and e.func.attr in _ATOMIC_METHODS:
            # A slot won by an atomic (``buf.claim()``): differs from thread to thread.
            self.summary.nonuniform_source = True
            return N
        helper = self.helper_of(e.func)
        if helper is not None:
            summary = self.helper_summary(helper, self.arg_levels(e))
            if summary.nonuniform_source:
                self.summary.nonuniform_source = True
            return max([summary.result, *(self.expr(a) for a in args)])
        level = max((self.expr(a) for a in args), default=U)
        if isinstance(e.func, ast.Attribute) and name is None:
            level = max(level, self.expr(e.func.value))
        return level

    def iter_level(self, it: ast.expr) -> int:
        """The level of the values a ``for`` loop over ``it`` binds.

        ``range(...)`` yields its arguments' level and a tuple or list written out
        its items'; ``enumerate``/``zip`` of those, theirs. Anything else iterates
        over memory (an array's elements are loads): thread-dependent.
        """
        if isinstance(it, ast.Tuple | ast.List):
            return self.expr(it)
        if isinstance(it, ast.Call) and not it.keywords and it.args:
            if any(isinstance(a, ast.Starred) for a in it.args):
                return N
            name = self.ref_name(it.func)
            if name == "range":
                return max(self.expr(a) for a in it.args)
            if name in ("enumerate", "zip"):
                first = self.iter_level(it.args[0])
                rest = [self.expr(a) for a in it.args[1:]] if name == "enumerate" else []
                others = [self.iter_level(a) for a in it.args[1:]] if name == "zip" else []
                return max([first, *rest, *others])
        return N

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

    def bind_others(self) -> None:
        """Every name bound where the analysis does not follow the value (``with ...
        as``, ``del``, nested definitions, imports...) is thread-dependent: only
        assignments, augmented assignments, ``for`` targets and ``:=`` are followed."""
        followed: set[int] = set()
        for node in ast.walk(self.fn):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr):
                targets = [node.target]
            for t in targets:
                followed.update(id(n) for n in ast.walk(t) if isinstance(n, ast.Name))
        own_args = {id(a) for a in ast.walk(self.fn.args) if isinstance(a, ast.arg)}
        for node in ast.walk(self.fn):
            names: list[str] = []
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names = [] if id(node) in followed else [node.id]
            elif isinstance(node, ast.arg):
                names = [] if id(node) in own_args else [node.arg]
            elif isinstance(node, ast.alias):
                names = [(node.asname or node.name).split(".")[0]]
            elif isinstance(node, ast.Global | ast.Nonlocal):
                names = list(node.names)
            elif node is not self.fn and isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ):
                names = [node.name]
            elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
                names = [node.name] if node.name else []
            elif isinstance(node, ast.MatchMapping):
                names = [node.rest] if node.rest else []
            for name in names:
                self.levels[name] = N

    # ------------------------------------------------------------ statements

    def block(self, stmts: Sequence[ast.stmt], ctx: _Ctx, loop: _Ctx | None) -> _Ctx:
        """Walk statements; returns the control context after them (a non-uniform return
        anywhere makes everything after it non-uniform)."""
        for stmt in stmts:
            ctx = self.stmt(stmt, ctx, loop)
        return ctx

    def _exits(self, stmts: Sequence[ast.stmt], ctx: _Ctx, *, loop_exits: bool) -> _Ctx:
        """The worst context under which ``stmts`` may exit early (return; break/continue
        of the loop whose body this is, when ``loop_exits``; a helper that may end the
        thread)."""
        worst = _Ctx(U, None)

        def visit(body: Sequence[ast.stmt], c: _Ctx, depth: int) -> None:
            nonlocal worst
            for s in body:
                ended = self._helper_exits(s, c)
                if ended is not None and ended.level > worst.level:
                    worst = ended
                c = _after(c, ended)
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

    def _helper_exits(self, s: ast.stmt, ctx: _Ctx) -> _Ctx | None:
        """The context under which a helper called in ``s``'s own expressions (not its
        nested statements) may end the thread; None if none may. Checks nothing."""
        report, self.report = self.report, False
        try:
            return self.exprs(_own_exprs(s), ctx)
        finally:
            self.report = report

    def _cond(self, ctx: _Ctx, test: ast.expr) -> _Ctx:
        level = self.expr(test)
        name = self.ref_name(test.func) if isinstance(test, ast.Call) else None
        if name in (
            "thread.grid_stride",
            "thread.block_stride",
            "thread.block_row",
            "thread.warp_row",
        ):
            level = N  # each thread its own trip count
        elif name in ("thread.block_row_chunks", "thread.warp_row_chunks"):
            # ceil(s.shape[1] / step): the walked array's level (an early message only: the
            # compiled form derives the trip count's level from what it is computed from)
            assert isinstance(test, ast.Call)
            level = max((self.expr(a) for a in test.args), default=U)
        if level > ctx.level:
            return _Ctx(level, test.lineno)
        return ctx

    def stmt(self, s: ast.stmt, ctx: _Ctx, loop: _Ctx | None) -> _Ctx:
        if isinstance(s, ast.If | ast.For | ast.While | ast.With):
            return self.compound(s, ctx, loop)
        ended = self.exprs(_own_exprs(s), ctx)  # collectives and helper exits, in order
        if isinstance(s, ast.Assign):
            level = max(self.expr(s.value), ctx.level)
            for t in s.targets:
                self.bind(t, level)
        elif isinstance(s, ast.AugAssign | ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, max(self.expr(s.value), ctx.level))
        elif isinstance(s, ast.Return | ast.Raise):
            if isinstance(s, ast.Return) and s.value is not None:
                self.summary.result = max(self.summary.result, self.expr(s.value), ctx.level)
            if isinstance(s, ast.Raise):  # the thread ends (the caller is told: `exits`)
                self.summary.exits = _max_exit(self.summary.exits, ctx.level)
            if ctx.level > U:
                return ctx  # the threads that stay are only some of them
        elif isinstance(s, ast.Assert):
            failing = self._cond(ctx, s.test)
            self.summary.exits = _max_exit(self.summary.exits, failing.level)
            if failing.level > ctx.level:
                return _after(failing, ended)  # threads whose assert fails leave
        return _after(ctx, ended)

    def compound(
        self, s: ast.If | ast.For | ast.While | ast.With, ctx: _Ctx, loop: _Ctx | None
    ) -> _Ctx:
        head = _after(ctx, self.exprs(_own_exprs(s), ctx))
        if isinstance(s, ast.If):
            inner = self._cond(head, s.test)
            self.block(s.body, inner, loop)
            self.block(s.orelse, inner, loop)
        elif isinstance(s, ast.For | ast.While):
            cond = s.iter if isinstance(s, ast.For) else s.test
            inner = self._cond(head, cond)
            if isinstance(s, ast.For):
                self.bind(s.target, max(inner.level, self.iter_level(s.iter)))
            exits = self._exits(s.body, inner, loop_exits=True)
            if exits.level > inner.level:
                inner = exits  # threads leave or skip iterations at different times
            if isinstance(s, ast.While):  # the test runs again, for the threads still in
                inner = _after(inner, self.calls(s.test, inner))
            self.block(s.body, inner, inner)
            self.block(s.orelse, inner, loop)
        else:
            self.block(s.body, head, loop)
        # A return (raise, failing assert, exiting helper) inside, under a thread-dependent
        # condition: after this statement only some threads are left.
        returned = self._exits([s], ctx, loop_exits=False)
        if returned.level > head.level:
            return returned
        return head

    def exprs(self, es: Sequence[ast.expr], ctx: _Ctx) -> _Ctx | None:
        """``calls`` over expressions evaluated one after the other."""
        ended: _Ctx | None = None
        for e in es:
            ended = _join(ended, self.calls(e, _after(ctx, ended)))
        return ended

    def calls(self, e: ast.expr, ctx: _Ctx) -> _Ctx | None:
        """Check every collective called in ``e`` against the control context; bind
        the names ``:=`` assigns; return the context under which a helper called in
        ``e`` may end the thread (None: none may).

        Evaluation order matters: the later operands of ``and``/``or`` and the
        branches of ``x if c else y`` run only for the threads the earlier
        operands (the condition) select, so they are checked under it; what runs
        after a helper that may end some threads runs for the others only.
        """
        if isinstance(e, ast.BoolOp):
            inner = ctx
            ended: _Ctx | None = None
            for value in e.values:
                now = self.calls(value, inner)
                ended = _join(ended, now)
                inner = self._cond(_after(inner, now), value)
            return ended
        if isinstance(e, ast.Compare) and len(e.comparators) > 1:
            # `a < b < c` is `a < b and b < c`: operand k + 2 runs only where link k held.
            operands = [e.left, *e.comparators]
            inner = ctx
            ended = None
            for k, value in enumerate(operands):
                if k >= 2:
                    link = ast.Compare(operands[k - 2], [e.ops[k - 2]], [operands[k - 1]])
                    inner = self._cond(inner, ast.copy_location(link, e))
                now = self.calls(value, inner)
                ended = _join(ended, now)
                inner = _after(inner, now)
            return ended
        if isinstance(e, ast.IfExp):
            ended = self.calls(e.test, ctx)
            inner = self._cond(_after(ctx, ended), e.test)
            ended = _join(ended, self.calls(e.body, inner))
            return _join(ended, self.calls(e.orelse, inner))
        children = [c.value if isinstance(c, ast.keyword) else c for c in ast.iter_child_nodes(e)]
        ended = self.exprs([c for c in children if isinstance(c, ast.expr)], ctx)
        here = _after(ctx, ended)
        if isinstance(e, ast.NamedExpr):
            self.bind(e.target, max(self.expr(e.value), here.level))
        if isinstance(e, ast.Call):
            ended = _join(ended, self._call(e, here))
        return ended

    def _call(self, node: ast.Call, ctx: _Ctx) -> _Ctx | None:
        name = self.ref_name(node.func)
        helper = self.helper_of(node.func) if name is None else None
        block_op = name in BLOCK_OPS or name in GRID_OPS
        warp_op = name in WARP_OPS
        ended: _Ctx | None = None
        if helper is not None:
            summary = self.helper_summary(helper, self.arg_levels(node))
            block_op = summary.block_op_line is not None
            warp_op = summary.warp_op_line is not None
            if summary.exits is not None:  # some threads may end inside it
                ended = ctx if summary.exits <= ctx.level else _Ctx(summary.exits, node.lineno)
                self.summary.exits = _max_exit(self.summary.exits, ended.level)
        if name in ("block.reduce", "warp.reduce"):
            self._reduce_op(node, name)
        if name is None and isinstance(node.func, ast.Attribute):
            if node.func.attr in _BLOCK_METHODS:  # buf.block_claim(keep)
                block_op = True
                name = ast.unparse(node.func)
        if block_op:
            self.summary.block_op_line = self.summary.block_op_line or node.lineno
            if self.report and ctx.level > U:
                scope = "grid" if name in GRID_OPS else "block"
                self._diverges(node, name or f"helper {ast.unparse(node.func)}", scope, ctx)
        elif warp_op:
            self.summary.warp_op_line = self.summary.warp_op_line or node.lineno
            if self.report and ctx.level > W:
                self._diverges(node, name or f"helper {ast.unparse(node.func)}", "warp", ctx)
        return ended

    def _reduce_op(self, node: ast.Call, name: str) -> None:
        """A helper given as the ``op`` of a reduction runs inside the shuffle tree (on
        the lanes whose partner exists) and again in every thread's fold of the warp
        totals: it must hold no barrier or collective, end no thread, and give the same
        result in every thread for the same arguments."""
        op = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "op"), None)
        )
        if op is None or not self.report:
            return
        helper = self.helper_of(op)
        if helper is None:
            return
        summary = self.helper_summary(helper, (U, U))
        what = ""
        if summary.block_op_line is not None or summary.warp_op_line is not None:
            what = (
                "holds a barrier or collective; the reduction calls it on some lanes only "
                "(those whose shuffle partner exists)"
            )
        elif summary.exits is not None:
            what = "may raise (or fail an assert), which would end some threads mid-reduction"
        elif summary.result > U:
            what = (
                "gives a thread-dependent result for the same arguments (it reads threadIdx, "
                "a lane id, a witness or memory), and every thread folds the totals itself, "
                "so the threads would get different 'reductions'"
            )
        if what:
            self._record(
                op,
                f"the `op` of {name}, helper {ast.unparse(op)}, {what}. Pass an op that "
                f"computes its result from its two arguments alone (operator.add, max, or a "
                f"helper without barriers, collectives, raise/assert or thread-dependent reads)",
                "uniformity",
            )

    def _record(self, node: ast.AST, message: str, rule: str) -> None:
        if self.summary.finding is None:
            self.summary.finding = self.fail(node, message, rule)

    def _diverges(self, node: ast.Call, what: str, scope: str, ctx: _Ctx) -> None:
        where = f"line {ctx.why}" if ctx.why is not None else "an earlier line"
        self._record(
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
        self.bind_others()
        for _ in range(20):  # fixed point over variable levels (monotone, few variables)
            self.changed = False
            self.block(self.fn.body, _Ctx(), None)
            if not self.changed:
                break
        self.report = True
        self.block(self.fn.body, _Ctx(), None)
        return self.summary


#: Conversions that keep ``threadIdx.x`` (in [0, 1024)) as it is.
_INT_CASTS = frozenset(
    {"int", "np.int16", "np.int32", "np.int64", "np.uint16", "np.uint32", "np.uint64", "np.intp"}
)


def _int_constant(e: ast.expr) -> int | None:
    """An int literal (``32``, ``~31``, ``-32``), else None."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert | ast.USub):
        inner = _int_constant(e.operand)
        if inner is None:
            return None
        return ~inner if isinstance(e.op, ast.Invert) else -inner
    return None


def _is_tid_x(
    e: ast.expr, ref_name: Callable[[ast.expr], str | None], names: frozenset[str] = frozenset()
) -> bool:
    """``e`` is ``cuda.threadIdx.x``, one of ``names`` (locals holding it), or either
    converted to an integer type (``_INT_CASTS``)."""
    for _depth in range(8):
        if isinstance(e, ast.Name) and e.id in names:
            return True
        if isinstance(e, ast.Attribute | ast.Name) and ref_name(e) == "cuda.threadIdx.x":
            return True
        if not (isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords):
            return False
        if ref_name(e.func) not in _INT_CASTS:
            return False
        e = e.args[0]
    return False


def _tid_x_names(fn: ast.FunctionDef, ref_name: Callable[[ast.expr], str | None]) -> frozenset[str]:
    """Locals bound only by ``name = cuda.threadIdx.x`` (possibly converted to an integer
    type) in statements of the function's body itself: each holds ``threadIdx.x`` wherever
    it is read. A binding nested in an ``if``, a loop, a ``with`` or a ``try`` may not run
    in every thread (Numba gives an unbound local 0), so such a local is not one."""
    good: set[str] = set()
    bad: set[str] = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    simple: set[int] = set()  # the Name targets of ``name = value``, judged by their value
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                simple.add(id(target))
                (good if _is_tid_x(stmt.value, ref_name) else bad).add(target.id)
    for node in ast.walk(fn):
        if id(node) in simple:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bad.add(node.id)  # any other binding: a tuple target, a loop variable, walrus...
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bad.update(node.names)
    return frozenset(good - bad)


def _after(ctx: _Ctx, ended: _Ctx | None) -> _Ctx:
    """The control context once some threads may have ended under ``ended``."""
    return ended if ended is not None and ended.level > ctx.level else ctx


def _join(a: _Ctx | None, b: _Ctx | None) -> _Ctx | None:
    if a is None or (b is not None and b.level > a.level):
        return b
    return a


def _max_exit(exits: int | None, level: int) -> int:
    return level if exits is None else max(exits, level)


def _own_exprs(s: ast.stmt) -> list[ast.expr]:
    """The expressions ``s`` itself evaluates (not those of its nested statements),
    in evaluation order (an assignment's value before its targets)."""
    if isinstance(s, ast.If | ast.While):
        return [s.test]
    if isinstance(s, ast.For):
        return [s.iter]
    if isinstance(s, ast.With):
        return [
            e for item in s.items for e in (item.context_expr, item.optional_vars) if e is not None
        ]
    if isinstance(s, ast.Assign):
        return [s.value, *s.targets]
    if isinstance(s, ast.AugAssign | ast.AnnAssign):
        return [e for e in (s.value, s.target) if e is not None]
    return [c for c in ast.iter_child_nodes(s) if isinstance(c, ast.expr)]


def check_uniformity(
    fn: ast.FunctionDef,
    *,
    ref_name: Callable[[ast.expr], str | None],
    helper_of: Callable[[ast.expr], Any],
    helper_summary: Callable[[Any, tuple[int, ...]], UniformitySummary],
    param_levels: dict[str, int],
    fail: Callable[[ast.AST, str, str], SafetyError],
    kernel: str,
    block: tuple[int, int, int] | None = None,
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
        block: a kernel's exact block (its contract's, which every checked launch
            has), or None: what makes the warp's number warp-uniform.

    The first barrier or collective under control flow it cannot prove
    uniform is recorded as the summary's ``finding`` (``rule="uniformity"``,
    naming its line and the condition's), not raised.
    """
    return _Analysis(
        fn,
        ref_name=ref_name,
        helper_of=helper_of,
        helper_summary=helper_summary,
        param_levels=param_levels,
        fail=fail,
        kernel=kernel,
        block=block,
    ).run()


#: A witness loop whose trip count is each thread's own -> (why the threads' counts differ,
#: the loop that gives every thread the same count, for a collective each round).
LOOP_FIXES = {
    "thread.grid_stride": (
        "thread i of the grid runs ceil((n - i) / stride) rounds: where the array ends, some "
        "threads of a warp or block run one round fewer than the others",
        "loop the same number of times in every thread and guard the read: `stride = "
        "cuda.gridsize(1)`, `i = cuda.grid(1)`, `for _ in range((n + stride - 1) // stride):` "
        "then `v = x[i] if i < n else <a value that changes nothing>` and `i += stride` at the "
        "end of the body (docs/atomics.md, 'Block claims')",
    ),
    "thread.block_row": (
        "thread t walks ceil((s.shape[1] - t) / blockDim.x) columns of the row",
        "walk the row with `for c in thread.block_row_chunks(s):` (ceil(s.shape[1] / "
        "blockDim.x) chunks in every thread; past the row's end `c.valid` is False, reads give "
        "0: docs/cooperation.md)",
    ),
    "thread.warp_row": (
        "lane l walks ceil((s.shape[1] - l) / 32) columns of its warp's row",
        "walk the row with `for c in thread.warp_row_chunks(s):` (ceil(s.shape[1] / 32) "
        "chunks in every lane; past the row's end `c.valid` is False, reads give 0: "
        "docs/cooperation.md)",
    ),
}


def with_loop_note(exc: SafetyError, loops: Sequence[tuple[str, int, int, str]]) -> SafetyError:
    """A uniformity refusal at a line inside one of ``loops`` (filename, first line, last
    line, witness constructor of ``LOOP_FIXES``), told what that loop does to the trip count
    and the loop to write instead; any other error unchanged.

    The compiled form names the loop's exit as a line; the user wrote `thread.grid_stride`
    there, and the fix is a loop of another shape, not moving the call.
    """
    if exc.rule != "uniformity" or exc.lineno is None:
        return exc
    inside = [
        loop for loop in loops if loop[0] == exc.filename and loop[1] <= exc.lineno <= loop[2]
    ]
    if not inside:
        return exc
    _, line, _, api = max(inside, key=lambda loop: loop[1])  # the innermost
    why, fix = LOOP_FIXES[api]
    note = (
        f"{'' if exc.message.endswith('.') else '.'} The call is inside `for ... in {api}(...)` "
        f"at line {line}, whose trip count differs between threads ({why}), so no collective "
        f"in its body is reached by every thread the same number of times. For a collective "
        f"each round, {fix}"
    )
    fields = {k: v for k, v in exc.fields.items() if k != "kernel"}
    return type(exc)(
        exc.message + note,
        kernel=exc.kernel,
        rule=exc.rule,
        filename=exc.filename,
        lineno=exc.lineno,
        source_line=exc.source_line,
        **fields,
    )
