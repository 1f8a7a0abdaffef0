"""Porting round 18 (an outside helper porting 16 kernels in Tier 1; tests/kernels/port18.py):
each ported kernel passes every compile-time check with NVVM (``simtsafe.check_kernel``: no
finding) and compiles for sm_90. The round's false refusals are fixed (each compiles below); the
refusals it met that stay (a scatter by data, an unannotated helper store, a 2D table row read)
are asserted with the message each gives today, so a changed refusal shows up here."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import port18

pytestmark = pytest.mark.ptx


def _kernels(mod: object) -> list[ss.Kernel]:
    return [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]


@pytest.mark.parametrize("name", sorted(port18.ACCEPTED))
def test_a_ported_kernel_passes_every_check(tmp_path: Path, name: str) -> None:
    mod = port18.load(name, tmp_path)
    kernels = _kernels(mod)
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)
        assert ".entry" in k.ptx(cc=(9, 0))


def test_the_constant_tables_fold_or_load_from_constant_memory(tmp_path: Path) -> None:
    conv = port18.load("conv1d_const", tmp_path).conv1d.ptx(cc=(9, 0))
    assert "0f3E800000" in conv and "ld.const" not in conv  # the taps folded (5/20 = 0.25)
    cmap = port18.load("colormap_lut", tmp_path).colormap.ptx(cc=(9, 0))
    assert cmap.count("ld.const.u8") == 3  # a table read at a data-dependent index


def test_a_record_store_through_an_unproven_witness_costs_a_scratch_record(tmp_path: Path) -> None:
    # DOC_GAPS record_store_scratch_cost: row_stats stores through warp_leader() (not proven in
    # range): generic byte stores after a zero-filled local scratch record per field store site
    ptx = port18.load("record_stats_helpers", tmp_path).row_stats.ptx(cc=(9, 0))
    assert "st.local" in ptx and "st.global" not in ptx


#: refused case -> (the message today, a fragment).
TODAY = {
    "stable_compaction_scatter": r"written only through a ThreadIndex witness",
    "helper_record_store_unannotated": r"assigning `o\[w\]\.r` writes through a reference",
    "const_lut_row_read": r"a 2D constant array is read with 2 ints",
}


def _compile_all(tmp_path: Path, name: str) -> None:
    for k in _kernels(port18.load(name, tmp_path)):
        k.ptx(cc=(9, 0))


@pytest.mark.parametrize("name", sorted(TODAY))
def test_the_refusal_the_round_met(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError, match=TODAY[name]):
        _compile_all(tmp_path, name)


def test_block_stride_flushes_a_shared_accumulator(tmp_path: Path) -> None:
    """port18's fifth false refusal, fixed: block_stride over a 1D shared accumulator gives
    the Local1D witnesses it is read with (`bins[w]`), phase-checked as `bins[j]` reads are
    (the update-phase twin: tests/ptx/test_fixed_refusals_ptx.py)."""
    _compile_all(tmp_path, "accumulator_block_stride_flush")


def test_a_helper_reads_a_field_named_like_an_array_method(tmp_path: Path) -> None:
    """port18's second false refusal, fixed: an unannotated helper's `s.mean` is the field
    of the record Numba types `s` as (lowering._fieldreads); on an array it stays refused
    (tests/ptx/test_fixed_refusals_ptx.py)."""
    _compile_all(tmp_path, "helper_field_read_named_like_array_method")


def test_a_helper_stores_a_field_named_like_an_array_method(tmp_path: Path) -> None:
    """port18's first false refusal, fixed: a helper's annotated record view reads and writes
    its fields by name, `mean` included (the array method's name), as a kernel does."""
    _compile_all(tmp_path, "helper_field_named_like_array_method")


def test_a_constant_table_row_read_names_the_element_read(tmp_path: Path) -> None:
    """port18's seventh finding, fixed: the refusal of `lut[v]` on a 2D table says to read one
    element at a time (it spoke of witnesses)."""
    with pytest.raises(ss.SafetyError, match=r"one element at a time \(t\[i, j\]\)"):
        _compile_all(tmp_path, "const_lut_row_read")


def test_a_scatter_refusal_names_the_atomic_claim(tmp_path: Path) -> None:
    """port18's sixth finding, fixed: `out[offs[block] + rank] = v` names AppendBuffer and
    block_claim."""
    with pytest.raises(ss.SafetyError, match=r"an AppendBuffer's append\(\), or block_claim\(\)"):
        _compile_all(tmp_path, "stable_compaction_scatter")


def test_an_unannotated_helper_field_store_names_the_annotation(tmp_path: Path) -> None:
    """port18's fourth finding, fixed: the refusal says to annotate the helper's output."""
    with pytest.raises(ss.SafetyError, match=r"annotate that parameter `out: DisjointSlice"):
        _compile_all(tmp_path, "helper_record_store_unannotated")


def test_a_factory_may_close_over_a_constant_table(tmp_path: Path) -> None:
    # DOC_GAPS const_array_closed_over_by_a_factory: accepted (docs say refused), each filter
    # its own kernel, and an equal filter compiles again (docs: the same kernel, compiled once)
    import numpy as np

    mod = port18.load("const_array_closed_over_by_a_factory", tmp_path)
    assert ss.check_kernel(mod.blur5) == []
    again = mod.make_blur(np.array([1, 4, 6, 4, 1], np.float32) / 16)
    assert again is not mod.blur5
