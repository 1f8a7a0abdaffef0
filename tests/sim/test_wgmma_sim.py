"""``simtsafe.wgmma`` on the simulator: the small GEMM of tests/kernels/wgmma_rules.py exact
against numpy (each thread's accumulator elements from the tiles), and the refusals of
swizzled tiles with the compiled form's texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels import wgmma_rules as rules
from tests.wgmma_cases import small_gemm

pytestmark = pytest.mark.sim


def test_small_gemm(tmp_path: Path) -> None:
    got, want = small_gemm(load_kernel_module(tmp_path, rules.ACCEPTED), 70, 72, 50)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["element_read", "store_pending", "zeros_odd_width"])
def test_refused_as_on_the_device(tmp_path: Path, case: str) -> None:
    source, fragment = rules.REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        small_gemm(load_kernel_module(tmp_path, source), 64, 64, 64)
    assert fragment in str(info.value), str(info.value)
