"""Per-launch argument checks and the fast launch path.

``LaunchPlan`` is built once by ``prepare``: per parameter it knows what to
expect (kind, dtype string, rank), and it holds the driver-level launch
configuration. ``launch(args)`` then, for every call:

1. reads each array's ``__cuda_array_interface__`` (Numba, CuPy, PyTorch...)
   and checks kind, dtype, rank, C-contiguity and writability of outputs;
2. checks that no output's byte range overlaps another argument's;
3. checks ``requires`` and ``covers``;
4. orders the launch after conflicting launches on other streams and after
   the producer streams of its arrays (``_streams``: the ledger, CAI v3
   ``stream``), or refuses it in strict ordering mode;
5. packs the kernel parameters exactly as Numba's ABI wants them and calls
   ``cuda.core.launch`` on the cached compiled function -- no Numba dispatch --
   and records the launch's accesses in the ledger. A memoized argument set
   keeps its parameters packed and launches with one ``cuLaunchKernel`` call
   (``direct_launcher``; plain launches only).

Inside ``with simtsafe.graph():`` steps 1-3 run and the checked launch is
recorded into the graph instead (``_graphs``).

Invariant: every check runs before the launch call, so a failing launch
touches no output; the ledger lock is held from step 4 to the record, so
the ledger's order is the enqueue order.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, final

import numpy as np

from .._errors import (
    AliasingError,
    ArgumentTypeError,
    ContextMismatch,
    CoverageError,
)
from .._records import element_alignment
from ..lowering._compat import SIMULATOR
from ..lowering._launching import (
    PER_THREAD_STREAM,
    compiled_function,
    core_launcher,
    core_stream,
    device_array_type,
    direct_launcher,
    launch_config,
    max_active_clusters,
    per_thread_default,
    simulate_launch,
    stream_handle,
)
from ..lowering._scalars import scalar_kind
from ._argfacts import (
    Facts,
    array_facts,
    current_device,
    input_layout,
    record_dtype,
    several_devices,
    unaligned,
)
from ._fastcheck import build_fast_check
from ._foreign import Guard, dtype_name, guard
from ._limits import tile_window
from ._requires import launch_env
from ._rowcover import ROW_SPACES, UNBOUNDED, row_capacity, row_coverage_message
from ._streams import LEDGER, OFF, Access, StreamState
from ._tilecover import TENSOR_CORE_TILES, tensor_core_capacity, tensor_core_coverage_message

if TYPE_CHECKING:
    from .._compose import Kernel
    from ..decoration._params import Param

__all__ = [
    "RECORDING",
    "Checked",
    "LaunchPlan",
    "current_recorder",
    "recorders",
    "start_recording",
    "stop_recording",
]

#: (input layouts, packed kernel parameters, all arrays cacheable, each array's facts,
#: does any array name a producer stream)
Checked = tuple[tuple[str, ...], tuple[Any, ...], bool, tuple[Facts, ...], bool]

#: How many graphs are recording right now, in any thread (a launch checks this first).
RECORDING = [0]
_RECORDING_LOCK = threading.Lock()
_THREAD = threading.local()


def start_recording(recorder: Any) -> None:
    """Make ``recorder`` the calling thread's innermost graph recorder."""
    recorders().append(recorder)
    with _RECORDING_LOCK:
        RECORDING[0] += 1


def stop_recording(recorder: Any) -> None:
    """Undo ``start_recording``."""
    recorders().remove(recorder)
    with _RECORDING_LOCK:
        RECORDING[0] -= 1


def recorders() -> list[Any]:
    """The calling thread's stack of graph recorders (innermost last)."""
    stack: list[Any] | None = getattr(_THREAD, "recorders", None)
    if stack is None:
        stack = _THREAD.recorders = []
    return stack


def current_recorder() -> Any:
    """The calling thread's innermost graph recorder, or None."""
    stack = getattr(_THREAD, "recorders", None)
    return stack[-1] if stack else None


def check_device(kernel: str, prepared_on: int, current: int | None, arrays: Any) -> None:
    """Refuse a launch whose context or arrays belong to another device than its preparation.

    Args:
        kernel: kernel name, for the message.
        prepared_on: ordinal of the device the launch was prepared on.
        current: ordinal of the calling thread's current device.
        arrays: (parameter name, device ordinal or None) pairs.

    Raises:
        ContextMismatch: naming both devices and the fix.
    """
    if current is not None and current != prepared_on:
        raise ContextMismatch(
            f"kernel {kernel!r}: this PreparedLaunch was prepared on device {prepared_on}, but "
            f"the calling thread's current device is {current}. Launch it with device "
            f"{prepared_on} current (`with numba.cuda.gpus[{prepared_on}]:`), or prepare the "
            f"kernel again on device {current} (one PreparedLaunch per device)",
            kernel=kernel,
            actual=current,
            limit=prepared_on,
        )
    for name, dev in arrays:
        if dev is not None and dev != prepared_on:
            raise ContextMismatch(
                f"kernel {kernel!r}: argument {name!r} lives on device {dev}, but this launch was "
                f"prepared on device {prepared_on}. Copy the array to device {prepared_on}, or "
                f"launch a PreparedLaunch prepared on device {dev}",
                kernel=kernel,
                argument=name,
                actual=dev,
                limit=prepared_on,
            )


#: How many recently checked argument sets a prepared launch remembers.
_MEMO_SIZE = 8


def _thread_free(streams: tuple[int | None, ...]) -> bool:
    """No value names a per-thread default stream (whose identity depends on the thread)."""
    return PER_THREAD_STREAM not in streams and not (0 in streams and per_thread_default())


def _evict_oldest(entries: dict[Any, Any]) -> None:
    """Make room for one entry (oldest first); tolerant of other threads doing the same."""
    while len(entries) >= _MEMO_SIZE:
        try:
            entries.pop(next(iter(entries)), None)
        except (RuntimeError, StopIteration):  # changed by another thread meanwhile
            break


#: What each scalar kind takes (ScalarKind.accepts), for the fix of a wrong-kind argument.
_ACCEPTS = {
    "bool": "a bool",
    "int": "an int",
    "real": "a float or an int",
    "complex": "a complex, float or int",
}


def key_function(array_idx: tuple[int, ...]) -> Callable[[tuple[Any, ...]], tuple[int, ...]]:
    """``args -> (id(args[i]), ...)`` over the array arguments, as one generated expression
    (the memo's key: a launch with the same array objects looks its entry up by it)."""
    items = "".join(f"id(args[{i}]), " for i in array_idx)
    key: Callable[[tuple[Any, ...]], tuple[int, ...]]
    key = eval(f"lambda args: ({items})", {"id": id})  # the source: indices only
    return key


def zero_sign(x: Any) -> Any:
    """The signs of a number's zero parts (``-0.0 == 0.0``, yet a kernel can tell them apart):
    ``copysign(1, x)``, per part of a complex number."""
    if isinstance(x, complex | np.complexfloating):
        return (math.copysign(1.0, x.real), math.copysign(1.0, x.imag))
    return math.copysign(1.0, x)


def signed_zero(x: Any) -> Any:
    """``zero_sign(x)`` where the scalar has a zero part whose sign ``==`` does not see
    (a float or complex zero), else None: what a memo records to tell -0.0 from 0.0."""
    if isinstance(x, complex | np.complexfloating):
        return zero_sign(x) if x.real == 0 or x.imag == 0 else None
    if isinstance(x, float | np.floating) and x == 0:
        return zero_sign(x)
    return None


def matcher_factory(
    nargs: int, array_idx: tuple[int, ...], scalar_idx: tuple[int, ...]
) -> Callable[..., Callable[[tuple[Any, ...]], bool]]:
    """A factory of a plan's memo matchers: ``make(ref..., type, value, sign, ...)`` gives
    ``match(args)``, true when ``args`` has ``nargs`` items, each array argument is the
    object its weak reference holds and each scalar has the recorded type, is equal to the
    recorded value (``not (a != value)``) and, where that value has a zero part (``sign``,
    ``signed_zero`` of it, not None), the same sign there. One straight-line expression, generated once per plan
    from the argument positions (no loop per launch); the same tests as
    ``_Memo.matches``, in the same order."""
    refs = [f"r{i}" for i in array_idx]
    scalars = [f"t{i}, v{i}, s{i}" for i in scalar_idx]
    tests = [f"len(args) == {nargs}"]
    tests += [f"args[{i}] is r{i}()" for i in array_idx]
    tests += [
        f"type(args[{i}]) is t{i} and not (args[{i}] != v{i})"
        f" and (s{i} is None or zero_sign(args[{i}]) == s{i})"
        for i in scalar_idx
    ]
    source = (
        f"def make({', '.join(refs + scalars)}):\n"
        f"    def match(args):\n"
        f"        return {' and '.join(tests)}\n"
        f"    return match\n"
    )
    scope: dict[str, Any] = {}
    names = {"len": len, "type": type, "zero_sign": zero_sign}
    exec(source, names, scope)  # the source: indices only
    return scope["make"]  # type: ignore[no-any-return]


@final
class _Memo:
    """A recently checked launch: which objects and scalar values it was checked for.

    Numba device arrays are matched by identity (their metadata cannot
    change). CuPy arrays and PyTorch tensors are matched by identity *and*
    a fingerprint of their metadata re-read through their own attributes
    (``_foreign.guard``): an in-place change makes the entry miss. The entry
    also carries what the ordering needs: the launch's accesses, the fixed
    producer streams of its arrays, readers of the changeable ones (CuPy's
    and PyTorch's current streams), and the ledger stamp under which the
    accesses were last checked.
    """

    __slots__ = (
        "access",
        "checks",
        "go",
        "kernel",
        "label",
        "match",
        "nargs",
        "params",
        "readers",
        "refs",
        "scalars",
        "stamp",
        "streams",
    )

    def __init__(
        self,
        args: tuple[Any, ...],
        array_idx: tuple[int, ...],
        scalar_idx: tuple[int, ...],
        kernel: Any,
        params: tuple[Any, ...],
        access: Access,
        facts: tuple[Facts, ...],
        guards: dict[int, Guard],
        label: str,
        go: Callable[[], None],
        make_match: Callable[..., Callable[[tuple[Any, ...]], bool]] | None = None,
    ) -> None:
        self.kernel = kernel
        self.params = params
        self.go = go
        self.access = access
        self.label = label
        self.nargs = len(args)
        ref = weakref.ref
        self.refs = tuple([(i, ref(args[i])) for i in array_idx])
        self.scalars = tuple(
            [(i, type(args[i]), args[i], signed_zero(args[i])) for i in scalar_idx]
        )
        self.checks = tuple([(i, g[0], g[1]) for i, g in guards.items()])
        fixed = [
            f.stream
            for i, f in zip(array_idx, facts, strict=True)
            if f.stream is not None and i not in guards
        ]
        self.streams: tuple[int | None, ...] = tuple(dict.fromkeys(fixed))
        self.readers = tuple(dict.fromkeys(g[2] for g in guards.values()))
        self.stamp: object = None
        #: ``match(args)``: the plan's generated matcher where no argument needs a metadata
        #: fingerprint (Numba arrays and scalars), else the general loop below.
        self.match: Callable[[tuple[Any, ...]], bool] = self.matches
        if make_match is not None and not self.checks:
            values = [x for _, kind, value, sign in self.scalars for x in (kind, value, sign)]
            self.match = make_match(*[r for _, r in self.refs], *values)

    def matches(self, args: tuple[Any, ...]) -> bool:
        """Same array objects (alive, unchanged metadata) and equal scalars of the same type."""
        if len(args) != self.nargs:
            return False
        for i, ref in self.refs:
            if ref() is not args[i]:
                return False
        for i, kind, value, sign in self.scalars:
            a = args[i]
            if type(a) is not kind or a != value:
                return False
            if sign is not None and zero_sign(a) != sign:
                return False  # -0.0 against 0.0: equal, yet another argument
        if self.checks:
            try:
                for i, fingerprint, value in self.checks:
                    if fingerprint(args[i]) != value:
                        return False
            except Exception:  # noqa: BLE001 - e.g. a tensor turned sparse: check again
                return False
        return True


@final
class LaunchPlan:
    """Everything a launch needs that the arguments do not change."""

    __slots__ = (
        "_cfg",
        "_cufuncs",
        "_dispatch",
        "_fast_check",
        "_array_idx",
        "_key_of",
        "_make_match",
        "_core_launch",
        "_direct",
        "_default_layouts",
        "_memo",
        "_own_reader",
        "_quiet",
        "_roles",
        "_scalar_idx",
        "_seen",
        "_sstate",
        "_vec_align",
        "_stream",
        "_stream_obj",
        "aligns",
        "block",
        "capacity",
        "covers",
        "device_id",
        "expect",
        "grid",
        "kernel",
        "run_layouts",
        "name",
        "needs_env",
        "shared_mem",
    )

    def __init__(
        self,
        kernel: Kernel[Any],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_mem: int,
        stream: Any,
        device_id: int,
        own_reader: Callable[[], int | None] | None = None,
    ) -> None:
        self.kernel = kernel
        self.name = kernel.name
        # The producer-stream reader that gives this plan's own stream (a plan on CuPy's or
        # PyTorch's current stream, picked per launch by PreparedLaunch): memoized launches
        # skip it, since that producer stream is the launch stream by construction.
        self._own_reader = own_reader
        self.grid = grid
        self.block = block
        # The dynamic shared memory each launch gets: the caller's plus the contract's
        # tile window (tile_shared), where the kernel's tiles live.
        self.shared_mem = shared_mem + tile_window(kernel)
        self.device_id = device_id
        # Per parameter: (param, typestr expected, itemsize) -- dtype compared as a string.
        self.expect = tuple(
            (p, p.dtype.str if p.is_array else "", p.dtype.itemsize) for p in kernel.params
        )
        #: Per parameter: the alignment its elements' loads and stores assume (1: none).
        self.aligns = tuple(element_alignment(p.dtype) if p.is_array else 1 for p in kernel.params)
        bound = kernel.bound
        self.needs_env = bool(bound and bound.per_launch)
        self.covers = bound.covers if bound else None
        self.capacity = self._capacity()
        self._cufuncs: dict[tuple[str, ...], Any] = {}
        # Recently checked argument sets (ping-pong buffers hit too), by array identities.
        self._memo: dict[tuple[int, ...], _Memo] = {}
        self._seen: dict[tuple[int, ...], None] = {}
        self._default_layouts = tuple("C" for p in kernel.params if p.kind == "in")
        self._array_idx = tuple(i for i, p in enumerate(kernel.params) if p.is_array)
        self._scalar_idx = tuple(i for i, p in enumerate(kernel.params) if not p.is_array)
        self._key_of = key_function(self._array_idx)
        self._make_match = matcher_factory(len(kernel.params), self._array_idx, self._scalar_idx)
        self._core_launch: Any = None
        self._direct = False
        # Per array parameter: (is it an output, its name) -- for the access sets.
        # (An Accumulate is written too: its atomics change it.)
        self._roles = tuple((p.kind in ("out", "acc"), p.name) for p in kernel.params if p.is_array)
        # The latest producer-stream tuple that needed no wait (all the launch stream).
        self._quiet: tuple[int | None, ...] = ()
        # Inputs compiled as "C16" where the launch finds them aligned for 16-byte runs (a
        # kernel that fills shared tiles from them: lowering._runaligned).
        self.run_layouts = run_layouts(kernel)
        self._fast_check = build_fast_check(self, check_devices=several_devices())
        # Inputs read in runs with vec.load: (array position, param, bytes its data pointer
        # and row pitch must be a multiple of). Checked after the generated checker too.
        self._vec_align = vec_alignment(kernel)
        if self._vec_align:
            self._fast_check = _aligned_fast_check(self._fast_check, self._vec_align)
        self._stream = stream
        self._stream_obj = stream
        # The ledger's state of the launch stream (fixed at prepare).
        self._sstate = LEDGER.state(stream_handle(stream), device_id)
        if SIMULATOR:
            self._dispatch = kernel._get_dispatcher()
            self._cfg = None
        else:
            self._stream = core_stream(stream)
            cluster = kernel.contract.cluster if kernel.contract else None
            self._cfg = launch_config(
                grid,
                block,
                self.shared_mem,  # with the tile window: every launch path carries it
                tuple(cluster) if cluster is not None else None,  # type: ignore[arg-type]
                bool(kernel.contract and kernel.contract.cooperative),
            )
            self._dispatch = None
            self._core_launch = core_launcher()
            # Memoized launches call cuLaunchKernel with parameters packed once (plain
            # launches; clusters and cooperative launches keep cuda.core's cuLaunchKernelEx).
            self._direct = cluster is None and not (kernel.contract and kernel.contract.cooperative)

    def _capacity(self) -> tuple[int, ...] | None:
        """How many elements of the ``covers`` parameter the launch's threads can own."""
        if self.covers is None:
            return None
        param = next(p for p in self.kernel.params if p.name == self.covers)
        g, b = self.grid, self.block
        tile = out_tile(self.kernel, param.name)
        if tile is not None and tile[0] in TENSOR_CORE_TILES:
            # Written through a tensor-core tile: a block owns a block tile, its whole warps
            # (warpgroups) the rectangles (rows) of it (host/_tilecover).
            return tensor_core_capacity(tile[0], tile[1], g, b)
        if tile is not None:
            # Written through an output tile: a thread owns its tile's elements (tile_1d:
            # n a thread along the launch's threads; tile_2d and tile_2d_strided: tm x tn a
            # thread, rows along y and columns along x, as the witnesses of those spaces).
            ctor, sizes = tile
            if ctor == "thread.tile_1d":
                return (g[0] * b[0] * g[1] * b[1] * g[2] * b[2] * sizes[0],)
            return (g[1] * b[1] * sizes[0], g[0] * b[0] * sizes[1])
        if param.space in ("Index2D", "Index3D") or (param.kind == "in" and param.ndim > 1):
            # One thread per element along each axis: the array's last axis follows
            # x, the one before y, then z (rows follow y; 3D: (z, y, x)).
            return tuple(g[axis] * b[axis] for axis in reversed(range(param.ndim)))
        if param.space in ROW_SPACES:
            # A row per block (warp) of a 1D launch; the stride walks every column. A
            # launch that is not 1D owns nothing (the witnesses are invalid on the device).
            return row_capacity(param.space, g, b)
        threads = g[0] * b[0] * g[1] * b[1] * g[2] * b[2]
        if param.space == "Columns":
            # A thread per column, in every row: the rows are the kernel's choice.
            return (UNBOUNDED, threads)
        blocks = g[0] * g[1] * g[2]
        if param.space == "PerBlock":
            return (blocks,)
        if param.space == "PerWarp":
            return (blocks * ((b[0] * b[1] * b[2] + 31) // 32),)
        return (threads,)

    # ------------------------------------------------------------------ per launch

    def launch(self, args: tuple[Any, ...], known: tuple[Any, Any] | None = None) -> int:
        """Check the arguments and launch; returns the launch's ledger number (0: unrecorded).

        ``known`` is (a producer-stream reader, the value it gave for this launch), read
        already by the caller (``PreparedLaunch`` reads CuPy's / PyTorch's current stream
        to pick the plan): the memoized path uses the value instead of reading it again.
        """
        if RECORDING[0]:
            recorder = current_recorder()
            if recorder is not None:
                recorder.add(self, args, self.checked(args))
                return 0
        if several_devices():
            self._check_current_device()
        key = None
        if len(args) == len(self.expect):
            key = self._key_of(args)
            memo = self._memo.get(key)
            if memo is not None and memo.match(args):
                # Same array objects with the same metadata and equal scalars as a recent
                # checked launch: every check would give the same answer.
                return self._launch_memo(memo, known)
        return self._launch_checked(args, key)

    def memo_for(self, args: tuple[Any, ...]) -> _Memo | None:
        """The memo entry of exactly these arguments where their identity settles every
        check (Numba arrays and scalars: no metadata fingerprint), else None."""
        if len(args) != len(self.expect):
            return None
        memo = self._memo.get(self._key_of(args))
        if memo is None or memo.checks or not memo.match(args):
            return None
        return memo

    def launch_bound(self, args: tuple[Any, ...], memo: _Memo) -> int:
        """Launch ``args``, whose memo entry ``memo`` (``memo_for(args)``) the caller holds
        together with the arguments themselves (``BoundLaunch``): no key, no match."""
        if RECORDING[0] and current_recorder() is not None:
            return self.launch(args)
        if several_devices():
            self._check_current_device()
        return self._launch_memo(memo, None)

    def _check_current_device(self) -> None:
        current = current_device()
        if current != self.device_id:
            check_device(self.name, self.device_id, current, ())

    def _launch_memo(self, memo: _Memo, known: tuple[Any, Any] | None) -> int:
        """A memoized launch: its producer streams, the ordering, the recorded launch."""
        streams: tuple[int | None, ...] = memo.streams
        if memo.readers:
            if known is None:
                streams = streams + tuple([read() for read in memo.readers])
            else:
                kread, kvalue = known
                streams = streams + tuple(
                    [kvalue if read is kread else read() for read in memo.readers]
                )
        led = LEDGER
        if led.mode is OFF:  # no ledger: nothing to order, nothing to lock
            if streams and led.cai_sync and streams != self._quiet:
                with led.lock:
                    self._sync(led, self._sstate, streams)
            memo.go()
            return 0
        s = self._sstate
        lock = led.lock
        lock.acquire()  # (not `with`: half the cost on this path)
        try:
            if led.solo is s:  # every unfinished launch is on this stream
                if streams and led.cai_sync and streams != self._quiet:
                    self._sync(led, s, streams)
                memo.go()
                seq = led.seq + 1  # Ledger.tick, inlined
                led.seq = s.tail = seq
                return seq
            if memo.stamp is not led.stamp or led.current is not s:
                led.before(s, memo.access, memo, self.name, self.device_id)
            if streams and led.cai_sync and streams != self._quiet:
                self._sync(led, s, streams)
            memo.go()
            return led.after(s, memo, self._stream_obj)
        finally:
            lock.release()

    def checked(self, args: tuple[Any, ...]) -> Checked:
        """Every argument check (the generated checker, else the general loop that raises)."""
        checked = self._fast_check(args)
        if checked is None:  # some check failed: the general loop raises the precise error
            checked = self._check(args)
        return checked

    def access(self, facts: tuple[Facts, ...]) -> Access:
        """The launch's accesses: each non-empty array's bytes, written or read."""
        return tuple(
            [
                (f.lo, f.hi, out, name)
                for f, (out, name) in zip(facts, self._roles, strict=True)
                if f.size
            ]
        )

    def _launch_checked(self, args: tuple[Any, ...], key: tuple[int, ...] | None) -> int:
        checked = self._fast_check(args)
        if checked is None:  # some check failed: the general loop raises the precise error
            checked = self._check(args)
        layouts, params, stable, facts, named_streams = checked
        if SIMULATOR:
            kernel = None
            params = args
        else:
            cufunc = self._cufuncs.get(layouts)
            if cufunc is None:
                cufunc = self._compile_for(layouts)
            kernel = cufunc.kernel
        led = LEDGER
        s = self._sstate
        if named_streams and led.cai_sync:
            streams: tuple[int | None, ...] = tuple([f.stream for f in facts])
            if streams == self._quiet:
                streams = ()
        else:
            streams = ()
        if led.mode is OFF:  # no ledger: nothing to order, nothing to lock
            if streams:
                with led.lock:
                    self._sync(led, s, streams)
            if SIMULATOR:
                self._simulate(params)
            else:
                self._core_launch(self._stream, self._cfg, kernel, *params)
            seq = 0
        else:
            lock = led.lock
            lock.acquire()
            try:
                if led.solo is s:  # every unfinished launch is on this stream: record no access
                    if streams:
                        self._sync(led, s, streams)
                    if SIMULATOR:
                        self._simulate(params)
                    else:
                        self._core_launch(self._stream, self._cfg, kernel, *params)
                    seq = led.seq + 1  # Ledger.tick, inlined
                    led.seq = s.tail = seq
                else:
                    seq = self._ordered_launch(s, kernel, params, facts, streams)
            finally:
                lock.release()
        if key is not None and not SIMULATOR:
            seen = self._seen
            if key not in seen:  # first sighting: remembered, not memoized (see _remember)
                _evict_oldest(seen)
                seen[key] = None
            else:
                self._remember(key, args, kernel, params, facts, stable)
        return seq

    def _ordered_launch(
        self,
        s: StreamState,
        kernel: Any,
        params: tuple[Any, ...],
        facts: tuple[Facts, ...],
        streams: tuple[int | None, ...],
    ) -> int:
        """Order (ledger, producer streams), launch and record; the ledger lock is held."""
        led = LEDGER
        access = self.access(facts)
        led.before(s, access, None, self.name, self.device_id)
        if streams:
            self._sync(led, s, streams)
        if SIMULATOR:
            self._simulate(params)
        else:
            self._core_launch(self._stream, self._cfg, kernel, *params)
        return led.after(s, (self.name, access), self._stream_obj)

    def _sync(self, led: Any, s: StreamState, streams: tuple[int | None, ...]) -> None:
        """Wait for the producer streams (lock held); remember a tuple that needed no wait."""
        if not led.sync_producers(s, streams, self.device_id) and _thread_free(streams):
            self._quiet = streams

    def _remember(  # called on a set's second sighting
        self,
        key: tuple[int, ...],
        args: tuple[Any, ...],
        kernel: Any,
        params: tuple[Any, ...],
        facts: tuple[Facts, ...],
        stable: bool,
    ) -> None:
        """Memoize an argument set from its second checked launch on.

        Sets that never repeat (or repeat too rarely to stay) cost no entry.
        Numba device arrays are matched by identity; CuPy arrays and PyTorch
        tensors by identity and a metadata fingerprint; anything else is
        never memoized.
        """
        guards: dict[int, Guard] = {}
        if not stable:
            for i in self._array_idx:
                g = guard(args[i])
                if g is not None:
                    guards[i] = g
                elif type(args[i]) is not device_array_type():
                    return
        go = self._direct and direct_launcher(
            kernel, params, self._stream, self.grid, self.block, self.shared_mem
        )
        if not go:
            go = partial(self._core_launch, self._stream, self._cfg, kernel, *params)
        try:
            memo = _Memo(
                args,
                self._array_idx,
                self._scalar_idx,
                kernel,
                params,
                self.access(facts),
                facts,
                guards,
                self.name,
                go,
                self._make_match,
            )
        except TypeError:  # an array type that cannot be weakly referenced: not memoized
            return
        if self._own_reader is not None:
            memo.readers = tuple([r for r in memo.readers if r is not self._own_reader])
        _evict_oldest(self._memo)
        self._memo[key] = memo

    def compiled_kernel(self, layouts: tuple[str, ...]) -> Any:
        """The loaded kernel of the specialization for these input layouts (None: simulator)."""
        if SIMULATOR:
            return None
        cufunc = self._cufuncs.get(layouts)
        if cufunc is None:
            cufunc = self._compile_for(layouts)
        return cufunc.kernel

    def _simulate(self, args: tuple[Any, ...]) -> None:
        simulate_launch(
            self._dispatch,
            self.grid,
            self.block,
            self.shared_mem,
            args,
            self.name,
            cooperative=bool(self.kernel.contract and self.kernel.contract.cooperative),
        )

    def _check(self, args: tuple[Any, ...]) -> Checked:
        """Every argument check, in order; raises the first failure's error.

        Returns (input layouts, packed kernel parameters, all arrays cacheable,
        each array's facts, does any array name a producer stream).
        """
        name = self.name
        expect = self.expect
        if len(args) != len(expect):
            raise ArgumentTypeError(
                f"kernel {name!r} takes {len(expect)} arguments "
                f"({', '.join(p.name for p, _, _ in expect)}), got {len(args)}",
                kernel=name,
                actual=len(args),
                limit=len(expect),
            )
        params: list[Any] = []
        ranges: list[tuple[int, int, str, bool]] = []
        layouts: list[str] = []
        env: dict[str, Any] = {}
        shapes: dict[str, tuple[int, ...]] = {}
        memoizable = True
        devices: list[tuple[str, int | None]] = []
        all_facts: list[Facts] = []
        for (param, typestr, itemsize), align, obj in zip(expect, self.aligns, args, strict=True):
            if param.kind == "scalar":
                params += self._scalar(param, obj)
                env[param.name] = obj
                continue
            facts = array_facts(obj, param, name, itemsize)
            memoizable = memoizable and facts.stable
            shape = facts.shape
            if facts.typestr != typestr or len(shape) != param.ndim:
                self._wrong_array(param, facts.typestr, shape)
            if param.dtype.names is not None and record_dtype(obj) != param.dtype:
                self._wrong_record(param, obj)
            if align > 1 and unaligned(facts, align):
                self._unaligned(param, facts, align)
            if param.kind in ("out", "acc"):
                if not facts.c_contiguous or facts.readonly:
                    self._bad_output(param, facts)
            else:
                layouts.append(input_layout(facts, itemsize, self.run_layouts))
            if facts.size:
                ranges.append((facts.lo, facts.hi, param.name, param.kind in ("out", "acc")))
                if facts.device is not None:
                    devices.append((param.name, facts.device))
            shapes[param.name] = shape
            params += facts.packed
            all_facts.append(facts)
        if devices:
            check_device(name, self.device_id, None, devices)
        if len(ranges) > 1:
            self._check_aliasing(ranges)
        if self.needs_env:
            bound = self.kernel.bound
            assert bound is not None
            env.update(shapes)
            env.update(launch_env(self.grid, self.block))
            bound.check_requires(env)
        if self.capacity is not None:
            self._check_covers(shapes[self.covers])  # type: ignore[index]
        if self._vec_align:
            self._check_vec_alignment(all_facts)
        named = any(f.stream is not None for f in all_facts)
        return tuple(layouts), tuple(params), memoizable, tuple(all_facts), named

    def _check_vec_alignment(self, facts: list[Facts]) -> None:
        for pos, param, need in self._vec_align:
            f = facts[pos]
            bad = misaligned(f, need)
            if bad is None:
                continue
            what, seen = bad
            raise ArgumentTypeError(
                f"kernel {self.name!r} reads input {param!r} in {need}-byte runs "
                f"(simtsafe.vec.load), but its {what} {seen:#x} is not a multiple of {need}: "
                "every run would take the slow element path. Pass an array whose data pointer "
                f"and row pitch in bytes are multiples of {need} (a fresh allocation is; a view "
                "starting at an offset or a row length not a multiple of the run may not be: "
                "copy it, or pad the rows; or declare vec_alignment='any' in the kernel's "
                "contract to run such launches on the element path)",
                kernel=self.name,
                actual=seen,
                limit=need,
            )

    def scalar_packer(self, param: Param) -> Callable[[Any], Any]:
        """Check and pack one scalar argument (raises ArgumentTypeError)."""
        return lambda obj: self._scalar(param, obj)

    def extent(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The ``covers`` parameter's extent per axis of the launch capacity."""
        capacity = self.capacity
        assert capacity is not None
        if len(capacity) == len(shape):
            return shape
        size = 1
        for n in shape:
            size *= n
        return (size,)

    @property
    def core_stream(self) -> Any:
        """The cuda.core stream launches go to (the user's object on the simulator)."""
        return self._stream

    @property
    def stream_object(self) -> Any:
        """The stream this plan launches on, as given (None: the default stream)."""
        return self._stream_obj

    @property
    def stream_state(self) -> Any:
        """The ordering ledger's state of the launch stream."""
        return self._sstate

    @property
    def config(self) -> Any:
        """The cuda.core launch configuration (None on the simulator)."""
        return self._cfg

    @property
    def array_indices(self) -> tuple[int, ...]:
        """Positions of the array parameters."""
        return self._array_idx

    def max_active_clusters(self) -> int:
        """How many clusters of this launch's shape can be resident at once (GPU only)."""
        cufunc = self._cufuncs.get(self._default_layouts) or self._compile_for(
            self._default_layouts
        )
        return max_active_clusters(cufunc, self._cfg, self._stream)

    def _compile_for(self, layouts: tuple[str, ...]) -> Any:
        from ._limits import check_function, device_limits

        spec = self.kernel.specialize(layouts)
        cufunc = compiled_function(spec.numba_kernel)
        check_function(self.kernel, cufunc, self.block, self.shared_mem, device_limits())
        self._cufuncs[layouts] = cufunc
        return cufunc

    def _scalar(self, param: Param, obj: Any) -> tuple[Any, ...]:
        """Check one scalar argument against the scalar table and pack it (ABI order)."""
        kind = scalar_kind(param.dtype)
        assert kind is not None  # refused at decoration otherwise
        if not kind.admits(obj):
            raise ArgumentTypeError(
                f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation}, got "
                f"{type(obj).__name__} {obj!r}. Pass {_ACCEPTS[kind.accepts]} (or "
                f"np.{param.dtype.name}(...))",
                kernel=self.name,
                argument=param.name,
                actual=type(obj).__name__,
            )
        precision = kind.other_precision(obj)
        if precision is not None:
            raise ArgumentTypeError(
                f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation}, got "
                f"np.{obj.dtype.name}({obj!s}): {precision}, and simtsafe does not convert numpy "
                f"scalars behind your back. Pass np.{param.dtype.name}(...) (convert where the "
                f"value is made), or annotate the parameter np.{obj.dtype.name}",
                kernel=self.name,
                argument=param.name,
                actual=obj,
                limit=str(param.dtype),
            )
        problem = kind.out_of_range(obj)
        if problem is not None:
            limit: Any = None
            if param.dtype.kind in "iu":
                info = np.iinfo(param.dtype)
                limit = (int(info.min), int(info.max))
            else:
                limit = float(np.finfo(param.dtype).max)
            raise ArgumentTypeError(
                f"kernel {self.name!r}: argument {param.name!r} = {obj} {problem}. Pass a value "
                f"that fits, or declare the parameter with a wider type",
                kernel=self.name,
                argument=param.name,
                actual=obj,
                limit=limit,
            )
        if SIMULATOR:
            # A numpy scalar cast safely (float32 into a float64 parameter) runs as the
            # annotated type, as on the GPU; Python scalars stay as given.
            if isinstance(obj, np.generic) and obj.dtype != param.dtype:
                return (param.dtype.type(obj),)
            return (obj,)
        return kind.pack(obj)

    def _bad_output(self, param: Param, facts: Facts) -> None:
        if not facts.c_contiguous:
            raise ArgumentTypeError(
                f"kernel {self.name!r}: output {param.name!r} must be C-contiguous (got strides "
                f"{facts.strides} for shape {facts.shape}); pass a contiguous array (e.g. "
                "numba.cuda.device_array(shape, dtype))",
                kernel=self.name,
                argument=param.name,
                actual=facts.strides,
            )
        raise ArgumentTypeError(
            f"kernel {self.name!r}: output {param.name!r} is a read-only array; pass a writable one",
            kernel=self.name,
            argument=param.name,
        )

    def _wrong_record(self, param: Param, obj: Any) -> None:
        got = record_dtype(obj)
        raise ArgumentTypeError(
            f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation} with "
            f"the record dtype {param.dtype}, got "
            + (
                f"the record dtype {got}"
                if got is not None
                else "an array whose record layout "
                "cannot be read (no .dtype, no 'descr' in its __cuda_array_interface__)"
            )
            + ". Pass an array of exactly that dtype (same fields, types, offsets)",
            kernel=self.name,
            argument=param.name,
            actual=str(got),
            limit=str(param.dtype),
        )

    def _unaligned(self, param: Param, facts: Facts, align: int) -> None:
        what, seen = unaligned(facts, align) or ("data pointer", facts.ptr)
        raise ArgumentTypeError(
            f"kernel {self.name!r}: argument {param.name!r} ({param.dtype}) has its {what} at "
            f"{seen:#x}, not a multiple of {align} bytes, the alignment the compiled code's "
            "loads and stores of its elements assume (a misaligned access faults on the GPU). "
            "Pass an array whose data pointer and strides are multiples of "
            f"{align} (a fresh allocation is; a view made at a byte offset may not be: copy it)",
            kernel=self.name,
            argument=param.name,
            actual=seen,
            limit=align,
        )

    def _wrong_array(self, param: Param, typestr: str, shape: tuple[int, ...]) -> None:
        got = f"{len(shape)}D {dtype_name(typestr)}"
        want = f"{param.ndim}D {param.dtype.name}"
        raise ArgumentTypeError(
            f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation} "
            f"({want}), got a {got} array of shape {shape}. Pass a {want} device array "
            + (
                "(simtsafe.counter() makes one)"
                if param.annotation.startswith("Counter")
                else "(convert with .astype / reshape before copying to the device)"
            ),
            kernel=self.name,
            argument=param.name,
            actual=got,
            limit=want,
        )

    def _check_aliasing(self, ranges: list[tuple[int, int, str, bool]]) -> None:
        for i, (lo1, hi1, n1, out1) in enumerate(ranges):
            for lo2, hi2, n2, out2 in ranges[i + 1 :]:
                if (out1 or out2) and lo1 < hi2 and lo2 < hi1:
                    out, other = (n1, n2) if out1 else (n2, n1)
                    raise AliasingError(
                        f"kernel {self.name!r}: output {out!r} overlaps the memory of argument "
                        f"{other!r} (bytes [{lo1:#x}, {hi1:#x}) and [{lo2:#x}, {hi2:#x})); an "
                        "output must not alias any other argument. Pass separate buffers (copy "
                        "the input first if you meant to update in place)",
                        kernel=self.name,
                        argument=out,
                        other=other,
                    )

    def _grid_advice(self, space: str | None, axis: int, n: int) -> str:
        """The grid that covers ``n`` elements along ``axis`` of the ``covers`` output."""
        b = self.block
        threads = b[0] * b[1] * b[2]
        if space == "PerBlock":
            return f"Prepare with {n} blocks (one element a block: grid={n})"
        if space == "PerWarp":
            warps = -(-threads // 32)
            return (
                f"Prepare with grid=simtsafe.cover({n}, {warps}) (= {-(-n // warps)}) blocks of "
                f"{threads} threads (one element a warp, {warps} warps a block)"
            )
        assert self.covers is not None and self.capacity is not None
        tile = out_tile(self.kernel, self.covers)
        ndim = len(self.capacity)
        if ndim == 1:
            each = threads * (tile[1][0] if tile is not None else 1)
            return (
                f"Prepare with grid=simtsafe.cover({n}, {each}) (= {-(-n // each)}) blocks of "
                f"{threads} threads"
                + (f" ({tile[1][0]} elements a thread)" if tile is not None else "")
            )
        dim = ndim - 1 - axis  # the last axis follows x, the one before y, then z
        each = b[dim] * (tile[1][axis] if tile is not None else 1)
        return (
            f"Prepare with grid.{'xyz'[dim]} = simtsafe.cover({n}, {each}) (= {-(-n // each)}) "
            f"(axis {axis} follows {'xyz'[dim]}: block.{'xyz'[dim]} = {b[dim]}"
            + (f", a tile of {tile[1][axis]} along it" if tile is not None else "")
            + ")"
        )

    def _covers_space(self) -> str | None:
        return next(p.space for p in self.kernel.params if p.name == self.covers)

    def _check_covers(self, shape: tuple[int, ...]) -> None:
        capacity = self.capacity
        assert capacity is not None
        for axis, (n, cap) in enumerate(zip(self.extent(shape), capacity, strict=True)):
            space = self._covers_space()
            if n > cap and space in ROW_SPACES:
                assert self.covers is not None and space is not None
                raise CoverageError(
                    row_coverage_message(self.name, self.covers, space, self.grid, self.block, n),
                    kernel=self.name,
                    argument=self.covers,
                    axis=axis,
                    actual=n,
                    limit=cap,
                )
            assert self.covers is not None
            tile = out_tile(self.kernel, self.covers) if n > cap else None
            if tile is not None and tile[0] in TENSOR_CORE_TILES:
                raise CoverageError(
                    tensor_core_coverage_message(
                        self.name, self.covers, *tile, self.grid, self.block, axis, n, cap
                    ),
                    kernel=self.name,
                    argument=self.covers,
                    axis=axis,
                    actual=n,
                    limit=cap,
                )
            if n > cap:
                raise CoverageError(
                    f"kernel {self.name!r} must cover every element of {self.covers!r} by its "
                    f"launch contract, but the launch owns {cap} along axis {axis} and "
                    f"{self.covers!r} has {n}. {self._grid_advice(space, axis, n)}. (covers "
                    "counts what a thread owns: one element a witness, a tile's elements "
                    "where the kernel writes the output through thread.tile_1d / tile_2d / "
                    "tile_2d_strided, a block tile a block where it writes it through "
                    "ss.mma.out_tile / ss.wgmma.out_tile; one a block of a PerBlock output, "
                    "one a warp of a PerWarp one.)",
                    kernel=self.name,
                    argument=self.covers,
                    axis=axis,
                    actual=n,
                    limit=cap,
                )


def out_tile(kernel: Any, name: str) -> tuple[str, tuple[int, ...]] | None:
    """The ``thread.tile_*`` constructor and static sizes through which the kernel writes
    output ``name`` (``decoration._rewrite``), or None."""
    try:
        tiles: dict[str, tuple[str, tuple[int, ...]]] = kernel._freeze().analysis.out_tiles
    except AttributeError:
        return None
    return tiles.get(name)


def vec_alignment(kernel: Any) -> tuple[tuple[int, str, int], ...]:
    """(array position, param name, bytes) for each input the kernel reads with vec.load
    whose alignment the launch checks (none with the contract's ``vec_alignment="any"``)."""
    contract = getattr(kernel, "contract", None)
    if contract is not None and contract.vec_alignment == "any":
        return ()
    try:
        runs: dict[str, frozenset[int]] = kernel._freeze().analysis.vec_runs
    except AttributeError:
        return ()
    out = []
    arrays = [p for p in kernel.params if p.is_array]
    for pos, p in enumerate(arrays):
        ns = runs.get(p.name)
        if ns:
            out.append((pos, p.name, max(ns) * p.dtype.itemsize))
    return tuple(out)


def run_layouts(kernel: Any) -> bool:
    """Whether the kernel fills shared tiles asynchronously (its inputs then get the layout
    code ``"C16"`` where aligned: ``_argfacts.input_layout``); never on the simulator."""
    if SIMULATOR:
        return False
    try:
        return "shared.fill_async" in kernel._freeze().analysis.api_used
    except AttributeError:
        return False


def misaligned(f: Facts, need: int) -> tuple[str, int] | None:
    """("data pointer" | "row pitch", its value) when it is not a multiple of ``need``."""
    if not f.size:
        return None
    if f.ptr % need:
        return "data pointer", f.ptr
    if len(f.strides) == 2 and f.shape[0] > 1 and f.strides[0] % need:
        return "row pitch", f.strides[0]
    return None


def _aligned_fast_check(
    fast: Callable[[tuple[Any, ...]], Checked | None], align: tuple[tuple[int, str, int], ...]
) -> Callable[[tuple[Any, ...]], Checked | None]:
    """The generated checker, refusing (None: the general loop raises) a misaligned run input."""

    def check(args: tuple[Any, ...]) -> Checked | None:
        checked = fast(args)
        if checked is None:
            return None
        facts = checked[3]
        for pos, _, need in align:
            if misaligned(facts[pos], need) is not None:
                return None
        return checked

    return check
