"""Tuple positions, round 33 (tests/kernels/positions33.py) on the simulator: each accepted
kernel runs through ``prepare`` and gives the values of its Python reference (the loop body
run thread by thread), ``simtsafe.sim.check`` replays it with no finding, and each unsafe
twin is refused there too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.case_checks import assert_refused_at_prepare, assert_runs_like_reference
from tests.kernels.positions33 import ACCEPTED, REFUSED

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_matches_reference(tmp_path: Path, name: str) -> None:
    assert_runs_like_reference(tmp_path, ACCEPTED[name], rtol=1e-9)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_twin_refused(tmp_path: Path, name: str) -> None:
    assert_refused_at_prepare(tmp_path, *REFUSED[name])
