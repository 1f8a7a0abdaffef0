"""Attack round 38 (tests/kernels/attacks38.py) on the real target (NVVM, no GPU): the phi
rule of a3adcc9/9765582 against loops, private memory, switches, selects and helpers.

FINDING 1 (HIGH; fixed): a loop's iteration count, uniform inside its loop since a3adcc9,
stored after the loop into a ``cuda.local.array`` and read back: ``private_level`` read the
stored value's level without temporal divergence. A stored value is now used at the store
and at the load (``use_level`` at both). FALSE REFUSAL (LOW, xfail): the same value
stored on both sides of a thread branch.

Held: 11 refused with the deciding branch or exit named, 3 accepted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import assert_ptx_accepted, line_of, ptx_refusal
from tests.kernels.attacks38 import ACCEPTED, FALSE_REFUSAL, REFUSED, UNSAFE_ACCEPTED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(UNSAFE_ACCEPTED))
def test_an_iteration_count_stored_in_a_local_array_is_refused(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, UNSAFE_ACCEPTED[name])
    assert "needs every thread of the" in message
    assert "a value computed in a loop that threads leave at different iterations" in message


@pytest.mark.xfail(
    strict=True,
    reason="FALSE REFUSAL: the same value stored on both sides of a thread branch; "
    "private_level counts the stores' blocks' control",
)
def test_the_same_value_stored_on_both_sides_is_accepted(tmp_path: Path) -> None:
    assert_ptx_accepted(tmp_path, FALSE_REFUSAL)


def test_the_same_value_stored_on_both_sides_is_refused_now(tmp_path: Path) -> None:
    message = ptx_refusal(tmp_path, FALSE_REFUSAL)
    assert "`block.sum` needs every thread of the block to reach it" in message
    assert f"the branch at line {line_of(tmp_path, '# EXIT')} went" in message


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_held_shapes_are_refused_at_the_deciding_branch(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, REFUSED[name])
    assert "`block.sum` needs every thread of the block to reach it" in message
    assert re.search(rf"\bline {line_of(tmp_path, '# EXIT')}\b", message), message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_held_shapes_are_accepted(tmp_path: Path, name: str) -> None:
    assert_ptx_accepted(tmp_path, ACCEPTED[name])
