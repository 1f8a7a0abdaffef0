"""Raw values may be used only inside unsafe regions: a taint analysis to a fixed point.

Inside ``with simtsafe.unsafe("SAFETY: ...")`` code can obtain values that
write memory without a witness: ``out.unchecked``, ``cuda.shared.array``,
``cuda.local.array``, ``cuda.cg.this_grid()``,
and whatever a helper returns of them. The region's reason covers the
region only, so every *use* of such a value outside every region is refused,
however it got there: assignments, tuple unpacking, ``for`` targets,
containers (a tuple holding a raw array is raw), helper arguments (the
helper's parameter is then raw inside the helper, checked there) and helper
returns (the call's result is raw in the caller).

The analysis is flow-insensitive (a name raw anywhere is raw everywhere) and
knows array ranks where the source shows them, so that an *element* read
from a raw array (``s = tile[i]`` of a 1D tile, ``tile[i, j]`` of a 2D one) is
a plain value again and may leave the region. An index counts as an element
index only when it is provably an int (a constant, a name bound only to ints,
int arithmetic, witness and thread coordinates, ``len``/``int``/``min``/``max``
of ints): a slice object, ``None`` or ``...`` in a name would take a view.
Unknown rank: not an element. Any other call with a raw argument (or a raw
receiver) gives a raw result (``operator.getitem(raw, s)`` may be a view),
except calls that return a scalar (``len``, ``cuda.atomic.*``). Every
expression outside every region whose value is raw is refused, named or not
(``grid_of().sync()``). Raw values reach helpers positionally only: keywords
holding raw values and ``*args`` in helper calls are refused.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import SafetyError

__all__ = ["RawSource", "TaintResult", "analyze_taint"]

#: Taint of an expression: None (plain), a rank >= 1 (raw array of that rank),
#: UNKNOWN (raw, rank unknown: any subscript stays raw) or CONTAINER (holds raw values).
UNKNOWN = -1
CONTAINER = -2
Taint = int | None
#: What a global name or chain denotes: (name, kind, object), as the allow-list classified it.
RefInfo = tuple[str, str, Any]

#: Array-producing gated calls and how to read the rank off their shape argument.
ARRAY_SOURCES = frozenset({"cuda.shared.array", "cuda.local.array"})
OBJECT_SOURCES = frozenset({"cuda.cg.this_grid"})
_METADATA = frozenset({"shape", "size", "ndim", "dtype"})
#: Calls whose result is a scalar whatever their arguments (an array's length, an atomic's
#: old element value, a conversion to a number).
_SCALAR_CALLS = frozenset({"len", "int", "float", "bool", "complex"})
#: Calls that return an int when their arguments are ints.
_INT_CALLS = frozenset({"len", "int", "min", "max", "abs"})
_INT_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift)
_INT_BINOPS_BITS = (ast.BitAnd, ast.BitOr, ast.BitXor)
#: numba.cuda members (the chain's last name; the head is spelled as the user imported it)
#: that are ints, and functions that return an int given the argument 1.
_INT_GEOMETRY = frozenset({"laneid", "warpsize"})
_INT_GEOMETRY_CALLS = frozenset({"grid", "gridsize"})
#: Witness constructors, and the attributes of a witness that are plain ints.
_WITNESS_CTORS = frozenset(
    {
        "thread.index_1d",
        "thread.column",
        "thread.index_2d",
        "thread.index_3d",
        "thread.warp_leader",
        "thread.block_leader",
        "thread.local_index",
        "thread.local_index_2d",
    }
)
_WITNESS_LOOPS = frozenset(
    {
        "thread.grid_stride",
        "thread.block_stride",
        "thread.block_row",
        "thread.warp_row",
        "thread.block_row_chunks",
        "thread.warp_row_chunks",
    }
)
_WITNESS_COORDS = frozenset({"index", "row", "col", "x", "y", "z", "chunk"})


@dataclass(frozen=True)
class RawSource:
    """What a call target is, as far as taint goes."""

    name: str  # e.g. "cuda.shared.array", or "helper:<name>"
    helper: Any = None  # a DeviceFunction, for helper calls


@dataclass
class TaintResult:
    """Outcome for one function: which names are raw and whether a return is raw."""

    raw_names: dict[str, int] = field(default_factory=dict)
    returns_raw: bool = False


def _join(a: Taint, b: Taint) -> Taint:
    if a is None:
        return b
    if b is None or a == b:
        return a
    if CONTAINER in (a, b):
        return CONTAINER
    return UNKNOWN


def _is_call_of(e: ast.expr | None, ref_name: Callable[[ast.expr], str | None], name: str) -> bool:
    return isinstance(e, ast.Call) and ref_name(e.func) == name


def _rank_of_shape(node: ast.expr | None) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return 1
    if isinstance(node, ast.Tuple):
        return len(node.elts)
    return UNKNOWN


class _Analysis:
    def __init__(
        self,
        fn: ast.FunctionDef,
        *,
        inside: set[int],
        source_of: Callable[[ast.expr], RawSource | None],
        view_ranks: Mapping[str, int],
        seeds: Mapping[str, int],
        helper_returns_raw: Callable[[Any, dict[int, int]], bool],
        fail: Callable[[ast.AST, str, str], SafetyError],
        ref_of: Callable[[ast.expr], RefInfo | None],
    ) -> None:
        self.fn = fn
        self.inside = inside
        self.source_of = source_of
        self.view_ranks = view_ranks
        self.helper_returns_raw = helper_returns_raw
        self.fail = fail
        self.ref_of = ref_of
        self.taint: dict[str, int] = dict(seeds)
        self.origin: dict[str, int] = {name: fn.lineno for name in seeds}
        self.int_names, self.witness_names = self._int_names()

    # ------------------------------------------------------------ ints

    def _ref_name(self, e: ast.expr) -> str | None:
        ref = self.ref_of(e) if isinstance(e, ast.Name | ast.Attribute) else None
        return ref[0] if ref is not None else None

    def _int_names(self) -> tuple[set[str], set[str]]:
        """Names bound only to ints, and names bound only to witnesses (a greatest fixed
        point: a name stays an int while every binding of it is an int given the others)."""
        bindings: dict[str, list[tuple[str, ast.expr | None]]] = {}

        def add(target: ast.expr, how: str, value: ast.expr | None) -> None:
            if isinstance(target, ast.Name):
                bindings.setdefault(target.id, []).append((how, value))
            elif isinstance(target, ast.Tuple | ast.List):
                if (
                    how == "value"
                    and isinstance(value, ast.Tuple | ast.List)
                    and len(value.elts) == len(target.elts)
                ):
                    for t, v in zip(target.elts, value.elts, strict=True):
                        add(t, how, v)
                elif (
                    how == "for"
                    and _is_call_of(value, self._ref_name, "enumerate")
                    and len(target.elts) == 2
                ):
                    add(target.elts[0], "value", ast.Constant(0))  # the count
                    add(target.elts[1], "opaque", None)
                else:
                    for t in target.elts:
                        add(t, "opaque", None)
            elif isinstance(target, ast.Starred):
                add(target.value, "opaque", None)

        for a in self.fn.args.args:
            bindings.setdefault(a.arg, []).append(("opaque", None))
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    add(target, "value", node.value)
            elif isinstance(node, ast.AnnAssign):
                add(node.target, "value", node.value)
            elif isinstance(node, ast.AugAssign):
                op = ast.BinOp(left=ast.Name(id="", ctx=ast.Load()), op=node.op, right=node.value)
                if isinstance(node.target, ast.Name):
                    op.left = ast.Name(id=node.target.id, ctx=ast.Load())
                add(node.target, "value", op)
            elif isinstance(node, ast.NamedExpr):
                add(node.target, "value", node.value)
            elif isinstance(node, ast.For):
                add(node.target, "for", node.iter)
        ints = {n for n, bs in bindings.items() if all(h != "opaque" for h, _ in bs)}
        witnesses = set(ints)
        while True:
            self.int_names, self.witness_names = ints, witnesses
            new_ints = {n for n in ints if all(self._binds_int(h, v) for h, v in bindings[n])}
            new_wit = {
                n for n in witnesses if all(self._binds_witness(h, v) for h, v in bindings[n])
            }
            if new_ints == ints and new_wit == witnesses:
                return ints, witnesses
            ints, witnesses = new_ints, new_wit

    def _binds_int(self, how: str, value: ast.expr | None) -> bool:
        if how == "for":
            return _is_call_of(value, self._ref_name, "range")
        return value is not None and self.is_int(value)

    def _binds_witness(self, how: str, value: ast.expr | None) -> bool:
        if isinstance(value, ast.Name):
            return how == "value" and value.id in self.witness_names
        ctors = _WITNESS_LOOPS if how == "for" else _WITNESS_CTORS
        return isinstance(value, ast.Call) and self._ref_name(value.func) in ctors

    def is_int(self, e: ast.expr | None) -> bool:
        """Is ``e`` provably an int (so that indexing with it reads one element)?"""
        if e is None:
            return False
        if isinstance(e, ast.Constant):
            return type(e.value) is int
        if isinstance(e, ast.Name):
            if e.id in self.int_names:
                return True
            ref = self.ref_of(e)
            return ref is not None and ref[1] == "const" and type(ref[2]) is int
        if isinstance(e, ast.Attribute):
            ref = self.ref_of(e)
            if ref is not None:
                name, kind, obj = ref
                if kind == "ok" and name.rsplit(".", 1)[-1] in _INT_GEOMETRY:
                    return True
                # cuda.threadIdx.x & co are the only constants without an object
                return kind == "const" and (obj is None or type(obj) is int)
            if e.attr in ("size", "ndim"):
                return True  # of an array (the only kernel values with these)
            return (
                e.attr in _WITNESS_COORDS
                and isinstance(e.value, ast.Name)
                and e.value.id in self.witness_names
            )
        if isinstance(e, ast.Subscript):
            # a.shape[k]: one extent
            return (
                isinstance(e.value, ast.Attribute)
                and e.value.attr == "shape"
                and self.is_int(e.slice)
            )
        if isinstance(e, ast.BinOp):
            if isinstance(e.op, _INT_BINOPS + _INT_BINOPS_BITS):
                return self.is_int(e.left) and self.is_int(e.right)
            return False
        if isinstance(e, ast.UnaryOp):
            return isinstance(e.op, ast.USub | ast.UAdd | ast.Invert) and self.is_int(e.operand)
        if isinstance(e, ast.IfExp):
            return self.is_int(e.body) and self.is_int(e.orelse)
        if isinstance(e, ast.NamedExpr):
            return self.is_int(e.value)
        if isinstance(e, ast.Call):
            called = self._ref_name(e.func)
            if called == "len":
                return True
            if called == "int":
                return len(e.args) == 1 and not e.keywords
            if called in _INT_CALLS:
                return bool(e.args) and not e.keywords and all(self.is_int(a) for a in e.args)
            ref = self.ref_of(e.func) if isinstance(e.func, ast.Attribute) else None
            if (
                ref is not None
                and ref[1] == "ok"
                and ref[0].rsplit(".", 1)[-1] in (_INT_GEOMETRY_CALLS)
            ):
                return (
                    len(e.args) == 1
                    and isinstance(e.args[0], ast.Constant)
                    and (type(e.args[0].value) is int and e.args[0].value == 1)
                )
        return False

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.expr | None) -> Taint:
        if e is None:
            return None
        if isinstance(e, ast.Name):
            return self.taint.get(e.id)
        if isinstance(e, ast.Attribute):
            if e.attr == "unchecked":
                if isinstance(e.value, ast.Name) and e.value.id in self.view_ranks:
                    return self.view_ranks[e.value.id]
                return UNKNOWN
            if e.attr in _METADATA:
                return None
            return self.expr(e.value)
        if isinstance(e, ast.Subscript):
            base = self.expr(e.value)
            if base is None:
                return None
            if base >= 1 and self._is_element_index(e.slice, base):
                return None
            return UNKNOWN
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            return CONTAINER if any(self.expr(x) is not None for x in e.elts) else None
        if isinstance(e, ast.Dict):
            vals = [*e.keys, *e.values]
            return CONTAINER if any(self.expr(x) is not None for x in vals if x) else None
        if isinstance(e, ast.Starred):
            return self.expr(e.value)
        if isinstance(e, ast.IfExp):
            return _join(self.expr(e.body), self.expr(e.orelse))
        if isinstance(e, ast.BoolOp):
            out: Taint = None
            for v in e.values:
                out = _join(out, self.expr(v))
            return out
        if isinstance(e, ast.BinOp):
            return UNKNOWN if _join(self.expr(e.left), self.expr(e.right)) is not None else None
        if isinstance(e, ast.UnaryOp):
            return UNKNOWN if self.expr(e.operand) is not None else None
        if isinstance(e, ast.NamedExpr):
            return self.expr(e.value)
        return None

    def _is_element_index(self, index: ast.expr, rank: int) -> bool:
        """One int per axis: anything else (a slice object, None, ``...``) may take a view."""
        if isinstance(index, ast.Tuple):
            return len(index.elts) == rank and all(self.is_int(x) for x in index.elts)
        return rank == 1 and self.is_int(index)

    def call(self, e: ast.Call) -> Taint:
        src = self.source_of(e.func)
        args = [*e.args, *(k.value for k in e.keywords)]
        if src is not None:
            if src.name == "cuda.local.array" and id(e) not in self.inside:
                return None  # outside regions: a bounds-checked Tier-1 local array
            if src.name in ARRAY_SOURCES:
                shape = (
                    e.args[0]
                    if e.args
                    else next((k.value for k in e.keywords if k.arg in ("shape", "ary")), None)
                )
                return _rank_of_shape(shape)
            if src.name in OBJECT_SOURCES:
                return UNKNOWN
            if src.helper is not None:
                starred = next((a for a in e.args if isinstance(a, ast.Starred)), None)
                if starred is not None:
                    raise self.fail(
                        starred,
                        f"`{ast.unparse(starred)}` unpacks arguments into a call of the "
                        "@simtsafe.device helper "
                        f"`{ast.unparse(e.func)}`; the checks follow a helper's arguments by "
                        "their position, which `*` hides. Pass each argument on its own",
                        "unsafe-escape",
                    )
                seeds = {i: t for i, a in enumerate(e.args) if (t := self.expr(a)) is not None}
                if any(self.expr(k.value) is not None for k in e.keywords):
                    raise self.fail(
                        e,
                        "pass raw arrays to a helper positionally (the analysis follows "
                        "positional parameters)",
                        "unsafe-escape",
                    )
                if self.helper_returns_raw(src.helper, seeds):
                    return UNKNOWN
                return None
        ref = self.ref_of(e.func) if isinstance(e.func, ast.Name | ast.Attribute) else None
        name = ref[0] if ref is not None else None
        if name in ("zip", "enumerate"):
            return CONTAINER if any(self.expr(a) is not None for a in args) else None
        if name in _SCALAR_CALLS or (
            ref is not None and ref[1] == "gated" and ".atomic." in ref[0]
        ):
            return None  # a length, a number, an atomic's old element value
        if any(self.expr(a) is not None for a in args):
            return UNKNOWN  # e.g. operator.getitem(raw, s): may return the array or a view
        if isinstance(e.func, ast.Attribute) and self.expr(e.func.value) is not None:
            return UNKNOWN  # a method of a raw value
        return None

    # ------------------------------------------------------------ bindings

    def bind(self, target: ast.expr, taint: Taint, value: ast.expr | None, line: int) -> bool:
        if taint is None:
            return False
        if isinstance(target, ast.Name):
            old = self.taint.get(target.id)
            new = _join(old, taint)
            if new != old:
                self.taint[target.id] = new  # type: ignore[assignment]
                self.origin.setdefault(target.id, line)
                return True
            return False
        if isinstance(target, ast.Starred):
            return self.bind(target.value, UNKNOWN, None, line)
        if isinstance(target, ast.Tuple | ast.List):
            changed = False
            if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    changed |= self.bind(t, self.expr(v), v, line)
            else:
                for t in target.elts:
                    changed |= self.bind(t, UNKNOWN, None, line)
            return changed
        return False

    def propagate(self) -> None:
        while True:
            changed = False
            for node in ast.walk(self.fn):
                if isinstance(node, ast.Assign):
                    t = self.expr(node.value)
                    for target in node.targets:
                        changed |= self.bind(target, t, node.value, node.lineno)
                elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
                    t = self.expr(node.value)
                    if isinstance(node, ast.AugAssign) and t is not None:
                        t = UNKNOWN
                    changed |= self.bind(node.target, t, node.value, node.lineno)
                elif isinstance(node, ast.NamedExpr):
                    changed |= self.bind(
                        node.target, self.expr(node.value), node.value, node.lineno
                    )
                elif isinstance(node, ast.For):
                    t = self.expr(node.iter)
                    elem: Taint = None if t == 1 else (UNKNOWN if t is not None else None)
                    changed |= self.bind(node.target, elem, None, node.lineno)
            if not changed:
                return

    # ------------------------------------------------------------ uses

    def check_uses(self) -> bool:
        """Refuse raw values used outside every region; say whether a return is raw."""
        returns_raw = False
        self._check_names()
        self._check_expressions()
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Return) and self.expr(node.value) is not None:
                returns_raw = True
            if isinstance(node, ast.Call):
                self.call(node)  # helper arguments: checked inside the helper
        return returns_raw

    def _check_names(self) -> None:
        for node in ast.walk(self.fn):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and node.id in self.taint
                and id(node) not in self.inside
            ):
                line = self.origin.get(node.id, self.fn.lineno)
                raise self.fail(
                    node,
                    f"`{node.id}` holds a raw value obtained inside an unsafe region (line "
                    f"{line}: an `.unchecked` view, a shared/local/const array, a grid group, or "
                    "something holding one) and is used outside every "
                    '`with simtsafe.unsafe("SAFETY: ..."):` block; keep each use inside such a '
                    "block, where its reason covers it",
                    "unsafe-escape",
                )

    def _check_expressions(self) -> None:
        """A raw value that no name holds: a helper's result, or taken from one."""
        for node in ast.walk(self.fn):
            if (
                isinstance(node, ast.expr)
                and not isinstance(node, ast.Name)
                and id(node) not in self.inside
                and self.expr(node) is not None
            ):
                inner = node
                while True:
                    child = next(
                        (
                            c
                            for c in ast.iter_child_nodes(inner)
                            if isinstance(c, ast.expr) and self.expr(c) is not None
                        ),
                        None,
                    )
                    if child is None:
                        break
                    inner = child
                raise self.fail(
                    inner,
                    f"`{ast.unparse(inner)}` gives a raw value (an `.unchecked` view, a "
                    "shared/local/const array, a grid group, or something holding one, e.g. "
                    "returned by a helper from its unsafe region; a helper's call of itself "
                    "counts as one) and is used outside every "
                    '`with simtsafe.unsafe("SAFETY: ..."):` block; keep each use inside such a '
                    "block, where its reason covers it",
                    "unsafe-escape",
                )


def analyze_taint(
    fn: ast.FunctionDef,
    *,
    inside: set[int],
    source_of: Callable[[ast.expr], RawSource | None],
    view_ranks: Mapping[str, int],
    seeds: Mapping[str, int],
    helper_returns_raw: Callable[[Any, dict[int, int]], bool],
    fail: Callable[[ast.AST, str, str], SafetyError],
    ref_of: Callable[[ast.expr], RefInfo | None] = lambda e: None,
) -> TaintResult:
    """Run the analysis over ``fn`` (see the module docstring).

    Args:
        fn: the function's AST (as written, before the rewrite).
        inside: ids of every AST node lexically inside an unsafe region.
        source_of: classifies a call's target (gated array sources, helpers).
        view_ranks: rank of each DisjointSlice parameter (for `.unchecked`).
        seeds: parameters that are raw on entry (a helper called with raw
            arguments), with their ranks.
        helper_returns_raw: whether a helper, called with raw arguments at
            the given positions, may return a raw value (checks the helper).
        fail: builds the SafetyError for a node.
        ref_of: what a global name or chain denotes: (name, kind, object), None
            for a local (used to prove indices are ints).

    Raises:
        SafetyError: a raw value is used outside every unsafe region.
    """
    analysis = _Analysis(
        fn,
        inside=inside,
        source_of=source_of,
        view_ranks=view_ranks,
        seeds=seeds,
        helper_returns_raw=helper_returns_raw,
        fail=fail,
        ref_of=ref_of,
    )
    analysis.propagate()
    returns_raw = analysis.check_uses()
    return TaintResult(dict(analysis.taint), returns_raw)
