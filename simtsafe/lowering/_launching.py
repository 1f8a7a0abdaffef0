"""The launch seam: every numba-cuda / cuda.core / driver detail the host side needs.

The host side (``simtsafe.host``) decides *whether* a launch may happen
and what must be ordered; this module knows *how*: numba-cuda's parameter
layout and compiled functions, stream handles of Numba / cuda.core / CuPy /
PyTorch / ``__cuda_stream__`` objects, events and stream waits, host
synchronization, CUDA graph capture / update / launch, and the wrap of
Numba's ``copy_to_host`` for the host-read check. A numba-cuda or
cuda-bindings upgrade changes this file and ``_compat`` only. On the
simulator every stream, event and synchronization call is a no-op (its
launches are synchronous) and graphs are not built.

Invariant: ``pack_array`` produces exactly the fields of numba-cuda's array
data model, in its order (``meminfo, parent, nitems, itemsize, data,
shape..., strides...``); ``tests/ptx/test_packing.py`` pins it against
Numba's own model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Final, final

from ._compat import SIMULATOR

__all__ = [
    "ARRAY_MODEL_FIELDS",
    "LEGACY_STREAM",
    "PER_THREAD_STREAM",
    "CapturedGraph",
    "compiled_function",
    "cooperative_blocks",
    "copy_to_host",
    "core_launcher",
    "core_stream",
    "current_device",
    "device_array_classes",
    "device_array_type",
    "direct_launcher",
    "event_done",
    "event_synchronize",
    "install_copy_check",
    "launch_config",
    "max_active_clusters",
    "order_streams",
    "pack_array",
    "per_thread_default",
    "pointer_device",
    "record_event",
    "set_max_dynamic_shared",
    "simulate_launch",
    "simulator_array_interface",
    "stream_blocking",
    "stream_device",
    "stream_handle",
    "stream_idle",
    "stream_wait_event",
    "synchronize_device",
    "synchronize_stream",
    "uses_grid_sync",
]

#: numba-cuda's array data model, flattened into kernel parameters in this order.
ARRAY_MODEL_FIELDS = ("meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides")


def pack_array(
    ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], size: int, itemsize: int
) -> tuple[int, ...]:
    """One array argument as the kernel's parameters (no meminfo, no parent)."""
    return (0, 0, size, itemsize, ptr, *shape, *strides)


def launch_config(
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    cluster: tuple[int, int, int] | None,
    cooperative: bool,
) -> Any:
    from cuda.core import LaunchConfig

    kwargs: dict[str, Any] = {"grid": grid, "block": block, "shmem_size": shared_mem}
    if cluster is not None:
        kwargs["cluster"] = tuple(cluster)
    if cooperative:
        kwargs["is_cooperative"] = True
    return LaunchConfig(**kwargs)


def core_launcher() -> Any:
    """``cuda.core.launch(stream, config, kernel, *params)``: one driver call per launch."""
    from cuda.core import launch

    return launch


def direct_launcher(
    kernel: Any,
    params: tuple[Any, ...],
    stream: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
) -> Callable[[], None] | None:
    """A zero-argument launch of ``kernel`` with these parameters, packed once.

    For the memoized launch path: the parameters of a memo entry never change,
    so they are packed into C memory once (exactly as ``cuda.core.launch``
    packs them: a Python int as 8 bytes, a ctypes value as its own bytes) and
    each launch is one ``cuLaunchKernel`` call with the packed pointer array.
    Returns None where that is not equivalent (a value of another type); the
    caller keeps ``cuda.core.launch``. Only for plain launches: cluster and
    cooperative launches need ``cuLaunchKernelEx``.
    """
    import ctypes

    from cuda.bindings import driver as drv

    values: list[Any] = []
    for v in params:
        if type(v) is int:
            values.append(ctypes.c_int64(v) if v < 0 else ctypes.c_uint64(v))
        elif isinstance(v, ctypes._SimpleCData):
            values.append(v)
        else:
            return None
    pointers = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
    address = ctypes.addressof(pointers)
    handle = getattr(kernel, "handle", None)
    if handle is None:
        handle = kernel._handle
    func = drv.CUfunction(int(handle))  # a CUkernel is launched as a CUfunction
    hstream = drv.CUstream(int(stream.handle))
    gx, gy, gz = grid
    bx, by, bz = block
    launch = drv.cuLaunchKernel
    success = drv.CUresult.CUDA_SUCCESS

    def go() -> None:
        err = launch(func, gx, gy, gz, bx, by, bz, shared_mem, hstream, address, 0)[0]
        if err != success:
            raise RuntimeError(f"cuLaunchKernel failed: {err}")

    go.keep = (values, pointers)  # type: ignore[attr-defined]  # the packed memory lives with it
    return go


def compiled_function(numba_kernel: Any) -> Any:
    """The loaded function (``.kernel``, ``.attrs``, ``.handle``) of a compiled specialization."""
    return numba_kernel._codelibrary.get_cufunc()


def uses_grid_sync(numba_kernel: Any) -> bool:
    """Does the compiled kernel synchronize the whole grid (needs a cooperative launch)?"""
    return bool(numba_kernel is not None and numba_kernel.cooperative)


#: The simulator's stand-in for one multiprocessor (compute capability 9.0): resident
#: threads, blocks and shared memory. A cooperative launch there runs one OS thread per
#: CUDA thread of the whole grid, all at once.
SIM_SM_THREADS: Final = 2048
SIM_SM_BLOCKS: Final = 32
SIM_SM_SHARED: Final = 228 * 1024


def cooperative_blocks(
    numba_kernel: Any, block: tuple[int, int, int], shared_mem: int, multiprocessors: int = 1
) -> int:
    """How many blocks of this shape a cooperative launch can keep co-resident.

    On the simulator (no compiled kernel), the blocks that fit on its
    ``multiprocessors`` stand-in multiprocessors (``SIM_SM_*``).
    """
    if SIMULATOR:
        threads = block[0] * block[1] * block[2]
        fit = min(SIM_SM_BLOCKS, SIM_SM_THREADS // threads)
        if shared_mem:
            fit = min(fit, SIM_SM_SHARED // shared_mem)
        return fit * multiprocessors
    return int(numba_kernel.max_cooperative_grid_blocks(block, shared_mem))


def max_active_clusters(cufunc: Any, config: Any, stream: Any) -> int:
    return int(cufunc.kernel.occupancy.max_active_clusters(config, stream=stream))


def set_max_dynamic_shared(cufunc: Any, nbytes: int, device_id: int) -> str | None:
    """Raise the function's dynamic shared memory limit (opt-in above 48 KiB); error text or None."""
    from cuda.bindings import driver as drv

    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    (err,) = drv.cuKernelSetAttribute(attr, nbytes, cufunc.handle, device_id)
    return None if err == drv.CUresult.CUDA_SUCCESS else str(err)


@cache
def device_array_type() -> type | None:
    """Numba's DeviceNDArray class (None on the simulator)."""
    if SIMULATOR:
        return None
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return DeviceNDArray


def simulator_array_interface(obj: Any) -> dict[str, Any] | None:
    """The host buffer's ``__array_interface__`` of a simulator device array, else None."""
    if not SIMULATOR:
        return None
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if isinstance(obj, FakeCUDAArray):
        return obj._ary.__array_interface__  # type: ignore[no-any-return]
    return None


def pointer_device(ptr: int) -> int | None:
    """Ordinal of the device that owns device pointer ``ptr`` (None if the driver cannot tell)."""
    from cuda.bindings import driver as drv

    err, value = drv.cuPointerGetAttribute(
        drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr
    )
    return int(value) if err == drv.CUresult.CUDA_SUCCESS else None


def current_device() -> int | None:
    """Ordinal of the device of the calling thread's current CUDA context (None if none)."""
    from cuda.bindings import driver as drv

    err, dev = drv.cuCtxGetDevice()
    return int(dev) if err == drv.CUresult.CUDA_SUCCESS else None


def _host_view(obj: Any) -> Any:
    """A numpy view of an object exposing only ``__cuda_array_interface__`` (simulator).

    The simulator's "device" memory is host memory, so the interface's data
    pointer addresses host memory; Numba's simulator would pass such an
    object through unchanged. Arrays it knows (its own, numpy) pass as they are.
    """
    import ctypes

    import numpy as np

    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None or simulator_array_interface(obj) is not None or isinstance(obj, np.ndarray):
        return obj
    dtype = np.dtype(cai["typestr"])
    if dtype.kind == "V":  # a record: its fields from the object's dtype, else the descr
        named = getattr(obj, "dtype", None)
        if isinstance(named, np.dtype) and named.names and named.itemsize == dtype.itemsize:
            dtype = named
        elif cai.get("descr"):
            try:
                described = np.lib.format.descr_to_dtype(cai["descr"])
            except (TypeError, ValueError):
                described = dtype
            if described.itemsize == dtype.itemsize:
                dtype = described
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = tuple(dtype.itemsize * int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    strides = tuple(int(s) for s in strides)
    if any(s < 0 for s in strides):
        return obj  # not representable without an offset; the launch reports it
    if not shape or 0 in shape:
        return np.empty(shape, dtype)
    span = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
    buffer = (ctypes.c_byte * span).from_address(int(cai["data"][0]))
    return np.ndarray(shape, dtype, buffer=buffer, strides=strides)


def simulate_launch(
    dispatcher: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    args: tuple[Any, ...],
    kernel: str,
    *,
    cooperative: bool = False,
) -> None:
    """Run a checked launch on Numba's simulator; errors come out as simtsafe errors.

    A cooperative launch runs every block at once (``_grid_sim``), so that a grid
    sync waits for the whole grid, as on the GPU.
    """
    from .._errors import SafetyError
    from ._diagnostics import translate_simulator_error

    converted = tuple(_host_view(a) for a in args)
    try:
        if cooperative:
            from ._grid_sim import run_cooperative

            run_cooperative(dispatcher, grid, block, shared_mem, converted, kernel)
        else:
            dispatcher[grid, block, 0, shared_mem](*converted)
    except (SafetyError, AttributeError, TypeError, UnboundLocalError) as exc:
        if isinstance(exc, SafetyError) and exc.rule == "grid-sync" and exc.kernel == kernel:
            raise  # already names the kernel and the grid sync's line
        raise translate_simulator_error(exc, kernel).with_traceback(exc.__traceback__) from None


# ---------------------------------------------------------------------------- streams
#
# Stream handles are plain ints at the seam: 0 is "the default stream" (the
# legacy one unless cuda.bindings was told to use per-thread default streams),
# 1 the legacy default stream, 2 the per-thread default stream (the driver
# accepts both special values as handles), anything else a CUstream.

#: The driver's special stream handles (cuda.h CU_STREAM_LEGACY / CU_STREAM_PER_THREAD).
LEGACY_STREAM = 1
PER_THREAD_STREAM = 2


@cache
def per_thread_default() -> bool:
    """Does handle 0 mean the per-thread default stream (cuda.bindings' PTDS switch)?"""
    import os

    value = os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0").strip()
    try:
        return int(value) != 0
    except ValueError:
        return value != ""


def stream_handle(stream: Any) -> int:
    """The driver handle of a stream given to ``prepare`` or ``synchronize``.

    Accepts None / 0 (default stream), an int handle, Numba and cuda.core
    streams, anything with ``__cuda_stream__`` (the protocol returns
    ``(version, handle)``), CuPy streams (``.ptr``) and PyTorch streams
    (``.cuda_stream``). On the simulator every stream object is its own
    identity (streams there are synchronous stand-ins).

    Raises:
        TypeError: for anything else.
    """
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError(f"a stream cannot be a bool ({stream!r})")
    if isinstance(stream, int):
        if stream < 0:
            raise TypeError(f"a stream handle is a non-negative int, got {stream}")
        return stream
    if SIMULATOR:
        return id(stream)
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        pair = proto() if callable(proto) else proto
        return int(pair[1])
    for attr in ("ptr", "cuda_stream"):  # CuPy's Stream.ptr, PyTorch's Stream.cuda_stream
        value = getattr(stream, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    handle = getattr(stream, "handle", None)
    if handle is not None:
        return int(handle)
    raise TypeError(
        f"cannot use a {type(stream).__name__} as a CUDA stream: pass a Numba, cuda.core, CuPy or "
        "PyTorch stream, an object with __cuda_stream__, or an int handle (0 = default stream)"
    )


def stream_device(stream: Any) -> int | None:
    """Ordinal of the device a stream belongs to (None: unknown, a default stream, simulator).

    Asks the object first (Numba's context, CuPy's ``device_id``, cuda.core's
    ``device.device_id``, PyTorch's ``device.index``), then the driver
    (``cuStreamGetDevice``, CUDA 12.8+).
    """
    if SIMULATOR or stream is None:
        return None
    try:
        context = getattr(stream, "context", None)
        device = getattr(getattr(context, "device", None), "id", None)  # Numba
        if isinstance(device, int):
            return device
        device = getattr(stream, "device_id", None)  # CuPy
        if isinstance(device, int):
            return device
        owner = getattr(stream, "device", None)
        for attr in ("device_id", "index"):  # cuda.core Device, torch.device
            value = getattr(owner, attr, None)
            if isinstance(value, int):
                return value
        handle = stream_handle(stream)
    except Exception:  # noqa: BLE001 - a property that needs a context, an odd object
        return None
    if handle in (0, LEGACY_STREAM, PER_THREAD_STREAM):
        return None  # the calling thread's current context's own streams
    from cuda.bindings import driver as drv

    query = getattr(drv, "cuStreamGetDevice", None)
    if query is None:
        return None
    err, device = query(handle)
    return int(device) if err == drv.CUresult.CUDA_SUCCESS else None


def core_stream(stream: Any) -> Any:
    """A cuda.core stream for what ``prepare(stream=...)`` was given (0/None: default)."""
    from numba.cuda.cudadrv.driver import ExperimentalStream, GraphBuilder, Stream, _to_core_stream

    if not stream or isinstance(stream, Stream | ExperimentalStream | GraphBuilder):
        return _to_core_stream(stream or 0)
    return ExperimentalStream.from_handle(stream_handle(stream))


def _check(result: Any, what: str) -> Any:
    """Unpack a cuda.bindings result tuple; raise on an error code."""
    from cuda.bindings import driver as drv

    err = result[0]
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err}")
    return result[1] if len(result) == 2 else result[1:]


#: One reusable event per device for stream-to-stream ordering. Re-recording it is
#: safe: cuStreamWaitEvent uses the event's state at the time of the call.
_ORDER_EVENTS: dict[int, Any] = {}


def order_streams(waiter: int, producer: int, device_id: int) -> None:
    """Make all later work on ``waiter`` wait for the work enqueued on ``producer`` so far.

    An event is recorded on ``producer`` now and ``waiter`` waits on it
    (``cuStreamWaitEvent``): ordered on the device, the host does not wait.
    The caller holds the ledger lock (the event is shared per device).
    """
    if SIMULATOR:
        return
    from cuda.bindings import driver as drv

    event = _ORDER_EVENTS.get(device_id)
    if event is None:
        flags = int(drv.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        event = _ORDER_EVENTS[device_id] = _check(drv.cuEventCreate(flags), "cuEventCreate")
    _check(drv.cuEventRecord(event, producer), "cuEventRecord")
    _check(drv.cuStreamWaitEvent(waiter, event, 0), "cuStreamWaitEvent")


def synchronize_stream(handle: int) -> None:
    """Block the host until every operation enqueued on the stream has completed."""
    if SIMULATOR:
        return
    from cuda.bindings import driver as drv

    _check(drv.cuStreamSynchronize(handle), "cuStreamSynchronize")


def synchronize_device() -> None:
    """Block the host until the current context's device is idle."""
    if SIMULATOR:
        return
    from cuda.bindings import driver as drv

    _check(drv.cuCtxSynchronize(), "cuCtxSynchronize")


def stream_idle(handle: int) -> bool:
    """Has every operation enqueued on the stream completed (``cuStreamQuery``)?"""
    if SIMULATOR:
        return True
    from cuda.bindings import driver as drv

    (err,) = drv.cuStreamQuery(handle)
    if err == drv.CUresult.CUDA_SUCCESS:
        return True
    if err == drv.CUresult.CUDA_ERROR_NOT_READY:
        return False
    raise RuntimeError(f"cuStreamQuery failed: {err}")


def stream_blocking(handle: int) -> bool:
    """Does the stream synchronize with the legacy default stream (not CU_STREAM_NON_BLOCKING)?

    The legacy default stream waits for earlier work on every blocking
    stream of its context, and later work on them waits for it. On the
    simulator (synchronous) every stream counts as blocking.
    """
    if SIMULATOR or handle in (0, LEGACY_STREAM, PER_THREAD_STREAM):
        return True
    from cuda.bindings import driver as drv

    err, flags = drv.cuStreamGetFlags(handle)
    if err != drv.CUresult.CUDA_SUCCESS:
        return False  # unknown: assume the worst (no implicit ordering)
    return not int(flags) & int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)


# ---------------------------------------------------------------------------- events


def record_event(stream: Any) -> Any:
    """A cuda.core Event recorded on the (cuda.core) stream now (None on the simulator)."""
    if SIMULATOR:
        return None
    return stream.record()


def event_done(event: Any) -> bool:
    """Has the work captured by the event completed?"""
    return True if event is None else bool(event.is_done)


def event_synchronize(event: Any) -> None:
    """Block the host until the work captured by the event has completed."""
    if event is not None:
        event.sync()


def stream_wait_event(handle: int, event: Any) -> None:
    """Make later work on the stream wait for the work captured by the event."""
    if event is None or SIMULATOR:
        return
    from cuda.bindings import driver as drv

    _check(drv.cuStreamWaitEvent(handle, int(event.handle), 0), "cuStreamWaitEvent")


# ---------------------------------------------------------------------------- graphs


@final
class CapturedGraph:
    """A CUDA graph captured from launches on a private stream, and its executable.

    Built by stream capture (``cuStreamBeginCapture`` on a non-blocking
    stream of simtsafe's own, the launches through ``cuda.core.launch``,
    ``cuStreamEndCapture``, ``cuGraphInstantiate``); replayed with one
    ``cuGraphLaunch``; re-bound with ``cuGraphExecUpdate``, which rewrites the
    executable's kernel-node parameters in place. The driver objects are
    destroyed when this object is collected (an in-flight replay still
    completes: the driver frees an executable graph after its launches).
    """

    __slots__ = ("__weakref__", "_exec", "_handles")

    def __init__(self, device_id: int, launches: list[tuple[Any, Any, tuple[Any, ...]]]) -> None:
        import weakref

        from cuda.bindings import driver as drv

        graph = _capture(device_id, launches)
        try:
            self._exec = _check(drv.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        except BaseException:
            drv.cuGraphDestroy(graph)
            raise
        # [executable, graph]: the finalizer sees the graph that update() put in.
        self._handles = [self._exec, graph]
        weakref.finalize(self, _destroy_graph, self._handles)

    def update(self, device_id: int, launches: list[tuple[Any, Any, tuple[Any, ...]]]) -> bool:
        """Re-capture the launches and update the executable in place; False if it cannot."""
        from cuda.bindings import driver as drv

        graph = _capture(device_id, launches)
        result = drv.cuGraphExecUpdate(self._exec, graph)
        if result[0] != drv.CUresult.CUDA_SUCCESS:
            drv.cuGraphDestroy(graph)
            return False
        drv.cuGraphDestroy(self._handles[1])
        self._handles[1] = graph
        return True

    def launch(self, stream: int) -> None:
        """Enqueue one replay of the whole graph on the stream."""
        from cuda.bindings import driver as drv

        (err,) = drv.cuGraphLaunch(self._exec, stream)
        if err != drv.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuGraphLaunch failed: {err}")


def _destroy_graph(handles: list[Any]) -> None:
    try:
        from cuda.bindings import driver as drv

        drv.cuGraphExecDestroy(handles[0])
        drv.cuGraphDestroy(handles[1])
    except Exception:  # noqa: BLE001 - interpreter shutdown: the context may be gone
        pass


#: device ordinal -> (driver handle, cuda.core stream) of the private capture stream.
_CAPTURE_STREAMS: dict[int, tuple[int, Any]] = {}


def _capture(device_id: int, launches: list[tuple[Any, Any, tuple[Any, ...]]]) -> Any:
    """Capture ``(config, kernel, params)`` launches, in order, into a new CUgraph."""
    from cuda.bindings import driver as drv
    from cuda.core import launch

    entry = _CAPTURE_STREAMS.get(device_id)
    if entry is None:
        flags = int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)
        raw = _check(drv.cuStreamCreate(flags), "cuStreamCreate")
        handle = int(raw)
        from numba.cuda.cudadrv.driver import ExperimentalStream

        entry = _CAPTURE_STREAMS[device_id] = (handle, ExperimentalStream.from_handle(handle))
    handle, stream = entry
    mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    _check(drv.cuStreamBeginCapture(handle, mode), "cuStreamBeginCapture")
    try:
        for config, kernel, params in launches:
            launch(stream, config, kernel, *params)
    finally:
        graph = _check(drv.cuStreamEndCapture(handle), "cuStreamEndCapture")
    return graph


# ---------------------------------------------------------------------------- host copies


def device_array_classes() -> tuple[Any, ...]:
    """Numba's device array class(es) whose ``copy_to_host`` the host-read check wraps."""
    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return (FakeCUDAArray,)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return (DeviceNDArray,)


#: class -> its original copy_to_host, while the host-read check is installed.
_ORIGINAL_COPY: dict[Any, Any] = {}


def install_copy_check(check: Any) -> None:
    """Wrap ``copy_to_host`` of Numba's device arrays: ``check(array, stream)`` runs first.

    ``check=None`` restores the original methods.
    """
    for cls in device_array_classes():
        original = _ORIGINAL_COPY.get(cls, cls.copy_to_host)
        if check is None:
            if cls in _ORIGINAL_COPY:
                cls.copy_to_host = _ORIGINAL_COPY.pop(cls)
            continue
        _ORIGINAL_COPY[cls] = original

        def checked_copy_to_host(
            self: Any, ary: Any = None, stream: Any = 0, *, _orig: Any = original
        ) -> Any:
            check(self, stream)
            return _orig(self, ary, stream=stream)

        cls.copy_to_host = checked_copy_to_host


def copy_to_host(obj: Any) -> Any:
    """A host numpy copy of a device array (any ``__cuda_array_interface__`` exporter).

    Runs on the legacy default stream and returns when the copy is done;
    the caller has already waited for the array's writers. Bypasses the
    host-read check (this *is* the checked read).
    """
    for cls in device_array_classes():
        if isinstance(obj, cls):
            original = _ORIGINAL_COPY.get(cls, cls.copy_to_host)
            return original(obj)
    from numba import cuda

    view: Any = cuda.as_cuda_array(obj, sync=False)
    kind: Any = type(view)
    return _ORIGINAL_COPY.get(kind, kind.copy_to_host)(view)
