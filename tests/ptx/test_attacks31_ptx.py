"""Attack round 31 (tests/kernels/attacks31.py) on the real target (NVVM, no GPU): the range-loop
spans of round 30 hold against the shapes tried -- every unsafe one refused with the
block-collective message, the sound ones accepted, the safe refusals pinned so a fix shows up
here. The findings (fixed: lowering/_irform._wrapping; each asserts the refusal) come from the
analysed copy's instcombine folding through ``nsw`` where NVVM does not (FINDING 1: LLVM 22
folds ``smin(x +nsw C1, C2)``; FINDING 2: ``opt=False``, NVVM at ``-opt=0`` folds nothing);
``test_nvvm_keeps_the_compare`` pins that mechanism on plain numba-cuda kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks31 import (
    ACCEPTED,
    FALSE_REFUSALS,
    FINDINGS,
    HELD_KERNELS,
    NOT_UNIFORM,
    NVVM_KEEPS,
    SIM_NOTES,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted({**ACCEPTED, **SIM_NOTES}))
def test_sound_shapes_accepted(tmp_path: Path, name: str) -> None:
    source = {**ACCEPTED, **SIM_NOTES}[name]
    assert "bar.sync" in load_kernel_module(tmp_path, source).k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """Safe tuple indexes still refused; pinned so a fix shows up here."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FALSE_REFUSALS[name]).k.ptx(cc=CC)
    assert NOT_UNIFORM in str(info.value), str(info.value)


# FIXED: lowering/_irform._wrapping drops the poison-generating flags before instcombine
@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_finding_refused(tmp_path: Path, name: str) -> None:
    """Some thread leaves (an out-of-range tuple index, a ``return``) or reads past the input
    before the barrier on the GPU, for the input value FINDINGS names: must be refused."""
    source, fragment, _bad = FINDINGS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


_PLAIN = """
from numba import cuda


def f(out, a):
    i = cuda.grid(1)
    if i < a.size:
        BODY
"""


@pytest.mark.parametrize("name", sorted(NVVM_KEEPS))
def test_nvvm_keeps_the_compare(tmp_path: Path, name: str) -> None:
    """The root cause without simtsafe: LLVM 22's instcombine folds these conditions to a
    constant through ``nsw``; NVVM (``opt`` as given) computes them, in wrapping arithmetic."""
    from numba import cuda, int64

    body, opt, kept = NVVM_KEEPS[name]
    mod = load_kernel_module(tmp_path, _PLAIN.replace("BODY", body))
    ptx, _ = cuda.compile_ptx(mod.f, (int64[:], int64[:]), cc=CC, opt=opt)
    for instruction in kept:
        assert instruction in ptx, (instruction, ptx)
