"""Attack round 28 (tests/kernels/attacks28.py) on the real target (NVVM, no GPU): the
switch-condition ranges of verify/_feasible hold against the shapes tried (refused with
their message, sound twins accepted); the findings -- an exponential range evaluation and
constant data past the 64 KiB bank -- are strict xfails asserting the fixed behaviour."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
import simtsafe.verify._feasible as feasible
from simtsafe.lowering._irform import Instr, _instr
from simtsafe.verify._feasible import value_range
from tests.kernels import load_kernel_module
from tests.kernels.attacks28 import (
    ACCEPTED,
    FALSE_REFUSALS,
    FINDINGS,
    HELD_KERNELS,
    SHIFT_CHAIN,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)
_NOT_UNIFORM = "`block.reduce` needs every thread of the block to reach it"


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_twins_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """Safe indexes (every value a case) still refused; pinned so a fix shows up here."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FALSE_REFUSALS[name]).k.ptx(cc=CC)
    assert _NOT_UNIFORM in str(info.value), str(info.value)


def _defs(*lines: str) -> dict[str, Instr]:
    found = {}
    for line in lines:
        ins = _instr(line, {})
        assert ins.result is not None
        found[ins.result] = ins
    return found


class _Budget(Exception):
    pass


@pytest.mark.xfail(strict=True, reason="attacks28 FINDING 1: value_range is exponential")
def test_shift_chain_range_is_not_exponential(monkeypatch: pytest.MonkeyPatch) -> None:
    """FINDING 1: ``%sK = shl i64 %s(K-1), %s(K-1)`` 24 times under ``and 3``: the
    range is (0, 3) and should take a few evaluations per instruction, not 2**24."""
    calls = [0]
    original = feasible._Eval.range

    def counted(self: feasible._Eval, v: str, width: int, depth: int) -> feasible.Range:
        calls[0] += 1
        if calls[0] > 10_000:
            raise _Budget(calls[0])
        return original(self, v, width, depth)

    monkeypatch.setattr(feasible._Eval, "range", counted)
    lines = [f"%s{k} = shl i64 %s{k - 1}, %s{k - 1}" for k in range(1, 25)]
    defs = _defs(*lines, "%m = and i64 %s24, 3")
    assert value_range("%m", 64, defs) == (0, 3)


def test_shift_chain_compiles_and_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FINDING 1 on the compiled target, kept small: 8 lines of ``s = s << s`` take
    thousands of range evaluations (2**n), and the kernel is accepted."""
    calls = [0]
    original = feasible._Eval.range

    def counted(self: feasible._Eval, v: str, width: int, depth: int) -> feasible.Range:
        calls[0] += 1
        return original(self, v, width, depth)

    monkeypatch.setattr(feasible._Eval, "range", counted)
    source = SHIFT_CHAIN.replace("BODY", "    s = s << s\n" * 8)
    assert "bar.sync" in load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert calls[0] > 2**12, calls[0]


def _const_bytes(ptx: str) -> int:
    return sum(int(n) for n in re.findall(r"\.const [^\n]*?\[(\d+)\]", ptx))


@pytest.mark.parametrize(
    ("name", "total"),
    [("const-subclass-lying-size", 160_000), ("const-two-tables-past-the-bank", 80_000)],
)
def test_const_past_the_bank_compiles(tmp_path: Path, name: str, total: int) -> None:
    """FINDINGS 2 and 3 as they are: accepted, with more constant data than the 64 KiB
    bank (ptxas: "File uses too much global constant data")."""
    ptx = load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=CC)
    assert _const_bytes(ptx) == total


@pytest.mark.xfail(strict=True, reason="attacks28 FINDINGS 2, 3: constant data past 64 KiB")
@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_const_past_the_bank_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=CC)
    assert "constant" in str(info.value), str(info.value)
