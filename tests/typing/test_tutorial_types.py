"""The tutorial's code type-checks under mypy --strict, as written (issue: typing)."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]


def test_tutorial_code_is_mypy_strict_clean(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "tutorial.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) > 5
    source = tmp_path / "tutorial_code.py"
    source.write_text("\n".join(blocks))
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--strict",
            "--warn-unused-ignores",
            str(source),
        ]
    )
    assert status == 0, stdout + stderr
