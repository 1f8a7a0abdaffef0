"""The memoized launch path end to end on the CPU: a kernel prepared on the simulator, its
plan switched to the CUDA code path with the driver launch recorded instead of made (as
benchmarks/host_path_cpu.py does). A memoized argument set launches without its checks; a
CuPy array of that set changed in place, or another scalar, is checked again, and an
invalid one is refused before any launch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests import fake_arrays as fa
from tests.sim.cuda_path import cuda_code_path

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cuda_path(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    """The saxpy-like example's plan on the CUDA code path; the launches it makes."""
    if not ss.SIMULATOR:
        pytest.skip("drives the simulator's prepared plan")
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    from vecadd import vecadd

    plan = vecadd.prepare(grid=4, block=256)._plan
    launched = cuda_code_path(plan, ("C", "C"), monkeypatch)
    return plan, launched


def test_a_memoized_cupy_set_changed_in_place_is_checked_and_refused(
    cuda_path: tuple[Any, list[Any]],
) -> None:
    plan, launched = cuda_path
    out, a, b = (fa.make_cupy((1 + i) << 20, (1024,), (4,), np.float32) for i in range(3))
    for _ in range(3):
        plan.launch((out, a, b))
    assert len(launched) == 3
    (memo,) = plan._memo.values()
    assert memo.match == memo.matches  # fingerprinted: the loop, not the generated matcher
    a.shape, a.strides = (512, 2), (8, 4)  # same object, same pointer: now 2D
    with pytest.raises(ss.ArgumentTypeError, match="vecadd"):
        plan.launch((out, a, b))
    assert len(launched) == 3  # refused before any launch


def test_a_memoized_numba_set_uses_the_generated_matcher(
    cuda_path: tuple[Any, list[Any]],
) -> None:
    plan, launched = cuda_path
    out, a, b = (cuda.to_device(np.ones(64, np.float32)) for _ in range(3))
    for _ in range(3):
        plan.launch((out, a, b))
    (memo,) = plan._memo.values()
    assert memo.match != memo.matches  # identities only: the generated one
    short = cuda.to_device(np.ones(32, np.float32))
    with pytest.raises(ss.RequiresViolation, match="a.size == out.size"):
        plan.launch((out, short, b))  # another array object: checked again, refused
    assert len(launched) == 3
    plan.launch((out, a, b))
    assert len(launched) == 4
    del sys.modules["vecadd"]
