"""Uninitialized memory, reported where the undefined value is used (mixed into ``Replay``).

Shared and local memory start undefined. A load of an element no thread
wrote gives kernel code a ``Poison`` (``_poison``) with the load as its
origin; the finding is made when the value reaches a *use*:

* a condition, an index, a conversion (the poison reports these itself);
* a store into global memory: the kernel's results, which the caller reads
  (as compute-sanitizer's initcheck reports garbage reaching device memory
  the host sees);
* an argument of a barrier predicate, a warp collective, a simtsafe
  collective or accumulator, an operand an atomic compares (``defined``).

A store of an undefined value into shared or local memory is not a use: the
destination element becomes undefined with the same origin (as
MemorySanitizer's shadow propagates through memory), so a tile copied with
garbage that nobody reads is clean. A finding names the array and element
of the original load, the loading thread and line, and the using thread
and line.

A use of a value loaded from shared memory is reported at the end of the
launch unless a racing write by another thread explains the load (the
writer had not run yet): then the race is the finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._findings import Collector
from ._memory import LOCAL, SHARED, Buffer, RecArray
from ._poison import Origin, Poison
from ._report import Location

if TYPE_CHECKING:
    from ._threads import SimThread

__all__ = ["UndefinedMemory"]


class UndefinedMemory:
    """Origins of undefined values and their uses (mixed into ``Replay``)."""

    cur: SimThread
    findings: Collector
    #: (id(buffer), byte offset) -> the origins of loads of that never-written shared element
    _pending: dict[tuple[int, int], list[Origin]]
    #: uses of values loaded from shared memory, once per (origin, site of the use):
    #: (id(origin), site) -> (origin, using thread, site, how)
    _uses: dict[tuple[int, Location], tuple[Origin, SimThread, Location, str]]

    def site(self) -> Location:
        raise NotImplementedError

    # ------------------------------------------------------------------ loads and stores

    def undefined_load(self, arr: RecArray, buf: Buffer, key: int) -> Origin:
        """The origin of the running thread's load of element ``key``, which no thread wrote."""
        origin = Origin(self, buf, key, arr._isz, self.cur, self.site())
        if buf.space == SHARED:
            self._pending.setdefault((id(buf), key), []).append(origin)
        return origin

    def store_undefined(self, arr: RecArray, e: int, value: Poison) -> Any:
        """A store of an undefined value into element ``e``; the plain value to store.

        Into shared or local memory the element becomes undefined (same origin);
        into global memory -- a result of the kernel -- it is a use.
        """
        buf = arr._buf
        if buf.undefined is not None:
            buf.undefined[e * arr._isz] = value.o
        else:
            index = ", ".join(str(i) for i in buf.index_of(e * arr._isz, arr._isz))
            self.undefined_use(
                value.o, f"stored to {buf.label}[{index}] (global memory, which the caller reads)"
            )
        return value.v

    def initialize(self, arr: RecArray, e: int) -> None:
        """Mark element ``e`` written without a read (``atomic.exch`` stores a new value)."""
        buf = arr._buf
        key = e * arr._isz
        if buf.written is not None:
            buf.written[key] = 1
        if buf.undefined:
            buf.undefined.pop(key, None)

    def _explained(self, buf: Buffer, key: int, reader: SimThread) -> None:
        """A write by another thread races with ``reader``'s loads of the element."""
        for origin in self._pending.get((id(buf), key), ()):
            if origin.thread is reader:
                origin.explained = True

    # ------------------------------------------------------------------ uses

    def defined(self, value: Any, what: str) -> Any:
        """``value`` where it must be defined (a use); reports a poison, returns the value."""
        if type(value) is Poison:
            self.undefined_use(value.o, what)
            return value.v
        return value

    def undefined_use(self, origin: Origin, what: str) -> None:
        """The running thread uses a value of ``origin`` (``what``: how)."""
        t = self.cur
        site = self.site()
        if origin.buf.space == LOCAL:
            self._report_uninit(origin, t, site, what)
        else:  # shared: a race found later may explain the load
            self._uses.setdefault((id(origin), site), (origin, t, site, what))

    def flush_uninitialized(self) -> None:
        """Report the uses of values from shared memory whose loads no race explained."""
        for origin, t, site, what in self._uses.values():
            if not origin.explained:
                self._report_uninit(origin, t, site, what)
        self._uses.clear()
        self._pending.clear()

    def _report_uninit(self, origin: Origin, t: SimThread, site: Location, what: str) -> None:
        if self.findings.seen("uninitialized", origin.site, site):
            return
        buf = origin.buf
        index = origin.index
        elem = f"{buf.label}[{', '.join(str(i) for i in index)}]"
        decl = f", declared at line {buf.decl[1]}," if buf.decl is not None else ""
        user = "" if t is origin.thread else f" by {t.ref}"
        self.findings.add(
            "uninitialized",
            array=buf.label,
            index=index,
            threads=(origin.thread.ref, t.ref),
            accesses=("read", "use"),
            locations=(origin.site, site),
            message=(
                f"{elem} is read but no thread wrote it earlier in this launch ({buf.space} "
                f"memory{decl} starts undefined): the value {origin.thread.ref} read at line "
                f"{origin.site[1]} is {what}{user} at line {site[1]}"
            ),
        )
