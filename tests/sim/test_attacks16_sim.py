"""Attack round 16: bound launches (``prepared.bind``), the refactored memo path and the
ambient-stream plans they run through. Each test asserts the SAFE behaviour, so it fails
while the bug it reproduces exists.

The memoized / bound paths run on the CPU through the CUDA-code-path harness
(tests/sim/cuda_path.py): the plan's driver launch is recorded instead of made.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import simtsafe as ss
from simtsafe.host import _foreign
from simtsafe.host import _launch as launch_module
from simtsafe.host._prepare import PreparedLaunch
from simtsafe.host._streams import stream_key
from tests import fake_arrays as fa
from tests.sim.cuda_path import cuda_code_path

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
BASE = 0x7F0000000000


@pytest.fixture
def vecadd(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if not ss.SIMULATOR:
        pytest.skip("drives the simulator")
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    fa.install(monkeypatch)
    import vecadd as module

    yield module.vecadd
    sys.modules.pop("vecadd", None)


def _cupy(n: int = 3, base: int = BASE) -> tuple[Any, ...]:
    return tuple(fa.make_cupy(base + k * 4096, (256,), (4,), "float32") for k in range(n))


def _in_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a new thread; its result or its exception."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(("err", exc))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    kind, value = box[0]
    if kind == "err":
        raise value
    return value


class _Recording:
    """Another thread holds ``with simtsafe.graph():`` open until ``close()``."""

    def __init__(self) -> None:
        self._open, self._close = threading.Event(), threading.Event()
        self._t = threading.Thread(target=self._run)
        self._t.start()
        self._open.wait()

    def _run(self) -> None:
        with ss.graph():
            self._open.set()
            self._close.wait()

    def close(self) -> None:
        self._close.set()
        self._t.join()


# ---------------------------------------------------------------------------------------
# Finding 1: a graph recorded in ANY thread sends every other thread's CuPy/PyTorch launch
# (prepared without a stream) to the default stream instead of the library's current one.
# ---------------------------------------------------------------------------------------


def test_another_threads_recording_does_not_move_a_cupy_launch_off_cupys_stream(
    vecadd: Any,
) -> None:
    launch = vecadd.prepare(grid=1, block=256)
    args = _cupy()
    fa.set_cupy_stream(0x55)  # a (non-blocking) CuPy stream is current in this thread
    ambient = launch._plan_for(args)[0]
    assert ambient is not launch._plan and ambient.stream_object.ptr == 0x55
    rec = _Recording()
    try:
        # This thread records nothing: its launch runs now, and by docs/execution.md
        # ("all CuPy arrays -> CuPy's current stream") belongs on 0x55.
        picked = launch._plan_for(args)[0]
    finally:
        rec.close()
    assert picked is ambient, (
        "while another thread records a graph, this thread's unrecorded CuPy launch goes to "
        "the default stream (RECORDING[0] counts every thread's recorders)"
    )


def test_a_bound_cupy_launch_stays_on_cupys_stream_while_another_thread_records(
    vecadd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = vecadd.prepare(grid=1, block=256)
    args = _cupy()
    fa.set_cupy_stream(0x55)
    ambient = launch._plan_for(args)[0]  # CuPy's stream 0x55: its plan, made now
    on_default = cuda_code_path(launch._plan, ("C", "C"), monkeypatch)
    on_cupy = cuda_code_path(ambient, ("C", "C"), monkeypatch)
    fa.set_cupy_stream(0x55)  # (the harness reset the fakes' current streams)
    bound = launch.bind(*args)
    bound()
    assert len(on_cupy) == 1 and on_default == []
    rec = _Recording()
    try:
        bound()  # launched now (this thread records nothing)
    finally:
        rec.close()
    ss.synchronize()
    assert on_default == [], (
        "the bound CuPy launch ran on the default stream, not CuPy's current stream: CuPy's "
        "later work on its non-blocking stream is not ordered after it"
    )
    assert len(on_cupy) == 2


# ---------------------------------------------------------------------------------------
# Finding 2: CuPy's per-thread default stream (handle 2) is cached as ONE ambient plan for
# every thread: the first thread's ledger state records every later thread's launches.
# ---------------------------------------------------------------------------------------


@pytest.fixture
def cupy_ptds(vecadd: Any) -> Iterator[Any]:
    """CuPy with CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1 (its null stream is the per-thread
    default stream, exported as 2); CUDA Python / Numba keep the legacy default stream."""
    old = os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM")
    os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"
    _foreign._cupy_stream_reader.cache_clear()
    _foreign._AMBIENT_READERS.clear()
    fa.set_cupy_stream(0)  # CuPy's null stream
    try:
        yield vecadd
    finally:
        if old is None:
            del os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"]
        else:
            os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = old
        _foreign._cupy_stream_reader.cache_clear()
        _foreign._AMBIENT_READERS.clear()


def _two_live_threads(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """``fn()`` in thread B, then in thread C while B is still alive (distinct idents)."""
    out: dict[str, Any] = {}
    hold = threading.Event()

    def run(name: str, ready: threading.Event) -> None:
        try:
            out[name] = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001
            out[name] = ("err", exc)
        ready.set()
        hold.wait()

    rb, rc = threading.Event(), threading.Event()
    tb = threading.Thread(target=run, args=("B", rb))
    tb.start()
    rb.wait()
    tc = threading.Thread(target=run, args=("C", rc))
    tc.start()
    rc.wait()
    hold.set()
    tb.join()
    tc.join()
    return out["B"], out["C"]


def test_cupy_per_thread_default_stream_plan_is_per_thread(cupy_ptds: Any) -> None:
    launch = cupy_ptds.prepare(grid=1, block=256)
    args = _cupy()

    def pick() -> tuple[Any, Any]:
        plan = launch._plan_for(args)[0]
        # The launch goes to handle 2 = the CALLING thread's per-thread default stream.
        return plan.stream_state.key, stream_key(2, plan.device_id)

    (_, (key_b, want_b)), (_, (key_c, want_c)) = _two_live_threads(pick)
    assert key_b == want_b
    assert key_c == want_c, (
        f"thread C's launch on its own per-thread default stream is recorded in the ledger as "
        f"thread B's ({key_c} != {want_c})"
    )


def test_cupy_per_thread_default_stream_race_across_threads_is_not_missed(
    cupy_ptds: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch = cupy_ptds.prepare(grid=1, block=256)
    made = PreparedLaunch._ambient_plan
    launched: list[Any] = []

    def ambient_plan(self: Any, library: str, device: Any, stream: Any) -> Any:
        # Every ambient plan on the CUDA code path (made as the simulator makes it).
        saved = launch_module.SIMULATOR
        launch_module.SIMULATOR = True
        try:
            plan = made(self, library, device, stream)
        finally:
            launch_module.SIMULATOR = saved
        mp = pytest.MonkeyPatch()
        mp.setattr(plan, "_core_launch", lambda *a: launched.append(("ambient", a)))
        mp.setitem(plan._cufuncs, ("C", "C"), type("F", (), {"kernel": object()}))
        mp.setattr(plan, "_direct", False)
        return plan

    cuda_code_path(launch._plan, ("C", "C"), monkeypatch)
    fa.set_cupy_stream(0)  # (the harness reset the fakes' streams: CuPy's null stream)
    monkeypatch.setattr(PreparedLaunch, "_ambient_plan", ambient_plan)
    ss.synchronize()
    out, a, b = _cupy()
    (out2,) = _cupy(1, BASE + 0x100000)
    hold = threading.Event()
    wrote = threading.Event()
    results: dict[str, Any] = {}

    def producer() -> None:  # thread B writes `out` on B's per-thread default stream
        try:
            launch(out, a, b)
        finally:
            wrote.set()
            hold.wait()
            ss.synchronize()  # (B's per-thread stream: only B can finish it in the ledger)

    tb = threading.Thread(target=producer)
    tb.start()
    wrote.wait()

    def consumer() -> None:  # thread C reads `out` on C's per-thread default stream
        try:
            launch(out2, out, b)
            results["C"] = "launched unordered"
        except ss.StreamOrderError as exc:
            results["C"] = exc

    tc = threading.Thread(target=consumer)
    tc.start()
    tc.join()
    hold.set()
    tb.join()
    ss.synchronize()
    assert len(launched) >= 1
    # B's write and C's read are on two different per-thread default streams; simtsafe can
    # neither order them (no event on another thread's per-thread stream) nor assume them
    # ordered: docs/execution.md says such a launch is refused (StreamOrderError).
    assert isinstance(results["C"], ss.StreamOrderError), (
        "thread C read `out` on its per-thread default stream while thread B's write on B's "
        "is unfinished: no wait and no refusal (both recorded on B's stream state)"
    )


# ---------------------------------------------------------------------------------------
# Finding 3: a PyTorch tensor SUBCLASS (torch.nn.Parameter with requires_grad=False, the
# weights of an inference model) makes a launch prepared without a stream run on the
# default stream instead of PyTorch's current stream (exact-type compare in _plan_for).
# ---------------------------------------------------------------------------------------


class _Parameter(fa.FakeTensor):
    """Stands for torch.nn.Parameter: a torch.Tensor subclass (isinstance holds)."""


def test_a_torch_tensor_subclass_follows_torchs_current_stream(vecadd: Any) -> None:
    launch = vecadd.prepare(grid=1, block=256)
    fa.set_torch_stream(0x77)  # with torch.cuda.stream(s): s is current
    out = fa.make_torch(BASE, (256,), (1,), "float32")
    x = fa.make_torch(BASE + 4096, (256,), (1,), "float32")
    w = _Parameter(BASE + 8192, (256,), (1,), "float32")  # a weight: nn.Parameter
    assert _foreign.is_torch_tensor(w)  # simtsafe's own test: a PyTorch tensor
    launch._plan.checked((out, x, w))  # accepted by every check: it would launch
    plan = launch._plan_for((out, x, w))[0]
    # docs/execution.md: "all PyTorch tensors, on one device -> PyTorch's current stream".
    assert plan is not launch._plan and plan.stream_object.cuda_stream == 0x77, (
        "all arguments are PyTorch tensors of one device, yet the launch goes to the default "
        "stream: PyTorch's later work on its current stream is not ordered after it"
    )
    plan = launch._plan_for((w, x, out))[0]  # the subclass first
    assert plan is not launch._plan and plan.stream_object.cuda_stream == 0x77
