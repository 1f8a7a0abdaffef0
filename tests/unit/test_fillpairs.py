"""``decoration._fillpairs``: which consecutive ``fill_async`` statements of a rewritten body
become one pair call, and which stay as written."""

from __future__ import annotations

import ast
import textwrap

import pytest

from simtsafe.decoration._fillpairs import pair_fills


def _paired(code: str) -> str:
    body = ast.parse(textwrap.dedent(code)).body
    return ast.unparse(ast.Module(body=pair_fills(body), type_ignores=[]))


def test_two_consecutive_fills_become_one_pair_with_the_second_line() -> None:
    out = _paired(
        """
        __ss_shared_fill_async(ta, a, (row0, k0 + 3 * BK))
        __ss_shared_fill_async(tb, b, (k0 + 3 * BK, col0))
        """
    )
    assert out == (
        "__ss_shared_fill_async_pair(ta, a, (row0, k0 + 3 * BK), tb, b, (k0 + 3 * BK, col0), 3)"
    )


def test_three_fills_are_a_pair_and_one_call_and_nested_bodies_are_paired() -> None:
    out = _paired(
        """
        for k in range(n):
            __ss_shared_fill_async(t0, a, k)
            __ss_shared_fill_async(t1, a, -k)
            __ss_shared_fill_async(t2, a, k << 2)
        """
    )
    assert out.splitlines() == [
        "for k in range(n):",
        "    __ss_shared_fill_async_pair(t0, a, k, t1, a, -k, 4)",
        "    __ss_shared_fill_async(t2, a, k << 2)",
    ]


@pytest.mark.parametrize(
    "second",
    [
        "__ss_shared_fill_async(t0, a, k + 1)",  # the same tile: left as written
        "__ss_shared_fill_async(t1, a, f(k))",  # a call in the arguments
        "__ss_shared_fill_async(t1, a, k // 2)",  # a division (could raise)
        "__ss_shared_fill_async(t1, a, o[0])",  # an index (could raise)
        "__ss_shared_fill_async(t1, a, origin=k)",  # a keyword
        "__ss_shared_commit_group()",  # not a fill
    ],
)
def test_fills_that_stay_as_written(second: str) -> None:
    code = f"__ss_shared_fill_async(t0, a, k)\n{second}\n"
    assert _paired(code) == ast.unparse(ast.parse(code))


def test_a_statement_between_two_fills_keeps_them_apart() -> None:
    code = "__ss_shared_fill_async(t0, a, k)\nx = k\n__ss_shared_fill_async(t1, a, x)\n"
    assert _paired(code) == ast.unparse(ast.parse(code))
