"""The ``requires`` relation language: one integer comparison over sizes and launch dims.

A launch contract may state size relations between a kernel's parameters and
its launch geometry, for example ``"a.size == out.size"``, ``"out.shape[0] ==
n * 2"`` or ``"grid.x * block.x >= out.size"``. Relations are checked on the
host, so they must be cheap to evaluate and impossible to abuse: user text is
parsed with :mod:`ast`, every node is checked against a small grammar, and
only then is a Python callable generated from the *validated tree* (never
from the user's text).

Grammar (one relation)::

    relation := expr OP expr            OP in == != < <= > >=
    expr     := expr (+ | - | *) expr | -expr | (expr) | term
    term     := INT | NAME | NAME.size | NAME.shape[INT] | LAUNCH.AXIS
    LAUNCH   := grid | block            AXIS in x y z

``INT`` is a non-negative integer literal, a bare ``NAME`` an integer scalar
parameter, ``NAME.size`` the product of an array parameter's shape and
``NAME.shape[k]`` one of its extents (``0 <= k < ndim``); ``grid.x`` ...
``block.z`` are the dimensions the launch is prepared with. Arithmetic is
exact (Python ints), so no relation can overflow.

A relation that names no parameter (only launch dimensions and literals)
holds or fails for a whole prepared launch: ``kernel.prepare`` checks it
once. Every other relation is checked per launch, with the launch dimensions
in the environment next to the arguments' shapes and values.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeAlias, cast

from .._errors import ContractDefinitionError

__all__ = [
    "GRAMMAR",
    "LAUNCH_NAMES",
    "Env",
    "ParamInfo",
    "Relation",
    "check_relation_syntax",
    "launch_env",
    "parse_relation",
]

#: What a relation is evaluated against: array parameters map to their shape
#: tuple, integer scalar parameters to their value, and the launch dimensions
#: (keys ``"grid.x"`` ... ``"block.z"``, which no parameter name can be) to ints.
Env: TypeAlias = Mapping[str, int | tuple[int, ...]]

#: The grammar in one line, quoted by every definition error.
GRAMMAR = (
    "one comparison (== != < <= > >=) between integer expressions built from "
    "non-negative integer literals, NAME (integer scalar parameter), NAME.size, "
    "NAME.shape[k], the launch dimensions grid.x/y/z and block.x/y/z, + - *, unary minus "
    "and parentheses"
)

_AXES = ("x", "y", "z")
_LAUNCH = ("grid", "block")

#: The launch-dimension terms, in the order of ``launch_env``.
LAUNCH_NAMES = tuple(f"{what}.{axis}" for what in _LAUNCH for axis in _AXES)


def launch_env(grid: Sequence[int], block: Sequence[int]) -> dict[str, int]:
    """The launch dimensions as relation terms: ``{"grid.x": ..., ..., "block.z": ...}``.

    Args:
        grid: The normalized grid ``(x, y, z)``.
        block: The normalized block ``(x, y, z)``.
    """
    return dict(zip(LAUNCH_NAMES, (*grid, *block), strict=True))


_COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}

_BIN_OPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
}

_REFUSED_BIN_OPS: dict[type[ast.operator], str] = {
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.MatMult: "@",
}


@dataclass(frozen=True)
class ParamInfo:
    """What the relation language needs to know about one kernel parameter.

    Attributes:
        name: The parameter's name in the kernel signature.
        kind: ``"array"`` for device arrays, ``"int"`` for integer scalars,
            ``"float"`` for floating-point scalars (never usable in relations).
        ndim: Number of dimensions; meaningful for arrays only.
    """

    name: str
    kind: Literal["array", "int", "float"]
    ndim: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("array", "int", "float"):
            raise ValueError(
                f"ParamInfo {self.name!r}: kind must be 'array', 'int' or 'float', "
                f"got {self.kind!r}"
            )
        if isinstance(self.ndim, bool) or not isinstance(self.ndim, int) or self.ndim < 0:
            raise ValueError(
                f"ParamInfo {self.name!r}: ndim must be a non-negative int, got {self.ndim!r}"
            )


@dataclass(frozen=True)
class Relation:
    """One validated ``requires`` relation, compiled for the per-launch check.

    Minted by :func:`parse_relation`; do not construct it directly.

    Attributes:
        text: The relation as the user wrote it (whitespace-stripped).
        names: The parameter names the relation reads.
        op: The comparison operator (``"=="``, ``"<="`` ...).
        launch: The launch dimensions it reads (``"grid.x"`` ... ``"block.z"``).
    """

    text: str
    names: frozenset[str]
    op: str
    launch: frozenset[str]
    #: The relation as a Python expression over the env mapping ``e`` (uses ``_prod``).
    source: str = field(repr=False, compare=False)
    # Invariant: the three callables were generated from a tree that passed
    # validation, so they only index the env, multiply, add, subtract, compare.
    _left: Callable[[Env], int] = field(repr=False, compare=False)
    _right: Callable[[Env], int] = field(repr=False, compare=False)
    _holds: Callable[[Env], bool] = field(repr=False, compare=False)

    @property
    def per_launch(self) -> bool:
        """Does it read an argument (checked per launch), or only the launch (checked once)?"""
        return bool(self.names)

    def holds(self, env: Env) -> bool:
        """Evaluate the relation for one launch.

        Args:
            env: Array parameters mapped to their shape tuple, integer scalar
                parameters to their value, launch dimensions (``launch_env``)
                to theirs. Must contain every name in :attr:`names` and
                :attr:`launch`.

        Returns:
            Whether the relation holds (exact integer arithmetic).
        """
        return self._holds(env)

    def explain(self, env: Env) -> str:
        """Say what the relation evaluated to, for error messages.

        Args:
            env: As for :meth:`holds`.

        Returns:
            Text such as ``"a.size == out.size is 1000 == 1024"``.
        """
        return f"{self.text} is {self._left(env)} {self.op} {self._right(env)}"


class _Translator:
    """Validate a relation's tree and translate it to Python source over ``e``.

    With ``params`` of ``None`` only the grammar is checked (any name is
    accepted as an array or integer scalar, any shape index is accepted).
    """

    def __init__(
        self, text: str, params: Mapping[str, ParamInfo] | None, kernel: str | None
    ) -> None:
        self.text = text
        self.params = params
        self.kernel = kernel
        self.names: set[str] = set()
        self.launch: set[str] = set()

    def fail(self, reason: str) -> NoReturn:
        where = f"kernel {self.kernel!r}: " if self.kernel is not None else ""
        message = (
            f"{where}requires relation {self.text!r} is invalid: {reason}. Grammar: {GRAMMAR}."
        )
        if self.params is not None:
            message += f" {_available(self.params.values())}"
        raise ContractDefinitionError(
            message, kernel=self.kernel, relation=self.text, reason=reason
        ) from None

    def _param(self, name: str, *, need: Literal["array", "int"]) -> ParamInfo | None:
        self.names.add(name)
        if self.params is None:
            return None
        info = self.params.get(name)
        if info is None:
            hint = (
                f" ({name}.x, {name}.y and {name}.z are the launch's {name} dimensions)"
                if name in _LAUNCH
                else ""
            )
            self.fail(f"unknown name {name!r}{hint}")
        if info.kind == "float":
            self.fail(f"{name!r} is a float scalar parameter; only integer scalars may appear")
        if need == "int" and info.kind == "array":
            self.fail(f"{name!r} is an array parameter; use {name}.size or {name}.shape[k]")
        if need == "array" and info.kind == "int":
            self.fail(f"{name!r} is an integer scalar parameter and has no .size or .shape")
        return info

    def relation(self, node: ast.expr) -> tuple[str, str, str]:
        if isinstance(node, ast.BoolOp):
            self.fail("'and'/'or' are not allowed; write one relation per requires entry")
        if not isinstance(node, ast.Compare):
            self.fail("it is not a comparison")
        if len(node.ops) != 1:
            self.fail(
                f"it chains {len(node.ops)} comparisons; write one relation per requires entry"
            )
        op = _COMPARE_OPS.get(type(node.ops[0]))
        if op is None:
            self.fail(f"the comparison {type(node.ops[0]).__name__!r} is not allowed")
        return self.expr(node.left), op, self.expr(node.comparators[0])

    def expr(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            if type(node.value) is int:
                return repr(node.value)
            self.fail(f"the literal {ast.unparse(node)} is not a non-negative integer")
        if isinstance(node, ast.Name):
            self._param(node.id, need="int")
            return f"e[{node.id!r}]"
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._shape_index(node)
        if isinstance(node, ast.BinOp):
            sym = _BIN_OPS.get(type(node.op))
            if sym is None:
                bad = _REFUSED_BIN_OPS.get(type(node.op), type(node.op).__name__)
                reason = f"the operator {bad!r} is not allowed (use + - * only)"
                if isinstance(node.op, (ast.FloorDiv, ast.Div)):
                    top, bottom = ast.unparse(node.left), ast.unparse(node.right)
                    reason += (
                        f". A quotient is a bound on a product: `A == {top} // {bottom}` is the "
                        f"two entries `{bottom} * A <= {top}` and `{top} < {bottom} * A + "
                        f"{bottom}`; the first alone says that every element read through "
                        "A exists"
                    )
                self.fail(reason)
            return f"({self.expr(node.left)} {sym} {self.expr(node.right)})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{self.expr(node.operand)})"
            self.fail(f"the unary operator in {ast.unparse(node)!r} is not allowed")
        if isinstance(node, ast.Call):
            self.fail(f"function calls such as {ast.unparse(node)!r} are not allowed")
        if isinstance(node, ast.BoolOp):
            self.fail("'and'/'or' are not allowed; write one relation per requires entry")
        if isinstance(node, ast.Compare):
            self.fail("a comparison may not appear inside an expression")
        self.fail(f"{ast.unparse(node)!r} is not an integer expression of the grammar")

    def _attribute(self, node: ast.Attribute) -> str:
        if not isinstance(node.value, ast.Name):
            self.fail(f"{ast.unparse(node)!r} is not NAME.size or NAME.shape[k]")
        name = node.value.id
        if name in _LAUNCH and node.attr in _AXES:
            return self._launch_dim(name, node.attr)
        if name in _LAUNCH and node.attr not in ("size", "shape"):
            self.fail(f"{name}.{node.attr} is not a launch dimension: write {name}.x, .y or .z")
        if node.attr == "size":
            self._param(name, need="array")
            return f"_prod(e[{name!r}])"
        if node.attr == "shape":
            self.fail(f"{name}.shape must be indexed: write {name}.shape[k]")
        self.fail(f"the attribute .{node.attr} is not allowed (only .size and .shape[k])")

    def _launch_dim(self, what: str, axis: str) -> str:
        if self.params is not None and what in self.params:
            self.fail(
                f"{what}.{axis} names the launch's {what} dimension, but the kernel also has a "
                f"parameter {what!r}; rename the parameter so that the relation is unambiguous"
            )
        key = f"{what}.{axis}"
        self.launch.add(key)
        return f"e[{key!r}]"

    def _shape_index(self, node: ast.Subscript) -> str:
        base = node.value
        if not (
            isinstance(base, ast.Attribute)
            and base.attr == "shape"
            and isinstance(base.value, ast.Name)
        ):
            self.fail(f"{ast.unparse(node)!r} is not NAME.shape[k]")
        name = base.value.id
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            self.fail(f"the index in {ast.unparse(node)!r} must be a non-negative integer literal")
        k = index.value
        info = self._param(name, need="array")
        if info is not None and k >= info.ndim:
            self.fail(
                f"{name}.shape[{k}] is out of range: {name!r} has ndim {info.ndim}"
                + (f" (indices 0..{info.ndim - 1})" if info.ndim else " (no shape entries)")
            )
        return f"e[{name!r}][{k}]"


def _available(params: Iterable[ParamInfo]) -> str:
    infos = list(params)
    arrays = ", ".join(f"{p.name} (ndim {p.ndim})" for p in infos if p.kind == "array")
    ints = ", ".join(p.name for p in infos if p.kind == "int")
    return (
        f"Available names: arrays {arrays or 'none'}; integer scalars {ints or 'none'}; "
        f"launch dimensions {', '.join(LAUNCH_NAMES)}."
    )


def _parse_tree(text: object, translator: _Translator) -> tuple[str, str, str]:
    if not isinstance(text, str):
        translator.text = repr(text)
        translator.fail(f"a relation must be a str, got {type(text).__name__}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        translator.fail(f"it is not a valid expression ({exc.msg})")
    return translator.relation(tree.body)


def check_relation_syntax(text: str) -> None:
    """Check a relation against the grammar without knowing the kernel.

    Used when a :class:`~simtsafe._contract.LaunchContract` is built on its
    own; names and shape indices are checked later by :func:`parse_relation`.

    Args:
        text: The relation, e.g. ``"a.size == out.size"``.

    Raises:
        ContractDefinitionError: The text is not one relation of the grammar.
    """
    _parse_tree(text, _Translator(str(text).strip(), None, None))


def parse_relation(text: str, params: Sequence[ParamInfo], *, kernel: str) -> Relation:
    """Validate a relation against a kernel's parameters and compile it.

    Args:
        text: The relation, e.g. ``"out.shape[0] == n * 2"``.
        params: The kernel's parameters.
        kernel: The kernel's name, for error messages.

    Returns:
        The compiled, immutable :class:`Relation`.

    Raises:
        ContractDefinitionError: The relation is outside the grammar or uses a
            name that is not an array / integer scalar parameter of ``kernel``.
    """
    translator = _Translator(str(text).strip(), {p.name: p for p in params}, kernel)
    left, op, right = _parse_tree(text, translator)
    namespace: dict[str, object] = {"__builtins__": {}, "_prod": math.prod}

    def build(src: str) -> Callable[[Env], object]:
        code = compile(f"lambda e: {src}", f"<requires {translator.text}>", "eval")
        return cast("Callable[[Env], object]", eval(code, namespace))

    return Relation(
        text=translator.text,
        names=frozenset(translator.names),
        op=op,
        launch=frozenset(translator.launch),
        source=f"{left} {op} {right}",
        _left=cast("Callable[[Env], int]", build(left)),
        _right=cast("Callable[[Env], int]", build(right)),
        _holds=cast("Callable[[Env], bool]", build(f"{left} {op} {right}")),
    )
