"""Happens-before over one launch: vector clocks, shadow memory, race and init checks.

Each simulated thread ``t`` carries a vector clock as ``(t.base, t.own)``:
``t.own`` is its own component, ``t.base`` (a dict shared copy-on-write
between threads, never mutated once published) what it knows of the others.
An access by ``t`` is stamped ``(t, t.own, site)``. A prior access ``p`` is
ordered before the running thread's access iff ``p`` is by the same thread
(program order) or ``base[p.thread.gid] >= p.clock``.

What orders threads (and nothing else does):

* a block barrier joins the clocks of the threads it releases; ``syncwarp``
  joins the clocks of the lanes it releases; a cooperative grid sync joins
  every thread of the launch; each participant then increments ``own``;
* a fenced atomic: ``threadfence`` snapshots the thread's clock (and
  increments ``own``); an atomic on an element releases the last snapshot
  into the element's sync clock and acquires that clock into the thread.
  (A lenient model: the acquire side needs no fence, so the CUDA
  "last block done" pattern -- write, fence, atomic ticket -- is clean.)

Shuffles and votes exchange values, not memory: they order nothing.

Per element (global and shared memory), the shadow keeps the last plain
write, the last atomic, and the last read of each thread since that write
(enough to find a race for every racing element, as in FastTrack).
Whether an element holds a defined value is ``_uninit``'s part.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from ._findings import Collector
from ._memory import ACCESS_NAMES, ATOMIC, READ, WRITE, Buffer, RecArray
from ._report import Location

if TYPE_CHECKING:
    from ._poison import Origin
    from ._threads import SimThread

__all__ = ["Cell", "MemoryModel", "join"]

#: (thread, its clock at the access, source location)
Stamp = tuple["SimThread", int, Location]


class Cell:
    """Access history of one element: last write, last atomic, reads since the write."""

    __slots__ = ("a", "r", "w")

    def __init__(self) -> None:
        self.w: Stamp | None = None
        self.a: Stamp | None = None
        self.r: dict[int, Stamp] | None = None


def merge(into: dict[int, int], other: dict[int, int]) -> dict[int, int]:
    """A new clock: the component-wise maximum of two."""
    new = dict(into)
    get = new.get
    for k, v in other.items():
        if get(k, -1) < v:
            new[k] = v
    return new


def join(threads: list[SimThread]) -> None:
    """Synchronize ``threads`` (a barrier they all pass): each learns all the others' clocks."""
    if not threads:
        return
    bases: dict[int, dict[int, int]] = {}
    for t in threads:
        bases.setdefault(id(t.base), t.base)
    it = iter(bases.values())
    new = dict(next(it))
    for b in it:
        get = new.get
        for k, v in b.items():
            if get(k, -1) < v:
                new[k] = v
    for t in threads:
        new[t.gid] = t.own
    for t in threads:
        t.base = new
        t.own += 1


def _where(a: SimThread, b: SimThread) -> str:
    if a.blk is not b.blk:
        return (
            "threads of different blocks are ordered only by a cooperative grid sync (or a "
            "threadfence before an atomic the other thread's atomic observed)"
        )
    if a.wid == b.wid:
        return (
            "lanes of one warp are ordered only by syncwarp or a block barrier (the checker "
            "does not assume lock-step execution)"
        )
    return "no block barrier separates them"


class MemoryModel:
    """The access checks of a replay (mixed into ``Replay``)."""

    cur: SimThread
    findings: Collector
    steps: int
    step_limit: int
    yield_at: int
    stop: str | None

    def site(self) -> Location:
        raise NotImplementedError

    def undefined_load(self, arr: RecArray, buf: Buffer, key: int) -> Origin:
        raise NotImplementedError

    def _explained(self, buf: Buffer, key: int, reader: SimThread) -> None:
        raise NotImplementedError

    def _halt(self) -> None:
        raise NotImplementedError

    def _over(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ accesses

    def access(self, arr: RecArray, e: int, kind: int) -> Origin | None:
        """Record access ``kind`` by the running thread to element ``e`` of ``arr``.

        Returns the origin of the element's value when a read or an atomic finds
        it undefined (``_uninit``), else None.
        """
        self.steps += 1
        if self.stop is not None or self.steps > self.yield_at:
            self._over()
        buf = arr._buf
        key = e * arr._isz
        origin = None
        written = buf.written
        if written is not None:
            if kind == WRITE:
                written[key] = 1
                if buf.undefined:
                    buf.undefined.pop(key, None)
            elif not written[key]:
                origin = self.undefined_load(arr, buf, key)
                if kind == ATOMIC:
                    written[key] = 1
            elif buf.undefined:
                origin = buf.undefined.get(key)
        shadow = buf.shadow
        if shadow is None:
            return origin
        t = self.cur
        site = self.site()
        cell = shadow.get(key)
        if cell is None:
            cell = shadow[key] = Cell()
        base = t.base
        p = cell.w
        if p is not None and p[0] is not t and base.get(p[0].gid, -1) < p[1]:
            self._race(arr, key, p, WRITE, site, kind)
        if kind == READ:
            p = cell.a
            if p is not None and p[0] is not t and base.get(p[0].gid, -1) < p[1]:
                self._race(arr, key, p, ATOMIC, site, kind)
            reads = cell.r
            if reads is None:
                cell.r = {t.gid: (t, t.own, site)}
            else:
                reads[t.gid] = (t, t.own, site)
            return origin
        reads = cell.r
        if reads is not None:
            for p in reads.values():
                if p[0] is not t and base.get(p[0].gid, -1) < p[1]:
                    self._race(arr, key, p, READ, site, kind)
                    self._explained(buf, key, p[0])
        if kind == WRITE:
            p = cell.a
            if p is not None and p[0] is not t and base.get(p[0].gid, -1) < p[1]:
                self._race(arr, key, p, ATOMIC, site, kind)
            cell.w = (t, t.own, site)
            cell.a = None
            cell.r = None
        else:
            # Atomics on one element never race with each other; the latest one stands
            # for the earlier ones (they precede it in the element's modification order).
            cell.a = (t, t.own, site)
        return origin

    def _race(
        self, arr: RecArray, key: int, p: Stamp, pkind: int, site: Location, kind: int
    ) -> None:
        if self.findings.seen("race", p[2], site):
            return
        t = self.cur
        buf = arr._buf
        index = buf.index_of(key, arr._isz)
        elem = f"{buf.label}[{', '.join(str(i) for i in index)}]"
        if buf.space == "shared" and buf.decl is not None:
            elem += f" (the shared array declared at line {buf.decl[1]})"
        self.findings.add(
            "race",
            array=buf.label,
            index=index,
            threads=(p[0].ref, t.ref),
            accesses=(ACCESS_NAMES[pkind], ACCESS_NAMES[kind]),
            locations=(p[2], site),
            message=(
                f"the {ACCESS_NAMES[pkind]} of {elem} by {p[0].ref} and the "
                f"{ACCESS_NAMES[kind]} by {t.ref} are not ordered: {_where(p[0], t)}"
            ),
        )

    def out_of_bounds(self, arr: RecArray, idx: tuple[Any, ...], kind: int) -> Any:
        """Report an access outside ``arr``; it is skipped (a read gives 0)."""
        self.steps += 1
        if self.stop is not None or self.steps > self.yield_at:
            self._over()
        site = self.site()
        if not self.findings.seen("out_of_bounds", site, site):
            t = self.cur
            buf = arr._buf
            shown = tuple(_plain(i) for i in idx)
            negative = any(isinstance(i, int) and i < 0 for i in shown)
            what = {"shared": "shared array", "local": "local array", "const": "constant array"}
            name = what.get(buf.space, "array")
            text = ", ".join(str(i) for i in shown)
            message = (
                f"{ACCESS_NAMES[kind]} of {buf.label}[{text}] is out of bounds: the {name} "
                f"{buf.label!r} has shape {tuple(arr.shape)}"
            )
            if negative:
                message += (
                    " (a negative index is out of bounds on the GPU; Numba would silently wrap "
                    "it to the end of the array)"
                )
            self.findings.add(
                "out_of_bounds",
                array=buf.label,
                index=tuple(i if isinstance(i, int) else -1 for i in shown),
                threads=(t.ref, t.ref),
                accesses=(ACCESS_NAMES[kind], ACCESS_NAMES[kind]),
                locations=(site, site),
                message=message + "; the access was skipped",
            )
        return arr.dtype.type(0) if kind != WRITE else None

    # ------------------------------------------------------------------ fences and atomics

    def fence(self) -> None:
        """``threadfence*``: what the thread did so far is released by its next atomic."""
        t = self.cur
        t.rel = (t.base, t.own)
        t.own += 1

    def atomic_sync(self, arr: RecArray, e: int) -> None:
        """Release (after a fence) into, and acquire from, the element's sync clock."""
        buf = arr._buf
        key = e * arr._isz
        t = self.cur
        clock = buf.sync.get(key)
        if t.rel is not None:
            rbase, rown = t.rel
            new = merge(clock, rbase) if clock else dict(rbase)
            if new.get(t.gid, -1) < rown:
                new[t.gid] = rown
            buf.sync[key] = clock = new
        if clock and t.acquired.get((id(buf), key)) is not clock:
            t.acquired[(id(buf), key)] = clock
            t.base = merge(t.base, clock)


def _plain(i: Any) -> Any:
    if isinstance(i, slice):
        return i
    try:
        return operator.index(i)
    except TypeError:
        return i
