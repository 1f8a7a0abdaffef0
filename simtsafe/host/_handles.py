"""What the host does with launches in flight: handles, synchronization, host reads, settings.

* ``LaunchHandle`` -- returned by ``PreparedLaunch.launch(*args)`` and
  ``Graph.launch()``: an event recorded right after the launch; ``wait()``
  blocks the host, ``wait(stream=s)`` makes stream ``s`` wait on the device,
  ``done()`` polls. Each tells the ordering ledger what became known.
* ``synchronize(stream=None)`` -- the device (or one stream) is idle after it.
* ``to_host(array)`` -- a host copy that first waits for the array's last
  writers (ledger) and its producer stream (CAI ``stream``), so it never
  reads an output still being written.
* ``configure(...)`` -- the process-wide switches: ordering mode
  (auto / strict / off), CAI stream synchronization, and the debug check of
  ``copy_to_host`` on arrays whose writer may still be running.

A plain ``prepared(*args)`` returns None and records no event: the fast
path stays free of per-launch event cost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, final

import numpy as np

from .._errors import HostReadError
from .._unsafe import in_unsafe_region
from ..lowering._compat import SIMULATOR
from ..lowering._launching import (
    LEGACY_STREAM,
    copy_to_host,
    current_device,
    event_done,
    event_synchronize,
    install_copy_check,
    simulator_array_interface,
    stream_blocking,
    stream_device,
    stream_handle,
    stream_wait_event,
    synchronize_device,
    synchronize_stream,
)
from ._argfacts import FACTS_CACHE, Facts, make_facts
from ._streams import AUTO, LEDGER, OFF, STRICT, StreamState, driver_handle, stream_label

__all__ = [
    "ExecutionSettings",
    "LaunchHandle",
    "configure",
    "execution_settings",
    "synchronize",
    "to_host",
]


@final
class LaunchHandle:
    """One enqueued launch (or graph replay): wait for it, poll it, order a stream after it.

    Made by ``PreparedLaunch.launch(*args)`` and ``Graph.launch()``. The
    event is recorded on the launch stream right after the launch, so it
    completes when the launch (and anything enqueued on that stream before
    it) has completed.
    """

    __slots__ = ("_seq", "_state", "event", "kernel", "stream")

    kernel: str
    stream: Any
    event: Any  # a cuda.core Event (None on the simulator, where launches are synchronous)
    _state: StreamState
    _seq: int

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a LaunchHandle is returned by prepared.launch(*args) or graph.launch()")

    @classmethod
    def _mint(
        cls, state: StreamState, seq: int, event: Any, kernel: str, stream: Any
    ) -> LaunchHandle:
        self = object.__new__(cls)
        self._state = state
        self._seq = seq
        self.event = event
        self.kernel = kernel
        self.stream = stream
        return self

    def wait(self, stream: Any = None) -> None:
        """Wait for the launch: the host (no ``stream``), or, on the device, ``stream``.

        ``wait(stream=s)`` enqueues a wait for this launch's event on ``s``
        (``cuStreamWaitEvent``) and returns at once; the ledger then knows
        ``s`` is ordered after the launch (strict mode accepts it).
        """
        if stream is None:
            event_synchronize(self.event)
            with LEDGER.lock:
                LEDGER.complete(self._state, self._seq)
            return
        handle = stream_handle(stream)
        stream_wait_event(handle, self.event)
        with LEDGER.lock:
            device = stream_device(stream)
            waiter = LEDGER.state(handle, self._state.device if device is None else device)
            LEDGER.ordered(waiter, self._state, self._seq)

    def done(self) -> bool:
        """Has the launch completed? (Never blocks.)"""
        if not event_done(self.event):
            return False
        with LEDGER.lock:
            LEDGER.complete(self._state, self._seq)
        return True

    def __repr__(self) -> str:
        return f"LaunchHandle(kernel={self.kernel!r}, stream={stream_label(self._state.key)})"


# ---------------------------------------------------------------------------- synchronize


def synchronize(stream: Any = None) -> None:
    """Block until the current device (or only ``stream``) has finished all enqueued work.

    Afterwards the ordering ledger knows those launches completed: later
    launches on any stream need no wait for them, and ``to_host`` copies
    their outputs at once.
    """
    if stream is None:
        with LEDGER.lock:
            known = LEDGER.snapshot(_current_device())
        synchronize_device()
    else:
        handle = stream_handle(stream)
        owner = stream_device(stream)
        with LEDGER.lock:
            state = LEDGER.state(handle, _current_device() if owner is None else owner)
            known = [(state, state.tail)]
        synchronize_stream(state.handle)
    with LEDGER.lock:
        for state, seq in known:
            LEDGER.complete(state, seq)


def _current_device() -> int:
    if SIMULATOR:
        return 0
    device = current_device()
    return 0 if device is None else device


# ---------------------------------------------------------------------------- host reads


def _facts(obj: Any) -> Facts | None:
    """Byte range and producer stream of a device array (None: not one)."""
    hit = FACTS_CACHE.get(id(obj))
    if hit is not None and hit[0]() is obj:
        return hit[1]
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        cai = simulator_array_interface(obj)
    if cai is None:
        return None
    from ._foreign import is_torch_tensor, torch_stream

    stream = cai.get("stream")
    if is_torch_tensor(obj):
        stream = torch_stream(obj.get_device())
    ptr = cai["data"][0]
    itemsize = np.dtype(cai["typestr"]).itemsize
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    return make_facts(ptr, shape, strides, cai["typestr"], False, itemsize, False, stream)


def to_host(array: Any) -> np.ndarray[Any, Any]:
    """Copy a device array to a new host numpy array once every writer of it has finished.

    Waits (on the host) for the streams of the launches the ledger knows
    wrote the array's bytes and are not known complete, then for the
    array's producer stream (CAI ``stream``; PyTorch: its current stream)
    unless CAI synchronization is off, then copies.

    Raises:
        TypeError: ``array`` is not a device array.
    """
    facts = _facts(array)
    if facts is None:
        raise TypeError(
            f"simtsafe.to_host needs a device array (anything with __cuda_array_interface__), "
            f"got {type(array).__name__}"
        )
    if facts.size:
        with LEDGER.lock:
            waits = [(t, t.tail) for t, _, _, _ in LEDGER.writers(facts.lo, facts.hi)]
        for t, seq in waits:
            if t.thread is not None:  # another thread's per-thread stream: no handle for it here
                synchronize_device()
            else:
                synchronize_stream(t.handle)
            with LEDGER.lock:
                LEDGER.complete(t, seq)
    if facts.stream is not None and LEDGER.cai_sync:
        synchronize_stream(driver_handle(facts.stream))
    result: np.ndarray[Any, Any] = copy_to_host(array)
    return result


def _check_host_read(array: Any, stream: Any) -> None:
    """The debug check run before ``copy_to_host``: refuse reading an in-flight output."""
    facts = _facts(array)
    if facts is None or not facts.size:
        return
    handle = stream_handle(stream or 0)
    device = _current_device()
    with LEDGER.lock:
        reader = LEDGER.state(handle, device)
        for t, seq, kernel, name in LEDGER.writers(facts.lo, facts.hi):
            if t is reader or reader.after.get(t.key, 0) >= seq:
                continue  # same stream, or known ordered after the writer
            if reader.handle == LEGACY_STREAM and stream_blocking(t.handle):
                continue  # the legacy default stream waits for blocking streams
            raise HostReadError(
                f"copy_to_host of an array that kernel {kernel!r} (argument {name!r}) wrote on "
                f"{stream_label(t.key)} and that may still be running: the copy on "
                f"{stream_label(reader.key)} is not ordered after it. Wait first "
                "(handle.wait(), simtsafe.synchronize()) or copy with simtsafe.to_host(array)",
                kernel=kernel,
                argument=name,
                stream=stream_label(reader.key),
                other_stream=stream_label(t.key),
            )


# ---------------------------------------------------------------------------- settings


@final
@dataclass(frozen=True)
class ExecutionSettings:
    """The process-wide execution switches (``simtsafe.configure``).

    Attributes:
        ordering: ``"auto"`` (order conflicting launches on different streams
            with an event wait), ``"strict"`` (refuse them with
            ``StreamOrderError``) or ``"off"`` (no ledger; set only inside
            ``simtsafe.unsafe``).
        cai_sync: synchronize a launch's stream with its arrays' producer
            streams (CAI v3 ``stream``).
        check_host_reads: the debug check on ``copy_to_host`` of Numba device
            arrays whose last writer may still be running on another stream.
    """

    ordering: str
    cai_sync: bool
    check_host_reads: bool


def _env_flag(*names: str, default: bool) -> bool:
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.strip():
            try:
                return int(value) != 0
            except ValueError:
                return value.strip().lower() not in ("false", "no", "off")
    return default


_SETTINGS = ExecutionSettings(
    ordering=STRICT if os.environ.get("SIMTSAFE_ORDERING", "").strip() == STRICT else AUTO,
    cai_sync=_env_flag(
        "SIMTSAFE_CUDA_ARRAY_INTERFACE_SYNC", "NUMBA_CUDA_ARRAY_INTERFACE_SYNC", default=True
    ),
    check_host_reads=_env_flag("SIMTSAFE_CHECK_HOST_READS", default=False),
)


def execution_settings() -> ExecutionSettings:
    """The execution switches in force."""
    return _SETTINGS


def _apply(settings: ExecutionSettings) -> None:
    global _SETTINGS
    with LEDGER.lock:
        LEDGER.mode = {AUTO: AUTO, STRICT: STRICT, OFF: OFF}[settings.ordering]
        LEDGER.cai_sync = settings.cai_sync
        LEDGER.host_reads = settings.check_host_reads
        if LEDGER.mode is not AUTO or LEDGER.host_reads:
            LEDGER.end_solo()
    if settings.check_host_reads != _SETTINGS.check_host_reads or (
        settings is _SETTINGS and settings.check_host_reads
    ):
        install_copy_check(_check_host_read if settings.check_host_reads else None)
    _SETTINGS = settings


@final
class _Configured:
    """The result of ``configure``: already applied; as a context manager, undone at exit."""

    __slots__ = ("current", "previous")

    def __init__(self, previous: ExecutionSettings, current: ExecutionSettings) -> None:
        self.previous = previous
        self.current = current

    def __enter__(self) -> ExecutionSettings:
        return self.current

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _apply(self.previous)

    def __repr__(self) -> str:
        return f"configure({self.current})"


def configure(
    *,
    ordering: str | None = None,
    cai_sync: bool | None = None,
    check_host_reads: bool | None = None,
) -> _Configured:
    """Set the execution switches for the whole process; omitted ones keep their value.

    Applies at once. Used as a context manager (``with simtsafe.configure(
    ordering="strict"):``) it restores the previous settings at exit.

    Args:
        ordering: ``"auto"`` (default: conflicting launches on different
            streams are ordered with an event wait), ``"strict"`` (they are
            refused with ``StreamOrderError``), or ``"off"`` (no tracking at
            all; only inside ``with simtsafe.unsafe("SAFETY: ...")``, because
            it turns a safety check off).
        cai_sync: honour the CAI v3 ``stream`` of launch arguments (default
            True; the environment variables ``SIMTSAFE_CUDA_ARRAY_INTERFACE_SYNC``
            or Numba's ``NUMBA_CUDA_ARRAY_INTERFACE_SYNC`` = 0 turn it off).
        check_host_reads: debug check: ``copy_to_host`` of a Numba device
            array raises ``HostReadError`` while a launch that wrote it on an
            unordered stream is not known to have finished.

    Raises:
        ValueError: an unknown ordering, or ``"off"`` outside an unsafe region.
    """
    if ordering is not None and ordering not in (AUTO, STRICT, OFF):
        raise ValueError(
            f"simtsafe.configure: ordering must be 'auto', 'strict' or 'off', got {ordering!r}"
        )
    if ordering == OFF and not in_unsafe_region():
        raise ValueError(
            "simtsafe.configure(ordering='off') turns the stream-ordering check off, so it is "
            'allowed only inside `with simtsafe.unsafe("SAFETY: why every launch is ordered")`'
        )
    previous = _SETTINGS
    changes: dict[str, Any] = {}
    if ordering is not None:
        changes["ordering"] = ordering
    if cai_sync is not None:
        changes["cai_sync"] = bool(cai_sync)
    if check_host_reads is not None:
        changes["check_host_reads"] = bool(check_host_reads)
    current = replace(previous, **changes)
    _apply(current)
    return _Configured(previous, current)


_apply(_SETTINGS)
