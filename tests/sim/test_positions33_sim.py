"""Tuple positions, round 33 (tests/kernels/positions33.py) on the simulator: each accepted
kernel runs through ``prepare`` and gives the values of its Python reference (the loop body
run thread by thread), ``simtsafe.sim.check`` replays it with no finding, and each unsafe
twin is refused there too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.positions33 import ACCEPTED, REFUSED

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_matches_reference(tmp_path: Path, name: str) -> None:
    case = ACCEPTED[name]
    k = load_kernel_module(tmp_path, case.source).k
    host = case.args()
    expected = case.expect(*host)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    k.prepare(grid=case.grid, block=case.block)(*dev)
    for got, want in zip(dev, expected, strict=False):
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-9)
    report = ss.sim.check(k, case.grid, case.block, *case.args())
    assert report.ok, report


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_twin_refused(tmp_path: Path, name: str) -> None:
    source, fragment = REFUSED[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.prepare(grid=1, block=64)
    assert fragment in str(info.value), str(info.value)
