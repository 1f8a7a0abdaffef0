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


# -- the round's false refusals, now accepted (tests/ptx/test_attacks17_ptx.py): a uniform
# read of a slice of the input and a vec.load at a uniform run index steer a barrier; every
# thread reads the same value, in range or 0.

N = 9
A = ((np.arange(N) + 1) * np.where(np.arange(N) % 3 == 1, -1, 1)).astype(np.float32)


def _expected(name: str, c: int) -> float:
    if name == "slice":
        return float(A[1 + c]) if 0 <= c < N - 1 else 0.0
    if name == "slice-from-3":
        return float(A[3 + c]) if 0 <= c < N - 3 else 0.0
    run = [float(A[2 * c + i]) if 0 <= 2 * c + i < N else 0.0 for i in range(4)]
    if name == "vec-load-4-unguarded":
        run4 = [float(A[4 * c + i]) if c >= 0 and 4 * c + i < N else 0.0 for i in range(4)]
        return run4[0] + run4[3]
    inside = 0 <= c < N  # the kernel's own guard
    return (run[0] if name == "vec-load-first" else run[1]) if inside else 0.0


@pytest.mark.parametrize(
    "name", ["slice", "slice-from-3", "vec-load-first", "vec-load-second", "vec-load-4-unguarded"]
)
def test_a_uniform_read_steering_a_barrier_gives_every_thread_one_value(
    tmp_path: Path, name: str
) -> None:
    import simtsafe as ss
    from tests.ptx.test_attacks17_ptx import UNIFORM_READS, uniform_kernel

    k = load_kernel_module(tmp_path, uniform_kernel(UNIFORM_READS[name])).k
    for c in (-1, 0, 1, 2, 3, 4, 5, 7, 8, 9, 40):
        out = cuda.to_device(np.full(64, np.float32(-99)))
        k.prepare(grid=1, block=64)(out, cuda.to_device(A), c)
        expected = np.full(64, np.float32(_expected(name, c)))
        np.testing.assert_array_equal(out.copy_to_host(), expected, err_msg=f"{name} c={c}")
    report = ss.sim.check(k, 1, 64, np.zeros(64, np.float32), A, 2)
    assert not report.findings, report
