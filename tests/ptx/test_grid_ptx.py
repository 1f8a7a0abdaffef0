"""Grid cooperation in Tier 1 on the real target (NVVM, no GPU): every rule of
tests/kernels/grid_rules.py is refused with its message at its line, its accepted twins compile
to a cooperative kernel (cudaCGSynchronize), and grid.read's load is bounds-checked."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import assert_refused, line_of, load_kernel_module
from tests.kernels.grid_rules import ACCEPTED, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_is_a_cooperative_kernel(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case][0]).k.ptx(cc=CC)
    assert "cudaCGSynchronize" in ptx


def test_same_phase_refusal_names_the_write(tmp_path: Path) -> None:
    source, _ = REFUSED["read-without-a-sync"]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert info.value.rule == "grid-phase"
    assert info.value.cause_line == line_of(tmp_path, "a[w] = np.float32(1)")
