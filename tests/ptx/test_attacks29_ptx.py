"""Attack round 29 (tests/kernels/attacks29.py) on the real target (NVVM, no GPU): the
range-loop proof of a tuple index (commit 0917235) holds against the shapes tried -- every
unsafe one refused with the block-collective message, the sound ones accepted, the safe
refusals pinned so a fix shows up here. No findings, so no xfails."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks29 import ACCEPTED, FALSE_REFUSALS, FINDINGS, HELD_KERNELS, NOT_UNIFORM

pytestmark = pytest.mark.ptx

CC = (9, 0)


def test_no_findings() -> None:
    assert FINDINGS == {}


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_shapes_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """Safe tuple indexes still refused; pinned so a fix shows up here."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FALSE_REFUSALS[name]).k.ptx(cc=CC)
    assert NOT_UNIFORM in str(info.value), str(info.value)
