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
from tests.kernels import load_kernel_module, ptx_refusal
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
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


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


def test_shift_chain_range_is_not_exponential(monkeypatch: pytest.MonkeyPatch) -> None:
    """FINDING 1, fixed: ``%sK = shl i64 %s(K-1), %s(K-1)`` 24 times under ``and 3``: the
    range is (0, 3), found in a few evaluations (each value's range kept, an unbounded
    instruction's operands not evaluated), not 2**24."""
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


def test_shift_chain_compiles_in_few_evaluations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FINDING 1 on the compiled target: 16 lines of ``s = s << s`` (2**16 evaluations before
    the fix) compile with a few hundred, and the kernel is accepted."""
    calls = [0]
    original = feasible._Eval.range

    def counted(self: feasible._Eval, v: str, width: int, depth: int) -> feasible.Range:
        calls[0] += 1
        return original(self, v, width, depth)

    monkeypatch.setattr(feasible._Eval, "range", counted)
    source = SHIFT_CHAIN.replace("BODY", "    s = s << s\n" * 16)
    assert "bar.sync" in load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert calls[0] < 1000, calls[0]


def _const_bytes(ptx: str) -> int:
    return sum(int(n) for n in re.findall(r"\.const [^\n]*?\[(\d+)\]", ptx))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        # FINDING 2: the size of the base class's view, not the subclass's word
        (
            "const-subclass-lying-size",
            r"takes at most 65536 bytes \(the GPU's constant bank\), got an array of "
            r"160000 bytes",
        ),
        # FINDING 3: the kernel's constant globals added up on the compiled form
        (
            "const-two-tables-past-the-bank",
            r"its constant arrays \(`cuda\.const\.array_like`\) take 80000 bytes of "
            r"constant memory \(_cudapy_cmem: 40000 bytes; _cudapy_cmem\.1: 40000 bytes\), "
            r"more than the 65536 bytes",
        ),
    ],
)
def test_const_past_the_bank_refused(tmp_path: Path, name: str, message: str) -> None:
    """FINDINGS 2 and 3, fixed (were accepted, and ptxas failed at the first load: "File
    uses too much global constant data")."""
    with pytest.raises(ss.SafetyError, match=message):
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=CC)


def test_two_tables_inside_the_bank_are_accepted(tmp_path: Path) -> None:
    """The accepted twin of FINDING 3: two 30000-byte tables (60000 bytes) compile."""
    source = FINDINGS["const-two-tables-past-the-bank"].replace("5000", "3750")
    assert "5000" in FINDINGS["const-two-tables-past-the-bank"]
    ptx = load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert _const_bytes(ptx) == 60_000
