"""Every measured figure the docs quote is in a result file under benchmarks/results/.

A figure is a number with a unit (GB/s, TB/s, TFLOP/s, GFLOP/s, us, ms, ns, %)
in docs/*.md or README.md. It is found when a result file (the .md/.log/.txt
twins the benchmark scripts write) has a number that rounds to it, in a line
-- or a table whose header -- names the same unit (GFLOP/s for TFLOP/s, scaled).
A threshold or an estimate written as one (`>= 90%`, `within 10%`, `~5%`,
`up to 2x`, `about 1 us`) is a target or a rough bound, not a measurement, and
is not looked up. So a figure cannot go stale silently: a
re-run that changes it must change the docs, and a number from a run whose
results were not kept cannot be quoted.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

FIGURE = re.compile(
    r"(?<![\w.])(?P<cmp>(?:>=|<=|≥|≤|<|>|~|(?i:within |up to |about ))\s?)?(?P<num>\d+(?:\.\d+)?)\s?"
    r"(?P<unit>GB/s|TB/s|TFLOP/s|GFLOP/s|µs|us|ms|ns|%)(?![\w/])"
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\d])")
#: unit in the docs -> (unit words a result line or header must contain, scale to apply)
_UNITS = {
    "GB/s": (("GB/s",), (1.0,)),
    "TB/s": (("TB/s",), (1.0,)),
    "TFLOP/s": (("TFLOP/s", "GFLOP/s"), (1.0, 1e-3)),
    "GFLOP/s": (("GFLOP/s",), (1.0,)),
    "us": ((r"\bus\b", "µs"), (1.0,)),
    "µs": ((r"\bus\b", "µs"), (1.0,)),
    "ms": ((r"\bms\b",), (1.0,)),
    "ns": ((r"\bns\b",), (1.0,)),
    "%": (("%",), (1.0,)),
}


@cache
def recorded() -> tuple[tuple[str, tuple[float, ...]], ...]:
    """(context, numbers) per result line -- per cell in a table, whose context is its column.

    A table cell's context is its column header plus the cell ("GB/s" numbers
    are the cells of a "GB/s" column or cells that say "GB/s"); any other
    line's context is the line itself.
    """
    out: list[tuple[str, tuple[float, ...]]] = []

    def numbers(text: str) -> tuple[float, ...]:
        return tuple(float(n) for n in _NUMBER.findall(text.replace("..", " .. ")))

    for path in sorted(RESULTS.iterdir()):
        if path.suffix not in (".md", ".log", ".txt"):
            continue
        lines = path.read_text(errors="replace").splitlines()
        header: list[str] | None = None
        for k, line in enumerate(lines):
            if not line.lstrip().startswith("|"):
                header = None
                if numbers(line):
                    out.append((line, numbers(line)))
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if k + 1 < len(lines) and re.match(r"\s*\|[\s:|-]+\|\s*$", lines[k + 1]):
                header = cells  # a table's header row (the next line is its separator)
                continue
            for j, cell in enumerate(cells):
                column = header[j] if header is not None and j < len(header) else ""
                if numbers(cell):
                    out.append((f"{column} {cell}", numbers(cell)))
    return tuple(out)


def found(num: str, unit: str) -> bool:
    """Is ``num unit`` a recorded number, rounded as written, of the same unit?"""
    digits = len(num.split(".")[1]) if "." in num else 0
    value = float(num)
    words, scales = _UNITS[unit]
    for context, numbers in recorded():
        for word, scale in zip(words, scales * len(words), strict=False):
            if not re.search(word if word.startswith("\\b") else re.escape(word), context):
                continue
            if any(round(x * scale, digits) == value for x in numbers):
                return True
    return False


def figures() -> list[tuple[str, int, str, str]]:
    """(doc, line, number, unit) of every measured figure quoted in the docs."""
    out = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            for m in FIGURE.finditer(line):
                if not m.group("cmp"):
                    out.append((doc.name, n, m.group("num"), m.group("unit")))
    return out


def test_docs_quote_figures() -> None:
    assert len(figures()) > 50  # the scan sees the docs' figures at all


@pytest.mark.parametrize(("doc", "line", "num", "unit"), figures())
def test_figure_is_recorded(doc: str, line: int, num: str, unit: str) -> None:
    assert found(num, unit), (
        f"docs/{doc}:{line} quotes {num} {unit}, which no file under benchmarks/results/ "
        "records (with that unit): quote the recorded figure, or commit the run it comes from"
    )


def test_the_lookup_can_fail() -> None:
    assert found("4290.7", "GB/s")  # benchmarks/results/coop.md
    assert found("27.0", "TFLOP/s") and found("9.0", "TFLOP/s")  # 9018.1 GFLOP/s in tiles.log
    assert not found("4290.7", "ms")  # the right number with the wrong unit
    assert not found("4291.3", "GB/s")
