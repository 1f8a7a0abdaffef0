"""2D shared accumulators on the simulator: values of add/min/max at pairs (out of range:
skipped; reads out of range: 0), shape/size/len, each refusal with its message, and
``sim.check`` seeing the updates as atomics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.accumulator2d_rules import ACCEPTED, COLS, REFUSED, ROWS, expected

pytestmark = pytest.mark.sim


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    idx = np.empty(256, np.int64)
    idx[0::2] = rng.integers(-1, ROWS + 1, 128)  # rows -1 .. ROWS: some out of range
    idx[1::2] = rng.integers(-1, COLS + 1, 128)
    return idx, rng.standard_normal(128).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_updates_and_reads_match_numpy(tmp_path: Path, seed: int) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED).k
    idx, val = _inputs(seed)
    out = cuda.to_device(np.zeros(128, np.float32))
    k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    np.testing.assert_array_equal(out.copy_to_host(), expected(idx, val))


def test_check_sees_atomics_and_reads_after_the_barrier(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED).k
    idx, val = _inputs(7)
    report = ss.sim.check(k, 1, 128, np.zeros(128, np.float32), idx, val)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], expected(idx, val))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        k = load_kernel_module(tmp_path, source).k
        out = cuda.to_device(np.zeros(128, np.float32))
        idx, val = _inputs(0)
        k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    assert fragment in str(info.value), str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD"), str(info.value)
