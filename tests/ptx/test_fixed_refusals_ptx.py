"""False refusals of attack rounds 23-27 and porting round 18, fixed (tests/kernels/
fixed_refusals.py) on the real target (NVVM, no GPU): each natural kernel passes every
compile-time check and compiles for sm_90; each rejected twin -- what the relaxation must
still refuse -- is refused with its message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.fixed_refusals import ACCEPTED, REFUSED, helper_modules_on_path

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.fixture(autouse=True)
def helper_modules(tmp_path: Path) -> Iterator[None]:
    with helper_modules_on_path(tmp_path):
        yield


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED[name].source).k
    assert ss.check_kernel(k) == []
    assert ".entry" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_twin_refused(tmp_path: Path, name: str) -> None:
    source, fragment = REFUSED[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value), str(info.value)
