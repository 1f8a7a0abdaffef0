"""Attack round 17 (tests/kernels/attacks17.py) on the simulator: a shared tile, dynamic
tile or local array whose record element has an array field is refused where it is made,
with the typing's message (before, ``e["f"][0] = v`` raced on one element: ``out`` came back
63 in every element and ``sim.check`` saw nothing); the twin with the field as a tile axis
runs and matches numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from simtsafe import SafetyError
from tests.kernels import load_kernel_module
from tests.kernels.attacks17 import FINDINGS
from tests.ptx.test_attacks17_ptx import AXIS_TWIN, LOCAL_ARRAY

pytestmark = pytest.mark.sim

CASES = {
    "tile": (FINDINGS["tile-record-field-race-subscript"], "shared.tile", 0),
    "dynamic-tile": (FINDINGS["dynamic-tile-record-field-oob"], "shared.dynamic_tile", 64),
    "local-array": (LOCAL_ARRAY, "cuda.local.array", 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_array_field_record_element_is_refused(tmp_path: Path, case: str) -> None:
    body, what, shared = CASES[case]
    kernel = load_kernel_module(tmp_path, body).k
    out = cuda.to_device(np.zeros(64, np.float32))
    a = cuda.to_device(np.arange(64, dtype=np.float32))
    with pytest.raises(SafetyError, match=f"{what}: the element's record field 'f' is an array"):
        kernel.prepare(grid=1, block=64, shared_mem=shared)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.zeros(64, np.float32))


def test_the_field_as_a_tile_axis_runs(tmp_path: Path) -> None:
    kernel = load_kernel_module(tmp_path, AXIS_TWIN).k
    out = cuda.to_device(np.zeros(64, np.float32))
    host = np.arange(64, dtype=np.float32) + 1
    kernel.prepare(grid=1, block=64)(out, cuda.to_device(host))
    tid = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(out.copy_to_host(), host + 2 * tid + 300)
