"""Tuple positions, round 33 (tests/kernels/positions33.py) on the real target (NVVM, no GPU):
each kernel whose tuple index the compiled form now proves a position (negative ones
included, past constant branches, enumerate's count beside the iterator) passes every
compile-time check and compiles for sm_90; each unsafe twin is refused with its message."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks29 import NOT_UNIFORM
from tests.kernels.positions33 import (
    ACCEPTED,
    COMPILED_ONLY,
    REFUSED,
    STILL_REFUSED,
    WITNESS_PROBES,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED[name].source).k
    assert ss.check_kernel(k) == []
    assert "bar.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(COMPILED_ONLY))
def test_accepted_on_the_compiled_form(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, COMPILED_ONLY[name]).k
    assert ss.check_kernel(k) == []
    assert "bar.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(WITNESS_PROBES))
def test_witness_index_mod_4_accepted(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, WITNESS_PROBES[name]).k
    assert ss.check_kernel(k) == []
    assert "shfl.sync" in k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsafe_twin_refused(tmp_path: Path, name: str) -> None:
    source, fragment = REFUSED[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value), str(info.value)
    assert "the tuple index at line" in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(STILL_REFUSED))
def test_still_refused_pinned(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, STILL_REFUSED[name]).k.ptx(cc=CC)
    assert NOT_UNIFORM in str(info.value), str(info.value)
