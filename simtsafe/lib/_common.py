"""What every library launch does on the host: check its arrays, pick its stream, keep its scratch.

A library launch (``simtsafe.lib.inclusive_scan`` ...) is a public function
that launches simtsafe's own Tier-2 kernels. Before anything is enqueued it
checks its arguments the way a kernel launch does -- device arrays only,
dtype, rank, C-contiguity, writability of outputs, sizes, no overlap
between an output and any other argument, the current device -- and raises
the same error classes (``ArgumentTypeError``, ``RequiresViolation``,
``AliasingError``, ``ContextMismatch``) with messages that name the
function, the argument, the value seen and the fix. The kernels' own
prepared launches check again (their contracts hold the size relations
their unsafe regions rely on); the library's messages come first.

Scratch memory (tile status words, counters) belongs to the library, one set
per device and stream, so that launches on different streams never share
it. It is reset by a kernel on the launch's stream before each use and grows
by doubling; prepared launches are kept per scratch and grid.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import AliasingError, ArgumentTypeError, ContextMismatch, RequiresViolation
from ..host._argfacts import pointer_device, several_devices
from ..host._foreign import ambient_stream
from ..host._limits import device_limits
from ..host._streams import stream_key
from ..lowering._launching import simulator_array_interface, stream_handle

__all__ = [
    "Array",
    "ScratchCache",
    "array_arg",
    "check_device",
    "check_disjoint",
    "check_same_size",
    "launch_stream",
]

#: Prepared launches kept per scratch (one per kernel and grid); the oldest goes first.
_LAUNCHES_KEPT = 16
#: Streams (with their scratch) kept per library launch; the oldest goes first, once its
#: stream has finished (``retire``).
_STREAMS_KEPT = 8


def retire(stream: Any) -> None:
    """Wait until ``stream`` has run everything enqueued on it, before the last reference
    to scratch it uses is dropped.

    Numba's own allocator frees with ``cuMemFree``, which waits for the device; an external
    memory manager (CuPy's or RMM's pool plugged into Numba) may hand the memory to another
    allocation at once, while a scan on ``stream`` still writes it. Scratch is dropped
    rarely (a ninth stream, a status array outgrown), so waiting costs little.
    """
    wait = getattr(stream, "synchronize", None)
    if wait is not None:
        wait()
    else:  # a stream given as a bare handle: wait for the whole device
        from numba import cuda

        cuda.synchronize()


@dataclass(frozen=True)
class Array:
    """What a library launch needs to know about one array argument."""

    name: str
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    ptr: int
    lo: int  # first byte
    hi: int  # one past the last byte
    readonly: bool
    contiguous: bool

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def _interface(fn: str, name: str, obj: Any) -> dict[str, Any]:
    if isinstance(obj, np.ndarray):
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} is a host numpy array; library launches take "
            "device arrays only (no hidden copies). Pass numba.cuda.to_device(a) (or a "
            "CuPy/PyTorch CUDA array) and copy results back with .copy_to_host()",
            kernel=fn,
            argument=name,
            actual=type(obj).__name__,
        )
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except RuntimeError as exc:  # PyTorch: a tensor that requires grad
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} cannot be exported as a device array: {exc}",
            kernel=fn,
            argument=name,
            actual=type(obj).__name__,
        ) from None
    if cai is None:
        cai = simulator_array_interface(obj)
    if cai is None:
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} must be a device array (anything with "
            f"__cuda_array_interface__), got {type(obj).__name__}",
            kernel=fn,
            argument=name,
            actual=type(obj).__name__,
        )
    if cai.get("mask") is not None:
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} is a masked array; pass plain data",
            kernel=fn,
            argument=name,
        )
    return cai


def array_arg(
    fn: str,
    name: str,
    obj: Any,
    dtypes: Sequence[np.dtype[Any]],
    *,
    ndim: int = 1,
    output: bool = False,
    hint: str = "",
) -> Array:
    """Check one array argument of library launch ``fn`` and return its facts.

    Raises:
        ArgumentTypeError: not a device array, a dtype not in ``dtypes``, another
            rank, not C-contiguous, or a read-only output.
    """
    cai = _interface(fn, name, obj)
    try:
        dtype = np.dtype(cai["typestr"])
    except TypeError:
        dtype = np.dtype("V1")  # an element type numpy does not know: refused below
    shape = tuple(int(d) for d in cai["shape"])
    if dtype not in dtypes:
        allowed = ", ".join(str(d) for d in dtypes)
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} has dtype {dtype}; supported: {allowed}."
            + (f" {hint}" if hint else f" Convert it, e.g. {name}.astype(np.{dtypes[0]})"),
            kernel=fn,
            argument=name,
            actual=str(dtype),
            limit=allowed,
        )
    if len(shape) != ndim:
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} is {len(shape)}-D with shape {shape}; "
            f"{fn} takes a {ndim}-D array. Pass {name}.reshape(-1) of a C-contiguous array "
            "(a view, no copy)",
            kernel=fn,
            argument=name,
            actual=len(shape),
            limit=ndim,
        )
    itemsize = dtype.itemsize
    ptr, readonly = cai["data"]
    raw_strides = cai.get("strides")
    strides: tuple[int, ...] | None = None if raw_strides is None else tuple(raw_strides)
    size = 1
    for d in shape:
        size *= d
    expected = itemsize
    contiguous = True
    if strides is not None:
        for d, st in zip(reversed(shape), reversed(strides), strict=True):
            if d > 1 and st != expected:
                contiguous = False
            expected *= max(d, 1)
    if not contiguous:
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: argument {name!r} is not C-contiguous (strides {strides} "
            f"for {itemsize}-byte elements); pass a contiguous copy ({name}.copy())",
            kernel=fn,
            argument=name,
            actual=strides,
        )
    if output and readonly:
        raise ArgumentTypeError(
            f"simtsafe.lib.{fn}: output {name!r} is a read-only array; pass a writable one",
            kernel=fn,
            argument=name,
        )
    ptr = int(ptr or 0)
    return Array(name, dtype, shape, ptr, ptr, ptr + size * itemsize, bool(readonly), True)


def check_same_size(fn: str, a: Array, b: Array) -> None:
    """``a.size == b.size``, or ``RequiresViolation`` naming both."""
    if a.size != b.size:
        raise RequiresViolation(
            f"simtsafe.lib.{fn}: {a.name} has {a.size} elements and {b.name} has {b.size}; "
            f"they must be equal. Allocate {a.name} like {b.name}",
            kernel=fn,
            relation=f"{a.name}.size == {b.name}.size",
            actual=(a.size, b.size),
        )


def check_disjoint(fn: str, output: Array, others: Sequence[Array]) -> None:
    """No byte of ``output`` is a byte of any of ``others``, or ``AliasingError``."""
    for other in others:
        if output.lo < other.hi and other.lo < output.hi and output.size and other.size:
            raise AliasingError(
                f"simtsafe.lib.{fn}: output {output.name!r} overlaps argument {other.name!r} "
                f"(bytes [{output.lo:#x}, {output.hi:#x}) and [{other.lo:#x}, {other.hi:#x})): "
                f"{fn} reads {other.name} while it writes {output.name}. Pass a separate output "
                "array",
                kernel=fn,
                argument=output.name,
                other=other.name,
            )


def check_device(fn: str, arrays: Sequence[Array]) -> int:
    """The current device's ordinal; every array lives there, or ``ContextMismatch``.

    The last check a library launch makes: it needs the driver (or the simulator).
    """
    current = device_limits().device_id
    if not several_devices():
        return current
    for a in arrays:
        device = pointer_device(a.ptr) if a.size else None
        if device is not None and device != current:
            raise ContextMismatch(
                f"simtsafe.lib.{fn}: argument {a.name!r} lives on device {device}, but the "
                f"current device is {current}. Make device {device} current "
                f"(with numba.cuda.gpus[{device}]:) or move the array",
                kernel=fn,
                argument=a.name,
                actual=device,
                limit=current,
            )
    return current


def launch_stream(stream: Any, arrays: Sequence[Any]) -> Any:
    """The stream a library launch runs on: ``stream`` if given, else what a kernel launch
    on ``arrays`` would pick (CuPy's / PyTorch's current stream when every array is theirs,
    else the default stream, ``0``)."""
    if stream is not None:
        return stream
    found = ambient_stream(list(arrays))
    return found[3]() if found is not None else 0


@dataclass
class Scratch:
    """One device's and stream's scratch arrays, and the prepared launches that use them.

    Invariant: the launches that reset and then use the scratch are enqueued while
    ``lock`` is held, so two host threads on one stream (the legacy default stream is
    one for all threads) cannot interleave one's reset between the other's reset and use.
    """

    arrays: dict[str, Any] = field(default_factory=dict)
    launches: dict[Hashable, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def launch(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The prepared launch stored under ``key`` (made by ``make()`` on first use)."""
        found = self.launches.get(key)
        if found is None:
            while len(self.launches) >= _LAUNCHES_KEPT:
                self.launches.pop(next(iter(self.launches)))
            found = self.launches[key] = make()
        return found


class ScratchCache:
    """Scratch per (device, stream) for one library launch."""

    def __init__(self) -> None:
        self._by_stream: dict[Hashable, tuple[Any, Scratch]] = {}
        self._lock = threading.Lock()

    def get(self, device: int, stream: Any) -> Scratch:
        """The scratch of ``stream`` on ``device`` (kept with a reference to the stream)."""
        key = (device, stream_key(stream_handle(stream), device))
        with self._lock:
            found = self._by_stream.get(key)
            if found is None:
                while len(self._by_stream) >= _STREAMS_KEPT:
                    oldest, dropped = self._by_stream.pop(next(iter(self._by_stream)))
                    with dropped.lock:
                        retire(oldest)
                found = self._by_stream[key] = (stream, Scratch())
            return found[1]

    def clear(self) -> None:
        """Drop every scratch array and prepared launch (tests; memory pressure), each once
        its stream has finished."""
        with self._lock:
            for stream, scratch in self._by_stream.values():
                with scratch.lock:
                    retire(stream)
            self._by_stream.clear()
