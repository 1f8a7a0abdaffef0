"""tests/ptx: compile-only checks against the real CUDA target (NVVM, no GPU).

These tests need ``numba.cuda`` imported *without* the simulator: run them
with ``NUMBA_ENABLE_CUDASIM`` unset. Under the simulator the whole directory
is skipped (tests/sim covers that mode).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import simtsafe  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not simtsafe.SIMULATOR:
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(
        reason="tests/ptx compiles for the real CUDA target; NUMBA_ENABLE_CUDASIM=1 is set "
        "(run tests/ptx with it unset)"
    )
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip)
