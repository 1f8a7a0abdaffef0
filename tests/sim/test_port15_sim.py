"""Porting round 15 (tests/kernels/port15.py): each ported Tier-1 kernel gives numpy's
values on the simulator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels import port15

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(set(port15.ACCEPTED) & set(port15.CHECKS)))
def test_a_ported_kernel_matches_numpy(tmp_path: Path, name: str) -> None:
    mod = port15.load(name, tmp_path)
    assert port15.CHECKS[name](mod, np.random.default_rng(15))
