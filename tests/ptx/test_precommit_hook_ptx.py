"""The published pre-commit hook, run by pre-commit itself on a sample repository.

A user's ``.pre-commit-config.yaml`` names this repository and the hook id
``simtsafe-check`` with ``args: [src/kern]``. pre-commit clones the hook
repository (here: a git snapshot of this working tree, so uncommitted edits
are tested too), builds the hook's environment as on any machine --
virtualenv, then ``pip install .`` plus the hook's ``additional_dependencies``
-- and runs ``simtsafe check src/kern``.

Offline: pip may not download (``PIP_NO_INDEX``); the pinned packages already
installed for this interpreter stand in for PyPI (a ``sitecustomize`` puts
its site-packages behind the hook environment's own, where pip finds the
requirements satisfied and cuda.pathfinder finds the NVVM/NVRTC wheels). The
test skips, saying why, only when that cannot work here: pre-commit or git
missing, or a requirement of the hook not installed in this interpreter.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit, in the dev extra")

ROOT = Path(__file__).resolve().parents[2]

BAD = """\
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def make():
    @ss.kernel
    def shift(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
        i = thread.index_1d()
        out[i.index + 1] = a[i]  # BROKEN

    return shift


KERNELS = [make()]  # a factory's kernel in a list: no module attribute shows it
"""


def _hook() -> dict[str, object]:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hook, dict)
    return hook


def test_hook_gets_the_cuda_13_toolkit_extra() -> None:
    hook = _hook()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert hook["id"] == "simtsafe-check" and hook["entry"] == "simtsafe check"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert hook["additional_dependencies"] == project["optional-dependencies"]["cu13"]


def _unavailable_offline() -> str | None:
    """Why the hook environment cannot be built offline here, or None."""
    if importlib.util.find_spec("pre_commit") is None:
        return "pre-commit is not installed (pip install -e '.[dev]')"
    if shutil.which("git") is None:
        return "git is not installed"
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in [*project["dependencies"], *_hook()["additional_dependencies"]]:  # type: ignore[misc]
        req = Requirement(spec)
        try:
            version = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            return f"{req.name} is not installed here, and pip may not download it offline"
        if version not in req.specifier:
            return f"{req.name} {version} installed here is outside the hook's {req.specifier}"
    return None


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=simtsafe", "-c", "user.email=simtsafe@invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _snapshot(dest: Path) -> str:
    """A git repository holding this working tree as it is; its commit."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _git(dest, "init", "-q", ".")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot")
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=dest, check=True, capture_output=True, text=True
    ).stdout.strip()


def _offline_env(tmp_path: Path) -> dict[str, str]:
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "sitecustomize.py").write_text(
        "import site\n"
        f"site.PREFIXES.append({sys.prefix!r})\n"  # cuda.pathfinder searches site-packages
        f"site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PRE_COMMIT"))}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.update(
        PYTHONPATH=str(site_dir),
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        PIP_NO_INDEX="1",
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_BUILD_ISOLATION="0",  # build with the installed setuptools, not a downloaded one
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def test_pre_commit_runs_the_published_hook(tmp_path: Path) -> None:
    reason = _unavailable_offline()
    if reason is not None:
        pytest.skip(f"pre-commit cannot build the hook environment offline: {reason}")
    hook_repo, sample = tmp_path / "simtsafe", tmp_path / "sample"
    hook_repo.mkdir()
    (sample / "src" / "kern").mkdir(parents=True)
    rev = _snapshot(hook_repo)
    (sample / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump(
            {
                "repos": [
                    {
                        "repo": str(hook_repo),
                        "rev": rev,
                        "hooks": [{"id": "simtsafe-check", "args": ["src/kern"]}],
                    }
                ]
            }
        )
    )
    bad = sample / "src" / "kern" / "shift.py"
    bad.write_text(BAD)
    _git(sample, "init", "-q", ".")
    _git(sample, "add", "-A")
    env = _offline_env(tmp_path)

    def pre_commit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
            cwd=sample,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    result = pre_commit()
    out = result.stdout + result.stderr
    assert result.returncode == 1, out  # 3 would be pre-commit failing to build the environment
    line = next(n for n, text in enumerate(BAD.splitlines(), 1) if "# BROKEN" in text)
    assert "simtsafe check (kernels compiled to PTX, no GPU)" in out and "Failed" in out, out
    assert f"src/kern/shift.py:{line}:9: SS-typing kernel 'shift': " in out, out
    assert "ThreadIndex witness" in out
    assert "kernels a factory makes after import are checked at their first compile" in out

    bad.write_text(BAD.replace("out[i.index + 1] = a[i]", "out[i] = a[i]"))
    _git(sample, "add", "-A")
    result = pre_commit()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
