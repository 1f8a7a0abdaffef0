"""Raw values may be used only inside unsafe regions: a taint analysis to a fixed point.

Inside ``with simtsafe.unsafe("SAFETY: ...")`` code can obtain values that
write memory without a witness: ``out.unchecked``, ``cuda.shared.array``,
``cuda.local.array``, ``cuda.const.array_like``, ``cuda.cg.this_grid()``,
and whatever a helper returns of them. The region's reason covers the
region only, so every *use* of such a value outside every region is refused,
however it got there: assignments, tuple unpacking, ``for`` targets,
containers (a tuple holding a raw array is raw), helper arguments (the
helper's parameter is then raw inside the helper, checked there) and helper
returns (the call's result is raw in the caller).

The analysis is flow-insensitive (a name raw anywhere is raw everywhere) and
knows array ranks where the source shows them, so that an *element* read
from a raw array (``s = tile[i]`` of a 1D tile, ``tile[i, j]`` of a 2D one) is
a plain value again and may leave the region. Unknown rank: not an element.
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

#: Array-producing gated calls and how to read the rank off their shape argument.
ARRAY_SOURCES = frozenset({"cuda.shared.array", "cuda.local.array", "cuda.const.array_like"})
OBJECT_SOURCES = frozenset({"cuda.cg.this_grid"})
_METADATA = frozenset({"shape", "size", "ndim", "dtype"})


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
    ) -> None:
        self.fn = fn
        self.inside = inside
        self.source_of = source_of
        self.view_ranks = view_ranks
        self.helper_returns_raw = helper_returns_raw
        self.fail = fail
        self.taint: dict[str, int] = dict(seeds)
        self.origin: dict[str, int] = {name: fn.lineno for name in seeds}

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

    @staticmethod
    def _is_element_index(index: ast.expr, rank: int) -> bool:
        def scalar(x: ast.expr) -> bool:
            return not isinstance(x, ast.Slice | ast.Starred | ast.Tuple)

        if isinstance(index, ast.Tuple):
            return len(index.elts) == rank and all(scalar(x) for x in index.elts)
        return rank == 1 and scalar(index)

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
                if src.name == "cuda.const.array_like":
                    return UNKNOWN
                return _rank_of_shape(shape)
            if src.name in OBJECT_SOURCES:
                return UNKNOWN
            if src.helper is not None:
                seeds = {i: t for i, a in enumerate(e.args) if (t := self.expr(a)) is not None}
                if any(self.expr(k.value) is not None for k in e.keywords):
                    raise self.fail(
                        e,
                        "pass raw arrays to a helper positionally (the analysis follows "
                        "positional parameters)",
                        "unsafe-escape",
                    )
                if seeds and id(e) not in self.inside:
                    return UNKNOWN  # the argument's use outside is reported by the use check
                if self.helper_returns_raw(src.helper, seeds):
                    return UNKNOWN
                return None
        if isinstance(e.func, ast.Name) and e.func.id in ("zip", "enumerate"):
            return CONTAINER if any(self.expr(a) is not None for a in args) else None
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
        """Refuse raw names used outside every region; say whether a return is raw."""
        returns_raw = False
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
            if isinstance(node, ast.Return) and self.expr(node.value) is not None:
                returns_raw = True
            if isinstance(node, ast.Call) and id(node) in self.inside:
                self.call(node)  # helper arguments: checked inside the helper
        return returns_raw


def analyze_taint(
    fn: ast.FunctionDef,
    *,
    inside: set[int],
    source_of: Callable[[ast.expr], RawSource | None],
    view_ranks: Mapping[str, int],
    seeds: Mapping[str, int],
    helper_returns_raw: Callable[[Any, dict[int, int]], bool],
    fail: Callable[[ast.AST, str, str], SafetyError],
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
    )
    analysis.propagate()
    returns_raw = analysis.check_uses()
    return TaintResult(dict(analysis.taint), returns_raw)
