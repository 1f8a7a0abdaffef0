"""Attack round 38 (tests/kernels/attacks38.py) on the simulator: the kernels of FINDING 1,
accepted on the compiled form, do diverge at their collective when replayed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks38 import UNSAFE_ACCEPTED, launch_args

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(UNSAFE_ACCEPTED))
def test_an_iteration_count_stored_in_a_local_array_diverges(tmp_path: Path, name: str) -> None:
    kernel = load_kernel_module(tmp_path, UNSAFE_ACCEPTED[name]).k
    report = ss.sim.check(kernel, 1, 64, *launch_args(name))
    kinds = {f.kind for f in report.findings}
    expected = "warp_mask" if name.endswith("-warp") else "barrier_divergence"
    assert expected in kinds, report
