"""float16 -> integer casts truncate toward zero, as Python's int() and numpy's cast do, on the
simulator here and on the GPU (tests/gpu/test_fp16_casts_gpu.py; lowering/_halfcasts.py: numba-cuda
rounded to nearest). Attack round 30, FINDING 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.attacks30 import FINDINGS

pytestmark = pytest.mark.sim

#: halfway and near-integer values of both signs (exact in float16)
VALUES = np.array([1.7, 2.5, 3.5, -1.7, 0.6, 7.9, -0.6, 100.4], np.float16)


def expected(x: np.ndarray) -> np.ndarray:
    """``int(x) * 1000 + int(float32(x)) * 10 + int32(x)``, truncating as numpy does."""
    t = np.trunc(x.astype(np.float64)).astype(np.int64)
    return t * 1000 + t * 10 + t


def run_casts(tmp_path: Path) -> np.ndarray:
    k = load_kernel_module(tmp_path, FINDINGS["fp16-to-int-rounds"]).k
    out = cuda.to_device(np.zeros(8, np.int64))
    k.prepare(grid=1, block=8)(
        out, cuda.to_device(VALUES), cuda.to_device(VALUES.astype(np.float32))
    )
    return out.copy_to_host()


def test_float16_to_int_truncates(tmp_path: Path) -> None:
    got = run_casts(tmp_path)
    np.testing.assert_array_equal(got, expected(VALUES))
    assert list(got[:3]) == [1011, 2022, 3033]  # 1.7 -> 1, 2.5 -> 2, 3.5 -> 3
