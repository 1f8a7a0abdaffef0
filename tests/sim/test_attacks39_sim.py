"""Attack round 39 (tests/kernels/attacks39.py) on the simulator: the refused shapes do
diverge at their collective when replayed (the refusals are not false), and the accepted
shape does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks39 import ACCEPTED, DIVERGE, REFUSED, launch_args

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", DIVERGE)
def test_refused_shapes_diverge(tmp_path: Path, name: str) -> None:
    kernel = load_kernel_module(tmp_path, REFUSED[name][0]).k
    report = ss.sim.check(kernel, 1, 64, *launch_args(name))
    assert "barrier_divergence" in {f.kind for f in report.findings}, report


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_shapes_do_not_diverge(tmp_path: Path, name: str) -> None:
    kernel = load_kernel_module(tmp_path, ACCEPTED[name]).k
    report = ss.sim.check(kernel, 1, 64, *launch_args(name))
    assert not report.findings, report
