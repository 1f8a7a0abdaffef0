"""Attack round 7 on a GPU: the append counter's 64-bit wrap (finding 4) on the device.

Failed on 45de18a when the hole is real: 4 of 32 claims are dropped and the host is told none were.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import attacks7 as K
from tests.kernels import load_kernel_module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def test_a_counter_near_2_64_does_not_drop_claims_silently_on_the_device(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, K.COMPACT)
    x = np.arange(1, 33, dtype=np.float32)
    d_out = cuda.to_device(np.zeros(64, np.float32))
    count = cuda.to_device(np.array([2**64 - 4], np.uint64))
    mod.k.prepare(grid=1, block=32)(d_out, count, cuda.to_device(x))
    items = d_out.copy_to_host()
    assert 32 - int(np.count_nonzero(items)) == 4  # evidence: 4 items are lost
    with pytest.raises(ss.CapacityExceeded, match=r"at or past 2\*\*63"):
        ss.appended(d_out, count)
