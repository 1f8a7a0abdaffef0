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

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks18 import FINDINGS
from tests.ptx.test_tile_phases_ptx import compiled_form_only  # noqa: F401 - a fixture

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


# -- a false refusal of the round: a record tile filled through witnesses. Numba's record
# copy stored an array of bytes, which LLVM split into byte stores without the witness
# store's tag; the compiled-form phase check saw writes by no witness. A record of 1, 2, 4, 8
# or 16 bytes is now stored as one integer of its size (``_tilebase.holder_store``; other
# sizes stay refused: tests/ptx/test_attacks19_ptx.py).

RECORDS = {
    "4": '[("x", np.float32)]',
    "8": '[("x", np.float32), ("y", np.float32)]',
    "16": '[("x", np.float64), ("y", np.int32), ("z", np.int32)]',
}

WITNESS_FILL = """
REC = np.dtype(FIELDS)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    t[thread.local_index()] = a[w]
    ss.block.sync()
    out[w] = t[31 - cuda.threadIdx.x].x
"""


@pytest.mark.parametrize("size", sorted(RECORDS))
def test_a_record_tile_filled_through_witnesses_is_accepted(tmp_path: Path, size: str) -> None:
    body = WITNESS_FILL.replace("FIELDS", RECORDS[size])
    assert "st.shared" in load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))


@pytest.mark.usefixtures("compiled_form_only")
@pytest.mark.parametrize("size", sorted(RECORDS))
def test_the_compiled_form_alone_accepts_it_and_refuses_a_read_before_the_barrier(
    tmp_path: Path, size: str
) -> None:
    body = WITNESS_FILL.replace("FIELDS", RECORDS[size])
    load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
    racing = body.replace("    ss.block.sync()\n", "")
    with pytest.raises(ss.SafetyError, match="in the same barrier interval"):
        load_kernel_module(tmp_path, racing).k.ptx(cc=(9, 0))


# -- another false refusal of the round: a field of a nested record of the thread's own
# output element (``out[w].inner.x = v``), accepted like ``out[w].x = v``; the same store on
# an input's element stays refused.

NESTED_FIELD = """
INNER = np.dtype([("x", np.float32), ("y", np.float32)])
REC = np.dtype([("inner", INNER), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w].inner.x = a[w]
    out[w].inner.y = a[w] * np.float32(2)
    out[w].n = 7
"""

NESTED_FIELD_OF_INPUT = """
INNER = np.dtype([("x", np.float32), ("y", np.float32)])
REC = np.dtype([("inner", INNER), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], b: In[np.float32]) -> None:
    w = thread.index_1d()
    a[w].inner.x = b[w]
    out[w] = b[w]
"""


def test_a_nested_field_of_the_own_element_is_written(tmp_path: Path) -> None:
    assert "st.u8" in load_kernel_module(tmp_path, NESTED_FIELD).k.ptx(cc=(9, 0))


def test_a_nested_field_of_an_input_element_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"assigning `a\[w\]\.inner\.x` writes through a"):
        load_kernel_module(tmp_path, NESTED_FIELD_OF_INPUT)


LOCAL_PACKED = """
REC = np.dtype([("x", np.float32), ("y", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    l = cuda.local.array(4, REC)
    l[n] = a[w]
    out[w] = l[n & 3].x
"""


def test_a_record_stored_into_a_local_array_claims_no_alignment_it_lacks(tmp_path: Path) -> None:
    # A local array of packed records starts at its element's ABI alignment (1): the one
    # integer a record is stored as must not be stored as an aligned 8-byte word there (a
    # shared tile starts at 16, where it is: RECORDS above, st.shared.u64).
    ptx = load_kernel_module(tmp_path, LOCAL_PACKED).k.ptx(cc=(9, 0))
    stores = re.findall(r"\bst\.local\.([\w.]+)\s+\[%rd\d+\]", ptx)
    assert "u8" in stores and "u64" not in stores, stores
