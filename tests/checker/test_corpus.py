"""The corpus: every buggy kernel is reported with the right kind at its ``# BUG`` line,
every fixed twin is clean (and computes what numpy computes).

Runs without a GPU and without ``NUMBA_ENABLE_CUDASIM`` (the checker has its own
replay); tests/sim/test_checker_sim.py runs a sample of it on the simulator too.
"""

from __future__ import annotations

import pytest

from simtsafe import sim

from .cases import CASES, RAW, SIMTSAFE, Case


def test_corpus_size() -> None:
    assert len(CASES) >= 25
    assert len(RAW) >= 15 and len(SIMTSAFE) >= 8
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.kind for c in CASES} == set(sim.KINDS)
    for c in CASES:
        assert c.bug_lines(), f"{c.name}: the buggy kernel marks no line with # BUG"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bug_reported(case: Case) -> None:
    report = sim.check(case.bug, case.grid, case.block, *case.args(), shared_mem=case.shared_mem)
    assert report.complete, report.stopped
    kinds = {f.kind for f in report.findings}
    assert case.kind in kinds, f"expected a {case.kind} finding:\n{report}"
    assert kinds <= {case.kind, *case.also}, f"unexpected kinds {kinds}:\n{report}"
    lines = {line for f in report.findings if f.kind == case.kind for line in f.lines}
    assert lines & case.bug_lines(), (
        f"no {case.kind} finding at the # BUG line(s) {sorted(case.bug_lines())}:\n{report}"
    )
    assert not report.ok


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fixed_twin_clean(case: Case) -> None:
    args = case.args()
    report = sim.check(case.ok, case.grid, case.block, *args, shared_mem=case.shared_mem)
    assert report.ok, str(report)
    if case.expect is not None:
        assert case.expect(report.outputs, args), f"{case.name}: outputs differ from numpy"
