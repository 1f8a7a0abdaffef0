"""lowering/_irform._wrapping: the analysed copy keeps no poison-generating flag and shifts by a
run-time amount as PTX clamps them (attack round 31), so instcombine's folds hold on the GPU."""

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
    assert '%".5.ssamt" = and i64 %"b", 63, !ss.loc !3' in out
    assert '%".5.ssok" = icmp ult i64 %"b", 64, !ss.loc !3' in out
    assert '%".5" = select i1 %".5.ssok", i64 %".5.ssraw", i64 0, !ss.loc !3' in out
    assert '%".6.sssign" = ashr i64 %"a", 63' in out  # ashr past the width: the sign
    assert '%".6" = select i1 %".6.ssok", i64 %".6.ssraw", i64 %".6.sssign"' in out
    assert '%".7" = lshr i64 %"a", 3' in out  # a literal amount below the width: unchanged
