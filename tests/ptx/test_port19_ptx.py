"""Porting round 19 (tests/kernels/port19.py): each ported Tier-1 kernel passes every
compile-time check with NVVM (``simtsafe.check_kernel``: no finding) and compiles for sm_90; the
round's compile-time false refusal is pinned with the message it gives today."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, port19

pytestmark = pytest.mark.ptx


def _kernels(mod: object) -> list[ss.Kernel]:
    return [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]


def _load_src(tmp_path: Path, src: str) -> object:
    return load_kernel_module(tmp_path, port19.EXTRA_HEADER + src)


@pytest.mark.parametrize("name", sorted(port19.ACCEPTED))
def test_a_ported_kernel_passes_every_check(tmp_path: Path, name: str) -> None:
    kernels = _kernels(port19.load(name, tmp_path))
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)
        assert ".entry" in k.ptx(cc=(9, 0))


def test_a_tuple_indexed_by_a_range_loop_before_a_warp_sum_is_refused(tmp_path: Path) -> None:
    # FALSE_REFUSALS tuple_index_in_range_loop; BAD_ERRORS tuple_index_uniformity_message (fixed):
    # the message names the tuple index, Numba's IndexError and the fixes, not two "branches"
    (k,) = _kernels(port19.load("tuple_index_in_range_loop", tmp_path))
    (f,) = ss.check_kernel(k)
    assert f.code == "SS-uniformity"
    assert "`warp.sum` needs every thread of the warp to reach it" in f.message
    assert "the tuple index at line 22 reads a 4-element tuple" in f.message
    assert "Numba raises IndexError there for a position out of range" in f.message
    assert "threads that may leave the kernel there" in f.message
    assert "`t[q & 3]`" in f.message and "write the elements out" in f.message
    assert "the branch at line" not in f.message and "Move the call out" not in f.message


def test_the_masked_tuple_index_and_the_block_form_are_accepted(tmp_path: Path) -> None:
    # the workaround, and the DOC_GAPS tuple_index_range_loop twin accepted before a block.sum
    for src in (port19.TUPLE_LOOP_MASKED, port19.TUPLE_LOOP_ACCEPTED):
        (k,) = _kernels(_load_src(_sub(tmp_path, src), src))
        assert ss.check_kernel(k) == []


def _sub(tmp_path: Path, src: str) -> Path:
    d = tmp_path / f"m{abs(hash(src)) % 10**8}"
    d.mkdir()
    return d


def test_the_int8_gemv_with_vector_loads_compiles_to_vector_loads(tmp_path: Path) -> None:
    ptx = port19.load("gemv_int8_unrolled", tmp_path).gemv_i8.ptx(cc=(9, 0))
    assert "ld.global.u32" in ptx or "ld.global.nc.u32" in ptx or "ld.global.v" in ptx


def test_the_user_module_tables_load_from_constant_memory(tmp_path: Path) -> None:
    lut = port19.load("gamma_lut_module", tmp_path).gamma_lut.ptx(cc=(9, 0))
    assert "ld.const.u8" in lut
