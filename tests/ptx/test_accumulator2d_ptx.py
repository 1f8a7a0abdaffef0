"""2D shared accumulators on the real target (NVVM, no GPU): the refusals of
tests/kernels/accumulator2d_rules.py; both axes compared before every update and read; the
histogram example's update one multiply-add from a per-lane base."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.accumulator2d_rules import ACCEPTED, COLS, REFUSED
from tests.ptx.ptx_text import control_flow, count, loops

pytestmark = pytest.mark.ptx

CC = (9, 0)
ATOMIC = r"atom\.shared\.add\.u32"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


def _definitions(body: str) -> dict[str, str]:
    """register -> the instruction that defines it (the kernel has no redefinitions of the
    registers looked at: LLVM's PTX is in SSA form)."""
    out: dict[str, str] = {}
    lines = [line.strip() for line in body.splitlines()]
    for n, line in enumerate(lines):
        if m := re.match(r"^(?:@!?%p\d+\s+)?[\w.]+\s+(%\w+),", line):
            out[m.group(1)] = line
        if line.startswith("mul.wide.u32") and n and "begin inline asm" in lines[n - 1]:
            out[line.split()[1].rstrip(",")] = line
    return out


def test_both_axes_are_compared_before_each_update(tmp_path: Path) -> None:
    """The updates at a thread-dependent pair: one row product (the asm ``mul.wide.u32`` by
    the row's 28 bytes) for the int32 accumulator; each update and read sits behind two
    unsigned compares (rows < 5 and columns < 7, or the 1-column accumulators' row only)."""
    body = load_kernel_module(tmp_path, ACCEPTED).k.ptx(cc=CC).split(".entry", 1)[1]
    assert re.search(rf"mul\.wide\.u32 %rd\d+, %r\d+, {4 * COLS};", body), body
    for extent in (5, COLS):  # i < 5 and j < 7, as LLVM writes them (gt n - 1, or lt/ge n)
        compare = rf"setp\.(gt\.u64\s+%p\d+, %rd\d+, {extent - 1}|(lt|ge)\.u64\s+%p\d+, %rd\d+, {extent});"
        assert re.search(compare, body), (extent, body)
    assert "atom.shared.add.u32" in body
    assert "ld.local" not in body and "st.local" not in body


def test_histogram_update_is_one_multiply_from_the_lane_base() -> None:
    """examples/histogram_vec.py's main loop: every shared atomic's address is ``base + b *
    128`` with the base (the accumulator's address plus the lane's 4 bytes) computed before
    the loop and ``b * 128`` the asm multiply -- not LLVM's shift-mask-or of a flat index
    (``b * 32 + lane``), which costs two more instructions a byte in SASS."""
    ptx = example("histogram_vec").histogram_vec.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    defs = _definitions(body)
    blocks = control_flow(ptx)
    main = max(loops(blocks), key=lambda loop: count(blocks, loop, ATOMIC))
    inside = {instr for b in main for instr in blocks[b].instrs}
    atomics = [i for i in inside if re.match(ATOMIC, i)]
    assert len(atomics) == 64, len(atomics)  # four 16-byte runs a step
    for atom in atomics:
        address = re.search(r"\[(%rd\d+)\]", atom).group(1)  # type: ignore[union-attr]
        add = defs[address]
        assert add.startswith("add.s64"), add
        base, product = re.findall(r"%rd\d+", add)[1:]
        if not defs[product].startswith("mul.wide.u32"):
            base, product = product, base
        assert re.match(r"mul\.wide\.u32 %rd\d+, %r\d+, 128;", defs[product]), defs[product]
        assert defs[base] not in inside, defs[base]  # the lane's base: loop-invariant
    assert not any(re.match(r"or\.b32", i) for i in inside), "a flat index's or is back"


def test_an_accumulator_of_exactly_48_kib_compiles(tmp_path: Path) -> None:
    """The twin of the 'past-static-shared-memory' refusals: 384 x 32 int32 is 49152 bytes."""
    source = REFUSED["past-static-shared-memory"][0].replace("(256, 64)", "(384, 32)")
    source = source.replace(
        "ss.block.sync()", "h.add((cuda.threadIdx.x, 3), 1)\n    ss.block.sync()"
    )
    source = source.replace("out[w] = 0", "out[w] = h[1, 1]")
    assert re.search(
        r"\.shared \.align 16 \.b8 __ss_acc\w+\[49152\]",
        load_kernel_module(tmp_path, source).k.ptx(cc=CC),
    )


def test_attack_round_22_static_shared_memory_is_added_up(tmp_path: Path) -> None:
    """Attack round 22's first finding (tests/kernels/attacks22.py): two accumulators of 48
    KiB each were accepted and failed in ptxas; the compiled form now adds up the block's
    static shared memory and names each object."""
    from tests.kernels.attacks22 import FINDINGS

    mod = load_kernel_module(tmp_path, FINDINGS["two-accumulators-96k"])
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    message = str(info.value)
    assert info.value.rule == "shared-memory", message
    assert "kernel 'k': its shared objects take 98304 bytes of static shared memory" in message
    assert message.count("49152 bytes;") == 1 and "made at line" in message, message
