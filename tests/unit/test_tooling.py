"""The package stays lint-clean, formatted and `mypy --strict` clean (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["simtsafe", "examples", "benchmarks", "scripts", "tests"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_is_clean() -> None:
    result = _run("ruff", "check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_is_mypy_strict_clean() -> None:
    from mypy import api

    stdout, stderr, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--strict", str(ROOT / "simtsafe")]
    )
    assert status == 0, stdout + stderr
