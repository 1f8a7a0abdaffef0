"""Attack round 20 on the simulator: a misaligned nested aligned record is refused as when
compiled (the simulator computed it; the GPU would fault), in a local array at the line that
makes it; the aligned twin runs and matches numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.ptx.test_attacks20_ptx import ALIGNED_TWIN, LOCAL_ONLY, MESSAGE

pytestmark = pytest.mark.sim


def test_a_local_array_of_them_is_refused(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, LOCAL_ONLY).k
    out = cuda.to_device(np.zeros(32, np.float64))
    with pytest.raises(ss.SafetyError, match="cuda.local.array: " + MESSAGE):
        k.prepare(grid=1, block=32)(out, cuda.to_device(np.ones(32, np.float64)))


def test_the_aligned_twin_matches_numpy(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, ALIGNED_TWIN).k
    inner = np.dtype([("x", np.float64), ("y", np.float64)], align=True)
    rec = np.dtype([("c", np.uint8), ("inner", inner)], align=True)
    a = np.zeros(32, rec)
    a["inner"]["y"] = np.arange(32) * 100.0
    out = cuda.to_device(np.zeros(32, rec))
    b = np.arange(32) + 0.5
    k.prepare(grid=1, block=32)(out, cuda.to_device(a), cuda.to_device(b))
    np.testing.assert_array_equal(out.copy_to_host()["inner"]["x"], b + a["inner"]["y"])
