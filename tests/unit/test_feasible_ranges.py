"""The value ranges behind a dropped switch default (verify._feasible), on instructions
written by hand: each rule bounds what the machine computes (wrapping), and each way out
of it -- a negative mask, a wrapping add, a sign extension of a negative value, a signed
remainder of a value that may be negative, a cycle -- leaves the value unbounded."""

from __future__ import annotations

import pytest

from simtsafe.lowering._irform import Instr, _instr
from simtsafe.verify._feasible import value_range


def _defs(*lines: str) -> dict[str, Instr]:
    found = {}
    for line in lines:
        ins = _instr(line, {})
        assert ins.result is not None
        found[ins.result] = ins
    return found


@pytest.mark.parametrize(
    ("lines", "width", "want"),
    [
        (["%m = and i64 %x, 3"], 64, (0, 3)),
        (["%a = and i32 %x, 3", "%m = sext i32 %a to i64"], 64, (0, 3)),
        (["%a = and i8 %x, 3", "%m = zext nneg i8 %a to i64"], 64, (0, 3)),
        (["%a = and i64 %x, 1", "%b = and i64 %y, 2", "%m = or disjoint i64 %a, %b"], 64, (0, 3)),
        (["%a = and i64 %x, 1", "%b = and i64 %y, 1", "%m = add nuw nsw i64 %a, %b"], 64, (0, 2)),
        (["%a = and i64 %x, 1", "%m = xor i64 %a, 2"], 64, (0, 3)),
        (["%m = urem i32 %x, 4"], 32, (0, 3)),
        (["%a = and i64 %x, 255", "%m = srem i64 %a, 4"], 64, (0, 3)),
        (["%a = and i64 %x, 255", "%m = sdiv i64 %a, 64"], 64, (0, 3)),
        (["%a = and i64 %x, 300", "%m = trunc i64 %a to i16"], 16, (0, 300)),
        (
            ["%a = and i64 %x, 1", "%b = and i64 %y, 3", "%m = select i1 %c, i64 %a, i64 %b"],
            64,
            (0, 3),
        ),
        (["%a = and i64 %x, 1", "%m = phi i64 [ %a, %b0 ], [ 2, %b1 ]"], 64, (0, 2)),
    ],
)
def test_bounded(lines: list[str], width: int, want: tuple[int, int]) -> None:
    assert value_range("%m", width, _defs(*lines)) == want


@pytest.mark.parametrize(
    "lines",
    [
        # a mask that can be negative: -4 is 0xff..fc, every value but the low two bits
        ["%m = and i64 %x, -4"],
        # the masked i8 may be negative (0x83): its sign extension is a negative index
        ["%a = and i8 %x, -125", "%m = sext i8 %a to i64"],
        # 127 + 127 wraps in i8 (0..254 read signed is negative) before the extension
        [
            "%a = and i8 %x, 127",
            "%b = and i8 %y, 127",
            "%s = add i8 %a, %b",
            "%m = sext i8 %s to i64",
        ],
        # 200..255 + 56 wraps in i8 to 0..55: read unwrapped, udiv 64 would say 4 alone
        [
            "%a = and i8 %x, 7",
            "%o = or i8 %a, -56",
            "%s = add i8 %o, 56",
            "%q = udiv i8 %s, 64",
            "%m = zext i8 %q to i64",
        ],
        # an i16 sum that wraps past 65535
        [
            "%a = and i16 %x, -1",
            "%b = and i16 %y, 3",
            "%s = add i16 %a, %b",
            "%m = zext i16 %s to i64",
        ],
        # an add with one side unbounded
        ["%a = and i64 %x, 3", "%m = add i64 %a, %y"],
        # a remainder of a value that may be negative (-3..3), as Numba's % starts
        ["%m = srem i64 %x, 4"],
        ["%m = sdiv i64 %x, 4"],
        # a trunc that drops high bits (300 does not fit i8)
        ["%a = and i64 %x, 300", "%m = trunc i64 %a to i8"],
        # a loop phi: bounded only by what the evaluation does not follow
        ["%m = phi i64 [ 0, %b0 ], [ %n, %b1 ]", "%n = add i64 %m, 1"],
        # a value the rules do not know
        ["%m = sub i64 %x, 3"],
        ["%m = shl i64 %x, 2"],
    ],
)
def test_unbounded(lines: list[str]) -> None:
    width = int(lines[-1].split(" to i")[-1]) if " to i" in lines[-1] else 64
    got = value_range("%m", width, _defs(*lines))
    assert got is None or got[1] - got[0] > 4096, got
