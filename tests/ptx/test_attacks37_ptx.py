"""Attack round 37 (tests/kernels/attacks37.py) on the real target (NVVM, no GPU): sync
dependence counted only for branches that choose between two different values (a3adcc9).

FINDING 1 (HIGH; fixed): a loop's exits that go straight from inside the loop to a phi after
it carry one value each (the counter), so no exit counted, and the operand was read inside
the loop (no temporal divergence): a per-thread iteration count was taken as uniform and
bounded a loop of collectives. A phi's operand is now also read at the phi's block (the
exits' level where the edge leaves a loop). FINDING 2 (LOW, xfail): a false refusal, both sides of a thread branch
dividing by the uniform ``d``.

Held: 6 refused with the deciding branch or exit named, 3 accepted, ``match`` refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import assert_ptx_accepted, line_of, load_kernel_module, ptx_refusal
from tests.kernels.attacks37 import (
    ACCEPTED,
    FALSE_REFUSAL,
    MATCH,
    REFUSED,
    UNSAFE_ACCEPTED,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(UNSAFE_ACCEPTED))
def test_an_iteration_count_that_escapes_its_loop_is_refused(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, UNSAFE_ACCEPTED[name])
    assert "needs every thread of the" in message
    assert f"line {line_of(tmp_path, '# SYNC')}" in message


@pytest.mark.xfail(
    strict=True,
    reason="FINDING 2 (false refusal): both sides of a thread branch divide by the uniform d; "
    "the status phi's error edges are behind both sides",
)
def test_a_division_on_both_sides_of_a_thread_branch_is_accepted(tmp_path: Path) -> None:
    assert_ptx_accepted(tmp_path, FALSE_REFUSAL)


def test_a_division_on_both_sides_of_a_thread_branch_is_refused_now(tmp_path: Path) -> None:
    message = ptx_refusal(tmp_path, FALSE_REFUSAL)
    assert "`block.sync` needs every thread of the block to reach it" in message
    assert f"(in helper pick, line {line_of(tmp_path, '# PICK')})" in message


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_held_shapes_are_refused_at_the_deciding_branch(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, REFUSED[name])
    assert "`block.sum` needs every thread of the block to reach it" in message
    assert f"at line {line_of(tmp_path, '# EXIT')}" in message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_held_shapes_are_accepted(tmp_path: Path, name: str) -> None:
    assert_ptx_accepted(tmp_path, ACCEPTED[name])


def test_match_is_refused_at_decoration(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match="`match` is not supported in kernels; use if/elif"):
        load_kernel_module(tmp_path, MATCH)
