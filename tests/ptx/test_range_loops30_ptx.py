"""Range loops, round 30 (tests/kernels/range_loops30.py) on the real target (NVVM, no GPU):
each kernel whose tuple index (or input read) the trips of its range loop keep in range
passes every compile-time check and compiles for sm_90; each unsafe twin is refused with its
message; the safe shapes outside the proof stay refused, pinned so a fix shows up here."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks29 import NOT_UNIFORM
from tests.kernels.range_loops30 import ACCEPTED, REFUSED, STILL_REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED[name].source).k
    assert ss.check_kernel(k) == []
    assert "bar.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsafe_twin_refused(tmp_path: Path, name: str) -> None:
    source, fragment = REFUSED[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(STILL_REFUSED))
def test_still_refused_pinned(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, STILL_REFUSED[name]).k.ptx(cc=CC)
    assert NOT_UNIFORM in str(info.value), str(info.value)
