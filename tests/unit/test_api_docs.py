"""docs/api.md is generated from the docstrings of every public name, and is up to date."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import simtsafe

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_docs", ROOT / "scripts" / "api_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_all_lists_each_public_name_once() -> None:
    names = simtsafe.__all__
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for name in names:
        assert hasattr(simtsafe, name), name


def test_every_public_name_has_a_docstring() -> None:
    _, missing = _generator().collect()
    assert missing == [], f"public names without a docstring: {missing}"


def test_api_reference_is_up_to_date() -> None:
    text = _generator().render()
    on_disk = (ROOT / "docs" / "api.md").read_text()
    assert on_disk == text, "docs/api.md is stale: run `python scripts/api_docs.py`"


def test_a_name_without_a_docstring_is_reported(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def undocumented() -> None:
        pass

    monkeypatch.setattr(simtsafe, "undocumented", undocumented, raising=False)
    monkeypatch.setattr(simtsafe, "__all__", [*simtsafe.__all__, "undocumented"])
    _, missing = _generator().collect()
    assert missing == ["simtsafe.undocumented"]


def test_vec_docs_name_the_launch_alignment_refusal() -> None:
    """Porting round 19's doc gap: the reference said vec.load reads at any alignment and
    never said a launch refuses an input whose row pitch is not a multiple of the run."""
    import simtsafe.vec as vec

    for doc in (vec.__doc__ or "", vec.load.__doc__ or ""):
        words = " ".join(doc.split())
        assert "row pitch" in words and "multiple of the run's bytes" in words, words
    assert "ArgumentTypeError" in (vec.__doc__ or "")
