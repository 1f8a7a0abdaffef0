"""The typing corpus: pass/ files type-check clean, fail/ files fail exactly where marked.

One mypy run (``--strict`` + the repo's stubs + ``deprecated`` enabled +
``warn_unused_ignores``) over pass/, fail/ and examples/. Each expected error in
a fail file is a ``# type: ignore[code]`` on its line: mypy then reports
nothing for a file whose errors are exactly the marked ones, an error on an
unmarked line, and an "unused type: ignore" where a marked error stopped
firing. See tests/typing/README.md.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from tests.coop_examples import NEEDS, skip_if_not_lowered

mypy_api = pytest.importorskip("mypy.api")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PASS = sorted((HERE / "pass").glob("*.py"))
FAIL = sorted((HERE / "fail").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
_LINE = re.compile(r"^(?P<path>[^:\n]+\.pyi?):(?P<line>\d+): (?P<kind>error|note): (?P<msg>.*)$")
_IGNORE = re.compile(r"#\s*type:\s*ignore\[([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\]")


def _run_mypy() -> dict[Path, list[str]]:
    args = [
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--strict",
        "--enable-error-code",
        "deprecated",
        "--warn-unused-ignores",
        "--no-incremental",
        "--show-error-codes",
        "--no-pretty",
        *(str(p) for p in (*PASS, *FAIL, *EXAMPLES)),
    ]
    stdout, stderr, _ = mypy_api.run(args)
    assert "errors prevented further checking" not in stdout, stdout + stderr
    errors: dict[Path, list[str]] = defaultdict(list)
    for line in stdout.splitlines():
        m = _LINE.match(line)
        if m and m.group("kind") == "error":
            errors[(ROOT / m.group("path")).resolve()].append(
                f"{m.group('line')}: {m.group('msg')}"
            )
    return errors


@pytest.fixture(scope="module")
def mypy_errors(request: pytest.FixtureRequest) -> dict[Path, list[str]]:
    # mypy_path = "stubs" in pyproject.toml is relative to the working directory.
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        return _run_mypy()


def _name(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.mark.parametrize("path", PASS + EXAMPLES, ids=_name)
def test_accepted(path: Path, mypy_errors: dict[Path, list[str]]) -> None:
    if path.parent.name == "examples" and path.stem in NEEDS:
        # Their API's types (block-local witness coordinates, numpy-int accumulator
        # indices) come with the block-cooperation lowering (tests/coop_examples.py).
        skip_if_not_lowered(path.stem)
    assert mypy_errors.get(path) is None, "\n".join(mypy_errors[path])


@pytest.mark.parametrize("path", FAIL, ids=_name)
def test_rejected_exactly_where_marked(path: Path, mypy_errors: dict[Path, list[str]]) -> None:
    marked = [
        (n, m.group(1))
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if (m := _IGNORE.search(text))
    ]
    assert marked, f"{_name(path)} marks no expected error"
    # An extra error or a marked one that no longer fires (unused-ignore) shows here.
    assert mypy_errors.get(path) is None, "\n".join(mypy_errors[path])


def test_every_rule_has_pass_and_fail() -> None:
    ok = {p.stem.removeprefix("ok_") for p in PASS}
    bad = {p.stem.removeprefix("bad_") for p in FAIL}
    assert ok == bad, f"rules without both files: {sorted(ok ^ bad)}"
