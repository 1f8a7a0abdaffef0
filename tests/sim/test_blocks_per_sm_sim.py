"""``blocks_per_sm`` on the simulator: prepare checks the resident blocks per multiprocessor
against the simulator's stand-in multiprocessor (2048 threads, 32 blocks)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels.blocks_per_sm import bounded, exact

pytestmark = pytest.mark.sim


def test_resident_blocks_reached_the_launch_runs() -> None:
    a = np.arange(300, dtype=np.float32)
    out = cuda.to_device(np.zeros(300, np.float32))
    exact.prepare(grid=2, block=256)(out, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host(), 2 * a)
    bounded.prepare(grid=1, block=512)  # 4 blocks of 512 fit: 3 asked


def test_too_few_resident_blocks_refused_at_prepare() -> None:
    with pytest.raises(ss.FunctionLimitExceeded) as info:
        bounded.prepare(grid=1, block=1024)
    assert str(info.value) == (
        "kernel 'bounded': its contract asks for blocks_per_sm=3 resident blocks per "
        "multiprocessor, but 2 blocks of (1024, 1, 1) with 0 B of dynamic shared memory fit "
        "(registers, shared memory and threads per multiprocessor decide it). Launch smaller "
        "blocks, use less shared memory, or lower blocks_per_sm to 2"
    )
    assert (info.value.actual, info.value.limit) == (2, 3)
