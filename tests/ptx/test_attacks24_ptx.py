"""Attack round 24 (tests/kernels/attacks24.py) on the real target (NVVM, no GPU): a
reduction's op that reads the thread's identity or holds a barrier or collective is refused by
the compiled form (the result is promised to be the same bits in every thread; the simulator
hung on a barrier inside the op), each with its accepted twin; an op defined below the kernel
is accepted; an op returning a list gets simtsafe's message."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks24 import FINDINGS

pytestmark = pytest.mark.ptx

CC = (9, 0)
IMPURE = "must combine its two values from them alone, the same way in every thread"

#: finding -> (the op's impure line, its pure twin)
_TWINS = {
    "op-with-barrier-sim-hang": ("    ss.block.sync()\n", ""),
    "op-with-warp-collective-sim-hang": ("    z = ss.warp.sum(x[0])\n", "    z = x[0]\n"),
    "op-reading-threadidx": (" + np.float32(cuda.threadIdx.x)", ""),
}


@pytest.mark.parametrize("name", sorted(_TWINS))
def test_impure_op_refused_and_pure_twin_accepted(tmp_path: Path, name: str) -> None:
    source = FINDINGS[name]
    bad, good = _TWINS[name]
    assert bad in source
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    message = str(info.value)
    assert info.value.rule == "uniformity" and IMPURE in message, message
    api = "warp.reduce" if "warp" in name else "block.reduce"
    assert f"kernel 'k': the op of {api} at line" in message, message
    twin = tmp_path / "twin"
    twin.mkdir()
    assert "bar.sync" in load_kernel_module(twin, source.replace(bad, good)).k.ptx(cc=CC) or (
        api == "warp.reduce"
    )


_LATER_OP = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    s = ss.block.reduce((a[w], np.float32(1)), add2)
    out[w] = s[0] + s[1]


@ss.device
def add2(x, y):
    return (x[0] + y[0], x[1] + y[1])
"""


def test_op_defined_below_the_kernel_is_accepted(tmp_path: Path) -> None:
    """Attack round 24's false refusal: the op's name is resolved when the kernel is frozen
    (its first compile), as a direct call's is; a plain function there is still refused."""
    assert "bar.sync" in load_kernel_module(tmp_path, _LATER_OP).k.ptx(cc=CC)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ss.SafetyError, match="`add2` is a plain Python function"):
        load_kernel_module(plain, _LATER_OP.replace("@ss.device\ndef add2", "def add2")).k.ptx(
            cc=CC
        )


def test_op_returning_a_list_gets_simtsafe_message(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FINDINGS["op-returning-list-message"]).k.ptx(cc=CC)
    # a list is refused where it is built, with the tuple to use instead (decoration)
    assert "a list, dict or set needs Numba's runtime" in str(info.value), str(info.value)
    assert "hold a few values in a tuple" in str(info.value) and info.value.lineno is not None
