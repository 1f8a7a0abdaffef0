"""Imports flow one way (STYLE.md): vocabulary at the bottom, device/host paths above."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "simtsafe"

#: module -> simtsafe modules it may import (by the first path component after simtsafe).
ALLOWED: dict[str, set[str]] = {
    "_errors": set(),
    "_spaces": set(),
    "_unsafe": set(),
    "_views": {"_spaces"},
    "thread": {"_spaces", "_views"},
    "_requires": {"_errors"},
    "_contract": {"_errors", "_requires"},
    "_params": {"_errors", "_requires", "_spaces", "_views"},
    "analysis": {"_errors", "_unsafe"},
    "device": {"_errors", "_spaces", "device"},
    "_limits": {"_errors", "device", "_kernel"},
    "_argfacts": {"_errors", "device", "_params"},
    "_fastcheck": {"_argfacts", "_errors", "_launch"},
    "_launch": {"_argfacts", "_errors", "_fastcheck", "device", "_kernel", "_params", "_limits"},
    "_prepare": {"_contract", "_errors", "_launch", "_limits", "device", "_kernel"},
}


def _simtsafe_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    depth_of_pkg = len(path.relative_to(PKG).parts) - 1
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            parts = (node.module or "").split(".")
            if node.level - 1 == depth_of_pkg and parts[0]:
                found.add(parts[0])
            elif node.level - 1 < depth_of_pkg:
                found.add(path.relative_to(PKG).parts[0])
            elif not parts[0]:
                found.update(alias.name for alias in node.names)
    return found


def test_imports_flow_one_way() -> None:
    for name, allowed in ALLOWED.items():
        paths = (
            [PKG / f"{name}.py"]
            if (PKG / f"{name}.py").exists()
            else list((PKG / name).glob("*.py"))
        )
        assert paths, name
        for path in paths:
            used = _simtsafe_imports(path) - {name}
            assert used <= allowed | {name}, (
                f"{path.relative_to(PKG)} imports {sorted(used - allowed)}"
            )


def test_vocabulary_modules_import_nothing_from_simtsafe() -> None:
    for name in ("_errors", "_spaces", "_unsafe"):
        assert _simtsafe_imports(PKG / f"{name}.py") == set(), name
