"""Grid cooperation in Tier 1 on a real GPU: the accepted twins of tests/kernels/grid_rules.py,
launched cooperatively, give their results (heat steps over ping-pong buffers read across
simtsafe.grid.sync())."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.grid_rules import ACCEPTED, BLOCK, GRID, STEPS, start

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_gives_its_result(tmp_path: Path, case: str) -> None:
    source, expected = ACCEPTED[case]
    mod = load_kernel_module(tmp_path, source)
    a, b = start()
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    mod.k.prepare(grid=GRID, block=BLOCK)(d_a, d_b, np.int32(STEPS))
    for got, want in zip((d_a.copy_to_host(), d_b.copy_to_host()), expected(a, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
