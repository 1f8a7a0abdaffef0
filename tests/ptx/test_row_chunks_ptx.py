"""Chunked row walks (``thread.block_row_chunks`` / ``warp_row_chunks``) on the real target.

What is asserted on the compiled form (the code NVVM gets, DESIGN.md section 11): the
collectives inside a chunk loop are accepted because the divergence analysis derives
the loop's trip count from ``shape[1]`` and ``ntid.x`` (grid-uniform operands) -- not
from the iterator's name; a thread-dependent break, continue or return before a
collective, a collective under ``c.valid``, a plain ``block_row`` loop around a scan, and
a chunk loop over an array chosen by the thread are refused at their lines; in the PTX
every global store through a chunk witness is guarded by unsigned compares against the
output's own ``shape[0]`` and ``shape[1]``, every read by the input's (so the last
chunk's columns past the row's end touch no memory).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import simtsafe as ss
from simtsafe.verify import _divergence as D
from tests.kernels import line_of, load_kernel_module
from tests.kernels.row_chunk_rules import KERNELS, REFUSED, TWINS

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_when_compiled(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(TWINS))
def test_rule_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, TWINS[case]).k.ptx(cc=CC)
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global", ptx, re.MULTILINE)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_compiles_with_its_collectives_inside_the_chunk_loop(
    tmp_path: Path, name: str
) -> None:
    ptx = load_kernel_module(tmp_path, KERNELS[name]).k.ptx(cc=CC)
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global", ptx, re.MULTILINE)
    assert not re.search(r"\btrap\b", ptx)


# --------------------------------------------------------------------------- compiled form


def _verdict(monkeypatch: pytest.MonkeyPatch, kernel: Any) -> D.Divergence:
    """The divergence analysis the compiled-form verdict ran on ``kernel`` (no cache)."""
    import simtsafe._compose as compose

    seen: list[D.Divergence] = []
    check = compose.check_kernel_ir

    def spy(*args: Any) -> D.Divergence:
        seen.append(check(*args))
        return seen[-1]

    monkeypatch.setattr(compose, "check_kernel_ir", spy)
    kernel._compiled_verdict()
    (d,) = seen
    return d


def _leaves(d: D.Divergence, value: str) -> tuple[set[str], set[str]]:
    """(the parameters, the special registers) ``value`` is computed from, through SSA."""
    params, sregs, seen, work = set(), set(), set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        ins = d.defs.get(v)
        if ins is None:
            params.add(v)
            continue
        if ins.callee is not None and ins.callee.startswith("llvm.nvvm.read.ptx.sreg."):
            sregs.add(ins.callee.removeprefix("llvm.nvvm.read.ptx.sreg."))
        work.extend(ins.operands)
    return params, sregs


@pytest.mark.parametrize(
    ("name", "shape1", "step"),
    [("row_cumsum", "%out.5.1", "ntid.x"), ("warp_row_cumsum", "%out.5.1", None)],
)
def test_trip_count_is_derived_from_the_width_and_the_block(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, shape1: str, step: str | None
) -> None:
    d = _verdict(monkeypatch, load_kernel_module(tmp_path, KERNELS[name]).k)
    # The chunk count: shape[1] (a kernel argument) over ntid.x (or the constant 32).
    divs = [ins for b in d.form.blocks for ins in b.instrs if ins.opcode in ("udiv", "lshr")]
    counts = [ins for ins in divs if ins.result is not None and shape1 in _leaves(d, ins.result)[0]]
    assert counts, [ins.text for ins in divs]
    for ins in counts:
        assert ins.result is not None
        params, sregs = _leaves(d, ins.result)
        assert d.level(ins.result) == D.GRID, ins.text
        assert not {s for s in sregs if s.startswith(("tid.", "laneid"))}, ins.text
        if step is not None:
            assert step in sregs, ins.text
    # The loop's exit branches on that count only: every branch whose condition reads it is
    # grid-uniform, and the blocks holding the barriers of the collectives run in every
    # thread the same number of times.
    uses = [
        b.name
        for b in d.form.blocks
        if b.terminator.opcode == "br"
        and b.terminator.operands
        and any(c.result in _ancestry(d, b.terminator.operands[0]) for c in counts if c.result)
    ]
    assert uses
    assert all(d.branch.get(b, D.GRID) == D.GRID for b in uses), uses
    sync = "__ss.nvvm.barrier0" if name == "row_cumsum" else "__ss.nvvm.shfl."
    sites = [
        b.name
        for b in d.form.blocks
        if any(i.callee is not None and i.callee.startswith(sync) for i in b.instrs)
    ]
    assert sites
    top = [b for b in sites if d.control.get(b, D.GRID) == D.GRID]
    assert top, sites


def _ancestry(d: D.Divergence, value: str) -> set[str]:
    seen, work = set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        ins = d.defs.get(v)
        if ins is not None:
            work.extend(ins.operands)
            work.extend(x for x, _ in ins.incoming if x is not None)
    return seen


# --------------------------------------------------------------------------- guarded accesses


def _load(tmp_path: Path, sub: str, source: str) -> Any:
    (tmp_path / sub).mkdir()
    return load_kernel_module(tmp_path / sub, source)


def _entry(ptx: str) -> list[str]:
    body = ptx[ptx.index(".entry") :]
    return [line.strip() for line in body.splitlines() if line.strip()]


def _params_of(lines: list[str], reg: str, upto: int) -> set[int]:
    """Kernel parameter numbers register ``reg`` is loaded from (through movs), as defined
    before line ``upto``."""
    out: set[int] = set()
    for line in reversed(lines[:upto]):
        m = re.match(r"^(ld\.param\.u64|mov\.u64|mov\.b64)\s+(%\w+),\s*(.+);$", line)
        if m is None or m.group(2) != reg:
            continue
        p = re.search(r"_param_(\d+)\]", m.group(3))
        if p is not None:
            out.add(int(p.group(1)))
        elif m.group(3).startswith("%"):
            out |= _params_of(lines, m.group(3), lines.index(line))
        break
    return out


def _guard_params(lines: list[str], at: int) -> set[int]:
    """The parameters that the unsigned compares guarding the access at line ``at`` read: the
    nearest preceding branch's predicate, through ``or.pred`` to its ``setp.ge.u64``."""
    guard = max(i for i, line in enumerate(lines[:at]) if re.search(r"\bbra\b", line))
    predicate = lines[guard].split()[0].lstrip("@!")
    work, compares = [predicate], []
    while work:
        p = work.pop()
        for i in range(guard, -1, -1):
            m = re.match(rf"^(\S+)\s+{re.escape(p)},\s*(.+);$", lines[i])
            if m is None:
                continue
            if m.group(1) == "or.pred":
                work.extend(x.strip() for x in m.group(2).split(","))
            else:
                compares.append((i, m.group(1), [x.strip() for x in m.group(2).split(",")]))
            break
    assert compares and all(op == "setp.ge.u64" for _, op, _ in compares), compares
    params: set[int] = set()
    for i, _, regs in compares:
        for reg in regs:
            params |= _params_of(lines, reg, i)
    return params


def test_stores_past_the_end_are_guarded_by_the_outputs_shape(tmp_path: Path) -> None:
    lines = _entry(load_kernel_module(tmp_path, KERNELS["row_cumsum"]).k.ptx(cc=CC))
    stores = [i for i, line in enumerate(lines) if line.startswith("st.global.f32")]
    loads = [i for i, line in enumerate(lines) if line.startswith("ld.global.f32")]
    assert len(stores) == 1 and len(loads) == 1
    # out is parameters 0-8 (shape[0] = 5, shape[1] = 6), x 9-17 (shape 14, 15): the
    # store compares row and column with out's extents, the read with x's, unsigned
    # (a column past the row's end, and the invalid row 2**63 - 1, fail both).
    assert _guard_params(lines, stores[0]) == {5, 6}
    assert _guard_params(lines, loads[0]) == {14, 15}


def test_launch_shape_checked_on_the_device_only_without_a_proof(tmp_path: Path) -> None:
    free = _load(tmp_path, "free", KERNELS["row_cumsum_free"]).k.ptx(cc=CC)
    proven = _load(tmp_path, "proven", KERNELS["row_cumsum"]).k.ptx(cc=CC)
    for sreg in ("%nctaid.y", "%nctaid.z"):
        assert sreg in free, sreg
        assert sreg not in proven, sreg


def test_domain_rule_refuses_a_chunk_walk_in_a_2d_kernel(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match="block_row_chunks"):
        load_kernel_module(
            tmp_path,
            """
            from simtsafe import BlockRow

            @ss.kernel(contract=ss.LaunchContract(domain=2))
            def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
                for c in thread.block_row_chunks(x):
                    out[c] = x[c]
            """,
        )


def test_chunk_walk_only_as_a_for_iterable(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"only as the iterable of a `for` loop"):
        load_kernel_module(
            tmp_path,
            """
            from simtsafe import BlockRow

            @ss.kernel(contract=ss.LaunchContract(domain=1))
            def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
                it = thread.block_row_chunks(x)
                for c in it:
                    out[c] = x[c]
            """,
        )


_UNIFORMITY = sorted(c for c in REFUSED if "needs every thread" in REFUSED[c][1])


@pytest.mark.parametrize("case", _UNIFORMITY)
def test_source_level_fallback_agrees(tmp_path: Path, case: str) -> None:
    # The source-level finding (the early message where no compiled form can be made) says
    # the same as the compiled form: refused here, accepted for the twin and the kernels.
    finding = _load(tmp_path, "bad", REFUSED[case][0]).k.source_uniformity()
    assert finding.finding is not None and "needs every thread" in str(finding.finding)
    twin = _load(tmp_path, "twin", TWINS[case]).k.source_uniformity()
    if case == "thread-dependent-continue-before-the-scan":
        # A `continue` after the scan: the source level (flow-insensitive about a loop's
        # early exits) still refuses what the compiled form proves fine; it only words
        # early messages, the compiled form decides (test_rule_twin_compiles).
        assert twin.finding is not None
        return
    assert twin.finding is None


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_source_level_fallback_accepts_the_kernels(tmp_path: Path, name: str) -> None:
    assert load_kernel_module(tmp_path, KERNELS[name]).k.source_uniformity().finding is None
