"""``prepared.bind(*args)`` (``simtsafe.BoundLaunch``): the arguments checked once, when
bound, with the errors a call raises and nothing launched; each call launches exactly them.
On the CUDA code path (the plan switched to it with the driver launch recorded instead of
made, as tests/sim/test_memo_launch_sim.py does), once the arguments are memoized a call
takes neither the memo's key nor its match; CuPy arrays (metadata changeable in place) are
checked on every call. On the simulator itself: the values, graphs."""

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
def vecadd(monkeypatch: pytest.MonkeyPatch) -> Any:
    if not ss.SIMULATOR:
        pytest.skip("drives the simulator")
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    import vecadd as module

    yield module.vecadd
    sys.modules.pop("vecadd", None)


@pytest.fixture
def cuda_path(vecadd: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, list[Any]]:
    """A prepared vecadd whose plan is on the CUDA code path; the launches it makes."""
    prepared = vecadd.prepare(grid=4, block=256)
    plan = prepared._plan
    launched = cuda_code_path(plan, ("C", "C"), monkeypatch)
    return prepared, plan, launched


def _arrays(n: int = 64) -> tuple[Any, Any, Any]:
    return tuple(cuda.to_device(np.full(n, k, np.float32)) for k in (0, 1, 2))  # type: ignore[return-value]


def test_a_memoized_bound_launch_takes_neither_key_nor_match(
    cuda_path: tuple[Any, Any, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared, plan, launched = cuda_path
    out, a, b = _arrays()
    bound = prepared.bind(out, a, b)
    assert launched == []  # bind launches nothing
    bound()
    bound()  # the second launch memoizes the set; the bound launch holds its entry
    prepared(out, a, b)
    assert len(launched) == 3 and launched[0] == launched[1] == launched[2]

    def no(*args: Any) -> None:
        raise AssertionError("the memo's key or match was taken")

    monkeypatch.setattr(plan, "_key_of", no)
    (memo,) = plan._memo.values()
    monkeypatch.setattr(memo, "match", no)
    bound()
    bound()
    assert len(launched) == 5 and launched[3] == launched[0]
    with pytest.raises(AssertionError, match="key or match"):
        prepared(out, a, b)  # the general call takes them


def test_bind_checks_now_raises_what_a_call_raises_and_launches_nothing(
    cuda_path: tuple[Any, Any, list[Any]],
) -> None:
    prepared, _, launched = cuda_path
    out, a, b = _arrays()
    short = cuda.to_device(np.ones(32, np.float32))
    with pytest.raises(ss.RequiresViolation, match="a.size == out.size") as at_bind:
        prepared.bind(out, short, b)
    with pytest.raises(ss.RequiresViolation) as at_call:
        prepared(out, short, b)
    assert str(at_bind.value) == str(at_call.value)
    with pytest.raises(ss.AliasingError):
        prepared.bind(out, out, b)
    assert launched == []


def test_a_bound_cupy_set_changed_in_place_is_checked_again(
    cuda_path: tuple[Any, Any, list[Any]],
) -> None:
    prepared, plan, launched = cuda_path
    out, a, b = (fa.make_cupy((1 + i) << 20, (1024,), (4,), np.float32) for i in range(3))
    bound = prepared.bind(out, a, b)
    for _ in range(3):
        bound()
    assert len(launched) == 3
    assert plan.memo_for((out, a, b)) is None  # fingerprinted: never held by the bound launch
    a.shape, a.strides = (512, 2), (8, 4)  # same object, same pointer: now 2D
    with pytest.raises(ss.ArgumentTypeError, match="vecadd"):
        bound()
    assert len(launched) == 3  # refused before any launch


def test_a_bound_launch_runs_and_records_as_a_call(vecadd: Any) -> None:
    n = 1000
    a = cuda.to_device(np.arange(n, dtype=np.float32))
    b = cuda.to_device(np.full(n, 2, np.float32))
    out = cuda.to_device(np.zeros(n, np.float32))
    bound = vecadd.prepare(grid=ss.cover(n, 256), block=256).bind(out, a, b)
    assert bound.args == (out, a, b)
    bound()
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n) + 2)
    out2 = cuda.to_device(np.zeros(n, np.float32))
    bound2 = vecadd.prepare(grid=ss.cover(n, 256), block=256).bind(out2, out, b)
    with ss.graph() as g:
        bound2()
    assert len(g) == 1
    np.testing.assert_array_equal(out2.copy_to_host(), np.zeros(n))  # recorded, not run
    g.replay()
    np.testing.assert_array_equal(out2.copy_to_host(), np.arange(n) + 4)


def test_a_bound_launch_is_made_by_bind_and_immutable(vecadd: Any) -> None:
    out, a, b = _arrays()
    bound = vecadd.prepare(grid=1, block=256).bind(out, a, b)
    with pytest.raises(TypeError, match=r"prepared.bind"):
        ss.BoundLaunch()
    with pytest.raises(AttributeError, match="immutable"):
        bound._args = (a, a, b)  # type: ignore[misc]
    assert "vecadd" in repr(bound) and "3 arguments" in repr(bound)
