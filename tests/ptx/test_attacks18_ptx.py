"""Attack round 18 (tests/kernels/attacks18.py), compiled form (NVVM, no GPU): a record read
by index from a shared tile, a dynamic tile, a thread-private array or an output tile had
no bounds test in the PTX. A record is a reference to its bytes; out of range the read was a
null record pointer, a load through it undefined, and LLVM deleted that path with the
compare. Now out of range the read is a zero-filled scratch record of the thread
(``_cuda.guarded_record``, as witness reads of inputs and outputs were): the field's load
takes its address from a ``selp`` between the element and the scratch, decided by the bound.
The values on the simulator (and on a GPU): tests/sim/test_attacks18_sim.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.attacks18 import FINDINGS

pytestmark = pytest.mark.ptx

ROUTES = (
    "tile-record-int-read-oob",
    "tile-record-witness-read-oob",
    "dynamic-tile-record-read-oob",
    "local-record-read-oob",
    "out-tile-record-read-oob",
)


def _unguarded_loads(ptx: str, fills: bool) -> list[str]:
    """Loads (not of a parameter) at an address no ``selp.b64`` chose. Every other read these
    kernels make is of a record (a witness read of the input, the route under test), so each
    must be at an address chosen between the element and the scratch record; a tile's fill
    reads the input with plain global loads (``fills``: those are left out)."""
    chosen = set(re.findall(r"selp\.b64\s+(%rd\d+),", ptx))
    loads = re.findall(r"(\bld\.(?!param)([\w.]*)\s+%\w+, \[(%rd\d+)(?:\+\d+)?\])", ptx)
    return [
        text
        for text, kind, reg in loads
        if reg not in chosen and not (fills and kind.startswith("global"))
    ]


@pytest.mark.parametrize("name", ROUTES)
def test_a_record_read_by_index_keeps_its_bounds_test(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=(9, 0))
    fills = "fill_async" in FINDINGS[name]
    assert _unguarded_loads(ptx, fills) == []
    assert "selp.b64" in ptx
