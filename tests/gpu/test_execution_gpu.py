"""The host execution model on a real GPU: stale reads shown, and prevented.

A producer's write is held back behind a spin kernel (a few hundred
milliseconds on its stream), so a consumer that is *not* ordered after it
deterministically reads the old data; the same scenario with simtsafe's
ordering (or CAI stream synchronization) on reads the new data. Skipped
without a device; CuPy / PyTorch parts skip without the library.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

import simtsafe as ss
from simtsafe.host._argfacts import array_facts, native_facts
from simtsafe.host._streams import LEDGER

from .gpu_kernels import coop_reverse, scale

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

N = 1 << 14
GRID = ss.cover(N, 128)
#: Dependent FMAs in one thread: hundreds of milliseconds on an H200, whatever its clock.
SPIN_ITERS = 200_000_000


@cuda.jit
def _spin(buf, iters):  # type: ignore[no-untyped-def]
    x = buf[0]
    for _ in range(iters):
        x = x * np.float32(0.999999) + np.float32(1e-6)
    buf[0] = x


_SCRATCH: list[Any] = []


def spin(stream: Any) -> None:
    """Enqueue a long single-thread kernel on a stream (a Numba stream or a raw handle)."""
    if not _SCRATCH:
        _SCRATCH.append(cuda.device_array(1, np.float32))
        _spin[1, 1](_SCRATCH[0], 1)  # compile outside the timed scenario
        cuda.synchronize()
    if isinstance(stream, int):
        stream = cuda.external_stream(stream)
    _spin[1, 1, stream](_SCRATCH[0], SPIN_ITERS)


@pytest.fixture(autouse=True)
def idle_device() -> Iterator[None]:
    cuda.synchronize()
    ss.synchronize()
    with ss.configure(ordering="auto", cai_sync=True, check_host_reads=False):
        yield
    cuda.synchronize()
    ss.synchronize()


def _filled(value: float) -> Any:
    return cuda.to_device(np.full(N, value, np.float32))


# ---------------------------------------------------------------------------- ordering


@pytest.mark.parametrize("ordering", ["auto", "off"])
def test_two_streams_stale_without_ordering_right_with_it(ordering: str) -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _filled(1), _filled(-7), _filled(-7)
    cuda.synchronize()
    produce = scale.prepare(grid=GRID, block=128, stream=s1)
    consume = scale.prepare(grid=GRID, block=128, stream=s2)
    # compiled and checked before the spin starts: otherwise, on a busy host, the spin can
    # end before the producer is enqueued and the 'off' case reads b after all (seen with
    # the GPU suite run 12 processes wide on an H200)
    x, y = _filled(0), _filled(0)
    produce(y, x, np.float32(1))
    consume(x, y, np.float32(1))
    cuda.synchronize()
    with ss.unsafe("SAFETY: the 'off' case demonstrates the race simtsafe prevents"):
        settings = ss.configure(ordering=ordering)
    with settings:
        spin(s1)
        produce(b, a, np.float32(2))  # b = 2, after the spin
        consume(c, b, np.float32(3))
        cuda.synchronize()
    expected = 6 if ordering == "auto" else -21  # off: read b before the producer wrote it
    np.testing.assert_array_equal(c.copy_to_host(), np.full(N, expected, np.float32))


def test_strict_mode_refuses_the_unordered_consumer_and_enqueues_nothing() -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _filled(1), _filled(-7), _filled(-7)
    cuda.synchronize()
    produce = scale.prepare(grid=GRID, block=128, stream=s1)
    consume = scale.prepare(grid=GRID, block=128, stream=s2)
    with ss.configure(ordering="strict"):
        spin(s1)
        handle = produce.launch(b, a, np.float32(2))
        with pytest.raises(ss.StreamOrderError, match="reads argument 'a'"):
            consume(c, b, np.float32(3))
        handle.wait(stream=s2)  # the fix the message names
        consume(c, b, np.float32(3))
        cuda.synchronize()
    np.testing.assert_array_equal(c.copy_to_host(), np.full(N, 6, np.float32))


def test_handle_is_not_done_while_its_launch_waits_behind_a_spin() -> None:
    s1 = cuda.stream()
    a, b = _filled(1), _filled(-7)
    cuda.synchronize()
    produce = scale.prepare(grid=GRID, block=128, stream=s1)  # compiled before the spin
    spin(s1)
    handle = produce.launch(b, a, np.float32(2))
    assert not handle.done()
    handle.wait()
    assert handle.done() and handle.event.is_done
    np.testing.assert_array_equal(b.copy_to_host(), np.full(N, 2, np.float32))


def _side_stream() -> Any:
    """A non-blocking cuda.core stream (the legacy default stream does not wait for it)."""
    from cuda.core import Device

    device = Device()
    device.set_current()  # Numba's primary context: already current, a no-op
    return device.create_stream()


def test_to_host_waits_for_a_non_blocking_writer_a_plain_copy_does_not() -> None:
    side = _side_stream()
    a, b = _filled(1), _filled(-7)
    cuda.synchronize()
    # compiled and checked before the spin: a compile after it let the spin end before the
    # launch (failed once in the H100 GPU suite, 2026-12-06: the copy saw the written 2s)
    write = scale.prepare(grid=GRID, block=128, stream=side)
    spin(int(side.handle))
    write(b, a, np.float32(2))
    stale = b.copy_to_host()  # not ordered after the writer
    assert (stale == -7).all()
    np.testing.assert_array_equal(ss.to_host(b), np.full(N, 2, np.float32))


def test_host_read_check_catches_a_copy_of_an_in_flight_output() -> None:
    side = _side_stream()
    a, b = _filled(1), _filled(-7)
    cuda.synchronize()
    write = scale.prepare(grid=GRID, block=128, stream=side)  # compiled before the spin
    with ss.configure(check_host_reads=True):
        spin(int(side.handle))
        handle = write.launch(b, a, np.float32(2))
        with pytest.raises(ss.HostReadError, match="may still be running"):
            b.copy_to_host()
        handle.wait()
        np.testing.assert_array_equal(b.copy_to_host(), np.full(N, 2, np.float32))


# ---------------------------------------------------------------------------- CAI v3 stream


@pytest.mark.parametrize("sync", [False, True])
def test_cupy_producer_on_a_side_stream(sync: bool) -> None:
    cp = pytest.importorskip("cupy")
    x = cp.zeros(N, dtype=cp.float32)
    out = cp.full(N, -7, dtype=cp.float32)
    # CuPy compiles and loads its fill kernel on first use; loading a module waits for the
    # whole device, which would order the fill after the spin by accident: load it first.
    cp.zeros(1, dtype=cp.float32).fill(5)
    cp.cuda.Device().synchronize()
    producer = cp.cuda.Stream(non_blocking=True)
    consumer = cp.cuda.Stream(non_blocking=True)
    launch = scale.prepare(grid=GRID, block=128, stream=consumer)  # a CuPy stream
    with ss.configure(cai_sync=sync):
        with producer:
            spin(producer.ptr)
            x.fill(5)  # on the producer stream, after the spin
            launch(out, x, np.float32(2))  # x exports stream=producer
        cp.cuda.Device().synchronize()
    expected = 10 if sync else 0  # without the sync: x read before the fill
    np.testing.assert_array_equal(cp.asnumpy(out), np.full(N, expected, np.float32))


@pytest.mark.parametrize("sync", [False, True])
def test_pytorch_producer_on_a_side_stream(sync: bool) -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(N, dtype=torch.float32, device="cuda")
    out = torch.full((N,), -7.0, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    launch = scale.prepare(grid=GRID, block=128, stream=consumer)  # a PyTorch stream
    # compiled and checked before the spin, as in the Numba-streams case above (else, on a
    # busy host, the spin and the fill can end before the launch is enqueued)
    launch(torch.zeros(N, dtype=torch.float32, device="cuda"), x, np.float32(2))
    torch.cuda.synchronize()
    with ss.configure(cai_sync=sync):
        with torch.cuda.stream(producer):
            spin(producer.cuda_stream)
            x.fill_(5)
            launch(out, x, np.float32(2))  # PyTorch's current stream: the producer
        torch.cuda.synchronize()
    expected = 10 if sync else 0
    np.testing.assert_array_equal(out.cpu().numpy(), np.full(N, expected, np.float32))


def test_numba_array_created_on_a_stream_exports_it_and_is_waited_for() -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    a = cuda.to_device(np.ones(N, np.float32), stream=s1)  # CAI stream = s1
    out = cuda.device_array(N, np.float32)
    cuda.synchronize()
    before = LEDGER.waits
    scale.prepare(grid=GRID, block=128, stream=s2)(out, a, np.float32(2))
    assert LEDGER.waits == before + 1
    with ss.configure(cai_sync=False):
        scale.prepare(grid=GRID, block=128, stream=s2)(out, a, np.float32(2))
    assert LEDGER.waits == before + 1


# ---------------------------------------------------------------------------- ambient streams
# Prepared without a stream: all-CuPy arguments run on CuPy's current stream, all-PyTorch ones
# on PyTorch's; with cai_sync off only the launch stream can order the launch after the fill
# that a spin holds back on that stream (on the default stream it would read the zeros).


def test_cupy_arrays_launch_on_cupys_current_stream() -> None:
    cp = pytest.importorskip("cupy")
    x = cp.zeros(N, dtype=cp.float32)
    out = cp.full(N, -7, dtype=cp.float32)
    cp.zeros(1, dtype=cp.float32).fill(5)  # load CuPy's fill kernel outside the scenario
    cp.cuda.Device().synchronize()
    side = cp.cuda.Stream(non_blocking=True)
    launch = scale.prepare(grid=GRID, block=128)  # no stream given
    with ss.configure(cai_sync=False):
        with side:
            spin(side.ptr)
            x.fill(5)  # on `side`, after the spin
            handle = launch.launch(out, x, np.float32(2))
        assert handle.stream.ptr == side.ptr
        side.synchronize()
        assert handle.done()
    np.testing.assert_array_equal(cp.asnumpy(out), np.full(N, 10, np.float32))


def test_torch_tensors_launch_on_torchs_current_stream() -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(N, dtype=torch.float32, device="cuda")
    out = torch.full((N,), -7.0, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()  # PyTorch's streams are non-blocking
    launch = scale.prepare(grid=GRID, block=128)
    with ss.configure(cai_sync=False):
        with torch.cuda.stream(side):
            spin(side.cuda_stream)
            x.fill_(5)
            handle = launch.launch(out, x, np.float32(2))
        assert handle.stream.cuda_stream == side.cuda_stream
        side.synchronize()
        assert handle.done()
    np.testing.assert_array_equal(out.cpu().numpy(), np.full(N, 10, np.float32))


def test_numba_and_mixed_arguments_keep_the_default_stream() -> None:
    launch = scale.prepare(grid=GRID, block=128)
    a, b = _filled(1), _filled(-7)
    assert launch.launch(b, a, np.float32(2)).stream is None
    cp = pytest.importorskip("cupy")
    with cp.cuda.Stream(non_blocking=True):
        x = cp.ones(N, dtype=cp.float32)
        assert launch.launch(b, x, np.float32(2)).stream is None  # a Numba output: default
        cp.cuda.get_current_stream().synchronize()
    cuda.synchronize()
    np.testing.assert_array_equal(b.copy_to_host(), np.full(N, 2, np.float32))


def test_prepare_accepts_every_kind_of_stream() -> None:
    class Protocol:
        def __init__(self, handle: int) -> None:
            self.handle = handle

        def __cuda_stream__(self) -> tuple[int, int]:
            return (0, self.handle)

    core = _side_stream()
    streams: list[Any] = [
        None,
        0,
        cuda.stream(),
        core,
        int(core.handle),
        Protocol(int(core.handle)),
    ]
    try:
        import cupy as cp

        streams.append(cp.cuda.Stream(non_blocking=True))
    except ImportError:
        pass
    try:
        import torch

        streams.append(torch.cuda.Stream())
    except ImportError:
        pass
    a = _filled(3)
    for stream in streams:
        out = _filled(-7)
        cuda.synchronize()
        scale.prepare(grid=GRID, block=128, stream=stream)(out, a, np.float32(2))
        ss.synchronize()
        np.testing.assert_array_equal(out.copy_to_host(), np.full(N, 6, np.float32))


# ---------------------------------------------------------------------------- native facts


PARAM = type("P", (), {"name": "x", "annotation": "In"})()


@settings(max_examples=150, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "int32", "uint8"]),
    shape=st.lists(st.integers(0, 6), min_size=1, max_size=3),
    step=st.sampled_from([1, 2, -1]),
    transpose=st.booleans(),
    offset=st.integers(0, 3),
)
def test_cupy_native_facts_equal_cai_facts(dtype, shape, step, transpose, offset) -> None:  # type: ignore[no-untyped-def]
    cp = pytest.importorskip("cupy")
    base = cp.zeros(4 * int(np.prod(shape)) + 8, dtype=dtype)
    x = base[offset : offset + int(np.prod(shape))].reshape(shape)[..., ::step]
    if transpose:
        x = x.T
    for itemsize in (1, 4, 8):
        assert native_facts(x, itemsize) == array_facts(x, PARAM, "k", itemsize)


@settings(max_examples=150, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "int32", "uint8", "bool"]),
    shape=st.lists(st.integers(0, 6), min_size=1, max_size=3),
    step=st.sampled_from([1, 2]),
    transpose=st.booleans(),
    offset=st.integers(0, 3),
)
def test_torch_native_facts_equal_cai_facts(dtype, shape, step, transpose, offset) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    n = int(np.prod(shape))
    base = torch.zeros(4 * n + 8, dtype=getattr(torch, dtype), device="cuda")
    x = base[offset : offset + n].reshape(shape)[..., ::step]
    if transpose:
        x = x.t() if x.dim() == 2 else x.permute(*reversed(range(x.dim())))
    for itemsize in (1, 4, 8):
        assert native_facts(x, itemsize) == array_facts(x, PARAM, "k", itemsize)


def test_in_place_changes_of_a_tensor_are_seen_by_the_next_launch() -> None:
    torch = pytest.importorskip("torch")
    a = torch.ones(N, device="cuda")
    out = torch.empty(N, device="cuda")
    launch = scale.prepare(grid=GRID, block=128)
    for _ in range(3):  # memoized from the second launch on
        launch(out, a, np.float32(2))
    a.resize_(N - 1)
    with pytest.raises(ss.RequiresViolation, match="a.size == out.size"):
        launch(out, a, np.float32(2))
    a.resize_(N)
    a.requires_grad_()
    with pytest.raises(ss.ArgumentTypeError, match="requires grad"):
        launch(out, a, np.float32(2))


def test_in_place_reshape_of_a_cupy_array_is_seen_by_the_next_launch() -> None:
    cp = pytest.importorskip("cupy")
    a = cp.ones(N, dtype=cp.float32)
    out = cp.empty(N, dtype=cp.float32)
    launch = scale.prepare(grid=GRID, block=128)
    for _ in range(3):
        launch(out, a, np.float32(2))
    a.shape = (N // 2, 2)
    with pytest.raises(ss.ArgumentTypeError, match="got a 2D float32"):
        launch(out, a, np.float32(2))


# ---------------------------------------------------------------------------- graphs


def test_graph_of_twenty_launches_replays_and_rebinds() -> None:
    bufs = [_filled(1)] + [_filled(-7) for _ in range(20)]
    launch = scale.prepare(grid=GRID, block=128)
    with ss.graph() as g:
        for i in range(20):
            launch(bufs[i + 1], bufs[i], np.float32(2))
    cuda.synchronize()
    assert (bufs[20].copy_to_host() == -7).all()  # recorded, not run
    g.replay()
    cuda.synchronize()
    np.testing.assert_array_equal(bufs[20].copy_to_host(), np.full(N, 2.0**20, np.float32))
    assert g.rebind(bufs[0], _filled(3)) == 1
    handle = g.launch()
    handle.wait()
    np.testing.assert_array_equal(bufs[20].copy_to_host(), np.full(N, 3 * 2.0**20, np.float32))


def test_graph_replay_on_another_stream_is_ordered_after_the_producer() -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    a, b, c = _filled(1), _filled(-7), _filled(-7)
    cuda.synchronize()
    produce = scale.prepare(grid=GRID, block=128, stream=s1)
    with ss.graph(stream=s2) as g:
        scale.prepare(grid=GRID, block=128)(c, b, np.float32(3))
    spin(s1)
    produce(b, a, np.float32(2))
    g.replay()
    cuda.synchronize()
    np.testing.assert_array_equal(c.copy_to_host(), np.full(N, 6, np.float32))


def test_graph_refuses_a_tensor_changed_in_place_since_capture() -> None:
    torch = pytest.importorskip("torch")
    a = torch.ones(N, device="cuda")
    out = torch.empty(N, device="cuda")
    with ss.graph() as g:
        scale.prepare(grid=GRID, block=128)(out, a, np.float32(2))
    g.replay()
    torch.cuda.synchronize()
    assert (out == 2).all()
    a.resize_(N // 2)
    with pytest.raises(ss.GraphError, match="changed its memory, shape"):
        g.replay()


def test_graph_refuses_a_cooperative_kernel() -> None:
    a, out, tmp = _filled(1), _filled(-7), _filled(-7)
    launch = coop_reverse.prepare(grid=8, block=128)
    with pytest.raises(ss.GraphError, match="cooperative by its launch contract"):
        with ss.graph():
            launch(out[: 8 * 128], tmp[: 8 * 128], a[: 8 * 128])
