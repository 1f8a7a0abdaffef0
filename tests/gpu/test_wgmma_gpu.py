"""``simtsafe.wgmma`` on a GPU of compute capability 9.0 (wgmma is an sm_90a instruction):
the small GEMM of tests/kernels/wgmma_rules.py and its accepted twins, and
examples/gemm_bf16_wgmma.py at sizes that cut every tile edge, exact against numpy (small
integers: every product and sum is exact in fp32)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example
from tests.kernels import load_kernel_module
from tests.kernels import wgmma_rules as rules
from tests.wgmma_cases import small_gemm

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.fixture(autouse=True)
def sm90() -> None:
    if cuda.get_current_device().compute_capability != (9, 0):
        pytest.skip("wgmma needs compute capability 9.0")


@pytest.mark.parametrize(("m", "k", "n"), [(64, 64, 64), (130, 200, 70), (1, 8, 1)])
def test_small_gemm(tmp_path: Path, m: int, k: int, n: int) -> None:
    got, want = small_gemm(load_kernel_module(tmp_path, rules.ACCEPTED), m, k, n)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["refill_in_flight", "never_waited", "divergent"])
def test_accepted_twins_compute_the_same(tmp_path: Path, case: str) -> None:
    got, want = small_gemm(load_kernel_module(tmp_path, rules.ACCEPTED_TWINS[case]), 70, 130, 65)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("m", "k", "n"), [(128, 64, 256), (200, 160, 300), (129, 72, 257)])
def test_the_example_matches_numpy(m: int, k: int, n: int) -> None:
    assert example("gemm_bf16_wgmma").run(m, k, n)
