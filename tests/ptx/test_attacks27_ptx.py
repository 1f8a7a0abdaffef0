"""Attack round 27 (tests/kernels/attacks27.py) on the real target (NVVM, no GPU): the
private-memory rule, masked switch defaults, numba.cuda under an alias, reduce(state=, op=),
helper field reads by type and block_stride over a shared accumulator hold against the
routes tried (refused with their message); their sound twins stay accepted. Finding 2's
compiled side: a record field named `size`/`ndim` is read as the field."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks27 import ACCEPTED, FINDINGS, HELD_KERNELS

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_twins_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)


def test_local_array_made_in_a_loop_is_zeroed_once(tmp_path: Path) -> None:
    """Finding 1's compiled side: accepted, the loop body loads and stores the alloca (no
    zero-fill per iteration), so the GPU sums the previous iterations' 1.0 (2.0)."""
    ptx = load_kernel_module(tmp_path, FINDINGS["local-array-made-in-loop"]).k.ptx(cc=CC)
    assert "st.global.f64" in ptx


def test_record_field_named_size_reads_the_field(tmp_path: Path) -> None:
    """Finding 2's compiled side: `r[w].size` / `r[w].ndim` of a record with such fields
    load the fields (offsets 0 and 16) and combine them (3 + 100 * 7 on the data of the
    sim test); the simulator answers numpy's attributes instead."""
    ptx = load_kernel_module(tmp_path, FINDINGS["record-field-named-size"]).k.ptx(cc=CC)
    assert "[%rd11+16]" in ptx or "+16]" in ptx, ptx
    assert "st.global.f64" in ptx
