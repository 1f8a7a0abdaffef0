"""A launch prepared without a stream follows CuPy's / PyTorch's current stream (fakes).

Which plan (and so which stream, ledger state and compiled launch) a
PreparedLaunch picks per argument set; the real libraries on a GPU are in
tests/gpu/test_execution_gpu.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from simtsafe.host import _prepare
from tests import fake_arrays as fa

pytestmark = pytest.mark.sim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

BASE = 0x7F0000000000


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    fa.install(monkeypatch)


def _vecadd():  # type: ignore[no-untyped-def]
    from vecadd import vecadd

    return vecadd


def _cupy_args():  # type: ignore[no-untyped-def]
    return tuple(fa.make_cupy(BASE + k * 4096, (256,), (4,), "float32") for k in range(3))


def _torch_args():  # type: ignore[no-untyped-def]
    return tuple(fa.make_torch(BASE + k * 4096, (256,), (1,), "float32") for k in range(3))


def test_cupy_arrays_follow_cupys_current_stream() -> None:
    launch = _vecadd().prepare(grid=1, block=256)
    args = _cupy_args()
    fa.set_cupy_stream(0x55)
    plan = launch._plan_for(args)[0]
    assert plan is not launch._plan
    assert plan.stream_object.ptr == 0x55
    assert launch._plan_for(args)[0] is plan  # one plan per stream, kept
    fa.set_cupy_stream(0x66)
    other = launch._plan_for(args)[0]
    assert other is not plan and other.stream_object.ptr == 0x66
    fa.set_cupy_stream(0)  # CuPy's null stream is the default stream: the prepared plan
    assert launch._plan_for(args)[0] is launch._plan


def test_torch_tensors_follow_torchs_current_stream() -> None:
    launch = _vecadd().prepare(grid=1, block=256)
    fa.set_torch_stream(0x77)
    plan = launch._plan_for(_torch_args())[0]
    assert plan is not launch._plan and plan.stream_object.cuda_stream == 0x77
    fa.set_torch_stream(0)
    assert launch._plan_for(_torch_args())[0] is launch._plan


def test_numba_and_mixed_arguments_keep_the_default_stream() -> None:
    launch = _vecadd().prepare(grid=1, block=256)
    fa.set_cupy_stream(0x55)
    fa.set_torch_stream(0x77)
    numba_args = tuple(cuda.to_device(np.zeros(256, np.float32)) for _ in range(3))
    assert launch._plan_for(numba_args)[0] is launch._plan
    c, t = _cupy_args(), _torch_args()
    assert launch._plan_for((c[0], t[1], c[2]))[0] is launch._plan
    assert launch._plan_for((c[0], numba_args[1], c[2]))[0] is launch._plan
    # A real launch on Numba arrays: the default stream, as before.
    handle = launch.launch(*numba_args)
    assert handle.stream is None


def test_a_given_stream_is_always_used() -> None:
    s = cuda.stream()
    for stream in (0, s):
        launch = _vecadd().prepare(grid=1, block=256, stream=stream)
        assert launch._ambient is None  # no per-launch look-up at all
    fa.set_cupy_stream(0x55)
    launch = _vecadd().prepare(grid=1, block=256, stream=s)
    assert launch._plan_for(_cupy_args())[0] is launch._plan


def test_a_bounded_number_of_ambient_plans() -> None:
    launch = _vecadd().prepare(grid=1, block=256)
    args = _cupy_args()
    for ptr in range(0x100, 0x100 + 3 * _prepare._AMBIENT_PLANS):
        fa.set_cupy_stream(ptr)
        launch._plan_for(args)[0]
    assert launch._ambient is not None and len(launch._ambient) == _prepare._AMBIENT_PLANS


def test_recorded_launches_keep_the_default_plan() -> None:
    import simtsafe as ss

    launch = _vecadd().prepare(grid=1, block=256)
    fa.set_cupy_stream(0x55)
    with ss.graph():  # a graph replays on its own stream: recording keeps the prepared plan
        assert launch._plan_for(_cupy_args())[0] is launch._plan
