"""Constant arrays in Tier 1 on the compiled form (tests/kernels/constmem_cases.py).

Accepted: the reads are ``ld.const`` behind one unsigned compare per axis (0 out of range)
or fold to immediates; a read at a uniform index steers a collective. Refused: every route
to a store (typing's message at the user's line), and -- the check that decides, on the
LLVM IR -- any store, atomic or writing call whose address may point into constant memory
(``simtsafe/verify/_constmem.py``), shown on hand-written IR since no kernel spelling
reaches it past the typing."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.decoration._declaration import stable_text
from simtsafe.lowering._irform import compiled_form
from simtsafe.verify._constmem import check_const_writes
from tests.kernels import constmem_cases as cases
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.ptx


def _ptx(tmp_path: Path, name: str) -> str:
    m = load_kernel_module(tmp_path, cases.ACCEPTED[name])
    (kernel,) = (v for v in vars(m).values() if isinstance(v, ss.Kernel))
    ptx = kernel.ptx(cc=(9, 0))
    assert ss.check_kernel(kernel) == []
    return ptx


def test_the_blur_filter_folds_to_immediates(tmp_path: Path) -> None:
    # A constant index into a constant array is a constant: no load at all remains.
    ptx = _ptx(tmp_path, "blur")
    for tap in ("0f3D800000", "0f3E800000", "0f3EC00000"):  # 1/16, 4/16, 6/16
        assert tap in ptx
    assert "ld.const" not in ptx
    assert len(re.findall(r"ld\.global\.f32", ptx)) == 5
    assert len(re.findall(r"st\.global\.f32", ptx)) == 1


def test_a_lookup_table_read_is_ld_const_behind_its_bounds_check(tmp_path: Path) -> None:
    ptx = _ptx(tmp_path, "lut2d")
    assert re.search(r"\.const \.align 4 \.b8 _cudapy_cmem\[48\]", ptx)
    body = ptx[ptx.index(".reqntid") :]
    load = body.index("ld.const.f32")
    # one unsigned compare per axis against the table's shape (3, 4), before the load,
    # and 0 where it fails
    assert re.search(r"setp\.gt\.u32\s+%p\d+, %r\d+, 2;", body[:load])
    assert re.search(r"setp\.gt\.u32\s+%p\d+, %r\d+, 3;", body[:load])
    assert re.search(r"mov\.f32\s+%f\d+, 0f00000000;", body[:load])


def test_a_table_read_in_a_helper_is_ld_const(tmp_path: Path) -> None:
    ptx = _ptx(tmp_path, "helper")
    assert "ld.const.f32" in ptx and "ld.const.u64" in ptx
    assert len(re.findall(r"^\.const ", ptx, re.M)) == 2


@pytest.mark.parametrize("name", ["uniform", "uniform_beside_unsafe"])
def test_a_constant_read_at_a_uniform_index_may_steer_a_collective(
    tmp_path: Path, name: str
) -> None:
    ptx = _ptx(tmp_path, name)
    assert "bar.sync" in ptx and "ld.const.f32" in ptx


@pytest.mark.parametrize("name", sorted(cases.REFUSED))
def test_a_route_to_write_or_misuse_a_constant_array_is_refused(tmp_path: Path, name: str) -> None:
    source, where, message = cases.REFUSED[name]
    if where == "decoration":
        with pytest.raises(ss.SafetyError, match=message) as info:
            load_kernel_module(tmp_path, source)
    else:
        m = load_kernel_module(tmp_path, source)
        with pytest.raises(ss.SafetyError, match=message) as info:
            m.bad.ptx(cc=(9, 0))
    assert "kernel 'bad'" in str(info.value)
    assert info.value.lineno is not None


# ------------------------------------------------------------------ the compiled-form check

_IR = """
@c = internal addrspace(4) constant [16 x i8] zeroinitializer, align 4
@c.1 = internal addrspace(4) constant [16 x i8] zeroinitializer, align 4
declare void @unknown(i8*)
define void @k(float* %out, i64 %i, i8** %slot, float** %q, i1 %b) {
entry:
  %g = addrspacecast [16 x i8] addrspace(4)* @c to i8*
  %f = bitcast i8* %g to float*
  %p = getelementptr float, float* %f, i64 %i
BODY
  ret void
}
"""

_WRITES = {
    "store": "  store float 1.0, float* %p",
    "atomic": "  %o = atomicrmw fadd float* %p, float 1.0 seq_cst",
    "cmpxchg": "  %p32 = bitcast float* %p to i32*\n  %o = cmpxchg i32* %p32, i32 0, i32 1 seq_cst seq_cst",
    "through_integers": (
        "  %n = ptrtoint float* %p to i64\n  %m = add i64 %n, 4\n"
        "  %r = inttoptr i64 %m to float*\n  store float 1.0, float* %r"
    ),
    "through_a_select": (
        "  %s = select i1 %b, float* %p, float* %out\n  store float 1.0, float* %s"
    ),
    "unknown_call": "  call void @unknown(i8* %g)",
    "escaped_then_loaded": (
        "  store i8* %g, i8** %slot\n  %l = load float*, float** %q\n  store float 1.0, float* %l"
    ),
}
_READS = {
    "load": "  %v = load float, float* %p\n  store float %v, float* %out",
    "address_stored_alone": "  store i8* %g, i8** %slot",
    "unknown_store_alone": "  %l = load float*, float** %q\n  store float 1.0, float* %l",
}


@pytest.mark.parametrize("name", sorted(_WRITES))
def test_the_compiled_form_refuses_any_write_into_constant_memory(name: str) -> None:
    form = compiled_form([_IR.replace("BODY", _WRITES[name])], "k")
    with pytest.raises(ss.SafetyError, match=r"may write constant memory") as info:
        check_const_writes(form, "k", "x.py", 1)
    assert info.value.rule == "const-write"


@pytest.mark.parametrize("name", sorted(_READS))
def test_the_compiled_form_accepts_reads_and_unrelated_writes(name: str) -> None:
    check_const_writes(compiled_form([_IR.replace("BODY", _READS[name])], "k"), "k", "x.py", 1)


def test_the_analysed_copy_keeps_a_store_llvm_would_delete() -> None:
    # instcombine deletes a store to a `constant` global as undefined behaviour; the analysed
    # copy declares constant memory writable, so the store stays for the check to see
    form = compiled_form([_IR.replace("BODY", _WRITES["store"])], "k")
    assert any(i.opcode == "store" for b in form.blocks for i in b.instrs)
    assert form.globals["c"].addrspace == 4


def test_a_constant_arrays_values_are_part_of_the_cache_key() -> None:
    a = np.zeros(5000, np.float32)
    b = a.copy()
    b[2500] = 1  # numpy's repr elides the middle: the same text
    assert repr(a) == repr(b)
    assert stable_text(a) != stable_text(b)
    assert stable_text(a) == stable_text(a.copy())
