"""float16 -> integer casts truncate on the GPU (cvt.rzi, lowering/_halfcasts.py), as on the
simulator (tests/sim/test_fp16_casts_sim.py) and in numpy. Skipped without a device."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.sim.test_fp16_casts_sim import VALUES, expected, run_casts

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def test_float16_to_int_truncates_on_device(tmp_path: Path) -> None:
    np.testing.assert_array_equal(run_casts(tmp_path), expected(VALUES))
