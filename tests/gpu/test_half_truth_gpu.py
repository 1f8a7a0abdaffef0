"""Truth tests of float16 and bfloat16 on the GPU (lowering/_halfcasts.py), as on the simulator
(tests/sim/test_half_truth_sim.py) and in Python. Skipped without a device."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels.half_truth import DTYPES, expected, run, values

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_truth_of_a_half_float_on_device(tmp_path: Path, dtype: str) -> None:
    np.testing.assert_array_equal(run(tmp_path, dtype), expected(values(dtype)))
