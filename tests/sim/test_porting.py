"""docs/porting.md runs as written: its ```python blocks, in order, as one module (simulator).

Each section launches the ported kernel and its raw original and asserts that
both agree (or agree with numpy); an import that completes is a passing run.
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pytest

from tests.sim.test_tutorial import python_blocks

pytestmark = pytest.mark.sim

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "porting.md"


def test_porting_guide_runs_top_to_bottom(tmp_path: Path) -> None:
    blocks = python_blocks(GUIDE.read_text())
    assert len(blocks) >= 10
    name = f"ss_porting_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text("\n\n".join(blocks))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    assert len(module.PAIRS) >= 5
