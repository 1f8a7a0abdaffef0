"""Check and rewrite a kernel's (or device helper's) source against a scope.

One walk over the function's AST. Every name and attribute chain the code
refers to is resolved in ``scope`` (the module globals, plus closure values)
and classified by the allow-list (``_policy``); the walk then applies the
rules of its use:

* gated ``numba.cuda`` operations only called directly, inside
  ``with simtsafe.unsafe("SAFETY: ...")`` with a non-empty literal reason;
  ``.unchecked`` likewise; raw values obtained there never used outside
  (``_taint``);
* witness constructors only called directly (``grid_stride`` only as a
  ``for`` iterable), of the contract's domain; no ``__ss_*`` names;
* functions only called, never passed around as values; numpy ufuncs with
  their inputs only, and only those simtsafe compiles (``lowering._ufuncs``);
  modules only as the head of an attribute chain; attributes of local values
  from a short list (``shape``, ``size``...);
* no imports, nested functions, lambdas, comprehensions, classes,
  ``global``/``nonlocal``; kernels return nothing.

The rewrite strips the ``with simtsafe.unsafe`` markers (Numba cannot compile
them), binds ``thread.*`` calls to the private intrinsics of the kernel's
proven domain, expands ``grid_stride`` into a range loop minting one witness
per step, calls numpy ufuncs through their private scalar twins
(``__ss_ufunc_<name>``), guards a helper's returns against witnesses, replaces chains
through user modules by private names, and prepends the view prologue and
the ``.reqntid`` stamp, and joins consecutive ``fill_async`` calls into one
(``_fillpairs``). Line numbers are kept.

The same analysis runs at decoration (names not yet bound are *pending*) and
again, strictly, over the frozen scope at every compile: what Numba compiles
is exactly what was checked.
"""

from __future__ import annotations

import ast
import builtins as _py_builtins
import inspect
import linecache
import pickle
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .._errors import SafetyError, UnsafeRegionRequired
from .._unsafe import check_reason
from ..lowering._api import TIER1_FORMS
from ..lowering._construle import refused_array, snapshot
from ..lowering._ufuncs import builtin_name as ufunc_builtin
from ..lowering._ufuncs import unsupported_ufunc
from ._fillpairs import pair_fills
from ._outroutes import TENSOR_CORE_TILES, check_output_tiles
from ._phases import check_phases
from ._policy import ALLOWED_BUILTINS, LOCAL_ATTRIBUTES, Ref, Refusal, classify, resolve_chain
from ._taint import ARRAY_SOURCES, OBJECT_SOURCES, RawSource, analyze_taint
from ._uniformity import LOOP_FIXES, UniformitySummary, check_uniformity

__all__ = ["Analysis", "ParamView", "Source", "UnsafeRegion", "analyze", "parse_source"]

#: Witness constructors that belong to one launch rank: refused in a kernel whose
#: contract proves another (``index_3d`` is unique in any launch, but a contract
#: that says ``domain=1`` or ``2`` and a 3D witness contradict each other).
_WITNESS_SPACE_CTORS = {
    "index_1d": 1,
    "column": 1,
    "index_2d": 2,
    "index_3d": 3,
    "grid_stride": 1,
    "block_row": 1,
    "warp_row": 1,
    "block_row_chunks": 1,
    "warp_row_chunks": 1,
    "tile_1d": 1,
    "tile_2d": 2,
    "tile_2d_strided": 2,
}
#: Witness iterators: only the iterable of a `for` loop (expanded by the rewrite).
_FOR_ITERABLES = frozenset(
    {"grid_stride", "block_stride", "block_row", "warp_row", "block_row_chunks", "warp_row_chunks"}
)
#: simtsafe kernel API that writes without a witness: only inside ``simtsafe.unsafe``.
_GATED_API = frozenset({"vec.store_at"})
#: Output tiles whose elements a thread owns by a fixed map (``_note_out_tile``).
_COVERING_TILES = frozenset(
    {"thread.tile_1d", "thread.tile_2d", "thread.tile_2d_strided", *TENSOR_CORE_TILES}
)
#: Waits for cp.async copies: fenced in a kernel that uses wgmma.mma (see _uses_wgmma).
_COPY_WAITS = frozenset({"shared.wait_group", "shared.wait_all"})
#: Row walks: ``for w in thread.<name>(s)`` -> the ``__ss_*`` names of the loop's start,
#: bound (the walked array's ``shape[1]``), step and witness.
_ROW_WALKS = {
    "thread.block_row": ("__ss_br_start", "__ss_br_extent", "__ss_br_step", "__ss_mint_br"),
    "thread.warp_row": ("__ss_wr_start", "__ss_wr_extent", "__ss_wr_step", "__ss_mint_wr"),
}
#: Chunked row walks: ``for c in thread.<name>(s)`` -> the ``__ss_*`` names of the loop's
#: trip count (``ceil(s.shape[1] / step)``, the same in every thread) and witness.
_ROW_CHUNKS = {
    "thread.block_row_chunks": ("__ss_brc_chunks", "__ss_mint_brc"),
    "thread.warp_row_chunks": ("__ss_wrc_chunks", "__ss_mint_wrc"),
}
#: Functions a collective's `op` may be (passed as a value, the one place a function may be).
_REDUCE_OPS = frozenset(
    {"operator.add", "operator.mul", "operator.and_", "operator.or_", "operator.xor", "max", "min"}
)
_PENDING = object()

#: What follows the refusal of ``.view``: a number's bits read as another type of its width
#: (porting round 21: an fp8 encoder's ``np.float32(v).view(np.uint32)``).
_BITS_OF_A_NUMBER = (
    ". To read a number's bits as another type of its width, use the libdevice casts: "
    "`cuda.libdevice.float_as_int(v)` / `int_as_float(i)` (32 bits), "
    "`double_as_longlong(v)` / `longlong_as_double(i)` (64 bits)"
)


#: Attributes and methods of numpy arrays: on a kernel value, only LOCAL_ATTRIBUTES of these
#: (array methods can alias or write their array: .flat, .view, .T, .fill, .put...). Any other
#: name is a record field (or a Numba typing error).
_ARRAY_ATTRIBUTES = frozenset(n for n in dir(np.ndarray) if not n.startswith("_"))


@dataclass(frozen=True)
class ParamView:
    """How the prologue turns one plain array parameter into its view."""

    name: str
    view: str  # "in" or an index-space name ("Index1D", "Index2D", "Index3D", "PerWarp", ...)
    ndim: int = 1
    #: more arguments of the view's intrinsic, as source text (an AppendBuffer's: its
    #: counter parameter and its own name, the token its witnesses carry)
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnsafeRegion:
    """One ``with simtsafe.unsafe(...)`` block: where, and the author's reason."""

    filename: str
    lineno: int
    reason: str
    end_lineno: int = 0  # the last line of the region's body


@dataclass(frozen=True)
class Source:
    """A function's source, parsed once at decoration."""

    node: ast.FunctionDef
    text: str
    filename: str
    params: tuple[str, ...]


@dataclass
class Analysis:
    """The result of :func:`analyze`."""

    module: ast.Module  # the rewritten function, as a module with one def
    unsafe_regions: list[UnsafeRegion] = field(default_factory=list)
    globals_used: dict[str, Any] = field(default_factory=dict)  # name -> value in scope
    substitutes: dict[str, Any] = field(default_factory=dict)  # private name -> object
    returns_raw: bool = False
    filename: str = "<kernel>"
    uniformity: UniformitySummary = field(default_factory=UniformitySummary)
    api_used: frozenset[str] = frozenset()
    #: parameter -> run lengths ``vec.load`` reads it with (the launch checks alignment)
    vec_runs: dict[str, frozenset[int]] = field(default_factory=dict)
    #: output parameter -> (``thread.tile_*`` constructor, its static sizes): the elements
    #: a thread owns along each axis, which a ``covers`` of that output counts
    out_tiles: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    #: (first line, last line, witness constructor) of each loop whose trip count is the
    #: thread's own (``thread.grid_stride``, ``block_row``, ``warp_row``): what a refusal of a
    #: collective inside one names (``_uniformity.with_loop_note``)
    thread_loops: tuple[tuple[int, int, str], ...] = ()

    def build(self, namespace: dict[str, Any], qualname: str, module: str) -> types.FunctionType:
        """Compile the rewritten def into ``namespace`` and return the function."""
        fn_node = self.module.body[0]
        assert isinstance(fn_node, ast.FunctionDef)
        code = compile(self.module, self.filename, "exec")
        exec(code, namespace)
        fn = namespace.pop(fn_node.name)
        assert isinstance(fn, types.FunctionType)
        fn.__qualname__ = qualname
        fn.__module__ = module
        return fn


@dataclass(frozen=True)
class _Env:
    kernel: str
    kind: Literal["kernel", "device"]
    domain: int | None
    filename: str
    scope: Mapping[str, Any]
    strict: bool
    attributes: frozenset[str]
    helper_returns_raw: Callable[[Any, dict[int, int]], bool]
    #: The contract's tile_shared (bytes of opt-in shared memory for the tiles), or None.
    tile_window: int | None = None


def parse_source(fn: types.FunctionType, kernel: str) -> Source:
    """Read and parse ``fn``'s source, line numbers as in its file."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise SafetyError(
            f"simtsafe needs the source of {kernel!r} to check it, but it is not available "
            f"({exc}); define kernels in a .py file",
            kernel=kernel,
            rule="source",
        ) from None
    text = textwrap.dedent("".join(lines))
    tree = ast.parse(text)
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    if not isinstance(node, ast.FunctionDef):
        raise SafetyError(
            f"{kernel!r} must be a plain `def` function (async functions and lambdas cannot be "
            "kernels)",
            kernel=kernel,
            rule="source",
            filename=filename,
        )
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        raise SafetyError(
            f"kernel {kernel!r}: parameters must be plain positional names (no defaults, *args, "
            "**kwargs or keyword-only parameters)",
            kernel=kernel,
            rule="signature",
            filename=filename,
            lineno=node.lineno,
        )
    for a in args.args:
        if a.arg.startswith("__ss_"):
            raise SafetyError(
                f"kernel {kernel!r}: the parameter name {a.arg!r} is reserved for simtsafe",
                kernel=kernel,
                rule="private-name",
                filename=filename,
                lineno=node.lineno,
            )
    return Source(node, text, filename, tuple(a.arg for a in args.args))


def _local_names(fn_node: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn_node.args.args}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
    return names


def _chain(node: ast.expr) -> tuple[ast.Name, list[str]] | None:
    """(head name, attributes) of ``a.b.c``, or None if the chain does not start at a name."""
    attrs: list[str] = []
    cur = node
    while isinstance(cur, ast.Attribute):
        attrs.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    return cur, list(reversed(attrs))


def _flatten(stmts: Sequence[Any]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, list):
            out.extend(s)
        elif s is not None:
            out.append(s)
    return out


#: Lists, sets and dicts: Numba builds them only with its runtime (NRT), which CUDA kernels
#: lack (its lowering fails with a NumbaRuntimeError or an AttributeError).
_NO_HEAP = (
    "a list, dict or set needs Numba's runtime, which CUDA kernels do not have: hold a few "
    "values in a tuple, `(a, b)`, and a thread-private array in `cuda.local.array(n, dtype)` "
    "(n a constant)"
)

#: A starred assignment target: Numba's bytecode front end has no UNPACK_EX (it raised its
#: own UnsupportedBytecodeError, attack round 36).
_STARRED_TARGET = (
    "a starred assignment target (`p, *q = t`) is not supported by Numba: unpack into one "
    "name per element, `p, q0, q1 = t`"
)

_FORBIDDEN_NODES: dict[type, str] = {
    ast.Import: "imports belong at module level; refer to the module's names there",
    ast.ImportFrom: "imports belong at module level; refer to the module's names there",
    ast.Global: "`global` would let a kernel rebind module names; use parameters",
    ast.Nonlocal: "`nonlocal` is not allowed in kernels",
    ast.ClassDef: "classes cannot be defined in kernels",
    ast.FunctionDef: "nested functions are not allowed in kernels; write a @simtsafe.device helper",
    ast.AsyncFunctionDef: "async code cannot run in a kernel",
    ast.Lambda: "lambdas are not allowed in kernels; write a @simtsafe.device helper",
    ast.List: _NO_HEAP,
    ast.Set: _NO_HEAP,
    ast.Dict: _NO_HEAP,
    ast.ListComp: "comprehensions are not allowed in kernels; write a loop",
    ast.SetComp: "comprehensions are not allowed in kernels; write a loop",
    ast.DictComp: "comprehensions are not allowed in kernels; write a loop",
    ast.GeneratorExp: "generator expressions are not allowed in kernels; write a loop",
    ast.Await: "async code cannot run in a kernel",
    ast.Yield: "generators cannot be kernels",
    ast.YieldFrom: "generators cannot be kernels",
    ast.Match: "`match` is not supported in kernels; use if/elif",
    ast.AsyncWith: "async code cannot run in a kernel",
    ast.AsyncFor: "async code cannot run in a kernel",
    ast.Try: "try/except is not supported in kernels",
}


class _Checker(ast.NodeTransformer):
    """Checks the rules and rewrites in one walk (see module docstring)."""

    def __init__(self, env: _Env, local_names: set[str], view_names: dict[str, str]) -> None:
        self._tiles: set[str] | None = None
        self._wgmma: bool | None = None
        self.fn_node: ast.FunctionDef | None = None
        self.env = env
        self.locals = local_names
        self.view_names = view_names  # parameter -> "in" or its index space
        #: a helper's parameters annotated as outputs (``o: DisjointSlice[REC]``), not rebound:
        #: ``o[w].field = v`` is admitted on them as on a kernel's output (_own_record_field)
        self.helper_outputs: frozenset[str] = frozenset()
        self.unsafe_depth = 0
        self.regions: list[UnsafeRegion] = []
        self.globals_used: dict[str, Any] = {}
        self.substitutes: dict[str, Any] = {}
        self._call_targets: set[int] = set()
        self._statement_calls: set[int] = set()  # calls whose value no one uses
        self._for_iterable_ok: set[int] = set()
        self._op_values: set[int] = set()
        self.api_used: set[str] = set()
        #: parameter -> run lengths it is read with by ``vec.load`` (a launch-time speed check)
        self.vec_runs: dict[str, set[int]] = {}
        self.out_tiles: dict[str, tuple[str, tuple[int, ...]]] = {}
        self.thread_loops: list[tuple[int, int, str]] = []
        self._refs: dict[int, tuple[ast.expr, Ref | None]] = {}
        self.keepalive: list[ast.AST] = []

    # ------------------------------------------------------------------ helpers

    def fail(
        self, node: ast.AST, message: str, rule: str, cls: type[SafetyError] | None = None
    ) -> SafetyError:
        lineno = getattr(node, "lineno", None)
        line = linecache.getline(self.env.filename, lineno) if lineno else None
        if cls is None:
            cls = UnsafeRegionRequired if rule in ("unsafe-op", "unsafe-escape") else SafetyError
        return cls(
            f"kernel {self.env.kernel!r}: {message}",
            kernel=self.env.kernel,
            rule=rule,
            filename=self.env.filename,
            lineno=lineno,
            source_line=line or None,
        )

    def ref_of(self, node: ast.expr) -> Ref | None:
        """The classified object a global name or chain denotes (None: a local, or pending).

        Raises:
            SafetyError: the reference leaves the allow-list.
        """
        # Keyed by id, holding the node: a node freed by the rewrite must not let a new
        # node with the same id inherit its classification.
        cached = self._refs.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        ref = self._resolve(node)
        self._refs[id(node)] = (node, ref)
        return ref

    def _resolve(self, node: ast.expr) -> Ref | None:
        found = _chain(node)
        if found is None:
            return None
        head, attrs = found
        if head.id in self.locals:
            return None
        if head.id.startswith("__ss_"):
            raise self.fail(head, f"the name {head.id!r} is reserved for simtsafe", "private-name")
        text = ast.unparse(node)
        value = self.env.scope.get(head.id, _PENDING)
        try:
            if value is _PENDING:
                if head.id in ALLOWED_BUILTINS or (
                    isinstance(getattr(_py_builtins, head.id, None), type)
                    and issubclass(getattr(_py_builtins, head.id), BaseException)
                ):
                    value = getattr(_py_builtins, head.id)
                elif hasattr(_py_builtins, head.id):
                    classify(getattr(_py_builtins, head.id), head.id)  # raises its refusal
                    raise Refusal(
                        "not-allowed",
                        "is a Python builtin that kernels cannot use; allowed builtins: "
                        + ", ".join(sorted(ALLOWED_BUILTINS)),
                    )
                else:
                    if self.env.strict:
                        raise Refusal(
                            "undefined-name",
                            f"is not defined: `{head.id}` is neither a local, a global of "
                            "the kernel's module nor an allowed builtin",
                        )
                    return None
            else:
                self.globals_used[head.id] = value
            ref = resolve_chain(value, head.id, attrs) if attrs else classify(value, head.id)
        except Refusal as refusal:
            raise self.fail(node, f"`{text}` {refusal.reason}", refusal.rule) from None
        if ref is None and self.env.strict:
            raise self.fail(node, f"`{text}` does not exist", "undefined-name")
        return ref

    # ------------------------------------------------------------------ references

    def _use(self, node: ast.expr) -> ast.expr | None:
        """Apply the rules of a reference's use; maybe return its replacement."""
        ref = self.ref_of(node)
        if ref is None:
            return None
        text = ast.unparse(node)
        called = id(node) in self._call_targets
        if ref.kind == "module":
            raise self.fail(
                node,
                f"`{text}` is a module used as a value; kernels may use a module's attributes "
                f"(`{text}.name`) but not the module itself",
                "module-value",
            )
        if ref.name == "cuda.const.array_like":  # called: rewritten by visit_Call
            raise self.fail(
                node, f"call `{text}(ARR)` directly, with a module-level array", "function-value"
            )
        if ref.kind == "gated" and ref.name == "cuda.local.array" and self.unsafe_depth == 0:
            if not called:
                raise self.fail(node, f"call `{text}(...)` directly", "function-value")
            # Tier 1: a thread-private array with bounds-checked indexing.
            return ast.copy_location(ast.Name(id="__ss_local_array", ctx=ast.Load()), node)
        if ref.kind == "gated":
            if not called:
                raise self.fail(
                    node,
                    f"`{text}` ({ref.name}) may only be called directly inside "
                    '`with simtsafe.unsafe("SAFETY: ..."):`, not bound to a name or passed on',
                    "unsafe-op",
                )
            if self.unsafe_depth == 0:
                raise self.fail(
                    node,
                    f'`{text}` is allowed only inside `with simtsafe.unsafe("SAFETY: ..."):` '
                    "(shared memory, barriers, warp intrinsics, fences and atomics can break "
                    "the disjoint-write guarantee). "
                    + (
                        f"In Tier 1, use {TIER1_FORMS[ref.name]}; or wrap"
                        if ref.name in TIER1_FORMS
                        else "Wrap"
                    )
                    + " the code in such a block and state why it is sound",
                    "unsafe-op",
                )
            self.api_used.add(ref.name)
            return None
        if ref.kind == "simtsafe":
            return self._simtsafe_builtin(node, ref)
        if id(node) in self._op_values:
            # a collective's op (checked in visit_Call); one reached through a user module
            # (`hm.op`) is bound to a private name, as a called helper is (below)
            return self._substitute(node, ref) if ref.substitute else None
        if ref.kind == "ufunc" and called:
            # The private twin decides dtype and implementation (lowering/_ufuncs): numba-cuda
            # types every ufunc but lowers only some, and would allocate for an array argument.
            return ast.copy_location(ast.Name(id=ufunc_builtin(ref.obj), ctx=ast.Load()), node)
        if ref.kind in ("device", "ufunc") and not called:
            raise self.fail(
                node,
                f"`{text}` is a function used as a value; kernels call functions directly "
                f"(`{text}(...)`)",
                "function-value",
            )
        if ref.kind == "api" and not called and callable(ref.obj):
            raise self.fail(
                node,
                f"`{text}` is a function used as a value; kernels call functions directly "
                f"(`{text}(...)`)",
                "function-value",
            )
        if ref.substitute:
            return self._substitute(node, ref)
        return None

    def _substitute(self, node: ast.expr, ref: Ref) -> ast.expr:
        """``node`` replaced by a private global bound to the object it denotes."""
        private = f"__ss_ref{len(self.substitutes)}"
        self.substitutes[private] = ref.obj
        return ast.copy_location(ast.Name(id=private, ctx=ast.Load()), node)

    def _simtsafe_builtin(self, node: ast.expr, ref: Ref) -> ast.expr | None:
        builtin = ref.name.removeprefix("thread.")
        if builtin == "unsafe":
            raise self.fail(
                node,
                'simtsafe.unsafe is used only as `with simtsafe.unsafe("SAFETY: ..."):`',
                "with",
            )
        if id(node) not in self._call_targets:
            how = (
                f"as the iterable of a `for` loop: `for w in thread.{builtin}(...):`"
                if builtin in _FOR_ITERABLES
                else f"directly: `w = thread.{builtin}()`"
                if "." not in builtin
                else f"directly: `simtsafe.{builtin}(...)`"
            )
            raise self.fail(node, f"use {ref.name} only {how}", "witness-ctor")
        if builtin in _FOR_ITERABLES and id(node) not in self._for_iterable_ok:
            raise self.fail(
                node,
                f"thread.{builtin}(...) is allowed only as the iterable of a `for` loop: "
                f"`for w in thread.{builtin}(...): ...`",
                "witness-ctor",
            )
        needed = _WITNESS_SPACE_CTORS.get(builtin)
        if needed is not None and self.env.domain not in (None, needed):
            raise self.fail(
                node,
                f"thread.{builtin}() needs a {needed}D launch, but the launch contract has "
                f"domain={self.env.domain}; use the witness of the contract's domain, or "
                f"change the contract to domain={needed}",
                "witness-domain",
            )
        if builtin in _GATED_API and self.unsafe_depth == 0:
            raise self.fail(
                node,
                f"`{ast.unparse(node)}` ({ref.name}) is allowed only inside "
                '`with simtsafe.unsafe("SAFETY: ..."):`: it writes a raw array without a '
                "witness, and nothing proves that no other thread writes the same run. Wrap the "
                "call in such a block and state why the run is this thread's alone (or write a "
                "thread's own run in Tier 1: vec.store(thread.tile_1d(out, n), values))",
                "unsafe-op",
            )
        self.api_used.add(ref.name)
        private = "__ss_" + builtin.replace(".", "_")
        if ref.name in _COPY_WAITS and self._uses_wgmma():
            # The copies a thread waited for become visible to the tensor cores' reads
            # (lowering._wgmma); verify._tilephases refuses a kernel with wgmma.mma and a
            # wait without the fence (a wait in a helper, say).
            private += "_fenced"
        return ast.copy_location(ast.Name(id=private, ctx=ast.Load()), node)

    # ------------------------------------------------------------------ visitors

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Store):
            raise self.fail(node, _STARRED_TARGET, "statement")
        reason = _FORBIDDEN_NODES.get(type(node))
        if reason is not None and not isinstance(getattr(node, "ctx", None), ast.Store):
            # (a list as an assignment target, `[a, b] = t`, unpacks: no list is built)
            raise self.fail(node, reason, "statement")
        return super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id.startswith("__ss_"):
            raise self.fail(node, f"the name {node.id!r} is reserved for simtsafe", "private-name")
        if isinstance(node.ctx, ast.Load):
            replacement = self._use(node)
            if replacement is not None:
                return replacement
        return node

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "unchecked":
            return self._unchecked(node)
        if _chain(node) is not None and self.ref_of(node) is not None:
            if not isinstance(node.ctx, ast.Load):
                raise self.fail(
                    node, f"kernels cannot assign `{ast.unparse(node)}`", "attribute-store"
                )
            replacement = self._use(node)
            return replacement if replacement is not None else node
        if _chain(node) is not None and self._is_global_chain(node):
            return node  # pending at decoration
        if node.attr.startswith("__"):
            raise self.fail(
                node,
                f"the special attribute `{node.attr}` is not allowed in kernels",
                "dynamic-access",
            )
        if node.attr not in self.env.attributes and node.attr in _ARRAY_ATTRIBUTES:
            if (
                self.env.kind == "device"
                and isinstance(node.ctx, ast.Load)
                and id(node) not in self._call_targets
            ):
                # A helper's value of unknown type (its parameters need no annotation):
                # the field of a record it was given, or an array's attribute. The type
                # Numba infers decides (lowering._fieldreads: a record's field only).
                read = ast.Call(
                    ast.Name("__ss_field", ast.Load()),
                    [self.visit(node.value), ast.Constant(node.attr)],
                    [],
                )
                return ast.fix_missing_locations(ast.copy_location(read, node))
            raise self.fail(
                node,
                f"attribute `.{node.attr}` is not allowed in kernels (array methods and "
                "attributes can alias or write their array); of the array attributes, kernel "
                "values offer "
                + ", ".join(f".{a}" for a in sorted(LOCAL_ATTRIBUTES & _ARRAY_ATTRIBUTES))
                + " (record fields are read by name)"
                + (_BITS_OF_A_NUMBER if node.attr == "view" else ""),
                "attribute",
            )
        if (
            not isinstance(node.ctx, ast.Load)
            and node.attr in ("real", "imag")
            and self._own_record_field(node)
        ):
            raise self.fail(
                node,
                f"assigning `{ast.unparse(node)}` writes one part of a complex value; a "
                "complex field is written whole: "
                f"`{ast.unparse(node.value)} = complex(re, im)`",
                "attribute-store",
            )
        if (
            not isinstance(node.ctx, ast.Load)
            and self.unsafe_depth == 0
            and not self._own_record_field(node)
        ):
            raise self.fail(
                node,
                f"assigning `{ast.unparse(node)}` writes through a reference; a record field is "
                "written as `out[w].field = v` on the thread's own element of an output "
                "(`out` a DisjointSlice: in a @simtsafe.device helper, annotate that parameter "
                "`out: DisjointSlice[...]` and pass the witness), otherwise only inside "
                '`with simtsafe.unsafe("SAFETY: ..."):`',
                "attribute-store",
            )
        node.value = self.visit(node.value)
        return node

    def _own_record_field(self, node: ast.Attribute) -> bool:
        """``out[w].field = v`` (or ``out[w].inner.field = v``, a field of a nested record):
        a field of this thread's own output element.

        The subscript of a ``DisjointSlice`` types only with a witness of its
        space (else a typing error), and an out-of-range witness yields a
        scratch record, so the store lands in the thread's element or nowhere. A nested
        record field is a reference inside the same element (an array field is refused
        by the compiled form, ``lowering._recordfields``).
        """
        target = node.value
        while isinstance(target, ast.Attribute):
            target = target.value
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            return False
        name = target.value.id  # (a parameter rebound anywhere is in neither map)
        return name in self.locals and (
            self.view_names.get(name) not in (None, "in", "acc") or name in self.helper_outputs
        )

    def _check_accumulate_result(self, node: ast.Call) -> None:
        """``acc.add(i, v)`` of an Accumulate returns nothing: a use of its value (the CUDA
        fetch-add idiom ``pos = atomicAdd(count, 1)``) is refused here, at its line, with
        the Tier-1 form of a unique slot (else Numba reports a ``none`` index where it is
        used)."""
        func = node.func
        if (
            id(node) in self._statement_calls
            or not isinstance(func, ast.Attribute)
            or func.attr not in ("add", "min", "max")
            or not isinstance(func.value, ast.Name)
            or self.view_names.get(func.value.id) != "acc"
        ):
            return
        raise self.fail(
            node,
            f"`{ast.unparse(node)}` returns nothing: an Accumulate is only updated (the old "
            "value is not returned, so two threads cannot learn distinct values from it). For "
            "a unique slot per thread (the fetch-add idiom of stream compaction) use an "
            f"AppendBuffer: w = buf.claim(), then buf[w] = v (docs/atomics.md); call "
            f"{func.value.id}.{func.attr}(...) as a statement of its own",
            "accumulate-result",
        )

    def _is_global_chain(self, node: ast.expr) -> bool:
        found = _chain(node)
        return found is not None and found[0].id not in self.locals

    def _unchecked(self, node: ast.Attribute) -> Any:
        if self.unsafe_depth == 0:
            raise self.fail(
                node,
                f"`{ast.unparse(node)}` writes without a witness; it is allowed only inside "
                '`with simtsafe.unsafe("SAFETY: ..."):` with a reason why no two threads write '
                "the same element",
                "unsafe-op",
            )
        if not isinstance(node.ctx, ast.Load):
            raise self.fail(node, "`.unchecked` cannot be assigned", "attribute-store")
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

    def _uses_wgmma(self) -> bool:
        """Does the function call ``wgmma.mma`` or ``mma_async`` (by any name that resolves
        to them)?"""
        if self._wgmma is None:
            self._wgmma = False
            body = self.fn_node.body if self.fn_node is not None else []
            for n in (n for stmt in body for n in ast.walk(stmt)):
                if not isinstance(n, ast.Call) or _chain(n.func) is None:
                    continue
                try:
                    ref = self.ref_of(n.func)
                except SafetyError:  # refused where the walk reaches it, with its message
                    continue
                if ref is not None and ref.name in ("wgmma.mma", "wgmma.mma_async"):
                    self._wgmma = True
        return self._wgmma

    def _tile_names(self) -> set[str]:
        """Names bound to a shared tile where it is made (``t = shared.tile(...)``)."""
        if self._tiles is None:
            self._tiles = set()
            for n in ast.walk(self.fn_node) if self.fn_node is not None else ():
                if (
                    isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name)
                    and isinstance(n.value, ast.Call)
                    and _chain(n.value.func) is not None
                ):
                    ref = self.ref_of(n.value.func)
                    if ref is not None and ref.name in ("shared.tile", "shared.dynamic_tile"):
                        self._tiles.add(n.targets[0].id)
        return self._tiles

    def _note_vec_run(self, node: ast.Call) -> None:
        """Remember ``vec.load(param, j, <int constant>)``: the launch checks the param's
        alignment. Speed only (the device code is sound at any alignment), so the source
        spelling may decide it; a run read through an alias or a helper is not noted."""
        if len(node.args) != 3 or not isinstance(node.args[0], ast.Name):
            return
        n = node.args[2]
        if (
            isinstance(n, ast.Constant)
            and isinstance(n.value, int)
            and node.args[0].id in (self.view_names)
        ):
            self.vec_runs.setdefault(node.args[0].id, set()).add(n.value)

    def _note_out_tile(self, node: ast.Call, ctor: str) -> None:
        """Remember ``thread.tile_*(out, sizes...)``, ``mma.out_tile(out, BM, BN, WM, WN)``
        or ``wgmma.out_tile(out, BM, BN)`` of an output parameter with sizes that are int
        literals or constants of the scope (what the tile's typing takes; anything else is
        refused there): a ``covers`` of ``out`` counts what those tiles own. The out-tile
        rule (``_outroutes``) leaves one tile call site per output, in the kernel's body.

        A ``thread.tile_*`` of another spelling is not remembered: covers counts one element
        a thread, fewer than the tile owns (the safe side). A tensor-core tile owns a block
        tile per block, which may be fewer elements than one a thread (a 16 x 16 tile of a
        64-thread block): one of another spelling is remembered without sizes, and covers
        counts nothing of it (``host/_tilecover``)."""
        if ctor in TENSOR_CORE_TILES:
            names = TENSOR_CORE_TILES[ctor]
        else:
            names = ("n",) if ctor == "thread.tile_1d" else ("tm", "tn")  # the sizes' names
        given = dict(zip(names, node.args[1:], strict=False))
        given.update(
            {k.arg: k.value for k in node.keywords if k.arg is not None and k.arg in names}
        )
        unknown = (ctor, ()) if ctor in TENSOR_CORE_TILES else None
        if not node.args or not isinstance(node.args[0], ast.Name):
            return  # not the output parameter by name: refused by the out-tile rule
        out = node.args[0].id
        if len(node.args) + len(node.keywords) != 1 + len(names) or len(given) != len(names):
            if unknown is not None:
                self.out_tiles[out] = unknown
            return
        sizes: list[int] = []
        for arg in (given[n] for n in names):
            value: Any = None
            if isinstance(arg, ast.Constant):
                value = arg.value
            elif _chain(arg) is not None:
                ref = self.ref_of(arg)
                value = ref.obj if ref is not None and ref.kind == "const" else None
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                if unknown is not None:
                    self.out_tiles[out] = unknown
                return
            sizes.append(int(value))
        self.out_tiles[out] = (ctor, tuple(sizes))

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Call):
            self._statement_calls.add(id(node.value))
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> Any:
        self._call_targets.add(id(node.func))
        self._check_accumulate_result(node)
        ref = self.ref_of(node.func) if _chain(node.func) is not None else None
        if ref is not None and ref.name == "cuda.const.array_like":
            return self._const_array(node)  # Tier 1, inside unsafe regions too
        if ref is not None and ref.kind == "device":
            # A tile given to a helper arrives as a read-only view (the phase analysis
            # counts the call as a read of the tile). Wrapped after the walk: the
            # private name is the rewrite's, not the user's.
            visited = super().generic_visit(node)
            assert isinstance(visited, ast.Call)
            for k, arg in enumerate(visited.args):
                if isinstance(arg, ast.Name) and arg.id in self._tile_names():
                    view = ast.Call(ast.Name("__ss_tile_read", ast.Load()), [arg], [])
                    visited.args[k] = ast.copy_location(view, arg)
                    ast.fix_missing_locations(visited.args[k])
            return visited
        if ref is not None and ref.kind == "simtsafe" and ref.name.endswith(".reduce"):
            self._state_keyword(node)
        if ref is not None and ref.kind == "simtsafe":
            self._check_arguments(node, ref)
        if ref is not None and ref.kind == "simtsafe" and ref.name.endswith(".reduce"):
            self._check_reduce_op(node, ref)
        if ref is not None and ref.kind == "simtsafe" and ref.name in ("vec.load", "vec.load_runs"):
            self._note_vec_run(node)
        if ref is not None and ref.kind == "simtsafe" and ref.name in _COVERING_TILES:
            self._note_out_tile(node, ref.name)
        if ref is not None and ref.kind == "ufunc":
            if (
                len(node.args) != ref.nin
                or node.keywords
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                raise self.fail(
                    node,
                    f"`{ast.unparse(node.func)}` takes exactly its {ref.nin} input(s) in kernels; "
                    "an extra `out` argument (or keywords) would write an array",
                    "ufunc-out",
                )
            refused = unsupported_ufunc(ref.obj)
            if refused is not None:
                raise self.fail(node, f"`{ast.unparse(node.func)}`: {refused}", "ufunc")
        if ref is not None and ref.name == "shared.tile" and self.env.tile_window is not None:
            # The contract's tile_shared: the tile is carved from that window of the launch's
            # dynamic shared memory at an offset fixed when the kernel compiles.
            visited = super().generic_visit(node)
            assert isinstance(visited, ast.Call)
            visited.func = ast.copy_location(ast.Name("__ss_shared_wtile", ast.Load()), node)
            window = ast.copy_location(ast.Constant(int(self.env.tile_window)), node)
            visited.args = [window, *visited.args]
            return visited
        return super().generic_visit(node)

    def _const_array(self, node: ast.Call) -> ast.expr:
        """``cuda.const.array_like(ARR)``: a Tier-1 constant array, in or out of a region.

        ``ARR`` must name a numpy array of numbers in the kernel's scope (a module global,
        or a closure value), or reach one through modules only (``tables.ARR``, ``pkg.
        tables.ARR``: each name before the last a module, by identity); the call becomes
        ``__ss_const_array(__ss_refN)`` with ``__ss_refN`` a read-only, C-ordered copy of
        it, taken here: at the freeze, the values the kernel compiles
        (lowering/_constarrays.py).
        """
        call = ast.unparse(node)
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        found = _chain(arg) if isinstance(arg, ast.Name | ast.Attribute) else None
        if found is None:
            raise self.fail(
                node,
                f"`{call}`: cuda.const.array_like takes one argument, the name of a "
                "module-level numpy array (`cuda.const.array_like(FILTER)`, or "
                "`cuda.const.array_like(tables.FILTER)` through a module)",
                "const-array",
            )
        head, attrs = found
        if head.id in self.locals or head.id.startswith("__ss_"):
            raise self.fail(
                node,
                f"`{call}`: `{head.id}` is a local name; cuda.const.array_like takes a "
                "module-level numpy array, whose values the kernel compiles in. Pass run-time "
                "data as an In[...] parameter",
                "const-array",
            )
        value = self.env.scope.get(head.id, _PENDING)
        if value is _PENDING:
            if self.env.strict:
                raise self.fail(node, f"`{head.id}` is not defined", "undefined-name")
            value = None  # bound later: checked at the freeze, where the copy is taken
        else:
            value = self._module_attribute(node, call, head.id, value, attrs)
            refused = refused_array(value)
            if refused is not None:
                raise self.fail(node, f"`{call}`: cuda.const.array_like {refused}", "const-array")
            value = snapshot(value)
        private = f"__ss_ref{len(self.substitutes)}"
        self.substitutes[private] = value
        made = ast.Call(
            ast.Name("__ss_const_array", ast.Load()), [ast.Name(private, ast.Load())], []
        )
        return ast.fix_missing_locations(ast.copy_location(made, node))

    def _module_attribute(
        self, node: ast.Call, call: str, head: str, value: Any, attrs: list[str]
    ) -> Any:
        """The object ``head.a.b`` names, each step an attribute of a module (by identity,
        ``types.ModuleType``): a table reached through any other object (a class, a
        namespace, an instance) could change or compute what the kernel compiles."""
        path = head
        for attr in attrs:
            if not isinstance(value, types.ModuleType):
                raise self.fail(
                    node,
                    f"`{call}`: `{path}` is a {type(value).__module__}."
                    f"{type(value).__qualname__}, not a module; cuda.const.array_like takes "
                    "a module-level numpy array, by name or as an attribute of a module",
                    "const-array",
                )
            if not hasattr(value, attr):
                raise self.fail(
                    node, f"`{call}`: module `{path}` has no attribute `{attr}`", "const-array"
                )
            value = getattr(value, attr)
            path = f"{path}.{attr}"
        return value

    def _check_arguments(self, node: ast.Call, ref: Ref) -> None:
        """A call of simtsafe's kernel API binds to the documented signature.

        Only an early message at the user's line: the private twin's typer
        would refuse the call too, but with Python's own ``TypeError`` about
        an internal function.
        """
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            return  # *args / **kwargs: Numba's typing decides
        try:
            signature = inspect.signature(ref.obj)
        except (TypeError, ValueError):
            return
        params = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        names = {p.name for p in params}
        unknown = [str(k.arg) for k in node.keywords if k.arg not in names]
        try:
            signature.bind(*node.args, **{str(k.arg): k.value for k in node.keywords})
            problem = f"it has no parameter {unknown[0]!r}" if unknown else None
        except TypeError as exc:
            problem = f"it has no parameter {unknown[0]!r}" if unknown else str(exc).rstrip(".")
        if problem is None:
            return
        thread_api = getattr(ref.obj, "__module__", "") == "simtsafe.thread"
        shown = f"thread.{ref.name}" if thread_api and "." not in ref.name else ref.name
        form = f"{shown}({', '.join(_param_text(p) for p in params)})"
        required = sum(p.default is p.empty and p.kind is not p.VAR_POSITIONAL for p in params)
        what = (
            "no arguments"
            if not params
            else f"{required} to {len(params)} arguments"
            if required < len(params)
            else f"{required} argument{'s' if required > 1 else ''}"
        )
        raise self.fail(
            node,
            f"`{ast.unparse(node)}`: {shown} takes {what}, as `{form}`; got "
            f"{len(node.args)} positional"
            + (
                f" and keyword {', '.join(str(k.arg) for k in node.keywords)}"
                if node.keywords
                else ""
            )
            + f" ({problem}). Call it as `{form}`",
            "call-arguments",
        )

    @staticmethod
    def _state_keyword(node: ast.Call) -> None:
        """``reduce(state=(n, m), op=f)``: docs/cooperation.md names a tuple value the
        *state*, so that keyword stands for the value, as ``v=`` does; the call is given on
        as ``reduce(value, op=f)`` (both twins then type the one form)."""
        states = [k for k in node.keywords if k.arg == "state"]
        if len(states) != 1 or node.args or any(k.arg == "v" for k in node.keywords):
            return  # no state=, or the value given twice: the signature check says so
        node.args = [states[0].value]
        node.keywords = [k for k in node.keywords if k.arg != "state"]

    def _check_reduce_op(self, node: ast.Call, ref: Ref) -> None:
        op = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "op"), None)
        )
        if op is None:
            raise self.fail(node, f"{ref.name}(v, op) needs the reduction `op`", "collective")
        found = _chain(op)
        op_ref = self.ref_of(op) if found is not None else None
        if (
            op_ref is None
            and found is not None
            and not self.env.strict
            and found[0].id not in self.locals
        ):
            # A global not bound yet (a helper defined below the kernel): checked when the
            # kernel is frozen at its first compile, where the name must resolve.
            self._op_values.add(id(op))
            return
        if op_ref is None or not (
            op_ref.kind == "device" or (op_ref.kind == "api" and op_ref.name in _REDUCE_OPS)
        ):
            raise self.fail(
                op,
                f"the `op` of {ref.name} must be one of operator.add, operator.mul, "
                "operator.and_, operator.or_, operator.xor, max, min, or a @simtsafe.device "
                f"function of two values; got `{ast.unparse(op)}`",
                "collective",
            )
        self._op_values.add(id(op))

    def visit_For(self, node: ast.For) -> Any:
        it = node.iter
        if isinstance(it, ast.Call) and _chain(it.func) is not None:
            ref = self.ref_of(it.func)
            if ref is not None and ref.kind == "simtsafe" and ref.name in LOOP_FIXES:
                self.thread_loops.append((node.lineno, node.end_lineno or node.lineno, ref.name))
            if ref is not None and ref.kind == "simtsafe" and ref.name == "thread.grid_stride":
                return self._expand_grid_stride(node, it)
            if ref is not None and ref.kind == "simtsafe" and ref.name == "thread.block_stride":
                return self._expand_block_stride(node, it)
            if ref is not None and ref.kind == "simtsafe" and ref.name in _ROW_WALKS:
                return self._expand_row_walk(node, it, ref.name)
            if ref is not None and ref.kind == "simtsafe" and ref.name in _ROW_CHUNKS:
                return self._expand_row_chunks(node, it, ref.name)
        return self.generic_visit(node)

    def _row_walk_target(self, node: ast.For, it: ast.Call, name: str, var: str) -> tuple[Any, str]:
        """The walked array of ``for var in thread.<row walk>(s):``, visited, and the loop's
        name, once the call has its one argument and the loop a plain name as its target."""
        short = name.removeprefix("thread.")
        if len(it.args) != 1 or it.keywords:
            raise self.fail(
                it, f"{name} takes exactly one argument: the 2D slice or input", "witness-ctor"
            )
        if not isinstance(node.target, ast.Name):
            raise self.fail(
                node, f"bind {short}'s witness to a plain name: `for {var} in ...`", "witness-ctor"
            )
        self._call_targets.add(id(it.func))
        self._for_iterable_ok.add(id(it.func))
        self._use(it.func)  # domain rule
        return self.visit(it.args[0]), node.target.id

    def _expand_row_walk(self, node: ast.For, it: ast.Call, name: str) -> list[ast.stmt]:
        """``for w in thread.block_row(s): body`` (or ``warp_row``) -> a range loop.

        The columns ``start, start + step, ... < s.shape[1]`` of this block's
        (warp's) row; start, step and the row come from the launch geometry,
        the witness is minted from the loop index, so it is this thread's and,
        like any witness, bounds-checked (row and column) on every access.
        """
        target, witness = self._row_walk_target(node, it, name, "w")
        start, bound, step, mint = _ROW_WALKS[name]
        k = f"__ss_k{node.lineno}_{node.col_offset}"
        loop = ast.parse(
            f"for {k} in range({start}(), {bound}(__ss_target), {step}()):\n"
            f"    {witness} = {mint}({k})\n"
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

    def _expand_row_chunks(self, node: ast.For, it: ast.Call, name: str) -> list[ast.stmt]:
        """``for c in thread.block_row_chunks(s): body`` (or ``warp_row_chunks``) -> a range
        loop over the chunks.

        ``__ss_s = s`` once, then ``for k in range(chunks(__ss_s)): c = mint(k, __ss_s)``:
        the trip count is ``ceil(s.shape[1] / step)`` in every thread (the compiled form
        proves it uniform from those operands); the witness is column ``start + k * step``
        of this block's (warp's) row, bounds-checked on every access like any witness.
        """
        target, witness = self._row_walk_target(node, it, name, "c")
        chunks, mint = _ROW_CHUNKS[name]
        at = f"{node.lineno}_{node.col_offset}"
        walked, k = f"__ss_s{at}", f"__ss_k{at}"
        bind, loop = ast.parse(
            f"{walked} = __ss_target\n"
            f"for {k} in range({chunks}({walked})):\n"
            f"    {witness} = {mint}({k}, {walked})\n"
        ).body
        assert isinstance(bind, ast.Assign) and isinstance(loop, ast.For)
        for child in (*ast.walk(bind), *ast.walk(loop)):
            ast.copy_location(child, node)
        bind.value = target
        loop.body.extend(_flatten([self.visit(stmt) for stmt in node.body]))
        loop.orelse = _flatten([self.visit(stmt) for stmt in node.orelse])
        return [bind, loop]

    def _expand_grid_stride(self, node: ast.For, it: ast.Call) -> list[ast.stmt]:
        """``for w in thread.grid_stride(s): body`` -> a range loop minting one witness per step.

        The same loop a raw grid-stride kernel has (measured: same PTX
        loads/stores, same bandwidth); the witness is minted from the loop
        index, so it is this thread's and, like any witness, bounds-checked.
        """
        if len(it.args) != 1 or it.keywords:
            raise self.fail(
                it, "thread.grid_stride takes exactly one argument: the slice", "witness-ctor"
            )
        if not isinstance(node.target, ast.Name):
            raise self.fail(
                node, "bind grid_stride's witness to a plain name: `for w in ...`", "witness-ctor"
            )
        self._call_targets.add(id(it.func))
        self._for_iterable_ok.add(id(it.func))
        self._use(it.func)  # domain rule
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

    def unsafe_nodes(self, fn: ast.FunctionDef) -> set[int]:
        """Ids of every node of ``fn`` lexically inside an unsafe region."""
        inside: set[int] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.With) and id(node) not in inside and self._is_unsafe_with(node):
                for stmt in node.body:
                    inside.update(id(child) for child in ast.walk(stmt))
        return inside

    def _expand_block_stride(self, node: ast.For, it: ast.Call) -> list[ast.stmt]:
        """``for w in thread.block_stride(tile): body`` -> two nested range loops.

        Rows ``ty, ty + bdy, ...`` and columns ``tx, tx + bdx, ...`` of a 2D
        tile; for a 1D tile one row and the columns ``tid, tid + T, ...``. The
        witness is minted from the loop indices: this thread's elements only.
        """
        if len(it.args) != 1 or it.keywords or not isinstance(it.args[0], ast.Name):
            raise self.fail(
                it,
                "thread.block_stride takes exactly one argument: a shared tile bound to a name",
                "witness-ctor",
            )
        if not isinstance(node.target, ast.Name):
            raise self.fail(
                node, "bind block_stride's witness to a plain name: `for w in ...`", "witness-ctor"
            )
        for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(inner, ast.Break):
                raise self.fail(
                    inner,
                    "`break` is not allowed in a block_stride loop (it walks rows and columns; "
                    "a break would leave only the row)",
                    "witness-ctor",
                )
        self._call_targets.add(id(it.func))
        self._for_iterable_ok.add(id(it.func))
        self._use(it.func)
        tile = it.args[0].id
        r = f"__ss_r{node.lineno}_{node.col_offset}"
        c = f"__ss_c{node.lineno}_{node.col_offset}"
        loop = ast.parse(
            f"for {r} in range(__ss_bs_row_start({tile}), __ss_bs_rows({tile}), "
            f"__ss_bs_row_step({tile})):\n"
            f"    for {c} in range(__ss_bs_col_start({tile}), __ss_bs_cols({tile}), "
            f"__ss_bs_col_step({tile})):\n"
            f"        {node.target.id} = __ss_mint_local({tile}, {r}, {c})\n"
        ).body[0]
        assert isinstance(loop, ast.For) and isinstance(loop.body[0], ast.For)
        for child in ast.walk(loop):
            ast.copy_location(child, node)
        self.visit(it.args[0])  # the tile name: a local
        inner_loop = loop.body[0]
        inner_loop.body.extend(_flatten([self.visit(stmt) for stmt in node.body]))
        if node.orelse:
            raise self.fail(node, "a block_stride loop has no `else`", "witness-ctor")
        return [loop]

    def _is_unsafe_with(self, node: ast.With) -> bool:
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call) or _chain(call.func) is None:
                return False
            self._call_targets.add(id(call.func))
            try:
                ref = self.ref_of(call.func)
            except SafetyError:
                return False
            if ref is None and not self.env.strict and self._is_global_chain(call.func):
                continue  # pending at decoration: judged at compile
            if ref is None or ref.kind != "simtsafe" or ref.name != "unsafe":
                return False
        return True

    def visit_With(self, node: ast.With) -> Any:
        if not self._is_unsafe_with(node):
            raise self.fail(
                node,
                'the only `with` allowed in a kernel is `with simtsafe.unsafe("SAFETY: ...")`',
                "with",
            )
        reasons: list[str] = []
        for item in node.items:
            call = item.context_expr
            assert isinstance(call, ast.Call)
            if item.optional_vars is not None:
                raise self.fail(node, "write `with simtsafe.unsafe(...):` without `as`", "with")
            if (
                len(call.args) != 1
                or call.keywords
                or not isinstance(call.args[0], ast.Constant)
                or not isinstance(call.args[0].value, str)
            ):
                raise self.fail(
                    node,
                    "simtsafe.unsafe() takes one string literal: the reason, e.g. "
                    'simtsafe.unsafe("SAFETY: every thread writes its own tile[ty, tx]")',
                    "unsafe-reason",
                )
            try:
                reasons.append(check_reason(call.args[0].value))
            except (TypeError, ValueError) as exc:
                raise self.fail(node, str(exc), "unsafe-reason") from None
        for reason in reasons:
            self.regions.append(
                UnsafeRegion(self.env.filename, node.lineno, reason, node.end_lineno or node.lineno)
            )
        self.unsafe_depth += 1
        try:
            body = _flatten([self.visit(stmt) for stmt in node.body])
        finally:
            self.unsafe_depth -= 1
        return body

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        """``x: T = v`` is ``x = v``: Python never evaluates a local's annotation."""
        if node.value is None:
            return None
        assign = ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
        return self.visit(assign)

    def visit_Return(self, node: ast.Return) -> Any:
        if node.value is None:
            return node
        if self.env.kind == "kernel":
            raise self.fail(
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

    # ------------------------------------------------------------------ taint

    def raw_source(self, func: ast.expr) -> RawSource | None:
        if _chain(func) is None:
            return None
        ref = self.ref_of(func)
        if ref is None:
            return None
        if ref.kind == "gated" and ref.name in ARRAY_SOURCES | OBJECT_SOURCES:
            return RawSource(ref.name)
        if ref.kind == "device":
            return RawSource(f"helper:{ref.name}", helper=ref.obj)
        return None


def _copy_tree(node: ast.FunctionDef) -> ast.FunctionDef:
    """Deep-copy a parsed function: the nodes and positions ``copy.deepcopy`` gives.

    Every analysis copies the tree twice, and every decoration and compile analyses;
    a pickle round trip is about four times faster than ``copy.deepcopy`` on a tree.
    """
    copied = pickle.loads(pickle.dumps(node, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(copied, ast.FunctionDef)
    return copied


def analyze(
    source: Source,
    *,
    kernel: str,
    kind: Literal["kernel", "device"],
    domain: int | None,
    views: Sequence[ParamView],
    exact_block: tuple[int, int, int] | None,
    scope: Mapping[str, Any],
    strict: bool,
    attributes: frozenset[str] = LOCAL_ATTRIBUTES,
    seeds: Mapping[str, int] | None = None,
    helper_returns_raw: Callable[[Any, dict[int, int]], bool] = lambda h, s: True,
    param_levels: Mapping[str, int] | None = None,
    helper_uniformity: Callable[[Any, tuple[int, ...]], UniformitySummary] | None = None,
    with_uniformity: bool = False,
    max_registers: int | None = None,
    blocks_per_sm: int | None = None,
    tile_window: int | None = None,
    max_threads: int | None = None,
) -> Analysis:
    """Check ``source`` against ``scope`` and build the rewritten function's AST.

    Args:
        source: the parsed function (copied, never modified).
        kernel: the function's name, for messages.
        kind: ``"kernel"`` (gets the view prologue) or ``"device"`` (helper).
        domain: the contract's proven launch rank, or None.
        views: the parameters that get a view in the prologue (kernels only).
        exact_block: the contract's exact block, stamped as ``.reqntid``.
        scope: what global names denote (module globals, closure values).
        strict: a name missing from ``scope`` is an error (compile) rather
            than pending (decoration).
        attributes: attributes allowed on local values.
        seeds: parameters holding raw values on entry (helper taint).
        helper_returns_raw: taint summary of helpers (see ``_taint``).
        param_levels: uniformity of the parameters (default: all block-uniform).
        helper_uniformity: uniformity summary of helpers (see ``_uniformity``).
        max_registers: a kernel's register budget, stamped as ``.maxnreg``.
        max_threads: the contract's largest block (without an exact one), which ``prepare``
            enforces: the thread-index reads get ``!range`` metadata from it
            (``lowering._blockgeo.bound_sreg``).
        blocks_per_sm: the contract's resident blocks per multiprocessor, stamped as
            ``.minnctapersm``.
        tile_window: the contract's ``tile_shared``: a kernel's ``shared.tile`` calls
            become ``__ss_shared_wtile(tile_window, ...)``, carved from that many bytes of
            the launch's dynamic shared memory.
        with_uniformity: also run the source-level uniformity analysis (it decides
            nothing: the compiled form does; its finding words early messages and is
            the simulator's fallback verdict).

    Raises:
        SafetyError: the function breaks a rule; the message names the line.
    """
    fn_node = _copy_tree(source.node)
    env = _Env(
        kernel=kernel,
        kind=kind,
        domain=domain,
        filename=source.filename,
        scope=scope,
        strict=strict,
        attributes=attributes,
        helper_returns_raw=helper_returns_raw,
        tile_window=tile_window if kind == "kernel" else None,
    )
    # A view parameter rebound anywhere (`out = a`) no longer names its view: its
    # element's fields are not the thread's own output (see _own_record_field).
    rebound = {
        n.id
        for n in ast.walk(fn_node)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    checker = _Checker(
        env, _local_names(fn_node), {v.name: v.view for v in views if v.name not in rebound}
    )
    if kind == "device":
        checker.helper_outputs = _annotated_outputs(fn_node) - rebound
    # The walk records nodes by id (call targets, for-iterables, op values) and the
    # rewrite replaces some of them: keep every original node alive until the end, so
    # that no id is reused by another node while those records are consulted.
    checker.keepalive = list(ast.walk(fn_node))
    checker.fn_node = fn_node
    checker._tile_names()  # before the walk rewrites the makers
    new_body = _flatten([checker.visit(stmt) for stmt in fn_node.body])
    # Taint runs over an untouched copy (the walk above rewrote fn_node in place).
    original = _copy_tree(source.node)
    original.decorator_list = []  # decorators and annotations run on the host, not here
    original.returns = None
    for a in original.args.args:
        a.annotation = None

    def ref_name(e: ast.expr) -> str | None:
        ref = checker.ref_of(e) if _chain(e) is not None else None
        return ref.name if ref is not None and ref.kind != "device" else None

    def ref_info(e: ast.expr) -> tuple[str, str, Any] | None:
        ref = checker.ref_of(e) if _chain(e) is not None else None
        return (ref.name, ref.kind, ref.obj) if ref is not None and ref.kind != "device" else None

    taint = analyze_taint(
        original,
        inside=checker.unsafe_nodes(original),
        source_of=checker.raw_source,
        view_ranks={v.name: v.ndim for v in views if v.view not in ("in", "acc")},
        seeds=seeds or {},
        helper_returns_raw=helper_returns_raw,
        fail=checker.fail,
        ref_of=ref_info,
    )

    def helper_of(e: ast.expr) -> Any:
        ref = checker.ref_of(e) if _chain(e) is not None else None
        return ref.obj if ref is not None and ref.kind == "device" else None

    uniformity = UniformitySummary(exits=None)
    if with_uniformity:
        uniformity = check_uniformity(
            original,
            ref_name=ref_name,
            helper_of=helper_of,
            helper_summary=helper_uniformity or (lambda h, levels: UniformitySummary(result=2)),
            param_levels=dict(param_levels) if param_levels is not None else {},
            fail=checker.fail,
            kernel=kernel,
            block=exact_block if kind == "kernel" else None,
        )

    def may_be_helper(e: ast.expr) -> bool:
        # A name not bound yet at decoration (a helper defined below the kernel) is
        # judged at compile, over the frozen scope, where it must be a helper.
        if helper_of(e) is not None:
            return True
        return (
            not strict
            and _chain(e) is not None
            and checker.ref_of(e) is None
            and (checker._is_global_chain(e))
        )

    check_phases(original, ref_name=ref_name, fail=checker.fail, is_helper=may_be_helper)
    check_output_tiles(
        original, kind=kind, params=source.params, ref_name=ref_name, fail=checker.fail
    )
    fn_node.body = pair_fills(new_body)
    fn_node.decorator_list = []
    fn_node.returns = None
    for a in fn_node.args.args:
        a.annotation = None

    prologue: list[ast.stmt] = []
    if exact_block is not None:
        x, y, z = exact_block
        prologue.append(ast.parse(f"__ss_require_block({x}, {y}, {z})").body[0])
    elif max_threads is not None and kind == "kernel":
        prologue.append(ast.parse(f"__ss_bound_block({int(max_threads)})").body[0])
    if max_registers is not None:
        prologue.append(ast.parse(f"__ss_max_registers({int(max_registers)})").body[0])
    if blocks_per_sm is not None:
        prologue.append(ast.parse(f"__ss_min_blocks({int(blocks_per_sm)})").body[0])
    for v in views:
        helper = f"__ss_view_{v.view}"
        call = ", ".join((v.name, *v.args))
        prologue.append(ast.parse(f"{v.name} = {helper}({call})").body[0])
    for stmt in prologue:
        for child in ast.walk(stmt):
            ast.copy_location(child, fn_node)
    if not fn_node.body:
        fn_node.body = [ast.copy_location(ast.Pass(), fn_node)]
    fn_node.body = prologue + fn_node.body
    module = ast.Module(body=[fn_node], type_ignores=[])
    ast.fix_missing_locations(module)
    return Analysis(
        module=module,
        unsafe_regions=checker.regions,
        globals_used=checker.globals_used,
        substitutes=checker.substitutes,
        returns_raw=taint.returns_raw,
        filename=source.filename,
        uniformity=uniformity,
        api_used=frozenset(checker.api_used),
        vec_runs={k: frozenset(v) for k, v in checker.vec_runs.items()},
        out_tiles=dict(checker.out_tiles),
        thread_loops=tuple(checker.thread_loops),
    )


#: The annotations that make a helper's parameter an output for a field store.
_OUTPUT_ANNOTATIONS = frozenset({"DisjointSlice", "DisjointSlice2D", "DisjointSlice3D"})


def _annotated_outputs(fn_node: ast.FunctionDef) -> frozenset[str]:
    """A helper's parameters annotated ``DisjointSlice[...]`` (or ``ss.DisjointSlice[...]``).

    Wording only: it lets the early check admit ``o[w].field = v`` in a helper as in a
    kernel. What decides is the compiled form (``lowering._recordstores``): a field store
    is compiled only on a record Numba typed as the element of a DisjointSlice read
    through a witness, whatever the annotation said (a helper called with an input is
    refused there).
    """
    out = set()
    for a in fn_node.args.args:
        ann = a.annotation
        head = ann.value if isinstance(ann, ast.Subscript) else ann
        found = _chain(head) if head is not None else None
        if found is not None:
            last = found[1][-1] if found[1] else found[0].id
            if last in _OUTPUT_ANNOTATIONS:
                out.add(a.arg)
    return frozenset(out)


def _param_text(p: inspect.Parameter) -> str:
    """A parameter as the API documents it: ``v`` or ``inclusive=True`` (no annotation)."""
    text = ("*" if p.kind is p.VAR_POSITIONAL else "") + p.name
    return text if p.default is p.empty else f"{text}={p.default!r}"
