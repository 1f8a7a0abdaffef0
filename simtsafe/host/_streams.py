"""Stream ordering between checked launches: the ledger of who wrote and read what, where.

Launches are asynchronous and stream-ordered: two launches on one stream run
in order, two on different streams in any order unless something orders
them. The ledger records, per stream, the byte ranges each recent simtsafe
launch read and wrote (``Access``: ``(lo, hi, writes, argument)`` per
array), under a global sequence number. Before a launch on stream S it
looks for a conflicting access (same bytes, at least one write) by a launch
on another stream T that S is not yet known to be ordered after, and then

* ``ordering="auto"`` (the default): makes S wait for T -- an event recorded
  on T *now* (it completes after everything already enqueued on T,
  conservative but correct) and ``cuStreamWaitEvent`` on S; the host does
  not wait. S is then known to be after T's launches so far, and after
  everything T was after (the order is transitive).
* ``ordering="strict"``: refuses the launch with ``StreamOrderError``, naming
  both streams, both kernels, the argument and the fix.

What "known to be ordered" covers: waits the ledger inserted, CAI producer
waits (``sync_producers``), ``LaunchHandle.wait(stream=...)``, and host
waits (``LaunchHandle.wait()``/``done()``, ``simtsafe.synchronize``,
``simtsafe.to_host``). No implicit ordering is assumed -- not even the
legacy default stream's -- so an inserted wait is at worst redundant.

Cost: while every launch not known complete is on one stream S (``solo``,
auto mode only), launches on S record nothing but their sequence number --
the common single-stream program pays a lock and two stores per launch.
The first launch on another stream then treats all of S's unfinished work
as touching every byte (one conservative wait) and precise records resume.
Otherwise the check is skipped while the access set (a memo entry's, a
graph's) was already checked on its stream since the last launch on another
stream (``stamp``); a stream's records are forgotten once the host knows its
work finished; past ``RECORD_CAP`` distinct access sets a stream's records
fold into one "everything" record (conservative).

The driver calls go through ``driver`` (``simtsafe.lowering._launching`` on a
GPU, no-ops on the simulator, fakes in the unit tests); the same logic runs
everywhere, so strict mode refuses the same programs on the simulator.
Invariant: ``lock`` is held from a launch's check to its record, so the
ledger order is the enqueue order even with several host threads.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, Protocol, final

from .._errors import StreamOrderError
from ..lowering._launching import LEGACY_STREAM, PER_THREAD_STREAM, per_thread_default

__all__ = [
    "AUTO",
    "LEDGER",
    "OFF",
    "RECORD_CAP",
    "STRICT",
    "Access",
    "Ledger",
    "RecordKey",
    "StreamState",
    "described",
    "driver_handle",
    "stream_key",
    "stream_label",
]

#: A launch's array arguments' bytes: (first byte, one past the last, written?, argument name).
Access = tuple[tuple[int, int, bool, str], ...]

#: What a stream's records are keyed by: an object with ``access`` and ``label`` (a memo
#: entry, a graph: identity-keyed, cheap) or a ``(kernel, access)`` tuple (value-keyed,
#: so launches repeating the same arrays share one record).
RecordKey = Any

AUTO = "auto"
STRICT = "strict"
OFF = "off"

#: Distinct access sets remembered per stream before they fold into "everything".
RECORD_CAP = 64


class Driver(Protocol):
    def order_streams(self, waiter: int, producer: int, device_id: int) -> None: ...
    def synchronize_stream(self, handle: int) -> None: ...
    def synchronize_device(self) -> None: ...


def stream_key(handle: int, device: int) -> Hashable:
    """The ledger's identity of a stream handle on a device.

    0 is the default stream (legacy, or per-thread under cuda.bindings' PTDS
    switch) and 1 the legacy default stream, one per device; the per-thread
    default stream is one per device and host thread, so its key names both.
    """
    if handle == 0:
        handle = PER_THREAD_STREAM if per_thread_default() else LEGACY_STREAM
    if handle == LEGACY_STREAM:
        return (device, LEGACY_STREAM)
    if handle == PER_THREAD_STREAM:
        return (device, PER_THREAD_STREAM, threading.get_ident())
    return handle


def described(key: RecordKey) -> tuple[Access, str]:
    """(accesses, kernel label) of a record key."""
    if type(key) is tuple:
        return key[1], key[0]
    return key.access, key.label


def driver_handle(handle: int) -> int:
    """The handle driver calls take for ``handle`` (0 names the default stream explicitly)."""
    if handle == 0:
        return PER_THREAD_STREAM if per_thread_default() else LEGACY_STREAM
    return handle


def stream_label(key: Hashable) -> str:
    """How messages name a stream."""
    if isinstance(key, tuple):
        if len(key) == 2:
            return f"the legacy default stream (device {key[0]})"
        return f"the per-thread default stream of thread {key[2]} (device {key[0]})"
    return f"stream {key:#x}" if isinstance(key, int) else f"stream {key!r}"


@final
class StreamState:
    """What the ledger knows about one stream."""

    __slots__ = (
        "after",
        "device",
        "done",
        "handle",
        "keep",
        "key",
        "live",
        "recs",
        "tail",
        "thread",
        "wild",
    )

    def __init__(self, key: Hashable, handle: int, device: int) -> None:
        self.key = key
        self.handle = handle  # what the driver calls take (1/2 for the special streams)
        self.device = device
        self.thread = key[2] if isinstance(key, tuple) and len(key) == 3 else None
        self.keep: Any = None  # the stream object, alive while records name its handle
        # record key -> seq of the latest launch on this stream with those accesses
        self.recs: dict[RecordKey, int] = {}
        self.wild = 0  # seq of a folded record that covers all memory (0: none)
        self.tail = 0  # seq of the latest launch recorded on this stream
        self.done = 0  # the host knows launches up to this seq have completed
        # other stream's key -> this stream's later work is ordered after its seq <= value
        self.after: dict[Hashable, int] = {}
        self.live = False  # has records the host does not know to be complete


@final
class Ledger:
    """Per-stream records of recent launches and the orderings known between streams."""

    __slots__ = (
        "cai_sync",
        "current",
        "driver",
        "host_reads",
        "live",
        "lock",
        "mode",
        "seq",
        "solo",
        "stamp",
        "streams",
        "waits",
    )

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.lock = threading.Lock()
        self.seq = 0
        self.streams: dict[Hashable, StreamState] = {}
        self.live: list[StreamState] = []  # streams with records not known complete
        self.current: StreamState | None = None  # stream of the latest recorded launch
        # Auto mode: the one stream all unfinished launches are on; its launches since it
        # became solo are not recorded (only its tail), so it counts as touching everything.
        self.solo: StreamState | None = None
        # Replaced whenever the launch stream changes: an access set checked under the
        # current stamp needs no check (nothing else was recorded since).
        self.stamp = object()
        self.mode = AUTO
        self.cai_sync = True
        self.host_reads = False
        self.waits = 0  # stream waits inserted (tests and benchmarks read it)

    # ------------------------------------------------------------------ streams

    def state(self, handle: int, device: int) -> StreamState:
        """The state of the stream with this driver handle (created on first use)."""
        key = stream_key(handle, device)
        st = self.streams.get(key)
        if st is None:
            st = self.streams[key] = StreamState(key, driver_handle(handle), device)
        return st

    # ------------------------------------------------------------------ launches

    def before(self, s: StreamState, access: Access, holder: Any, kernel: str, device: int) -> None:
        """Order (or, strict, refuse) a launch on ``s`` with ``access`` after conflicting ones.

        ``holder`` (a memo entry, a graph, or None) remembers the stamp under
        which its access set was last checked. Call with ``lock`` held, when
        ``s`` is not ``solo``.
        """
        if self.solo is not None:
            self.end_solo()
        if self.current is not s:
            self.current = s
            self.stamp = object()
        elif holder is not None and holder.stamp is self.stamp:
            return
        live = self.live
        if len(live) > 1:  # latest first: a wait on it may order s after the others too
            live = sorted(live, key=_tail, reverse=True)
        for t in live:
            if t is s:
                continue
            water = s.after.get(t.key, 0)
            if t.done > water:
                water = t.done
            if t.tail <= water:
                continue
            hit = self._conflict(t, water, access)
            if hit is None:
                continue
            if self.mode == STRICT:
                raise self._refusal(s, t, access, hit, kernel)
            self._order(s, t, device)
        if holder is not None:
            holder.stamp = self.stamp

    def after(self, s: StreamState, key: RecordKey, keep: Any = None) -> int:
        """Record a launch just enqueued on ``s``; returns its sequence number.

        ``key``: see ``RecordKey``. ``keep`` (the stream object) stays
        referenced while ``s`` has records, so its handle cannot be reused by
        a new stream meanwhile. (``LaunchPlan.launch`` inlines this for memo
        hits; keep the two in step.)
        """
        seq = self.seq = self.seq + 1
        s.tail = seq
        if described(key)[0]:
            recs = s.recs
            recs[key] = seq
            if not s.live:
                self.activate(s, keep)
            if len(recs) > RECORD_CAP:
                self.fold(s)
        live = self.live
        if len(live) == 1 and live[0] is s and self.mode is AUTO and not self.host_reads:
            self.solo = s
        return seq

    def tick(self, s: StreamState) -> int:
        """Record a launch on the ``solo`` stream ``s``: only its sequence number."""
        seq = self.seq = self.seq + 1
        s.tail = seq
        return seq

    def end_solo(self) -> None:
        """Precise records resume: the solo stream's unfinished work touches everything."""
        t = self.solo
        if t is not None:
            self.solo = None
            t.wild = t.tail

    def activate(self, s: StreamState, keep: Any) -> None:
        """``s`` got its first record since the host last knew it idle."""
        s.live = True
        s.keep = keep
        self.live.append(s)

    def fold(self, s: StreamState) -> None:
        """Too many records: replace them by one that covers all memory (conservative)."""
        s.recs.clear()
        s.wild = s.tail

    def sync_producers(self, s: StreamState, streams: tuple[int | None, ...], device: int) -> bool:
        """Honour CAI v3 ``stream``: make ``s`` wait for each producer stream that is not ``s``.

        Returns whether any wait was needed: a caller may remember a tuple of
        producer streams that needed none (unless it names a per-thread
        default stream, whose identity depends on the calling thread).
        """
        waited = False
        seen: list[Hashable] = []
        for value in streams:
            if value is None:
                continue
            key = stream_key(value, device)
            if key == s.key or key in seen:
                continue
            seen.append(key)
            self.driver.order_streams(s.handle, driver_handle(value), device)
            self.waits += 1
            waited = True
            t = self.streams.get(key)
            if t is not None:  # simtsafe launches on the producer stream are covered too
                self._now_after(s, t)
        return waited

    # ------------------------------------------------------------------ known orderings

    def ordered(self, s: StreamState, t: StreamState, seq: int) -> None:
        """``s`` now waits for ``t``'s launches up to ``seq`` (an event wait done by the caller)."""
        if s is not t and s.after.get(t.key, 0) < seq:
            s.after[t.key] = seq

    def complete(self, t: StreamState, seq: int) -> None:
        """The host knows ``t``'s launches up to ``seq`` have completed."""
        if seq > t.done:
            t.done = seq
            if t.done >= t.tail:
                self._forget(t)

    def snapshot(self, device: int | None = None) -> list[tuple[StreamState, int]]:
        """(stream, latest launch) of every live stream (of one device): taken before a wait."""
        return [(t, t.tail) for t in self.live if device is None or t.device == device]

    def writers(self, lo: int, hi: int) -> list[tuple[StreamState, int, str, str]]:
        """Streams with a launch not known complete that wrote bytes in [lo, hi).

        Returns (stream, seq of that launch, kernel, argument), latest first per stream.
        """
        found = []
        for t in self.live:
            best: tuple[int, str, str] | None = None
            wild = t.tail if t is self.solo else t.wild
            if wild > t.done:
                best = (wild, "(earlier launches)", "(any)")
            for key, seq in t.recs.items():
                if seq <= t.done or (best is not None and seq <= best[0]):
                    continue
                access, kernel = described(key)
                for a_lo, a_hi, writes, name in access:
                    if writes and a_lo < hi and lo < a_hi:
                        best = (seq, kernel, name)
                        break
            if best is not None:
                found.append((t, *best))
        return found

    # ------------------------------------------------------------------ internals

    def _conflict(
        self, t: StreamState, water: int, access: Access
    ) -> tuple[tuple[int, int, bool, str], tuple[int, int, bool, str] | None, str] | None:
        """The first access of ``access`` conflicting with ``t``'s records after ``water``.

        Returns (new access, recorded access or None for the folded record, kernel).
        """
        if t.wild > water and access:
            return (access[0], None, "(earlier launches)")
        for key, seq in t.recs.items():
            if seq <= water:
                continue
            recorded, kernel = described(key)
            for lo1, hi1, w1, n1 in access:
                for lo2, hi2, w2, n2 in recorded:
                    if (w1 or w2) and lo1 < hi2 and lo2 < hi1:
                        return ((lo1, hi1, w1, n1), (lo2, hi2, w2, n2), kernel)
        return None

    def _order(self, s: StreamState, t: StreamState, device: int) -> None:
        if t.thread is not None and t.thread != threading.get_ident():
            raise StreamOrderError(
                f"a launch on {stream_label(s.key)} must be ordered after work on "
                f"{stream_label(t.key)}, but a thread cannot record an event on another "
                "thread's per-thread default stream. Launch the producer on an explicit stream, "
                "or synchronize it in its own thread first (simtsafe.synchronize())",
                stream=stream_label(s.key),
                other_stream=stream_label(t.key),
            )
        self.driver.order_streams(s.handle, t.handle, device)
        self.waits += 1
        self._now_after(s, t)

    def _now_after(self, s: StreamState, t: StreamState) -> None:
        """``s`` waits for everything enqueued on ``t`` so far (and what ``t`` waited for)."""
        after = s.after
        after[t.key] = t.tail
        for key, seq in t.after.items():
            if key != s.key and after.get(key, 0) < seq:
                after[key] = seq

    def _forget(self, t: StreamState) -> None:
        t.recs.clear()
        t.wild = 0
        # Dropping the stream object lets its handle be reused by a new stream, which
        # has waited for nothing: forget what this one waited for (at worst a redundant
        # wait later).
        t.keep = None
        t.after.clear()
        if t.live:
            t.live = False
            self.live.remove(t)
        if self.current is t:
            self.current = None
        if self.solo is t:
            self.solo = None

    def _refusal(
        self,
        s: StreamState,
        t: StreamState,
        access: Access,
        hit: tuple[tuple[int, int, bool, str], tuple[int, int, bool, str] | None, str],
        kernel: str,
    ) -> StreamOrderError:
        (lo, hi, writes, name), recorded, other = hit
        if recorded is None:
            what = "was touched by earlier launches (too many to list)"
            other_argument = None
        else:
            other_argument = recorded[3]
            verb = "wrote" if recorded[2] else "reads"
            what = f"{verb} as argument {other_argument!r} of kernel {other!r}"
        mine = "writes" if writes else "reads"
        return StreamOrderError(
            f"kernel {kernel!r} on {stream_label(s.key)} {mine} argument {name!r} (bytes "
            f"[{lo:#x}, {hi:#x})), which a launch on {stream_label(t.key)} {what}, and nothing "
            "simtsafe knows of orders the two streams (ordering='strict'). Order them first: "
            "`h = producer.launch(...); h.wait(stream=consumer_stream)` or "
            "`simtsafe.synchronize()`; or let simtsafe insert the wait (ordering='auto', the "
            "default)",
            kernel=kernel,
            argument=name,
            other=other_argument,
            other_kernel=other,
            stream=stream_label(s.key),
            other_stream=stream_label(t.key),
        )


def _tail(t: StreamState) -> int:
    return t.tail


class _LaunchingDriver:
    """The real driver calls (no-ops on the simulator)."""

    def order_streams(self, waiter: int, producer: int, device_id: int) -> None:
        from ..lowering._launching import order_streams

        order_streams(waiter, producer, device_id)

    def synchronize_stream(self, handle: int) -> None:
        from ..lowering._launching import synchronize_stream

        synchronize_stream(handle)

    def synchronize_device(self) -> None:
        from ..lowering._launching import synchronize_device

        synchronize_device()


#: The process's ledger (one per process: stream handles and device addresses are global).
LEDGER = Ledger(_LaunchingDriver())
