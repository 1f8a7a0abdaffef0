"""The simulator's verdict refuses a simtsafe value that may be unbound where it is used, as
the compiled form does (tests/kernels/unbound_rules.py): Python would raise
UnboundLocalError on the simulator, but the GPU gives the name 0, so the kernel is refused
before it runs on either."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.unbound_rules import FRAGMENT, REFUSED

pytestmark = pytest.mark.sim


@pytest.mark.parametrize(
    "case", ["target-of-a-loop-that-may-not-run", "bound-under-an-if", "bound-after-a-break"]
)
def test_refused_before_it_runs(tmp_path: Path, case: str) -> None:
    out = cuda.to_device(np.zeros(64, np.float32))
    x = cuda.to_device(np.ones(64, np.float32))
    k = load_kernel_module(tmp_path, REFUSED[case]).k
    with pytest.raises(ss.SafetyError) as info:
        k.prepare(grid=1, block=64)(out, x, 0)
    assert FRAGMENT in str(info.value)
    np.testing.assert_array_equal(out.copy_to_host(), np.zeros(64, np.float32))  # untouched


def test_a_number_used_unbound_is_a_safety_error_at_its_line(tmp_path: Path) -> None:
    # A number may be unbound (accepted at compile: its zero reaches no memory); where the
    # simulator does use it unbound, Python's UnboundLocalError comes out as a SafetyError at
    # the use's line that says what the GPU does instead.
    source = (
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1)))\n"
        "def k(out: DisjointSlice[np.float32], x: In[np.float32], n: int) -> None:\n"
        "    for i in range(n):\n"
        "        v = np.float32(i)\n"
        "    w = thread.index_1d()\n"
        "    out[w] = v  # BAD\n"
    )
    out = cuda.to_device(np.zeros(64, np.float32))
    x = cuda.to_device(np.ones(64, np.float32))
    error = assert_refused(
        tmp_path,
        source,
        "a name used on a path that never bound it",
        lambda mod: mod.k.prepare(grid=1, block=64)(out, x, 0),
    )
    assert error.rule == "unbound-local"
    assert "gives such a number the value 0 on the GPU" in str(error)
