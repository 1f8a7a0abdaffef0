"""The raw twins of the block-cooperation examples (examples/coop_raw.py) on the simulator.

Numba's simulator has no warp shuffles; the reduction and the scan run with
tests/sim/shfl_shim.py, whose own semantics are checked first. Sizes are
small (the simulator runs one OS thread per CUDA thread) but cover the
edges: partial tiles, a K not a multiple of 8, a scan with two levels.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example
from tests.sim import shfl_shim

pytestmark = pytest.mark.sim


@pytest.fixture
def shuffles() -> Iterator[None]:
    with shfl_shim.installed():
        yield


@cuda.jit
def _shuffle_probe(up, down, xor, idx, values):  # type: ignore[no-untyped-def]
    t = cuda.threadIdx.x
    v = values[t]
    up[t] = cuda.shfl_up_sync(0xFFFFFFFF, v, 3)
    down[t] = cuda.shfl_down_sync(0xFFFFFFFF, v, 5)
    xor[t] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 6)
    idx[t] = cuda.shfl_sync(0xFFFFFFFF, v, 33)


def test_shim_shuffles_follow_cuda_semantics(shuffles: None) -> None:
    n = 64
    values = np.arange(100, 100 + n, dtype=np.int32)
    outs = [cuda.to_device(np.zeros(n, np.int32)) for _ in range(4)]
    _shuffle_probe[1, n](*outs, cuda.to_device(values))
    up, down, xor, idx = (o.copy_to_host() for o in outs)
    lane = np.arange(n) % 32
    base = np.arange(n) - lane
    np.testing.assert_array_equal(up, np.where(lane >= 3, values[base + lane - 3], values))
    np.testing.assert_array_equal(
        down, np.where(lane + 5 < 32, values[np.minimum(base + lane + 5, n - 1)], values)
    )
    np.testing.assert_array_equal(xor, values[base + (lane ^ 6)])
    np.testing.assert_array_equal(idx, values[base + 1])


def test_shim_is_removed_after_use() -> None:
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    with shfl_shim.installed():
        assert hasattr(FakeCUDAModule, "shfl_xor_sync")
    assert not hasattr(FakeCUDAModule, "shfl_xor_sync")


def test_raw_reduce_sum(shuffles: None) -> None:
    assert example("coop_raw").check_reduce_sum(3_001, 2)


def test_raw_scan_two_levels(shuffles: None) -> None:
    raw = example("coop_raw")
    assert 3_081 > raw.SCAN_TILE  # two tiles, so tile totals and their scan
    assert raw.check_scan(3_081)


def test_raw_transpose_edges() -> None:
    assert example("coop_raw").check_transpose(40, 33)


def test_raw_sgemm_edges() -> None:
    assert example("coop_raw").check_sgemm(130, 12, 20)


def test_raw_histogram_with_tail() -> None:
    assert example("coop_raw").check_histogram(3_001, 2)  # 3001 = 4 * 750 + 1 tail byte
