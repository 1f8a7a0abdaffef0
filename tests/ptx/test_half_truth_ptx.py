"""Truth tests of float16 and bfloat16 compile (numba-cuda: NVVM's ERROR_INVALID_IR for float16,
"No definition for lowering" for bfloat16) to one test of the bits without the sign
(tests/kernels/half_truth.py; the values are checked on the simulator and the GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.half_truth import DTYPES, source

pytestmark = pytest.mark.ptx


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_truth_of_a_half_float_is_a_test_of_its_magnitude_bits(tmp_path: Path, dtype: str) -> None:
    ptx = load_kernel_module(tmp_path, source(dtype)).k.ptx(cc=(9, 0))
    masks = [line for line in ptx.splitlines() if "and.b16" in line and "32767" in line]
    assert len(masks) == 1, ptx  # the four truth tests of one value share one mask
    assert "call" not in ptx  # no conversion shim: the test is inline
