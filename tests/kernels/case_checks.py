"""The simulator's checks of a corpus of accepted kernels and refused twins (fixed_refusals,
range_loops30, positions33): an accepted case runs through ``prepare`` and gives its
reference's values, and ``simtsafe.sim.check`` replays it with no finding; a twin is refused
by ``prepare`` with its message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module


def assert_runs_like_reference(tmp_path: Path, case: Any, rtol: float) -> None:
    """``case`` (``source``, ``args()``, ``expect(*args)``, ``grid``, ``block``): the launch's
    arrays equal ``expect``'s within ``rtol``, and its replay is clean."""
    k = load_kernel_module(tmp_path, case.source).k
    host = case.args()
    expected = case.expect(*host)
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    k.prepare(grid=case.grid, block=case.block)(*dev)
    for got, want in zip(dev, expected, strict=False):
        np.testing.assert_allclose(got.copy_to_host(), want, rtol=rtol)
    report = ss.sim.check(k, case.grid, case.block, *case.args())
    assert report.ok, report


def assert_refused_at_prepare(tmp_path: Path, source: str, fragment: str) -> None:
    """``source``'s kernel ``k`` is refused (at decoration or ``prepare``) with ``fragment``."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.prepare(grid=1, block=64)
    assert fragment in str(info.value), str(info.value)
