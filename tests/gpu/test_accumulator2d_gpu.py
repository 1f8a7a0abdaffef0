"""2D shared accumulators on a real GPU: the simulator's values (tests/sim)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.accumulator2d_rules import (
    ACCEPTED,
    FLOAT_INTO_INT,
    FLOAT_INTO_INT_EXPECTED,
    expected,
)
from tests.sim.test_accumulator2d_sim import _inputs, float_into_int

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_updates_and_reads_match_numpy(tmp_path: Path, seed: int) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED).k
    idx, val = _inputs(seed)
    out = cuda.to_device(np.zeros(128, np.float32))
    k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    np.testing.assert_array_equal(out.copy_to_host(), expected(idx, val))


def test_float_values_convert_toward_zero_saturating(tmp_path: Path) -> None:
    """The simulator's values (tests/sim): cvt.rzi, NaN to 0."""
    k = load_kernel_module(tmp_path, FLOAT_INTO_INT).k
    np.testing.assert_array_equal(float_into_int(k), FLOAT_INTO_INT_EXPECTED)
