"""Examples run on the GPU when present, else on the simulator; never on neither."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import simtsafe

    from ..conftest import gpu_available

    if simtsafe.SIMULATOR or gpu_available():
        return
    skip = pytest.mark.skip(
        reason="examples run on a GPU or on the simulator (NUMBA_ENABLE_CUDASIM=1); "
        "scripts/dev.py test runs them in the simulator layer"
    )
    for item in items:
        if "tests/examples" in str(item.fspath):
            item.add_marker(skip)
