"""Attack round 25 (tests/kernels/attacks25.py) on the simulator: a chunk witness's ``valid``
and a witness's ``in_bounds`` are numpy bools, as the device's, so ``~c.valid`` is "not valid"
(a Python bool's ``~`` is -2 or -1, both true: every output was inf)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks25 import FINDINGS

pytestmark = pytest.mark.sim


def _expected(x: np.ndarray) -> np.ndarray:
    return x - x.max(axis=1, keepdims=True)


@pytest.mark.parametrize("runner", ["launch", "sim.check"])
def test_inverted_valid_masks_the_padding(tmp_path: Path, runner: str) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS["invert-valid"])
    x = np.arange(80, dtype=np.float32).reshape(2, 40)
    if runner == "launch":
        out = cuda.to_device(np.zeros_like(x))
        mod.k.prepare(grid=2, block=32)(out, cuda.to_device(x))
        got = out.copy_to_host()
    else:
        report = ss.sim.check(mod.k, 2, 32, np.zeros_like(x), x)
        assert report.ok, report
        got = report.outputs["out"]
    np.testing.assert_array_equal(got, _expected(x))
