"""Attack round 20 (tests/kernels/attacks20.py): a record made with ``align=True`` nested in a
packed record (``inner`` at byte 1 of a 17-byte element) -- Numba reads and writes the inner
record's fields at their natural alignment, so ``out[w].inner.x = v`` and the reads became
``st.f64`` / ``ld.f64`` at ``17 * w + 1``: misaligned, a fault on the GPU. Such a dtype is
refused wherever a kernel meets it: a parameter (decoration), a tile or local array (typing,
and on the simulator alike); the outer record made with ``align=True`` (numpy pads it) is
accepted (``simtsafe/_records.misaligned_record``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks20 import FINDINGS

pytestmark = pytest.mark.ptx

MESSAGE = r"the record field 'inner' is a record made with align=True"


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_a_misaligned_nested_record_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError, match=MESSAGE):
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=(9, 0))


LOCAL_ONLY = """
INNER = np.dtype([("x", np.float64), ("y", np.float64)], align=True)
REC = np.dtype([("c", np.uint8), ("inner", INNER)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    w = thread.index_1d()
    l = cuda.local.array(2, REC)
    out[w] = a[w] + l[0].inner.x
"""

ALIGNED_TWIN = """
INNER = np.dtype([("x", np.float64), ("y", np.float64)], align=True)
REC = np.dtype([("c", np.uint8), ("inner", INNER)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[REC], b: In[np.float64]) -> None:
    w = thread.index_1d()
    out[w].inner.x = b[w] + a[w].inner.y
"""


def test_a_local_array_of_them_is_refused_at_typing(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match="cuda.local.array: " + MESSAGE):
        load_kernel_module(tmp_path, LOCAL_ONLY).k.ptx(cc=(9, 0))


def test_the_outer_record_aligned_too_is_accepted_with_aligned_accesses(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, ALIGNED_TWIN).k.ptx(cc=(9, 0))
    assert re.search(r"\bst(?:\.global)?\.f64\b", ptx), ptx


# -- the round's false refusal: a tile of records whose size is not a power of two (over 16
# bytes) asked for `.align 24` (the element's size), invalid PTX; a record tile is aligned
# to 16 now, as any tile.

REC24_DYNAMIC_READ = """
REC = np.dtype([("x", np.float64), ("y", np.float64), ("z", np.float64)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, dynamic_shared=768))
def k(out: DisjointSlice[np.float64], n: np.int64) -> None:
    w = thread.index_1d()
    d = ss.shared.dynamic_tile(REC)
    out[w] = d[n].x
"""

REC24_STATIC_READ = REC24_DYNAMIC_READ.replace(
    "ss.shared.dynamic_tile(REC)", "ss.shared.tile(32, REC)"
).replace(", dynamic_shared=768", "")


@pytest.mark.parametrize("body", [REC24_DYNAMIC_READ, REC24_STATIC_READ], ids=["dynamic", "static"])
def test_a_tile_of_24_byte_records_compiles(tmp_path: Path, body: str) -> None:
    ptx = load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
    assert ".align 24" not in ptx
