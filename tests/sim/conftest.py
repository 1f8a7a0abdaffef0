"""tests/sim: kernels launched on the numba-cuda simulator (``NUMBA_ENABLE_CUDASIM=1``).

The simulator is chosen when ``numba.cuda`` is first imported, so this
directory cannot switch modes itself: run it as
``NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/sim``. Without the variable
every test here is skipped (tests/ptx covers the real CUDA target).
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
    if simtsafe.SIMULATOR:
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(
        reason="tests/sim needs the CUDA simulator: numba.cuda was imported without "
        "NUMBA_ENABLE_CUDASIM=1 (run `NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/sim`)"
    )
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip)
