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
from tests.kernels import load_kernel_module
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
