"""Attack round 27 (tests/kernels/attacks27.py) on the simulator: a Tier-1 local array read
before it is written is not reported (docs/safety.md promises an `uninitialized` finding),
and a record field named like an allowed array attribute (`size`, `ndim`, `real`) is read as
numpy's attribute, not the field the compiled kernel reads. Strict xfails: the fixed
behaviour."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks27 import FINDINGS

pytestmark = pytest.mark.sim


@pytest.mark.xfail(strict=True, reason="attack round 27 finding 1: no shadow on SimLocalArray")
@pytest.mark.parametrize("name", ["local-array-made-in-loop", "local-array-never-written"])
def test_unwritten_local_element_is_reported(tmp_path: Path, name: str) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS[name])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), np.zeros(32), 1)
    assert not report.ok, report
    assert "uninitialized" in str(report), str(report)


def _records(mod: object) -> np.ndarray:
    a = np.zeros(32, mod.REC)  # type: ignore[attr-defined]
    a["size"], a["real"], a["ndim"] = 3.0, 5.0, 7.0
    return a


@pytest.mark.xfail(strict=True, reason="attack round 27 finding 2: numpy's .size/.ndim read")
def test_record_field_named_size_reads_the_field(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS["record-field-named-size"])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), _records(mod))
    assert report.ok, report
    # the compiled kernel: h = 3 + 100 * 7, plus a[i].size = 3
    np.testing.assert_array_equal(report.outputs["out"], np.full(32, 706.0))


@pytest.mark.xfail(strict=True, reason="attack round 27 finding 2: numpy's raw UFuncTypeError")
def test_record_field_named_real_reads_the_field(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS["record-field-named-real"])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), _records(mod))
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], np.full(32, 50.0))
