"""Decoration-time check and rewrite of a kernel's (or device helper's) source.

One pass over the function's AST, with the function's globals to resolve
names to the objects they denote:

* checks the lexical rules: gated ``numba.cuda`` operations (shared memory,
  barriers, warp intrinsics, atomics, fences) and ``.unchecked`` only inside
  ``with simtsafe.unsafe("SAFETY: ...")``, with a non-empty reason; witness
  constructors only called directly (``grid_stride`` only as a ``for``
  iterable); no private ``__ss_*`` names; no raw ``numba.cuda.jit`` device
  functions (their bodies escape these checks); kernels return nothing;
* rewrites: strips the ``with simtsafe.unsafe`` markers (Numba cannot
  compile them), binds ``thread.*`` calls to the private intrinsics of the
  kernel's proven domain, expands ``grid_stride`` into a plain range loop
  that mints one witness per iteration, wraps a device helper's returns in
  a witness guard, and prepends the view prologue (plain array parameter ->
  ``DisjointSlice`` / read-only input) and the ``.reqntid`` stamp.

Line numbers are kept, so Numba's errors and the simulator's tracebacks
point at the user's file and line.
"""

from __future__ import annotations

import ast
import builtins as _py_builtins
import inspect
import linecache
import textwrap
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._errors import SafetyError, UnsafeRegionRequired
from .._unsafe import check_reason

__all__ = ["ParamView", "Rewritten", "rewrite"]

#: Witness constructors that belong to one launch rank: refused in a kernel whose
#: contract proves another (``index_3d`` is unique in any launch, but a contract
#: that says ``domain=1`` or ``2`` and a 3D witness contradict each other).
_WITNESS_SPACE_CTORS = {"index_1d": 1, "index_2d": 2, "index_3d": 3, "grid_stride": 1}


@dataclass(frozen=True)
class ParamView:
    """How the prologue turns one plain array parameter into its view."""

    name: str
    view: str  # "in" or an index-space name ("Index1D", "Index2D", "Index3D", "PerWarp", ...)


@dataclass(frozen=True)
class UnsafeRegion:
    """One ``with simtsafe.unsafe(...)`` block: where, and the author's reason."""

    filename: str
    lineno: int
    reason: str


@dataclass
class Rewritten:
    """The result of :func:`rewrite`."""

    function: types.FunctionType
    unsafe_regions: list[UnsafeRegion] = field(default_factory=list)
    source: str = ""


@dataclass(frozen=True)
class _Env:
    kernel: str
    kind: Literal["kernel", "device"]
    domain: int | None
    filename: str
    globals: dict[str, Any]
    is_gated: Callable[[Any, str], bool]
    forbidden: Callable[[Any], tuple[str, str] | None]
    cuda_module: Any


_MISSING = object()


def _source_tree(fn: types.FunctionType, kernel: str) -> tuple[ast.FunctionDef, str, str]:
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SafetyError(
            f"simtsafe needs the source of {kernel!r} to check it, but it is not available "
            f"({exc}); define kernels in a .py file",
            kernel=kernel,
            rule="source",
        ) from None
    src = textwrap.dedent("".join(lines))
    tree = ast.parse(src)
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise SafetyError(
            f"{kernel!r} must be a plain `def` function (async functions and lambdas cannot be "
            "kernels)",
            kernel=kernel,
            rule="source",
        )
    return node, src, inspect.getsourcefile(fn) or fn.__code__.co_filename


class _Checker(ast.NodeTransformer):
    """Checks the rules and rewrites in one walk (see module docstring)."""

    def __init__(self, env: _Env, local_names: set[str]) -> None:
        self.env = env
        self.locals = local_names
        self.unsafe_depth = 0
        self.regions: list[UnsafeRegion] = []
        self._allowed_calls: set[int] = set()  # ids of func nodes that are direct call targets
        self._grid_stride_ok: set[int] = set()

    # ------------------------------------------------------------------ helpers

    def _fail(
        self, node: ast.AST, message: str, rule: str, cls: type[SafetyError] = SafetyError
    ) -> SafetyError:
        lineno = getattr(node, "lineno", None)
        line = linecache.getline(self.env.filename, lineno) if lineno else None
        return cls(
            f"kernel {self.env.kernel!r}: {message}",
            kernel=self.env.kernel,
            rule=rule,
            filename=self.env.filename,
            lineno=lineno,
            source_line=line or None,
        )

    def _resolve(self, node: ast.expr) -> tuple[Any, Any, str | None]:
        """(object, parent object, last attribute) an expression names, or (_MISSING, ...)."""
        chain: list[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name) or cur.id in self.locals:
            return _MISSING, None, None
        if cur.id in self.env.globals:
            obj = self.env.globals[cur.id]
        elif hasattr(_py_builtins, cur.id):
            obj = getattr(_py_builtins, cur.id)
        else:
            return _MISSING, None, None
        parent: Any = None
        attr: str | None = None
        for name in reversed(chain):
            if obj is self.env.cuda_module and self.env.is_gated(obj, name):
                return _GATED, obj, name
            parent, attr = obj, name
            obj = getattr(obj, name, _MISSING)
            if obj is _MISSING:
                return _MISSING, parent, attr
        return obj, parent, attr

    def _check_reference(self, node: ast.expr) -> ast.expr | None:
        """Apply the rules to a Name/Attribute reference; maybe return a replacement."""
        obj, parent, attr = self._resolve(node)
        if obj is _MISSING:
            return None
        if obj is _GATED or self.env.is_gated(obj, ""):
            if self.unsafe_depth == 0:
                what = ast.unparse(node)
                raise self._fail(
                    node,
                    f'`{what}` is allowed only inside `with simtsafe.unsafe("SAFETY: ..."):` '
                    "(shared memory, barriers, warp intrinsics, fences and atomics can break "
                    "the disjoint-write guarantee). Wrap the code in such a block and state why "
                    "it is sound",
                    "unsafe-op",
                    UnsafeRegionRequired,
                )
            return None
        builtin = getattr(obj, "__simtsafe_builtin__", None)
        if isinstance(builtin, str) and builtin != "unsafe":
            if id(node) not in self._allowed_calls:
                how = (
                    "as the iterable of a `for` loop: `for w in thread.grid_stride(out):`"
                    if builtin == "grid_stride"
                    else f"directly: `w = thread.{builtin}()`"
                )
                raise self._fail(node, f"use thread.{builtin} only {how}", "witness-ctor")
            if builtin == "grid_stride" and id(node) not in self._grid_stride_ok:
                raise self._fail(
                    node,
                    "thread.grid_stride(...) is allowed only as the iterable of a `for` loop: "
                    "`for w in thread.grid_stride(out): out[w] = ...`",
                    "witness-ctor",
                )
            needed = _WITNESS_SPACE_CTORS.get(builtin)
            if needed is not None and self.env.domain not in (None, needed):
                raise self._fail(
                    node,
                    f"thread.{builtin}() needs a {needed}D launch, but the launch contract has "
                    f"domain={self.env.domain}; use the witness of the contract's domain, or "
                    f"change the contract to domain={needed}",
                    "witness-domain",
                )
            return ast.copy_location(ast.Name(id=f"__ss_{builtin}", ctx=ast.Load()), node)
        if getattr(obj, "__simtsafe_kernel__", False):
            raise self._fail(
                node,
                f"a kernel cannot launch or call another kernel ({ast.unparse(node)}); move the "
                "shared code into a @simtsafe.device helper",
                "nested-kernel",
            )
        if any(obj is f for f in _DYNAMIC_BUILTINS):
            raise self._fail(
                node,
                f"`{ast.unparse(node)}` is not allowed in kernels: name attributes and values "
                "directly, so that every access can be checked",
                "dynamic-access",
            )
        verdict = self.env.forbidden(obj)
        if verdict is not None:
            rule, reason = verdict
            raise self._fail(node, f"`{ast.unparse(node)}` {reason}", rule)
        return None

    # ------------------------------------------------------------------ visitors

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id.startswith("__ss_"):
            raise self._fail(node, f"the name {node.id!r} is reserved for simtsafe", "private-name")
        if isinstance(node.ctx, ast.Load):
            replacement = self._check_reference(node)
            if replacement is not None:
                return replacement
        return node

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "unchecked" and self.unsafe_depth > 0 and isinstance(node.ctx, ast.Load):
            # The raw view exists only through this rewrite: `unchecked` is no attribute
            # of a DisjointSlice for Numba, so getattr() and aliases cannot reach it.
            return ast.copy_location(
                ast.Call(
                    func=ast.Name(id="__ss_unchecked", ctx=ast.Load()),
                    args=[self.visit(node.value)],
                    keywords=[],
                ),
                node,
            )
        if node.attr == "unchecked" and self.unsafe_depth == 0:
            raise self._fail(
                node,
                f"`{ast.unparse(node)}` writes without a witness; it is allowed only inside "
                '`with simtsafe.unsafe("SAFETY: ..."):` with a reason why no two threads write '
                "the same element",
                "unsafe-op",
                UnsafeRegionRequired,
            )
        if isinstance(node.ctx, ast.Load):
            replacement = self._check_reference(node)
            if replacement is not None:
                return replacement
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        self._allowed_calls.add(id(node.func))
        self.generic_visit(node)
        return node

    def visit_For(self, node: ast.For) -> Any:
        it = node.iter
        if isinstance(it, ast.Call):
            obj, _, _ = self._resolve(it.func)
            if getattr(obj, "__simtsafe_builtin__", None) == "grid_stride":
                return self._expand_grid_stride(node, it)
        self.generic_visit(node)
        return node

    def _expand_grid_stride(self, node: ast.For, it: ast.Call) -> list[ast.stmt]:
        """``for w in thread.grid_stride(s): body`` -> a range loop minting one witness per step.

        The same loop a raw grid-stride kernel has (measured: same PTX
        loads/stores, same bandwidth); the witness is minted from the loop
        index, so it is this thread's and, like any witness, bounds-checked.
        """
        if len(it.args) != 1 or it.keywords:
            raise self._fail(
                it, "thread.grid_stride takes exactly one argument: the slice", "witness-ctor"
            )
        if not isinstance(node.target, ast.Name):
            raise self._fail(
                node, "bind grid_stride's witness to a plain name: `for w in ...`", "witness-ctor"
            )
        self._allowed_calls.add(id(it.func))
        self._grid_stride_ok.add(id(it.func))
        self._check_reference(it.func)  # domain rule
        target = self.visit(it.args[0])
        k = f"__ss_k{node.lineno}_{node.col_offset}"
        loop = ast.parse(
            f"for {k} in range(__ss_gs_start(), __ss_extent(__ss_target), __ss_gs_step()):\n"
            f"    {node.target.id} = __ss_mint_1d({k})\n"
        ).body[0]
        assert isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call)
        for child in ast.walk(loop):
            ast.copy_location(child, node)
        extent = loop.iter.args[1]
        assert isinstance(extent, ast.Call)
        extent.args[0] = target
        loop.body.extend(_flatten([self.visit(stmt) for stmt in node.body]))
        loop.orelse = _flatten([self.visit(stmt) for stmt in node.orelse])
        return [loop]

    def visit_With(self, node: ast.With) -> Any:
        reasons: list[str] = []
        for item in node.items:
            call = item.context_expr
            obj = _MISSING
            if isinstance(call, ast.Call):
                obj, _, _ = self._resolve(call.func)
            if getattr(obj, "__simtsafe_builtin__", None) != "unsafe":
                raise self._fail(
                    node,
                    'the only `with` allowed in a kernel is `with simtsafe.unsafe("SAFETY: ...")`',
                    "with",
                )
            assert isinstance(call, ast.Call)
            if item.optional_vars is not None:
                raise self._fail(node, "write `with simtsafe.unsafe(...):` without `as`", "with")
            if (
                len(call.args) != 1
                or call.keywords
                or not isinstance(call.args[0], ast.Constant)
                or not isinstance(call.args[0].value, str)
            ):
                raise self._fail(
                    node,
                    "simtsafe.unsafe() takes one string literal: the reason, e.g. "
                    'simtsafe.unsafe("SAFETY: every thread writes its own tile[ty, tx]")',
                    "unsafe-reason",
                )
            try:
                reasons.append(check_reason(call.args[0].value))
            except ValueError as exc:
                raise self._fail(node, str(exc), "unsafe-reason") from None
        for reason in reasons:
            self.regions.append(UnsafeRegion(self.env.filename, node.lineno, reason))
        self.unsafe_depth += 1
        try:
            body = _flatten([self.visit(stmt) for stmt in node.body])
        finally:
            self.unsafe_depth -= 1
        return body

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        raise self._fail(node, "async code cannot run in a kernel", "with")

    def visit_Return(self, node: ast.Return) -> Any:
        if node.value is None:
            return node
        if self.env.kind == "kernel":
            raise self._fail(
                node, "a kernel returns nothing; write results into a DisjointSlice", "return"
            )
        value = self.visit(node.value)
        node.value = ast.copy_location(
            ast.Call(
                func=ast.Name(id="__ss_no_witness", ctx=ast.Load()), args=[value], keywords=[]
            ),
            node.value,
        )
        return node


_GATED = object()

#: Builtins that would reach attributes or names the checks cannot see.
_DYNAMIC_BUILTINS = tuple(
    getattr(_py_builtins, n)
    for n in (
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "eval",
        "exec",
        "compile",
        "__import__",
    )
)


#: numba.cuda namespaces whose results are raw arrays (the taint sources, with `.unchecked`).
_ARRAY_SOURCES = frozenset({"shared", "local", "const"})


class _EscapeCheck(ast.NodeVisitor):
    """Raw arrays obtained inside an unsafe region may be used only inside one.

    `raw = out.unchecked` or `tile = cuda.shared.array(...)` inside
    `with simtsafe.unsafe(...)` bind a name to an array that can be written
    without a witness; a use of that name outside every unsafe region would
    escape the region's stated reason. Flow-insensitive: a name bound to such
    a value anywhere in the function is checked at every use.
    """

    def __init__(self, checker: _Checker) -> None:
        self.c = checker
        self.depth = 0
        self.sources: dict[str, int] = {}
        self.outside: list[ast.Name] = []

    def _is_unsafe_region(self, node: ast.With) -> bool:
        return all(
            isinstance(item.context_expr, ast.Call)
            and getattr(self.c._resolve(item.context_expr.func)[0], "__simtsafe_builtin__", None)
            == "unsafe"
            for item in node.items
        )

    def _raw_array(self, expr: ast.expr) -> bool:
        cuda = self.c.env.cuda_module
        sources = {id(getattr(cuda, n)) for n in _ARRAY_SOURCES if hasattr(cuda, n)}
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Attribute) and sub.attr == "unchecked":
                return True
            if isinstance(sub, ast.Name | ast.Attribute):
                obj, parent, attr = self.c._resolve(sub)
                if obj is _GATED and attr in _ARRAY_SOURCES:
                    return True
                if id(obj) in sources or (parent is not None and id(parent) in sources):
                    return True
        return False

    def visit_With(self, node: ast.With) -> None:
        unsafe = self._is_unsafe_region(node)
        self.depth += unsafe
        self.generic_visit(node)
        self.depth -= unsafe

    def _bind(self, targets: Sequence[ast.expr], value: ast.expr | None, lineno: int) -> None:
        if not (self.depth and value is not None and self._raw_array(value)):
            return
        pending = list(targets)
        while pending:  # names bound by the assignment (not `x[i] = ...` or `x.a = ...`)
            target = pending.pop()
            if isinstance(target, ast.Name):
                self.sources.setdefault(target.id, lineno)
            elif isinstance(target, ast.Tuple | ast.List):
                pending.extend(target.elts)
            elif isinstance(target, ast.Starred):
                pending.append(target.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._bind(node.targets, node.value, node.lineno)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._bind([node.target], node.value, node.lineno)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind([node.target], node.value, node.lineno)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and not self.depth:
            self.outside.append(node)

    def check(self, fn_node: ast.FunctionDef) -> None:
        for stmt in fn_node.body:
            self.visit(stmt)
        for use in self.outside:
            line = self.sources.get(use.id)
            if line is not None:
                raise self.c._fail(
                    use,
                    f"`{use.id}` holds a raw array obtained inside an unsafe region (line {line}: "
                    "an `.unchecked` view or a shared/local/const array) and is used outside "
                    'every `with simtsafe.unsafe("SAFETY: ..."):` block; keep each use inside '
                    "such a block, where its reason covers it",
                    "unsafe-escape",
                    UnsafeRegionRequired,
                )


def _flatten(stmts: Sequence[Any]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, list):
            out.extend(s)
        elif s is not None:
            out.append(s)
    return out


def _local_names(fn_node: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn_node.args.args}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.Lambda) and node is not fn_node:
            args = node.args
            names.update(a.arg for a in args.args + args.kwonlyargs + args.posonlyargs)
    return names


def rewrite(
    fn: types.FunctionType,
    *,
    kernel: str,
    kind: Literal["kernel", "device"],
    domain: int | None,
    views: Sequence[ParamView],
    exact_block: tuple[int, int, int] | None,
    namespace: dict[str, Any],
    is_gated: Callable[[Any, str], bool],
    forbidden: Callable[[Any], tuple[str, str] | None],
    cuda_module: Any,
) -> Rewritten:
    """Check ``fn`` and build the function Numba will compile.

    Args:
        fn: the user's function.
        kernel: its name, for messages.
        kind: ``"kernel"`` (gets the view prologue) or ``"device"`` (helper).
        domain: the contract's proven launch rank, or None.
        views: the parameters that get a view in the prologue (kernels only).
        exact_block: the contract's exact block, stamped as ``.reqntid``.
        namespace: the globals the rewritten function is executed with
            (the user's globals plus the ``__ss_*`` builtins).
        is_gated: ``is_gated(obj, attr)`` says whether ``obj`` (or attribute
            ``attr`` of the ``numba.cuda`` module) needs an unsafe region.
        forbidden: for an object a kernel refers to, (rule, reason) why it may
            not (a raw Numba-compiled function, simtsafe internals), or None.
        cuda_module: the ``numba.cuda`` module object.

    Raises:
        SafetyError: the function breaks a rule; the message names the line.
    """
    if fn.__code__.co_freevars:
        raise SafetyError(
            f"kernel {kernel!r} closes over local variables {fn.__code__.co_freevars}; kernels "
            "and device helpers must be module-level functions: make those values module "
            "globals or parameters",
            kernel=kernel,
            rule="closure",
        )
    fn_node, src, filename = _source_tree(fn, kernel)
    args = fn_node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        raise SafetyError(
            f"kernel {kernel!r}: parameters must be plain positional names (no defaults, *args, "
            "**kwargs or keyword-only parameters)",
            kernel=kernel,
            rule="signature",
            filename=filename,
            lineno=fn_node.lineno,
        )
    env = _Env(
        kernel=kernel,
        kind=kind,
        domain=domain,
        filename=filename,
        globals=fn.__globals__,
        is_gated=is_gated,
        forbidden=forbidden,
        cuda_module=cuda_module,
    )
    checker = _Checker(env, _local_names(fn_node))
    _EscapeCheck(checker).check(fn_node)
    fn_node.body = _flatten([checker.visit(stmt) for stmt in fn_node.body])
    fn_node.decorator_list = []
    fn_node.returns = None
    for a in fn_node.args.args:
        a.annotation = None

    prologue: list[ast.stmt] = []
    if exact_block is not None:
        x, y, z = exact_block
        prologue.append(ast.parse(f"__ss_require_block({x}, {y}, {z})").body[0])
    for v in views:
        helper = "__ss_view_in" if v.view == "in" else f"__ss_view_{v.view}"
        prologue.append(ast.parse(f"{v.name} = {helper}({v.name})").body[0])
    for stmt in prologue:
        for child in ast.walk(stmt):
            ast.copy_location(child, fn_node)
    if not fn_node.body:
        fn_node.body = [ast.copy_location(ast.Pass(), fn_node)]
    fn_node.body = prologue + fn_node.body

    module = ast.Module(body=[fn_node], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    exec(code, namespace)
    # exec bound the new function under its name; drop that binding: when the
    # namespace is filled from the user's globals, the name means what it means
    # there (the Kernel, or the helper's compiled target for recursion).
    new_fn = namespace.pop(fn_node.name)
    new_fn.__qualname__ = fn.__qualname__
    new_fn.__module__ = fn.__module__
    new_fn.__doc__ = fn.__doc__
    return Rewritten(function=new_fn, unsafe_regions=checker.regions, source=src)
