"""The typing corpus under pyright (strict): the same verdicts as mypy, except one rule.

pyright honours `# type: ignore` comments and, with
reportUnnecessaryTypeIgnoreComment, reports a marked line on which it finds no
error. It enforces every rule of the corpus except one: storing a float64 into
a float32 DisjointSlice, which mypy reports through a @deprecated overload of
__setitem__ and pyright does not (docs/typing.md). This test pins that: the
only pyright findings are the `# type: ignore[deprecated]` lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.coop_examples import NEEDS, missing

HERE = Path(__file__).resolve().parent


def _deprecated_marks() -> set[tuple[str, int]]:
    marks = set()
    for path in sorted((HERE / "fail").glob("*.py")):
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            if "# type: ignore[deprecated]" in line:
                marks.add((path.name, lineno))
    return marks


def test_pyright_agrees_with_mypy_except_deprecated_overloads() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "-p",
            str(HERE / "pyrightconfig.json"),
            "--pythonpath",
            sys.executable,
            "--outputjson",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    # Block-cooperation examples whose API types are not merged yet (tests/coop_examples.py).
    pending = {f"{name}.py" for name in NEEDS if missing(name)}
    found = {
        (Path(d["file"]).name, d["range"]["start"]["line"] + 1, d.get("rule", ""))
        for d in report["generalDiagnostics"]
        if not (Path(d["file"]).parent.name == "examples" and Path(d["file"]).name in pending)
    }
    expected = {
        (name, line, "reportUnnecessaryTypeIgnoreComment") for name, line in _deprecated_marks()
    }
    assert expected, "the corpus should contain the float64-into-float32 cases"
    assert found == expected, f"pyright disagrees with the corpus: {sorted(found ^ expected)}"
