"""Packaging metadata: license, classifiers, the stub distribution's name, the version scheme."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import simtsafe

ROOT = Path(__file__).resolve().parents[2]


def _project(path: Path) -> dict:  # type: ignore[type-arg]
    return tomllib.loads(path.read_text())


def test_license_is_apache_2_as_an_spdx_expression() -> None:
    for toml in (ROOT / "pyproject.toml", ROOT / "stubs" / "pyproject.toml"):
        data = _project(toml)
        project = data["project"]
        assert project["license"] == "Apache-2.0", toml
        files = project["license-files"]
        assert files == ["LICENSE"], toml
        assert (toml.parent / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
        # PEP 639: a License classifier next to an SPDX expression is an error for setuptools.
        assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
        # SPDX strings and license-files need setuptools >= 77 to build.
        requires = data["build-system"]["requires"]
        assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d)(\.\d+)*", r) for r in requires)
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_classifiers_say_what_is_tested() -> None:
    project = _project(ROOT / "pyproject.toml")["project"]
    classifiers = set(project["classifiers"])
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert project["requires-python"] == ">=3.11"
    for extra in ("cu12", "cu13"):
        assert f"Environment :: GPU :: NVIDIA CUDA :: {extra[2:]}" in classifiers


def test_stub_distribution_does_not_claim_numbas_stub_name() -> None:
    name = _project(ROOT / "stubs" / "pyproject.toml")["project"]["name"]
    assert name == "simtsafe-numba-cuda-stubs"
    assert not name.startswith(("numba-stubs", "numba-cuda-stubs"))
    dev = (ROOT / "scripts" / "dev.py").read_text()
    assert 'ROOT / "stubs"' in dev  # still installed by the README's commands
    assert "numba-cuda-stubs-simtsafe" in dev  # ... which first remove the old name


def test_version_tags_are_v_plus_the_version() -> None:
    tag = f"v{simtsafe.__version__}"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(simtsafe.__version__)}\]", changelog, re.MULTILINE)
    assert "`v<version>`" in changelog
    for doc in ("README.md", "docs/install.md"):
        revs = re.findall(r"^\s*rev:\s*(\S+)", (ROOT / doc).read_text(), re.MULTILINE)
        assert revs and all(r == tag for r in revs), (doc, revs)
