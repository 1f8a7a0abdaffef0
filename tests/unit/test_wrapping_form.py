"""lowering/_irform._wrapping: the analysed copy keeps no poison-generating flag and shifts by a
run-time amount as PTX clamps them (attack round 31), shifts by a literal amount and
float-to-integer conversions as PTX computes them (attack round 33), so instcombine's folds hold on the GPU."""

from __future__ import annotations

from simtsafe.lowering import _irform

_TEXT = """define void @"k"(i64 %"a", i64 %"b") {
entry:
  %".1" = add nsw i64 %"a", 7
  %".2" = mul nuw nsw i64 %".1", 3
  %".3" = getelementptr inbounds i8, i8* null, i64 %".2"
  %".4" = fadd fast float 1.0, 2.0
  %".5" = shl i64 1, %"b", !ss.loc !3
  %".6" = ashr i64 %"a", %"b"
  %".7" = lshr i64 %"a", 3
  ret void
}
!3 = !{ !"/x nsw y.py", i32 4 }
"""


def test_flags_are_dropped_and_metadata_kept() -> None:
    out = _irform._wrapping(_TEXT)
    body = out.split("!3 = ")[0]
    for flag in (" nsw ", " nuw ", " inbounds ", " fast "):
        assert flag not in body, flag
    assert '!3 = !{ !"/x nsw y.py", i32 4 }' in out  # column 0: not an instruction


def test_a_run_time_shift_is_clamped_as_ptx_does() -> None:
    out = _irform._wrapping(_TEXT)
    # an i64 shift reads its amount's low 32 bits (NVVM's cvt.u32.u64), then clamps
    assert '%".5.ssu32" = and i64 %"b", 4294967295, !ss.loc !3' in out
    assert '%".5.ssamt" = and i64 %".5.ssu32", 63, !ss.loc !3' in out
    assert '%".5.ssok" = icmp ult i64 %".5.ssu32", 64, !ss.loc !3' in out
    assert '%".5" = select i1 %".5.ssok", i64 %".5.ssraw", i64 0, !ss.loc !3' in out
    assert '%".6.sssign" = ashr i64 %"a", 63' in out  # ashr past the width: the sign
    assert '%".6" = select i1 %".6.ssok", i64 %".6.ssraw", i64 %".6.sssign"' in out
    assert '%".7" = lshr i64 %"a", 3' in out  # a literal amount below the width: unchanged


_POISON = """define void @"k"(i64 %"a", double %"d", float %"f") {
entry:
  %".1" = ashr i64 %"a", 70, !ss.loc !3
  %".2" = shl i64 %"a", 64
  %".3" = lshr i32 %"b", 40
  %".4" = shl i64 %"a", 4294967300
  %".5" = shl i64 %"a", -1
  %".6" = ashr i8 %"c", 3
  %".7" = fptosi double %"d" to i64, !ss.loc !3
  %".8" = fptoui float %"f" to i32
  %".9" = fptosi float 0x7FF0000000000000 to i8
  ret void
}
!3 = !{ !"/x.py", i32 4 }
"""


def test_a_literal_shift_is_what_ptx_computes() -> None:
    """Attack round 33: LLVM makes these poison; PTX reads an i64 amount's low 32 bits and
    clamps it to the width (the sign for ashr)."""
    out = _irform._wrapping(_POISON)
    assert '%".1" = ashr i64 %"a", 63, !ss.loc !3' in out
    assert '%".2" = and i64 %"a", 0' in out
    assert '%".3" = and i32 %"b", 0' in out
    assert '%".4" = shl i64 %"a", 4' in out  # NVVM -opt=0: shl.b64 %rd, %rd, 4
    assert '%".5" = and i64 %"a", 0' in out  # 0xffffffff: clamped
    assert '%".6" = ashr i8 %"c", 3' in out  # below the width: unchanged


def test_a_float_to_integer_conversion_saturates_as_cvt_rzi() -> None:
    """NVVM's own round-toward-zero conversions (PTX ``cvt.rzi``, saturating, NaN to 0); a
    narrower integer clamped from the 32-bit one, as ``cvt.rzi.s8`` saturates."""
    out = _irform._wrapping(_POISON)
    assert '%".7" = call i64 @llvm.nvvm.d2ll.rz(double %"d"), !ss.loc !3' in out
    assert '%".8" = call i32 @llvm.nvvm.f2ui.rz(float %"f")' in out
    assert '%".9.ss32" = call i32 @llvm.nvvm.f2i.rz(float 0x7FF0000000000000)' in out
    assert '%".9.sslow" = icmp slt i32 %".9.ss32", -128' in out
    assert '%".9.sshigh" = icmp sgt i32 %".9.ssup", 127' in out
    assert '%".9" = trunc i32 %".9.ssin" to i8' in out
    for decl in (
        "declare i64 @llvm.nvvm.d2ll.rz(double)",
        "declare i32 @llvm.nvvm.f2ui.rz(float)",
        "declare i32 @llvm.nvvm.f2i.rz(float)",
    ):
        assert out.count(decl) == 1, decl
    assert "fptosi" not in out and "fptoui" not in out
