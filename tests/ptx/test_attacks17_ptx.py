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

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks17 import FALSE_REFUSALS, FINDINGS

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


# -- the round's two false refusals (FALSE_REFUSALS): a uniform read of a slice of an input
# (``b = a[1:]``, ``b[c]`` under ``0 <= c < b.size``) and a ``vec.load`` at a uniform run
# index, steering a barrier. The compiled-form range proof (``verify/_ranges.py``) now sees
# the slice's element ``a + (s + k)`` with ``s >= 0`` and ``k <s a.size - s``, the conjuncts
# of a branch on ``x and y`` (vec.load's ``j < runs and aligned``) and a run of ``n``
# elements read by one vector load; a thread-dependent index, slice bound or a missing or
# wrong guard stays refused.

UNIFORM_HEAD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], c: np.int64) -> None:
    w = thread.index_1d()
    t = cuda.threadIdx.x
    v = np.float32(0)
"""
UNIFORM_TAIL = """    if v > 0:
        ss.block.sync()
    out[w] = v
"""

#: name -> the read of the input (the value ``v`` that steers the barrier)
UNIFORM_READS = {
    "slice": "    b = a[1:]\n    if 0 <= c < b.size:\n        v = b[c]\n",
    "slice-from-3": "    b = a[3:]\n    if 0 <= c < b.size:\n        v = b[c]\n",
    "vec-load-first": "    if 0 <= c < a.size:\n        v = ss.vec.load(a, c, 2)[0]\n",
    "vec-load-second": "    if 0 <= c < a.size:\n        v = ss.vec.load(a, c, 2)[1]\n",
    "vec-load-4-unguarded": "    r = ss.vec.load(a, c, 4)\n    v = r[0] + r[3]\n",
}

#: name -> (the read, what the refusal names)
THREAD_READS = {
    "slice-thread-index": (
        "    b = a[1:]\n    if 0 <= t < b.size:\n        v = b[t]\n",
        "depends on the thread's index",
    ),
    "slice-thread-start": (
        "    b = a[t:]\n    if 0 <= c < b.size:\n        v = b[c]\n",
        "depends on the thread's index",
    ),
    "slice-thread-stop": (
        "    b = a[1:t]\n    if 0 <= c < b.size:\n        v = b[c]\n",
        "at a computed index, which simtsafe does not prove in range",
    ),
    "slice-no-guard": (
        "    b = a[1:]\n    v = b[c]\n",
        "at a computed index, which simtsafe does not prove in range",
    ),
    "slice-guard-le": (
        "    b = a[1:]\n    if 0 <= c <= b.size:\n        v = b[c]\n",
        "at a computed index, which simtsafe does not prove in range",
    ),
    "slice-guard-of-the-input": (
        "    b = a[1:]\n    if 0 <= c < a.size:\n        v = b[c]\n",
        "at a computed index, which simtsafe does not prove in range",
    ),
    "slice-no-lower-bound": (
        "    b = a[1:]\n    if c < b.size:\n        v = b[c]\n",
        "at a computed index, which simtsafe does not prove in range",
    ),
    "vec-load-thread-index": (
        "    if 0 <= t < a.size:\n        v = ss.vec.load(a, t, 2)[0]\n",
        "depends on the thread's index",
    ),
    "vec-load-thread-index-unguarded": (
        "    v = ss.vec.load(a, t, 2)[1]\n",
        "depends on the thread's index",
    ),
}


def uniform_kernel(read: str) -> str:
    return UNIFORM_HEAD + read + UNIFORM_TAIL


@pytest.mark.parametrize("name", sorted(UNIFORM_READS))
def test_a_uniform_read_of_a_slice_or_a_run_steers_a_barrier(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, uniform_kernel(UNIFORM_READS[name])).k.ptx(cc=CC)
    assert "bar.sync" in ptx
    if name.startswith("vec"):  # the run's one vector load is kept, beside the element path
        assert "ld.global.v2.f32" in ptx or "ld.global.v4.f32" in ptx, ptx


@pytest.mark.parametrize("name", sorted(THREAD_READS))
def test_a_read_not_proven_uniform_stays_refused(tmp_path: Path, name: str) -> None:
    read, reason = THREAD_READS[name]
    with pytest.raises(ss.SafetyError, match="needs every thread of the block to reach it") as e:
        load_kernel_module(tmp_path, uniform_kernel(read)).k.ptx(cc=CC)
    assert reason in str(e.value), str(e.value)
    assert e.value.rule == "uniformity"


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_the_reported_kernels_are_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, FALSE_REFUSALS[name]).k.ptx(cc=CC)
