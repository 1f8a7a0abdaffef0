"""The ``requires`` relation language: grammar, name checks, evaluation, messages."""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simtsafe._errors import ContractDefinitionError, LaunchContractError
from simtsafe.host._requires import (
    GRAMMAR,
    LAUNCH_NAMES,
    Env,
    ParamInfo,
    Relation,
    check_relation_syntax,
    launch_env,
    parse_relation,
)

PARAMS = [
    ParamInfo("a", "array", 1),
    ParamInfo("out", "array", 2),
    ParamInfo("n", "int"),
    ParamInfo("alpha", "float"),
]
ENV: Env = {"a": (1000,), "out": (32, 32), "n": 7}


def parse(text: str) -> Relation:
    return parse_relation(text, PARAMS, kernel="vecadd")


def reject(text: str, *fragments: str) -> ContractDefinitionError:
    with pytest.raises(ContractDefinitionError) as info:
        parse(text)
    message = str(info.value)
    for fragment in ("kernel 'vecadd'", repr(text.strip()), *fragments):
        assert fragment in message, (fragment, message)
    assert info.value.kernel == "vecadd"
    assert info.value.relation == text.strip()  # type: ignore[attr-defined]
    return info.value


# --- accepted relations --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.size == out.size", False),
        ("a.size <= out.size", True),
        ("a.size < out.size", True),
        ("a.size != out.size", True),
        ("out.size > a.size", True),
        ("out.size >= 1024", True),
        ("out.shape[0] == out.shape[1]", True),
        ("out.shape[0] * out.shape[1] == out.size", True),
        ("a.shape[0] == n * 142 + 6", True),
        ("a.size - (n + 3) * 100 == 0", True),
        ("-n + 7 == 0", True),
        ("n == 7", True),
        ("  a.size == 1000  ", True),
        ("0x10 * 2 == 32", True),
    ],
)
def test_accepted_relations_evaluate(text: str, expected: bool) -> None:
    relation = parse(text)
    assert relation.holds(ENV) is expected


def test_relation_records_text_names_and_op() -> None:
    relation = parse(" out.shape[1] * n <= a.size ")
    assert relation.text == "out.shape[1] * n <= a.size"
    assert relation.names == frozenset({"out", "n", "a"})
    assert relation.op == "<="


def test_relation_is_immutable() -> None:
    relation = parse("a.size == out.size")
    with pytest.raises(dataclasses.FrozenInstanceError):
        relation.text = "n == 1"  # type: ignore[misc]


def test_relation_equality_ignores_compiled_callables() -> None:
    assert parse("a.size == out.size") == parse("a.size == out.size")
    assert parse("a.size == out.size") != parse("a.size <= out.size")


def test_explain_shows_both_sides() -> None:
    relation = parse("a.size == out.size")
    assert relation.explain({"a": (1000,), "out": (32, 32)}) == (
        "a.size == out.size is 1000 == 1024"
    )


def test_size_of_zero_dim_array_is_one() -> None:
    relation = parse_relation("s.size == 1", [ParamInfo("s", "array", 0)], kernel="k")
    assert relation.holds({"s": ()})


def test_arithmetic_is_exact_without_overflow() -> None:
    relation = parse("a.size * a.size * a.size * a.size == n")
    big = 2**40
    assert relation.holds({"a": (big,), "n": big**4})
    assert not relation.holds({"a": (big,), "n": big**4 - 1})


def test_compiled_relation_has_no_builtins() -> None:
    # Only validated names reach the generated code; it has no builtins to reach.
    relation = parse("n == 7")
    assert relation._holds.__globals__["__builtins__"] == {}


# --- launch dimensions ---------------------------------------------------------------

LAUNCH: Env = {**ENV, **launch_env((4, 2, 1), (256, 1, 1))}


def test_launch_env_names_every_axis() -> None:
    assert launch_env((1, 2, 3), (4, 5, 6)) == {
        "grid.x": 1,
        "grid.y": 2,
        "grid.z": 3,
        "block.x": 4,
        "block.y": 5,
        "block.z": 6,
    }
    assert tuple(launch_env((1, 1, 1), (1, 1, 1))) == LAUNCH_NAMES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("grid.x * block.x >= a.size", True),
        ("grid.x * block.x >= a.size + 25", False),
        ("grid.x * block.x * grid.y * block.y * grid.z * block.z == 2048", True),
        ("grid.y * block.y >= out.shape[0]", False),
        ("block.x == 256", True),
        ("grid.z + block.z == 2", True),
        ("grid.x * block.x - n >= 0", True),
    ],
)
def test_launch_dimensions_evaluate(text: str, expected: bool) -> None:
    assert parse(text).holds(LAUNCH) is expected


def test_relation_records_launch_dimensions_apart_from_names() -> None:
    mixed = parse("grid.x * block.x >= out.size + n")
    assert mixed.names == frozenset({"out", "n"})
    assert mixed.launch == frozenset({"grid.x", "block.x"})
    assert mixed.per_launch
    only = parse("block.x * block.y <= 512")
    assert only.names == frozenset() and only.launch == frozenset({"block.x", "block.y"})
    assert not only.per_launch
    assert not parse("1 <= 2").per_launch
    assert parse("a.size == out.size").launch == frozenset()


def test_explain_shows_launch_values() -> None:
    relation = parse("grid.x * block.x >= a.size + 100")
    assert relation.explain(LAUNCH) == "grid.x * block.x >= a.size + 100 is 1024 >= 1100"


def test_launch_relation_has_no_builtins() -> None:
    assert parse("grid.x >= 1")._holds.__globals__["__builtins__"] == {}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("grid.w == 1", "grid.w is not a launch dimension: write grid.x, .y or .z"),
        ("block.ndim == 1", "block.ndim is not a launch dimension"),
        ("grid.size == 1", "unknown name 'grid' (grid.x, grid.y and grid.z are the launch's grid"),
        ("block == 1", "unknown name 'block' (block.x, block.y and block.z"),
        ("grid.shape[0] == 1", "unknown name 'grid'"),
        ("grid.x.y == 1", "is not NAME.size or NAME.shape[k]"),
        ("Grid.x == 1", "the attribute .x is not allowed"),
    ],
)
def test_bad_launch_dimensions_refused(text: str, fragment: str) -> None:
    reject(text, fragment)


def test_launch_dimension_shadowed_by_a_parameter_refused() -> None:
    params = [*PARAMS, ParamInfo("grid", "array", 1)]
    with pytest.raises(ContractDefinitionError) as info:
        parse_relation("grid.x * block.x >= a.size", params, kernel="k")
    assert "also has a parameter 'grid'; rename the parameter" in str(info.value)
    # The twin: the parameter itself is fine where the relation reads it as an array.
    assert parse_relation("grid.size == a.size", params, kernel="k").names == {"grid", "a"}


def test_syntax_check_accepts_launch_dimensions() -> None:
    check_relation_syntax("grid.x * block.x >= out.size")
    with pytest.raises(ContractDefinitionError, match="grid.q is not a launch dimension"):
        check_relation_syntax("grid.q >= 1")


# --- rejected relations --------------------------------------------------------------


def test_unknown_name_lists_available_names() -> None:
    error = reject(
        "a.size == b.size",
        "unknown name 'b'",
        "Grammar: one comparison (== != < <= > >=)",
        "Available names: arrays a (ndim 1), out (ndim 2); integer scalars n; launch "
        "dimensions grid.x, grid.y, grid.z, block.x, block.y, block.z.",
    )
    assert isinstance(error, LaunchContractError)
    assert isinstance(error, ValueError)


def test_size_on_scalar() -> None:
    reject("n.size == 1", "'n' is an integer scalar parameter and has no .size")


def test_shape_on_scalar() -> None:
    reject("n.shape[0] == 1", "'n' is an integer scalar parameter")


def test_float_scalar_refused() -> None:
    reject("alpha == 1", "'alpha' is a float scalar parameter")


def test_float_scalar_size_refused() -> None:
    reject("alpha.size == 1", "'alpha' is a float scalar parameter")


def test_bare_array_refused() -> None:
    reject("a == 1", "'a' is an array parameter; use a.size or a.shape[k]")


@pytest.mark.parametrize(
    ("text", "op"),
    [
        ("a.size / 2 == 1", "'/'"),
        ("a.size // 2 == 1", "'//'"),
        ("a.size % 2 == 1", "'%'"),
        ("a.size ** 2 == 1", "'**'"),
        ("a.size << 1 == 1", "'<<'"),
        ("a.size & 1 == 1", "'&'"),
    ],
)
def test_refused_operators(text: str, op: str) -> None:
    reject(text, f"the operator {op} is not allowed (use + - * only)")


def test_function_call_refused() -> None:
    reject("len(a) == 1", "function calls such as 'len(a)' are not allowed")


def test_import_attempt_refused() -> None:
    reject("__import__('os').system('x') == 0", "function calls")


def test_chained_comparison_refused() -> None:
    reject("n < a.size < out.size", "it chains 2 comparisons")


def test_and_or_refused() -> None:
    reject("n == 1 and a.size == 1", "'and'/'or' are not allowed")
    reject("n == 1 or a.size == 1", "'and'/'or' are not allowed")


def test_shape_index_out_of_range() -> None:
    reject("out.shape[2] == 1", "out.shape[2] is out of range: 'out' has ndim 2 (indices 0..1)")


def test_shape_index_on_zero_dim() -> None:
    with pytest.raises(ContractDefinitionError, match="no shape entries"):
        parse_relation("s.shape[0] == 1", [ParamInfo("s", "array", 0)], kernel="k")


def test_negative_shape_index_refused() -> None:
    reject("a.shape[-1] == 1", "must be a non-negative integer literal")


def test_variable_shape_index_refused() -> None:
    reject("a.shape[n] == 1", "must be a non-negative integer literal")


def test_unindexed_shape_refused() -> None:
    reject("a.shape == 1", "a.shape must be indexed")


def test_other_attribute_refused() -> None:
    reject("a.ndim == 1", "the attribute .ndim is not allowed")


@pytest.mark.parametrize("text", ["a.size == 1.5", "a.size == True", "a.size == 'x'"])
def test_non_integer_literals_refused(text: str) -> None:
    reject(text, "is not a non-negative integer")


def test_not_a_comparison() -> None:
    reject("a.size + 1", "it is not a comparison")


def test_membership_comparison_refused() -> None:
    reject("n in a.size", "is not allowed")


def test_unary_plus_and_not_refused() -> None:
    reject("+n == 1", "the unary operator")
    reject("not n == 1", "it is not a comparison")


def test_syntax_error() -> None:
    reject("a.size ==", "it is not a valid expression")


def test_nested_comparison_refused() -> None:
    reject("(n == 1) == (a.size == 1)", "a comparison may not appear inside an expression")


def test_slice_and_subscript_of_name_refused() -> None:
    reject("out[0] == 1", "is not NAME.shape[k]")


def test_non_string_relation_refused() -> None:
    with pytest.raises(ContractDefinitionError, match="must be a str"):
        parse_relation(3, PARAMS, kernel="k")  # type: ignore[arg-type]


def test_message_says_none_when_no_names() -> None:
    with pytest.raises(ContractDefinitionError) as info:
        parse_relation("x == 1", [], kernel="k")
    assert "Available names: arrays none; integer scalars none; launch dimensions" in str(
        info.value
    )


# --- context-free syntax check -------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["a.size == b.size", "q.shape[9] <= n * 2", "-x + 3 != y", "1 == 1"]
)
def test_syntax_check_accepts_any_names(text: str) -> None:
    check_relation_syntax(text)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a.size / 2 == 1", "'/'"),
        ("1 < 2 < 3", "chains 2 comparisons"),
        ("f(x) == 1", "function calls"),
        ("a.size", "not a comparison"),
        ("a.size == 1 or b == 1", "'and'/'or'"),
    ],
)
def test_syntax_check_rejects_grammar(text: str, fragment: str) -> None:
    with pytest.raises(ContractDefinitionError) as info:
        check_relation_syntax(text)
    message = str(info.value)
    assert fragment in message
    assert repr(text) in message
    assert GRAMMAR in message
    assert "kernel" not in message


# --- ParamInfo -----------------------------------------------------------------------


def test_param_info_validates() -> None:
    with pytest.raises(ValueError, match="kind must be"):
        ParamInfo("a", "complex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ndim must be a non-negative int"):
        ParamInfo("a", "array", -1)


# --- holds() agrees with direct integer evaluation -----------------------------------

Expr = tuple[str, Callable[[dict[str, tuple[int, ...]], int, int], int]]

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

_TERMS: list[Expr] = [
    ("x.size", lambda s, m, k: math.prod(s["x"])),
    ("y.size", lambda s, m, k: math.prod(s["y"])),
    ("x.shape[0]", lambda s, m, k: s["x"][0]),
    ("y.shape[1]", lambda s, m, k: s["y"][1]),
    ("y.shape[2]", lambda s, m, k: s["y"][2]),
    ("m", lambda s, m, k: m),
    ("k", lambda s, m, k: k),
    ("grid.x", lambda s, m, k: s["grid"][0]),
    ("block.z", lambda s, m, k: s["block"][2]),
]


def _exprs() -> st.SearchStrategy[Expr]:
    literal = st.integers(0, 10**12).map(lambda v: (str(v), lambda s, m, k, v=v: v))
    leaves = st.one_of(st.sampled_from(_TERMS), literal)

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        def combine(sym: str, lhs: Expr, rhs: Expr) -> Expr:
            fn = {"+": operator.add, "-": operator.sub, "*": operator.mul}[sym]
            return (
                f"({lhs[0]} {sym} {rhs[0]})",
                lambda s, m, k: fn(lhs[1](s, m, k), rhs[1](s, m, k)),
            )

        negate = children.map(lambda e: (f"-({e[0]})", lambda s, m, k: -e[1](s, m, k)))
        binary = st.builds(combine, st.sampled_from(["+", "-", "*"]), children, children)
        return st.one_of(binary, negate)

    return st.recursive(leaves, extend, max_leaves=8)


HYP_PARAMS = [
    ParamInfo("x", "array", 1),
    ParamInfo("y", "array", 3),
    ParamInfo("m", "int"),
    ParamInfo("k", "int"),
]


@settings(max_examples=300, deadline=None)
@given(
    lhs=_exprs(),
    rhs=_exprs(),
    op=st.sampled_from(sorted(_COMPARE)),
    x=st.tuples(st.integers(0, 2**40)),
    y=st.tuples(st.integers(0, 2**20), st.integers(0, 2**20), st.integers(0, 2**20)),
    m=st.integers(-(2**63), 2**63),
    k=st.integers(0, 2**31),
    grid=st.tuples(*[st.integers(1, 2**32 - 1)] * 3),
    block=st.tuples(*[st.integers(1, 1024)] * 3),
)
def test_holds_matches_direct_evaluation(
    lhs: Expr,
    rhs: Expr,
    op: str,
    x: tuple[int],
    y: tuple[int, int, int],
    m: int,
    k: int,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
) -> None:
    text = f"{lhs[0]} {op} {rhs[0]}"
    relation = parse_relation(text, HYP_PARAMS, kernel="k")
    env: Env = {"x": x, "y": y, "m": m, "k": k, **launch_env(grid, block)}
    shapes = {"x": x, "y": y, "grid": grid, "block": block}
    left, right = lhs[1](shapes, m, k), rhs[1](shapes, m, k)
    assert relation.holds(env) is _COMPARE[op](left, right)
    assert relation.explain(env) == f"{text} is {left} {op} {right}"
