"""A range loop's index bounded by its trips (verify/_ranges: ``_trips``, ``_span``), on
loops written by hand in LLVM IR, as Numba's tuple index uses it (verify/_feasible drops the
``IndexError`` default of a ``switch`` over a 4-tuple's positions only when the index is in
``[0, 4)``).

Each shape Python cannot spell is here: an unsigned or ``!= 0`` guard, a counter that steps
by 2 or up, steps that differ between paths, a path that moves one phi and not the other, a
start that is not a constant, a count that may wrap (``smin(n, 5) - 1``), values that wrap
the 32-bit width, the index after the last trip; negative positions (Numba's cases ``i - 4``,
``verify/_ranges.signed_span``) in ``[-4, 3]`` are positions too."""

from __future__ import annotations

from typing import Any

import pytest

from simtsafe.lowering._irform import _parse
from simtsafe.verify._feasible import feasible_successors

_CASES = " ".join(f"i64 {v}, label %latch" for i in range(4) for v in (i, i - 4))

_LOOP = """
define void @f(i64 %n, i64 %x) {
entry:
ENTRY
  br label %head
head:
  %p = phi iW [ START, %entry ], [ %p.next, %latch ]
  %c = phi iW [ COUNT, %entry ], [ %c.next, %latch ]
  %go = icmp GUARD iW %c, 0
  br i1 %go, label %body, label %exit
body:
  %c1 = add nsw iW %c, DEC
  %p1 = add iW %p, STEP
MERGE
INDEX
  switch i64 KEY, label %raise [ CASES ]
latch:
  br label %head
raise:
  ret void
exit:
EXIT
  ret void
}
"""


def _loop(
    *,
    start: str = "0",
    count: str = "4",
    step: str = "1",
    dec: str = "-1",
    guard: str = "sgt",
    index: str = "",
    entry: str = "",
    width: int = 64,
    exit_index: str = "",
) -> str:
    text = _LOOP.replace("ENTRY", entry).replace("START", start).replace("COUNT", count)
    text = text.replace("STEP", step).replace("DEC", dec).replace("GUARD", guard)
    text = text.replace("INDEX", index).replace("CASES", _CASES)
    text = text.replace("KEY", "%k" if index else "%p")
    return text.replace("EXIT", exit_index).replace("iW", f"i{width}")


def _latch_phis(text: str) -> str:
    """The loop with ``%p.next``/``%c.next`` as the stepped values (one path)."""
    return text.replace("MERGE\n", "").replace(
        "[ %p.next, %latch ]", "[ %p1, %latch ]"
    ).replace("[ %c.next, %latch ]", "[ %c1, %latch ]")  # fmt: skip


def _dropped(text: str, block: str = "%body") -> bool:
    """Is the switch default (``%raise``, the IndexError) of ``block`` dropped?"""
    form = _parse(text, "f")
    return "%raise" not in feasible_successors(form)[block]


# ----------------------------------------------------------------------------- accepted


@pytest.mark.parametrize(
    "shape",
    [
        {},  # range(4)
        {"start": "1", "count": "3"},  # range(1, 4)
        {"count": "2", "step": "2"},  # range(0, 4, 2): 0, 2
        {"start": "1", "count": "2", "step": "2"},  # range(1, 4, 2): 1, 3
        {"start": "3", "count": "4", "step": "-1"},  # range(3, -1, -1)
        {"start": "3", "count": "2", "step": "-2"},  # range(3, -1, -2): 3, 1
        {"count": "%m", "entry": "  %m = call i64 @llvm.smin.i64(i64 %n, i64 4)"},
        {"count": "%m", "entry": "  %m = call i64 @llvm.umin.i64(i64 %n, i64 4)"},
        {"count": "%m", "entry": "  %m = and i64 %n, 3"},
        {"count": "%m", "entry": "  %m = select i1 true, i64 4, i64 2"},
        {"count": "10", "index": "%k = call i64 @llvm.smin.i64(i64 %p, i64 3)"},
        {"index": "%k = sub nsw i64 3, %p"},
        {"start": "1", "count": "3", "index": "%k = sub i64 3, %p"},  # 2, 1, 0
        {"count": "8", "step": "0"},  # p stays 0
        # Numba's 32-bit loop of range(np.int8(4)), sign-extended
        {"width": 32, "index": "%k = sext i32 %p to i64"},
        {"width": 32, "index": "%k = zext i32 %p to i64"},
        {"width": 32, "start": "3", "count": "4", "step": "-1", "index": "%k = sext i32 %p to i64"},
        # negative positions, Numba's cases i - 4 (round 33: signed bounds)
        {"index": "%k = sub i64 2, %p"},  # 2, 1, 0, -1
        {"count": "7", "index": "%k = sub i64 2, %p"},  # 2 .. -4
        {"index": "%k = add i64 %p, -4"},  # -4..-1
        {"start": "-4", "count": "4"},  # range(-4, 0)
        {"start": "3", "count": "5", "step": "-1"},  # range(3, -2, -1): 3..-1
        # np.int32(q) on a 64-bit q: shl 32, ashr 32
        {"index": "%s = shl i64 %p, 32\n  %k = ashr exact i64 %s, 32"},
    ],
)
def test_trips_in_range_drop_the_default(shape: dict[str, Any]) -> None:
    assert _dropped(_latch_phis(_loop(**shape))), shape


def test_after_the_loop_the_last_step_counts() -> None:
    """In the exit block the header's ``p`` has taken every step: ``N`` trips from 0 by 1 is
    ``N`` (range(3): 3, a position; range(4): 4, not one)."""
    cases = _CASES.replace("%latch", "%done")
    after = f"  switch i64 %p, label %raise [ {cases} ]\ndone:"
    assert _dropped(_latch_phis(_loop(count="3", exit_index=after)), "%exit")
    assert not _dropped(_latch_phis(_loop(count="4", exit_index=after)), "%exit")


# ----------------------------------------------------------------------------- refused


@pytest.mark.parametrize(
    "shape",
    [
        {"count": "5"},  # 0..4
        {"start": "1", "count": "4"},  # 1..4
        {"count": "3", "step": "2"},  # 0, 2, 4
        {"start": "3", "count": "9", "step": "-1"},  # down to -5
        {"start": "-5", "count": "8"},  # from -5
        {"start": "%x"},  # a start that is not a constant
        {"count": "%n"},  # any count
        {"count": "%m", "entry": "  %m = call i64 @llvm.smax.i64(i64 %n, i64 4)"},
        # smin(n, 5) - 1 is at most 3 -- unless n is the smallest i64 and it wraps
        {
            "count": "%m",
            "entry": "  %s = call i64 @llvm.smin.i64(i64 %n, i64 5)\n  %m = add i64 %s, -1",
        },
        # a guard that is not "c > 0" signed: a negative count runs ~2**64 trips
        {"count": "%m", "entry": "  %m = call i64 @llvm.smin.i64(i64 %n, i64 4)", "guard": "ne"},
        {"count": "%m", "entry": "  %m = call i64 @llvm.smin.i64(i64 %n, i64 4)", "guard": "ugt"},
        {"dec": "1"},  # the counter goes up: the loop does not end by it
        {"dec": "-2"},  # not the -1 the pairing needs
        {"count": "9", "index": "%k = sub i64 3, %p"},  # 3 - 8 = -5
        {"index": "%k = add i64 %p, -5"},  # -5..-2: -5 is no case of a 4-tuple
        {"count": "8", "index": "%k = sub i64 2, %p"},  # 2 - 7 = -5
        {"index": "%k = add i64 %p, 1"},  # 1..4
        {"count": "10", "index": "%k = call i64 @llvm.smin.i64(i64 %p, i64 4)"},
        # 32 bits: 2**31 - 1 then the wrap to -2**31
        {"width": 32, "start": "2147483647", "count": "2", "index": "%k = sext i32 %p to i64"},
        # a step of -2**31 in 32 bits: 1, then 1 - 2**31
        {
            "width": 32,
            "start": "1",
            "count": "2",
            "step": "-2147483648",
            "index": "%k = sext i32 %p to i64",
        },
        # the 32-bit truncation of a 64-bit index: 2**32 + q is q, but 2**31 + q is negative
        {"index": "%a = add i64 %p, 2147483648\n  %s = shl i64 %a, 32\n  %k = ashr i64 %s, 32"},
    ],
)
def test_trips_out_of_range_keep_the_default(shape: dict[str, Any]) -> None:
    assert not _dropped(_latch_phis(_loop(**shape))), shape


def test_a_decrement_outside_the_guard_is_no_counter() -> None:
    """``c - 1`` computed in the header, before ``c > 0`` is known: a counter that may go
    below 0 (the pairing asks for the guard where the decrement runs)."""
    text = _latch_phis(_loop(count="%m", entry="  %m = call i64 @llvm.smin.i64(i64 %n, i64 4)"))
    moved = text.replace("  %c1 = add nsw i64 %c, -1\n", "").replace(
        "  %go = icmp", "  %c1 = add nsw i64 %c, -1\n  %go = icmp"
    )
    assert _dropped(text) and not _dropped(moved)


def test_steps_that_differ_between_paths() -> None:
    """``p + 1`` on one path, ``p + 2`` on the other (0, 2, 4, 6 in four trips)."""
    text = _loop().replace(
        "MERGE",
        "  %p2 = add i64 %p, 2\n  br i1 %bx, label %one, label %two\none:\n  br label %join\n"
        "two:\n  br label %join\njoin:\n"
        "  %p.next = phi i64 [ %p1, %one ], [ %p2, %two ]\n"
        "  %c.next = phi i64 [ %c1, %one ], [ %c1, %two ]",
    )
    text = text.replace("define void @f(i64 %n, i64 %x) {", "define void @f(i64 %n, i1 %bx) {")
    same = text.replace("[ %p2, %two ]", "[ %p1, %two ]")
    assert _dropped(same, "%join") and not _dropped(text, "%join")


def test_a_path_that_moves_one_phi_only() -> None:
    """On one path ``p`` steps and the counter does not: ``p`` grows without end."""
    text = _loop().replace(
        "MERGE",
        "  br i1 %bx, label %one, label %two\none:\n  br label %join\n"
        "two:\n  br label %join\njoin:\n"
        "  %p.next = phi i64 [ %p1, %one ], [ %p1, %two ]\n"
        "  %c.next = phi i64 [ %c1, %one ], [ %c, %two ]",
    )
    text = text.replace("define void @f(i64 %n, i64 %x) {", "define void @f(i64 %n, i1 %bx) {")
    both = text.replace("[ %p1, %two ]\n", "[ %p, %two ]\n")
    assert _dropped(both, "%join") and not _dropped(text, "%join")
