"""mypy for users: simtsafe and its stubs installed into a fresh venv, as docs/typing.md says.

The test builds a virtual environment, installs simtsafe and the stub package
from this checkout (non-editable, as a user gets them; numba and the CUDA
wheels are left out because the stubs stand in for them when type checking),
and runs mypy from an unrelated directory with the configuration docs/typing.md
gives. The user files are the typing corpus's fail/ files: each must give
exactly its marked errors (one file per rule) -- first with the markers as
``# type: ignore[code]`` under ``warn_unused_ignores`` (clean run), then with
the markers stripped (the errors appear on exactly the marked lines).

Needs pip to reach PyPI (or its cache) for numpy, pydantic and the build
backend, as the rest of the suite's installation does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
FAIL = sorted((ROOT / "tests" / "typing" / "fail").glob("*.py"))
_IGNORE = re.compile(r"\s*#\s*type:\s*ignore\[([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\]")

#: The user's configuration, as docs/typing.md gives it.
MYPY_INI = """\
[mypy]
strict = True
enable_error_code = deprecated
warn_unused_ignores = True
"""


@pytest.fixture(scope="module")
def user_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = tmp_path_factory.mktemp("user-venv")
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "-c", str(CONSTRAINTS), "numpy", "pydantic", "typing_extensions"],
        check=True,
        timeout=600,
    )
    subprocess.run(
        [*pip, "--no-deps", str(ROOT), str(ROOT / "stubs")],
        check=True,
        timeout=600,
    )
    return python


def _mypy(python: Path, workdir: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            str(python),
            "--config-file",
            str(workdir / "mypy.ini"),
            # A cache of this test's own (fresh, never stale): the second run reuses the
            # first's analysis of simtsafe, numpy and pydantic instead of redoing it.
            "--cache-dir",
            str(workdir / ".mypy_cache"),
            "--show-error-codes",
            "--no-pretty",
            *(f.name for f in files),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_installed_package_is_what_mypy_checks(user_env: Path, tmp_path: Path) -> None:
    """The installed simtsafe (not this checkout) is what mypy resolves."""
    probe = subprocess.run(
        [str(user_env), "-c", "import simtsafe, sys; print(simtsafe.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    # numba is not installed in this environment, so the package does not import
    # at run time; what matters is that its files are installed, with py.typed.
    site = next((user_env.parent.parent / "lib").glob("python3*/site-packages"))
    assert (site / "simtsafe" / "py.typed").exists(), probe.stderr
    assert (site / "numba-stubs" / "cuda" / "__init__.pyi").exists()
    assert not (site / "simtsafe").is_symlink()


def test_every_rule_fires_for_a_user(user_env: Path, tmp_path: Path) -> None:
    work = tmp_path / "userproject"
    work.mkdir()
    (work / "mypy.ini").write_text(MYPY_INI)
    marked: dict[str, set[tuple[int, str]]] = {}
    for src in FAIL:
        shutil.copy(src, work / src.name)
        stripped = []
        expected: set[tuple[int, str]] = set()
        for n, line in enumerate(src.read_text().splitlines(), start=1):
            m = _IGNORE.search(line)
            if m:
                expected.update((n, code.strip()) for code in m.group(1).split(","))
                line = _IGNORE.sub("", line)
            stripped.append(line)
        marked[src.name] = expected
        (work / f"stripped_{src.name}").write_text("\n".join(stripped) + "\n")
    assert all(marked.values()), "every fail/ file marks at least one error"

    clean = _mypy(user_env, work, [work / f.name for f in FAIL])
    assert clean.returncode == 0, clean.stdout + clean.stderr

    raw = _mypy(user_env, work, [work / f"stripped_{f.name}" for f in FAIL])
    assert raw.returncode == 1, raw.stdout + raw.stderr
    found: dict[str, set[tuple[int, str]]] = {name: set() for name in marked}
    pattern = re.compile(r"^stripped_(\S+\.py):(\d+): error: .*\[([a-z0-9-]+)\]$")
    for line in raw.stdout.splitlines():
        m = pattern.match(line)
        if m:
            found[m.group(1)].add((int(m.group(2)), m.group(3)))
    for name, expected in marked.items():
        assert found[name] == expected, (name, sorted(found[name] ^ expected))
