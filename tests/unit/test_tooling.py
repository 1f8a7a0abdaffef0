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


def test_version_has_one_source() -> None:
    import importlib.metadata
    import tomllib

    import simtsafe

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("simtsafe") == simtsafe.__version__


def test_dependencies_are_ranges_and_constraints_pin_them() -> None:
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"]:
        assert "==" not in dep, f"{dep}: [project] dependencies are ranges; pins go to constraints"
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    for dep in project["dependencies"]:
        name = re.split(r"[<>=\[ ]", dep)[0]
        assert name in pins, f"{name} is not pinned in requirements/constraints.txt"
    assert {"cu12", "cu13"} <= set(project["optional-dependencies"])


def test_untested_numba_cuda_warns_not_fails() -> None:
    from simtsafe.lowering._compat import check_version

    assert check_version("0.30.9") is None
    warning = check_version("0.31.0")
    assert warning is not None and "tested with numba-cuda 0.30.x, found 0.31.0" in warning
