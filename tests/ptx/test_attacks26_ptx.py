"""Attack round 26 (tests/kernels/attacks26.py) on the real target (NVVM, no GPU): constant
memory is untrusted beside an unsafe region that writes by any spelling -- a float atomic
(Numba's is a call), a record copied by bytes (stores with no line) -- also inside a
reduction's op; the static shared memory check lays objects out at their alignment, as ptxas
does. The accepted twins: a fence-only unsafe region keeps constant reads trusted; tiles that
fit laid out are accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks26 import FINDINGS
from tests.kernels.constmem_cases import UNIFORM_BESIDE_UNSAFE

pytestmark = pytest.mark.ptx

CC = (9, 0)

_REFUSED = {
    "unsafe-float-atomic-trusts-const": "needs every thread of the block to reach it",
    "unsafe-float-atomic-max": "needs every thread of the block to reach it",
    "record-copy-in-unsafe-trusts-const": "needs every thread of the block to reach it",
    "reduce-op-const-beside-unsafe-store": "must combine its two values from them alone",
    "static-shared-alignment-padding": (
        "its shared objects take 49160 bytes of static shared memory (the shared tile made at "
        "line 10: 1 bytes; the shared tile made at line 11: 49144 bytes)"
    ),
}


@pytest.mark.parametrize("name", sorted(_REFUSED))
def test_finding_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=CC)
    assert _REFUSED[name] in str(info.value), str(info.value)


def test_twins_accepted(tmp_path: Path) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, UNIFORM_BESIDE_UNSAFE).steer.ptx(cc=CC)
    fits = tmp_path / "fits"
    fits.mkdir()
    source = FINDINGS["static-shared-alignment-padding"]
    # 6142 float64 (49136 bytes) after the 1-byte tile's 16: 49152, exactly the limit
    twin = source.replace("tile(6143, np.float64)", "tile(6142, np.float64)").replace(
        "t2[6142]", "t2[6141]"
    )
    assert "_simtsafe_tile" in load_kernel_module(fits, twin).k.ptx(cc=CC)


_WARPSIZE_OP = """
@ss.device
def op(x, y):
    return x + y * cuda.warpsize


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(np.float32(1), op)
    if s > 3:
        ss.block.sync()
    out[i] = s
"""


def test_an_op_using_the_warp_size_is_pure(tmp_path: Path) -> None:
    """Attack round 26's false refusal: `cuda.warpsize` is 32 in every thread (its special
    register is grid-uniform); the twin reading `cuda.laneid` stays refused."""
    assert "bar.sync" in load_kernel_module(tmp_path, _WARPSIZE_OP).k.ptx(cc=CC)
    lane = tmp_path / "lane"
    lane.mkdir()
    with pytest.raises(ss.SafetyError, match="must combine its two values from them alone"):
        load_kernel_module(lane, _WARPSIZE_OP.replace("cuda.warpsize", "cuda.laneid")).k.ptx(cc=CC)


_FIELD_NAMED_FILL = """
from simtsafe import ThreadIndex

REC = np.dtype([("fill", np.float32), ("n", np.int32)])


@ss.device
def put(o: DisjointSlice[REC], w: ThreadIndex[Index1D], a: In[np.float32]) -> None:
    o[w].fill = a[w]{extra}


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        put(out, w, a)
"""


def test_a_field_named_like_a_method_opens_no_method(tmp_path: Path) -> None:
    """A helper's annotated record with a field named `fill` writes that field; the name
    does not open the array method on another array (`a.fill(0)`: refused)."""
    ok = tmp_path / "ok"
    ok.mkdir()
    assert "st.global" in load_kernel_module(ok, _FIELD_NAMED_FILL.format(extra="")).k.ptx(cc=CC)
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(bad, _FIELD_NAMED_FILL.format(extra="\n    a.fill(0)")).k.ptx(cc=CC)
    assert "`.fill` is not available on it" in str(info.value), str(info.value)
