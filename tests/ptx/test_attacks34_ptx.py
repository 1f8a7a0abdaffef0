"""Attack round 34 (tests/kernels/attacks34.py) on the real target (NVVM, no GPU): the signed
tuple positions of 1556cfb hold (unsafe shapes refused, safe ones accepted), device helpers'
IndexError status holds, undefined behaviour the copy's passes could use is guarded by Numba
or refused; two findings at NVVM's default level (it folded through the original IR's poison,
which the analysed copy no longer had) are closed by NVVM compiling the analysed wrapping form
(lowering/_nvvminput): the kernels are accepted and the PTX has no exit before the barrier."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks33 import poison_kernel
from tests.kernels.attacks34 import (
    COMPILED_ONLY,
    FASTMATH_HELD,
    FINDING_EXITS,
    FINDINGS,
    HELPERS_ACCEPTED,
    HELPERS_REFUSED,
    NOT_COMPILED,
    NOT_UNIFORM_BLOCK,
    OPT0_COMPUTES,
    POSITIONS_ACCEPTED,
    POSITIONS_REFUSED,
    POSITIONS_STILL_REFUSED,
    SAFE_TWINS,
    TUPLE_INDEX,
    UB_HELD,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)
_OPTIONS = pytest.mark.parametrize("options", ["", "opt=False, "], ids=["default", "opt0"])


def _body_kernel(body: str, options: str = "") -> str:
    return "import math\n" + poison_kernel(body, options)


def _before_barrier(ptx: str) -> str:
    entry = ptx[ptx.index(".entry") :]
    return entry[: entry.index("bar.sync")]


# ------------------------------------------------------------------ findings (default level)


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_default_level_has_no_exit_the_copy_folded(tmp_path: Path, name: str) -> None:
    """Accepted, and no thread-dependent exit before the barrier in the PTX NVVM makes at its
    default level: NVVM compiles the wrapping form the analysis reads (lowering/_nvvminput),
    so it cannot fold one half of the identity and keep the other."""
    ptx = load_kernel_module(tmp_path, _body_kernel(FINDINGS[name])).k.ptx(cc=CC)
    head = _before_barrier(ptx)
    assert not re.search(FINDING_EXITS[name], head), head


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_findings_are_safe_at_opt0(tmp_path: Path, name: str) -> None:
    """At -opt=0 (``opt=False``) the GPU computes both halves as the copy does -- wrapping
    add, a shift the hardware clamps -- so no thread leaves there: the copy matches -opt=0,
    not NVVM's default level."""
    ptx = load_kernel_module(tmp_path, _body_kernel(FINDINGS[name], "opt=False, ")).k.ptx(cc=CC)
    head = _before_barrier(ptx)
    assert re.search(OPT0_COMPUTES[name], head), head
    assert not re.search(FINDING_EXITS[name], head)


# ------------------------------------------------------------------ held: undefined behaviour


@_OPTIONS
@pytest.mark.parametrize("name", sorted(UB_HELD))
def test_undefined_behaviour_held(tmp_path: Path, name: str, options: str) -> None:
    message = ptx_refusal(tmp_path, _body_kernel(UB_HELD[name], options), CC)
    assert NOT_UNIFORM_BLOCK in message, message


@pytest.mark.parametrize("name", sorted(FASTMATH_HELD))
def test_fastmath_held(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, _body_kernel(FASTMATH_HELD[name], "fastmath=True, "), CC)
    assert NOT_UNIFORM_BLOCK in message, message


@pytest.mark.parametrize("name", sorted(NOT_COMPILED))
def test_unguarded_division_does_not_compile(tmp_path: Path, name: str) -> None:
    body, fragment = NOT_COMPILED[name]
    message = ptx_refusal(tmp_path, _body_kernel(body), CC)
    assert fragment in message, message


@_OPTIONS
@pytest.mark.parametrize("name", sorted(SAFE_TWINS))
def test_safe_twins_accepted(tmp_path: Path, name: str, options: str) -> None:
    ptx = load_kernel_module(tmp_path, _body_kernel(SAFE_TWINS[name], options)).k.ptx(cc=CC)
    assert "bar.sync" in ptx


# ------------------------------------------------------------------ held: tuple positions


@pytest.mark.parametrize("name", sorted(POSITIONS_ACCEPTED))
def test_positions_accepted(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, POSITIONS_ACCEPTED[name]).k
    assert ss.check_kernel(k) == []
    assert "bar.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(COMPILED_ONLY))
def test_positions_by_wrapping_counts_accepted(tmp_path: Path, name: str) -> None:
    """Safe on the GPU (Numba's count wraps as LLVM folds it: no trip, or Numba's case -1);
    Python would raise, so not run on the simulator."""
    k = load_kernel_module(tmp_path, COMPILED_ONLY[name]).k
    assert ss.check_kernel(k) == []
    assert "bar.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(POSITIONS_REFUSED))
def test_positions_refused(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, POSITIONS_REFUSED[name], CC)
    assert NOT_UNIFORM_BLOCK in message, message


def test_positions_refused_name_the_tuple_index(tmp_path: Path) -> None:
    """The message of a position the proof leaves open names the tuple index."""
    message = ptx_refusal(tmp_path, POSITIONS_REFUSED["counter-from-1"], CC)
    assert TUPLE_INDEX in message, message


@pytest.mark.parametrize("name", sorted(POSITIONS_STILL_REFUSED))
def test_positions_still_refused(tmp_path: Path, name: str) -> None:
    """Safe, outside what the rules prove (conservative): pinned."""
    message = ptx_refusal(tmp_path, POSITIONS_STILL_REFUSED[name], CC)
    assert NOT_UNIFORM_BLOCK in message, message


@pytest.mark.parametrize("name", sorted(HELPERS_ACCEPTED))
def test_helper_status_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, HELPERS_ACCEPTED[name]).k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(HELPERS_REFUSED))
def test_helper_status_refused(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, HELPERS_REFUSED[name], CC)
    assert NOT_UNIFORM_BLOCK in message, message
