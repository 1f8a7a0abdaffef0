"""The host execution model on the simulator: ordering, strict mode, handles, graphs, settings.

The simulator runs every launch synchronously, so nothing here can read
stale data; what is tested is the bookkeeping that decides waits and
refusals, which is the same code on a GPU (tests/gpu/test_execution_gpu.py
shows the stale reads it prevents there).
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe.host._streams import LEDGER
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

POISON = np.float32(-7.0)
N = 64

SOURCE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), requires=["a.size == out.size"]))
def scale(out: DisjointSlice[np.float32], a: In[np.float32], k: np.float32) -> None:
    i = thread.index_1d()
    out[i] = a[i] * k

"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("execution"), SOURCE)


@pytest.fixture(autouse=True)
def clean_ledger() -> Iterator[None]:
    ss.synchronize()
    with ss.configure(ordering="auto", cai_sync=True, check_host_reads=False):
        yield
    ss.synchronize()


def _arr(value: float = POISON) -> Any:
    return cuda.to_device(np.full(N, value, np.float32))


def _host(a: Any) -> Any:
    return a.copy_to_host()


# ---------------------------------------------------------------------------- ordering


def test_auto_orders_a_reader_on_another_stream_after_the_writer(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    before = LEDGER.waits
    p1(b, a, np.float32(2))
    p2(c, b, np.float32(3))
    assert LEDGER.waits == before + 1
    p2(c, b, np.float32(3))  # already ordered: no second wait
    assert LEDGER.waits == before + 1
    np.testing.assert_array_equal(_host(c), np.full(N, 6, np.float32))


def test_strict_refuses_the_unordered_reader_and_touches_nothing(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    with ss.configure(ordering="strict"):
        p1(b, a, np.float32(2))
        with pytest.raises(ss.StreamOrderError) as info:
            p2(c, b, np.float32(3))
        assert info.value.argument == "a" and info.value.other == "out"
        assert info.value.kernel == "scale" and info.value.other_kernel == "scale"
        np.testing.assert_array_equal(_host(c), np.full(N, POISON))


def test_strict_accepts_the_reader_once_ordered_by_a_handle(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    with ss.configure(ordering="strict"):
        handle = p1.launch(b, a, np.float32(2))
        handle.wait(stream=s2)
        p2(c, b, np.float32(3))
    np.testing.assert_array_equal(_host(c), np.full(N, 6, np.float32))


def test_strict_accepts_the_reader_after_the_host_waited(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    with ss.configure(ordering="strict"):
        p1.launch(b, a, np.float32(2)).wait()
        p2(c, b, np.float32(3))
        ss.synchronize(s2)  # p2 read b: p1 may overwrite it only once p2 is done
        p1(b, a, np.float32(2))
        ss.synchronize(s1)
        p2(c, b, np.float32(3))


def test_strict_refuses_an_output_another_stream_still_reads(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    with ss.configure(ordering="strict"):
        p1(b, a, np.float32(2))
        with pytest.raises(
            ss.StreamOrderError, match="writes argument 'out'.*reads as argument 'a'"
        ):
            p2(a, c, np.float32(3))  # overwrites the input s1 may still be reading


def test_independent_streams_need_no_ordering(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a = _arr(1.0)
    p1 = mod.scale.prepare(grid=2, block=32, stream=s1)
    p2 = mod.scale.prepare(grid=2, block=32, stream=s2)
    with ss.configure(ordering="strict"):
        p1(_arr(), a, np.float32(2))  # both only read `a`
        p2(_arr(), a, np.float32(3))


# ---------------------------------------------------------------------------- settings


def test_ordering_off_only_inside_unsafe() -> None:
    with pytest.raises(ValueError, match="only inside `with simtsafe.unsafe"):
        ss.configure(ordering="off")
    with ss.unsafe("SAFETY: the test launches on one stream only"):
        with ss.configure(ordering="off") as settings:
            assert settings.ordering == "off"
    assert ss.execution_settings().ordering == "auto"


def test_unknown_ordering_is_refused() -> None:
    with pytest.raises(ValueError, match="'auto', 'strict' or 'off', got 'lazy'"):
        ss.configure(ordering="lazy")


def test_configure_restores_the_previous_settings() -> None:
    before = ss.execution_settings()
    with ss.configure(cai_sync=False, ordering="strict") as now:
        assert now == ss.execution_settings()
        assert (now.cai_sync, now.ordering) == (False, "strict")
    assert ss.execution_settings() == before


def test_prepare_refuses_what_is_not_a_stream(mod) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="a stream cannot be a bool"):
        mod.scale.prepare(grid=2, block=32, stream=True)
    with pytest.raises(TypeError, match="non-negative int"):
        mod.scale.prepare(grid=2, block=32, stream=-1)


# ---------------------------------------------------------------------------- handles, host


def test_launch_handle_waits_and_reports_done(mod) -> None:  # type: ignore[no-untyped-def]
    a, b = _arr(1.0), _arr()
    handle = mod.scale.prepare(grid=2, block=32).launch(b, a, np.float32(5))
    assert repr(handle).startswith("LaunchHandle(kernel='scale'")
    assert handle.done()
    handle.wait()
    assert handle.event is None  # the simulator runs launches synchronously
    np.testing.assert_array_equal(_host(b), np.full(N, 5, np.float32))
    with pytest.raises(TypeError, match="returned by prepared.launch"):
        ss.LaunchHandle()


def test_to_host_waits_for_the_writer_and_copies(mod) -> None:  # type: ignore[no-untyped-def]
    s1 = cuda.stream()
    a, b = _arr(1.0), _arr()
    mod.scale.prepare(grid=2, block=32, stream=s1)(b, a, np.float32(4))
    assert LEDGER.writers(*_range(b))
    np.testing.assert_array_equal(ss.to_host(b), np.full(N, 4, np.float32))
    assert not LEDGER.writers(*_range(b))  # the host now knows it finished
    with pytest.raises(TypeError, match="needs a device array"):
        ss.to_host(np.zeros(3))


def _range(arr: Any) -> tuple[int, int]:
    ptr = arr._ary.__array_interface__["data"][0]
    return ptr, ptr + arr._ary.nbytes


def test_host_read_check_refuses_a_copy_not_ordered_after_the_writer(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b = _arr(1.0), _arr()
    with ss.configure(check_host_reads=True):
        handle = mod.scale.prepare(grid=2, block=32, stream=s1).launch(b, a, np.float32(4))
        with pytest.raises(ss.HostReadError, match="kernel 'scale' \\(argument 'out'\\)"):
            b.copy_to_host(stream=s2)
        b.copy_to_host(stream=s1)  # the writer's own stream: ordered
        b.copy_to_host()  # the legacy default stream waits for blocking streams
        handle.wait()
        b.copy_to_host(stream=s2)  # finished: anything may read it
    mod.scale.prepare(grid=2, block=32, stream=s1)(b, a, np.float32(4))
    b.copy_to_host(stream=s2)  # the check is off again


# ---------------------------------------------------------------------------- graphs


def test_graph_records_checked_launches_and_replays_them(mod) -> None:  # type: ignore[no-untyped-def]
    a, b, c = _arr(1.0), _arr(), _arr()
    p = mod.scale.prepare(grid=2, block=32)
    with ss.graph() as g:
        p(b, a, np.float32(2))
        p(c, b, np.float32(3))
    assert len(g) == 2 and repr(g) == "Graph(2 launches: scale, scale)"
    np.testing.assert_array_equal(_host(c), np.full(N, POISON))  # recorded, not run
    g.replay()
    np.testing.assert_array_equal(_host(c), np.full(N, 6, np.float32))
    handle = g.launch()
    assert handle.done()


def test_graph_records_only_launches_that_pass_their_checks(mod) -> None:  # type: ignore[no-untyped-def]
    a, b = _arr(1.0), _arr()
    p = mod.scale.prepare(grid=2, block=32)
    short = cuda.to_device(np.ones(N - 1, np.float32))
    with pytest.raises(ss.RequiresViolation):
        with ss.graph():
            p(b, short, np.float32(2))
    g = ss.graph()
    g.record(p, b, a, np.float32(2))
    with pytest.raises(ss.AliasingError):
        g.record(p, b, b, np.float32(2))
    assert len(g) == 1


def test_rebind_rechecks_only_the_launches_that_used_the_array(mod) -> None:  # type: ignore[no-untyped-def]
    a, b, c = _arr(1.0), _arr(), _arr()
    p = mod.scale.prepare(grid=2, block=32)
    with ss.graph() as g:
        p(b, a, np.float32(2))
        p(c, b, np.float32(3))
    a2 = _arr(10.0)
    assert g.rebind(a, a2) == 1
    g.replay()
    np.testing.assert_array_equal(_host(c), np.full(N, 60, np.float32))
    short = cuda.to_device(np.ones(N - 1, np.float32))
    with pytest.raises(ss.RequiresViolation):
        g.rebind(a2, short)  # refused: the graph keeps a2
    g.replay()
    np.testing.assert_array_equal(_host(c), np.full(N, 60, np.float32))
    with pytest.raises(ss.GraphError, match="no launch recorded in this graph uses that array"):
        g.rebind(a, a2)


def test_graph_misuse_is_refused(mod) -> None:  # type: ignore[no-untyped-def]
    a, b = _arr(1.0), _arr()
    p = mod.scale.prepare(grid=2, block=32)
    with pytest.raises(ss.GraphError, match="recorded no launches"):
        ss.graph().replay()
    with ss.graph() as g:
        with pytest.raises(ss.GraphError, match="prepared.launch\\(\\) inside"):
            p.launch(b, a, np.float32(2))
        p(b, a, np.float32(2))
        with pytest.raises(ss.GraphError, match="still recording"):
            g.replay()
    with pytest.raises(TypeError, match="made by simtsafe.graph"):
        ss.Graph()


def test_graphs_refuse_cooperative_and_clustered_kernels() -> None:
    # (A stand-in plan reaches the check; tests/sim/test_grid_sync_sim.py records a real
    # cooperative launch.)
    for contract, word in (
        (ss.LaunchContract(cooperative=True), "cooperative"),
        (ss.LaunchContract(block=(64, 1, 1), cluster=(2, 1, 1)), "clustered"),
    ):
        plan = SimpleNamespace(kernel=SimpleNamespace(contract=contract), name="k", device_id=0)
        with pytest.raises(ss.GraphError, match=f"'k' is {word} by its launch contract"):
            ss.graph().add(plan, (), ((), (), True, (), False))  # type: ignore[arg-type]


def test_graph_replay_is_ordered_like_the_launches_it_contains(mod) -> None:  # type: ignore[no-untyped-def]
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _arr(1.0), _arr(), _arr()
    producer = mod.scale.prepare(grid=2, block=32, stream=s1)
    consumer = mod.scale.prepare(grid=2, block=32)
    with ss.graph(stream=s2) as g:
        consumer(c, b, np.float32(3))
    with ss.configure(ordering="strict"):
        producer(b, a, np.float32(2))
        with pytest.raises(ss.StreamOrderError, match="graph of 1 launches"):
            g.replay()
    before = LEDGER.waits
    producer(b, a, np.float32(2))
    g.replay()  # auto: the replay stream waits for the producer
    assert LEDGER.waits == before + 1
    np.testing.assert_array_equal(_host(c), np.full(N, 6, np.float32))


def test_recording_is_per_thread(mod) -> None:  # type: ignore[no-untyped-def]
    import threading

    a, b, c = _arr(1.0), _arr(), _arr()
    p = mod.scale.prepare(grid=2, block=32)
    with ss.graph() as g:
        p(b, a, np.float32(2))  # recorded
        worker = threading.Thread(target=lambda: p(c, a, np.float32(3)))  # runs: another thread
        worker.start()
        worker.join()
        with pytest.raises(ss.GraphError, match="already recording"):
            with g:
                pass
    assert len(g) == 1
    np.testing.assert_array_equal(_host(c), np.full(N, 3, np.float32))
    np.testing.assert_array_equal(_host(b), np.full(N, POISON))
