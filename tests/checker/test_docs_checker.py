"""docs/checker.md's worked examples are real output: each finding line shown is what
``simtsafe.sim.check`` prints for that corpus kernel today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simtsafe import sim

from .cases import CASES

DOC = Path(__file__).resolve().parents[2] / "docs" / "checker.md"


def _examples() -> list[tuple[str, list[str]]]:
    """(kernel name, finding lines) of every text block that shows a report."""
    out = []
    for block in re.findall(r"```text\n(.*?)```", DOC.read_text(), flags=re.S):
        m = re.search(r"simtsafe\.sim\.check: kernel '(\w+)'", block)
        if m:
            findings = [line for line in block.splitlines() if re.match(r"\[\d+\] ", line)]
            out.append((m.group(1), findings))
    return out


def _case_for(kernel: str):  # type: ignore[no-untyped-def]
    for case in CASES:
        fn = getattr(case.bug, "py_func", case.bug)
        if getattr(fn, "__name__", None) == kernel:
            return case
    raise AssertionError(f"docs/checker.md shows kernel {kernel!r}, which is not in the corpus")


def test_the_doc_has_an_example_of_every_kind() -> None:
    text = "\n".join(line for _, lines in _examples() for line in lines)
    for kind in sim.KINDS:
        assert f"] {kind}" in text, kind


@pytest.mark.parametrize(("kernel", "lines"), _examples(), ids=lambda v: str(v)[:40])
def test_example_is_current(kernel: str, lines: list[str]) -> None:
    case = _case_for(kernel)
    report = sim.check(case.bug, case.grid, case.block, *case.args())
    got = [line for line in str(report).splitlines() if re.match(r"\[\d+\] ", line)]
    assert got == lines
