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


_LOOP = "            for q in range(4):\n                acc += np.int32(av[q]) * np.int32(xv[q])\n"
_PRODUCT = "                acc += np.int32(av[q]) * np.int32(xv[q])\n"
#: the range loop of FALSE_REFUSALS tuple_index_in_range_loop, varied: name -> loop
TUPLE_LOOP_REFUSED = {
    "range5": _LOOP.replace("range(4)", "range(5)"),  # q == 4 is out of range
    "shape_bound": _LOOP.replace("range(4)", "range(a.shape[1] % 5)"),
    "reassigned": "            for q in range(4):\n                q = q + 1\n" + _PRODUCT,
    "while_incremented_first": "            q = 0\n            while q < 4:\n                "
    "q += 1\n" + _PRODUCT,
}
TUPLE_LOOP_ACCEPTED_TWINS = {
    "break": "            for q in range(4):\n                if av[q] == 0:\n"
    "                    break\n" + _PRODUCT,
    "continue": "            for q in range(4):\n                if av[q] == 0:\n"
    "                    continue\n" + _PRODUCT,
    "negative_positions": _LOOP.replace("av[q]", "av[q - 4]").replace("xv[q]", "xv[q - 4]"),
    # refused before round 33, safe: a count laneid % 5 <= 4 (LLVM's urem once the sign fix-up
    # of `%` folds: a phi's pair on an edge no run takes is no value), and 4 - q for q in 1..3
    # (signed bounds, tests/kernels/positions33.py)
    "lane_bound": _LOOP.replace("range(4)", "range(cuda.laneid % 5)"),
    "start1_reassigned": "            for q in range(1, 4):\n                q = 4 - q\n"
    + _PRODUCT,
}


def test_a_tuple_indexed_by_a_range_loop_before_a_warp_sum_is_accepted(tmp_path: Path) -> None:
    # FALSE_REFUSALS tuple_index_in_range_loop, fixed (ACCEPTED gemv_int8_tuple_loop)
    assert port19.GEMV_TUPLE_LOOP.count(_LOOP) == 1
    (k,) = _kernels(port19.load("gemv_int8_tuple_loop", tmp_path))
    assert ss.check_kernel(k) == []


@pytest.mark.parametrize("name", sorted(TUPLE_LOOP_ACCEPTED_TWINS))
def test_a_range_loop_index_left_early_stays_in_range(tmp_path: Path, name: str) -> None:
    src = port19.GEMV_TUPLE_LOOP.replace(_LOOP, TUPLE_LOOP_ACCEPTED_TWINS[name])
    (k,) = _kernels(_load_src(tmp_path, src))
    assert ss.check_kernel(k) == []


@pytest.mark.parametrize("name", sorted(TUPLE_LOOP_REFUSED))
def test_a_tuple_index_not_proven_in_range_before_a_warp_sum_is_refused(
    tmp_path: Path, name: str
) -> None:
    src = port19.GEMV_TUPLE_LOOP.replace(_LOOP, TUPLE_LOOP_REFUSED[name])
    (k,) = _kernels(_load_src(tmp_path, src))
    (f,) = ss.check_kernel(k)
    assert f.code == "SS-uniformity"
    assert "`warp.sum` needs every thread of the warp to reach it" in f.message


def test_the_refusal_names_the_tuple_index_and_its_fixes(tmp_path: Path) -> None:
    # BAD_ERRORS tuple_index_uniformity_message, fixed: the tuple index, Numba's IndexError and
    # the fixes, not two "branches"
    src = port19.GEMV_TUPLE_LOOP.replace(_LOOP, TUPLE_LOOP_REFUSED["range5"])
    (k,) = _kernels(_load_src(tmp_path, src))
    (f,) = ss.check_kernel(k)
    assert "the tuple index at line 22 reads a 4-element tuple" in f.message
    assert "Numba raises IndexError there for a position out of range" in f.message
    assert "threads that may leave the kernel there" in f.message
    assert "`t[q & 3]`" in f.message and "write the elements out" in f.message
    assert "the branch at line" not in f.message and "Move the call out" not in f.message


def test_a_three_element_tuple_gets_no_mask_advice(tmp_path: Path) -> None:
    src = port19.GEMV_TUPLE_LOOP.replace(
        _LOOP,
        "            t3 = (av[0], av[1], av[2])\n            for q in range(4):\n"
        "                acc += np.int32(t3[q])\n",
    )
    (k,) = _kernels(_load_src(tmp_path, src))
    (f,) = ss.check_kernel(k)
    assert "reads a 3-element tuple" in f.message and "(`t[0]`, ..., `t[2]`)" in f.message
    assert "& 2" not in f.message


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
