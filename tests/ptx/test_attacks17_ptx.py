"""Attack round 17 (tests/kernels/attacks17.py), compiled form (NVVM, no GPU): a record's
array field is a view of the record's bytes that no rule saw -- a record element of a shared
tile (or a raw shared array) with an array field gave Tier-1 code racing and out-of-bounds
shared stores. Tiles and local arrays of such records are refused at typing, by name; the
check that decides is in the lowering of every function simtsafe builds: any value of
Numba's ``NestedArray`` type (every spelling of an array field: ``e.f``, ``e["f"]``, inside
a helper, from a raw array) is refused (``lowering/_recordfields.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.attacks17 import FINDINGS

pytestmark = pytest.mark.ptx

CC = (9, 0)
TYPING = "the element's record field 'f' is an array"
LOWERING = "is an array field of a record"

#: Which check refuses each finding: the tile's typing, else the compiled-form check.
WHERE = {name: TYPING for name in FINDINGS}
WHERE["raw-shared-record-escape"] = LOWERING


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_a_record_array_field_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(Exception, match=WHERE[name]):
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=CC)


#: The compiled-form check alone: a raw shared array of such records, written inside an
#: unsafe region (no typing rule sees raw arrays' element types), through a helper too.
INSIDE_REGION = """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    with ss.unsafe("SAFETY: thread 0 only, index 0"):
        s = cuda.shared.array(4, REC)
        if cuda.threadIdx.x == 0:
            s[0]["f"][0] = a[w]
    out[w] = a[w]
"""


def test_the_compiled_form_check_refuses_every_spelling_inside_a_region(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="field 'f' is an array field of a record"):
        load_kernel_module(tmp_path, INSIDE_REGION).k.ptx(cc=CC)
    by_attribute = INSIDE_REGION.replace('s[0]["f"][0]', "s[0].f[0]")
    with pytest.raises(Exception, match=LOWERING):
        load_kernel_module(tmp_path, by_attribute).k.ptx(cc=CC)


#: A local array of such records (refused by the array's typing, as tiles are).
LOCAL_ARRAY = """
REC = np.dtype([("g", np.int32), ("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    s = cuda.local.array(2, REC)
    out[w] = a[w]
"""


def test_a_local_array_of_them_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="cuda.local.array: the element's record field 'f'"):
        load_kernel_module(tmp_path, LOCAL_ARRAY).k.ptx(cc=CC)


# -- the accepted twins: the field as an axis of the tile; a record of scalar fields


AXIS_TWIN = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((64, 4), np.float32)  # the field of 4 float32 as the tile's columns
    for v in thread.block_stride(t):
        t[v] = np.float32(v.row + 100 * v.col)
    ss.block.sync()
    out[w] = a[w] + t[cuda.threadIdx.x, 0] + t[cuda.threadIdx.x, 3]
"""

SCALAR_RECORD_TWIN = """
REC = np.dtype([("x", np.float32), ("y", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    with ss.unsafe("SAFETY: only makes the array; nothing is written here"):
        s = cuda.shared.array(4, REC)
        e = s[0]
    out[w] = a[w] + e.x * np.float32(0)
"""


@pytest.mark.parametrize("body", [AXIS_TWIN, SCALAR_RECORD_TWIN], ids=["axis", "scalar-record"])
def test_the_twins_are_accepted(tmp_path: Path, body: str) -> None:
    assert ".entry" in load_kernel_module(tmp_path, body).k.ptx(cc=CC)
