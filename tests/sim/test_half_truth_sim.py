"""Truth tests of float16 and bfloat16 on the simulator (tests/kernels/half_truth.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels.half_truth import DTYPES, expected, run, values

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_truth_of_a_half_float_is_pythons(tmp_path: Path, dtype: str) -> None:
    x = values(dtype)
    got = run(tmp_path, dtype)
    np.testing.assert_array_equal(got, expected(x))
    assert list(got[:3]) == [10, 10, 1101]  # +0 and -0 are false, 1.5 is true
    assert got[4] == 1101  # NaN is true
