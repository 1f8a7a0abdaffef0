"""Synchronization points and how the scheduler resolves them (mixed into ``Replay``).

When no thread of a block can run, what its threads wait for is resolved
in this order:

1. ``activemask``: lanes waiting there get the mask of the lanes of their
   warp waiting at the same call (the lanes that would be converged);
2. warp collectives that cannot complete (a lane named in the mask exited
   or waits at a block barrier): a ``warp_mask`` finding, then the lanes
   that did arrive are released together;
3. block barriers: released when every live thread waits at one; threads
   at different barriers, at a grid sync, or exited while others wait give a
   ``barrier_divergence`` finding, and the waiters are released anyway (as
   if the exited threads had arrived, so one root cause is one finding).

A warp collective completes as soon as every lane named in the masks of
its group has arrived (checked at each arrival). A block whose live threads
all wait at a grid sync is parked; when every block is parked or done, the
grid sync is resolved the same way. A replay never hangs on a divergent
barrier: it reports it and goes on.
"""

from __future__ import annotations

from typing import Any

from ._findings import Collector
from ._hb import join
from ._report import Location
from ._threads import (
    EXITED,
    RUNNABLE,
    WAIT_ACTIVE,
    WAIT_BAR,
    WAIT_GRID,
    WAIT_WARP,
    Block,
    SimThread,
)
from ._warp import FULL_MASK, WarpWait, compute, is_exchange

__all__ = ["SyncPoints"]


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _lanes(lanes: list[int]) -> str:
    if len(lanes) > 2 and lanes == list(range(lanes[0], lanes[-1] + 1)):
        return f"{lanes[0]}-{lanes[-1]}"
    return ", ".join(str(i) for i in lanes)


class SyncPoints:
    """Barriers, warp collectives, grid sync: arrival and resolution."""

    cur: SimThread
    findings: Collector
    steps: int
    step_limit: int
    stop: str | None
    nthreads: int
    active: list[Block]
    parked: list[Block]
    all_threads: list[SimThread]
    first_exit: SimThread | None
    barriers: int
    grid_syncs: int
    warp_ops: int

    def _wait(self, state: int, wait: Any) -> Any:
        raise NotImplementedError

    def _block(self, t: SimThread) -> Any:
        raise NotImplementedError

    def _halt(self) -> None:
        raise NotImplementedError

    def _progressed(self, t: SimThread) -> None:
        raise NotImplementedError

    def defined(self, value: Any, what: str) -> Any:
        raise NotImplementedError

    def barrier(self, op: str, pred: Any, site: Location) -> Any:
        """A block barrier (``syncthreads`` or a predicate variant)."""
        if pred is not None:
            pred = self.defined(pred, f"passed as the predicate of {op}")
        return self._wait(WAIT_BAR, (op, site, pred))

    def grid_sync(self, site: Location) -> None:
        """``cg.this_grid().sync()``: a barrier across the whole (cooperative) grid."""
        self._wait(WAIT_GRID, ("grid_sync", site, None))

    def activemask(self, site: Location) -> int:
        return int(self._wait(WAIT_ACTIVE, ("activemask", site, None)))

    def warp_op(self, op: str, mask: Any, value: Any, arg: Any, width: int, site: Location) -> Any:
        """A warp collective: wait until every lane named in the mask arrives."""
        mask = self.defined(mask, f"passed as the mask of {op}")
        value = self.defined(value, f"passed as the value of {op}")
        arg = self.defined(arg, f"passed as the lane argument of {op}")
        width = self.defined(width, f"passed as the width of {op}")
        t = self.cur
        blk = t.blk
        lanes = blk.warps[t.wid]
        self.warp_ops += 1
        m = int(mask) & FULL_MASK
        bit = 1 << t.lane
        if not m & bit:
            self._warp_finding(
                t, op, site, t, op, site,
                f"lane {t.lane} of warp {t.wid} calls {op} with mask {m:#010x}, which does not "
                "name the calling lane; the mask must name every lane that makes the call",
            )  # fmt: skip
            m |= bit
        n = len(lanes)
        if m >> n:
            missing = [i for i in range(n, 32) if m >> i & 1]
            self._warp_finding(
                t, op, site, t, op, site,
                f"the mask {m:#010x} of {op} names lanes {_lanes(missing)} of warp {t.wid}, "
                f"which do not exist: the block has {self.nthreads} threads, so this warp has "
                f"{n} lane(s). Name only existing lanes (a mask computed from the lane count, "
                "or activemask())",
            )  # fmt: skip
            m &= (1 << n) - 1
        for i in _bits(m):
            o = lanes[i]
            if o.state == EXITED:
                self._warp_finding(
                    t, op, site, o, "exit", o.exit_site,
                    f"lane {i} of warp {t.wid} is named in the mask of {op} but has already "
                    f"exited (line {o.exit_site[1]}); a mask may name only lanes that make "
                    "the call",
                )  # fmt: skip
                m &= ~(1 << i)
        if width not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"{op}: width must be a power of two up to 32, got {width}")
        self.steps += 1
        if self.stop is not None or self.steps > self.step_limit:
            self._halt()
        self._progressed(t)
        t.state = WAIT_WARP
        t.wait = WarpWait(op, m, value, int(arg) if arg is not None else 0, width, site)
        blk.warp_waiting[t.wid] += 1
        if blk.warp_waiting[t.wid] >= m.bit_count():
            members = self._closure(lanes, m)
            if members is not None:
                self._warp_release(blk, t.wid, members)
        return self._block(t)

    def _closure(self, lanes: list[SimThread], m: int) -> int | None:
        """Lanes of the group ``m`` belongs to, or None while one has not arrived."""
        members = todo = m
        while todo:
            low = todo & -todo
            todo ^= low
            o = lanes[low.bit_length() - 1]
            if o.state != WAIT_WARP:
                return None
            extra = o.wait.mask & ~members
            if extra:
                members |= extra
                todo |= extra
        return members

    def _warp_release(self, blk: Block, wid: int, members: int) -> None:
        lanes = blk.warps[wid]
        group = [lanes[i] for i in _bits(members) if lanes[i].state == WAIT_WARP]
        first = group[0]
        for o in group[1:]:
            if (
                o.wait.op != first.wait.op
                or o.wait.mask != first.wait.mask
                or (is_exchange(o.wait.op) and o.wait.site != first.wait.site)
            ):
                a, b = first.wait, o.wait
                self._warp_finding(
                    first, a.op, a.site, o, b.op, b.site,
                    f"lanes {first.lane} and {o.lane} of warp {wid} meet at different warp "
                    f"collectives: {a.op} with mask {a.mask:#010x} (line {a.site[1]}) and "
                    f"{b.op} with mask {b.mask:#010x} (line {b.site[1]}); every lane named in "
                    "a mask must make the same call with the same mask",
                )  # fmt: skip
                break
        syncing = [o for o in group if o.wait.op == "syncwarp"]
        if syncing:
            join(syncing)
        compute(group)
        for o in group:
            o.state = RUNNABLE
            blk.runnable.append(o)
        blk.warp_waiting[wid] -= len(group)

    def _warp_finding(
        self, a: SimThread, aop: str, asite: Location, b: SimThread, bop: str, bsite: Location,
        message: str,
    ) -> None:  # fmt: skip
        self.findings.add(
            "warp_mask",
            array=None,
            index=None,
            threads=(a.ref, b.ref),
            accesses=(aop, bop),
            locations=(asite, bsite),
            message=message,
        )

    def _divergence(
        self, a: SimThread, aop: str, asite: Location, b: SimThread, bop: str, bsite: Location,
        message: str,
    ) -> None:  # fmt: skip
        self.findings.add(
            "barrier_divergence",
            array=None,
            index=None,
            threads=(a.ref, b.ref),
            accesses=(aop, bop),
            locations=(asite, bsite),
            message=message,
        )

    # ------------------------------------------------------------------ resolution

    def _progress(self, blk: Block) -> bool:
        """Release something a stuck block waits for; False when it is done or parked."""
        threads = blk.threads
        active = [o for o in threads if o.state == WAIT_ACTIVE]
        if active:
            masks: dict[tuple[int, Location], int] = {}
            for o in active:
                key = (o.wid, o.wait[1])
                masks[key] = masks.get(key, 0) | 1 << o.lane
            for o in active:
                o.result = masks[(o.wid, o.wait[1])]
                o.state = RUNNABLE
                blk.runnable.append(o)
            return True
        if any(blk.warp_waiting):
            self._release_stuck_warps(blk)
            return True
        bar = [o for o in threads if o.state == WAIT_BAR]
        if not bar:
            return False
        self._check_barrier(blk, bar)
        # After a reported divergence, go on as if exited threads had arrived: their
        # accesses are ordered before what follows, so the root cause is reported once
        # instead of as a cascade of races.
        join(bar + [o for o in threads if o.state == EXITED])
        op = bar[0].wait[0]
        if op != "syncthreads":
            preds = [bool(o.wait[2]) for o in bar]
            value: Any = sum(preds)
            if op == "syncthreads_and":
                value = int(all(preds))
            elif op == "syncthreads_or":
                value = int(any(preds))
        else:
            value = None
        for o in bar:
            o.result = value
            o.state = RUNNABLE
            blk.runnable.append(o)
        self.barriers += 1
        return True

    def _check_barrier(self, blk: Block, bar: list[SimThread]) -> None:
        first = bar[0]
        op, site, _ = first.wait
        for o in bar[1:]:
            if o.wait[1] != site:
                self._divergence(
                    first, op, site, o, o.wait[0], o.wait[1],
                    f"threads of block {tuple(blk.bidx)} wait at different barriers: "
                    f"{first.ref} at line {site[1]} and {o.ref} at line {o.wait[1][1]}; every "
                    "thread of a block must reach the same barriers, the same number of times "
                    "(is a barrier inside a branch or loop that not all threads take?)",
                )  # fmt: skip
                return
        for o in blk.threads:
            if o.state == WAIT_GRID:
                self._divergence(
                    first, op, site, o, "grid_sync", o.wait[1],
                    f"in block {tuple(blk.bidx)}, {first.ref} waits at {op} (line {site[1]}) "
                    f"while {o.ref} waits at the grid sync (line {o.wait[1][1]})",
                )  # fmt: skip
                return
        for o in blk.threads:
            if o.state == EXITED:
                self._divergence(
                    first, op, site, o, "exit", o.exit_site,
                    f"{o.ref} exited (line {o.exit_site[1]}) while {first.ref} and others of its "
                    f"block wait at {op} (line {site[1]}); every thread of a block must reach "
                    "each barrier (an early return before a barrier hangs or corrupts it on "
                    "the GPU)",
                )  # fmt: skip
                return

    def _release_stuck_warps(self, blk: Block) -> None:
        for wid, lanes in enumerate(blk.warps):
            while blk.warp_waiting[wid]:
                start = next(o for o in lanes if o.state == WAIT_WARP)
                members = todo = start.wait.mask | 1 << start.lane
                culprit: SimThread | None = None
                while todo:
                    low = todo & -todo
                    todo ^= low
                    o = lanes[low.bit_length() - 1]
                    if o.state != WAIT_WARP:
                        culprit = culprit or o
                        continue
                    extra = o.wait.mask & ~members
                    members |= extra
                    todo |= extra
                w = start.wait
                if culprit is not None:
                    if culprit.state == EXITED:
                        what, where, how = "exit", culprit.exit_site, "exited"
                    else:
                        what, where = culprit.wait[0], culprit.wait[1]
                        how = f"waits at {what}"
                    self._warp_finding(
                        start, w.op, w.site, culprit, what, where,
                        f"lane {start.lane} of warp {wid} waits at {w.op} with mask "
                        f"{w.mask:#010x} (line {w.site[1]}), but lane {culprit.lane}, named in "
                        f"the mask, never arrives: it {how} (line {where[1]}). Every lane named "
                        "in a mask must make the same call",
                    )  # fmt: skip
                self._warp_release(blk, wid, members)

    def _grid_release(self) -> None:
        waiters = [o for blk in self.parked for o in blk.threads if o.state == WAIT_GRID]
        first = waiters[0]
        _, site, _ = first.wait
        other = next((o for o in waiters if o.wait[1] != site), None)
        exited = next(
            (o for blk in self.parked for o in blk.threads if o.state == EXITED), self.first_exit
        )
        if other is not None:
            self._divergence(
                first, "grid_sync", site, other, "grid_sync", other.wait[1],
                f"threads wait at different grid syncs: {first.ref} at line {site[1]} and "
                f"{other.ref} at line {other.wait[1][1]}",
            )  # fmt: skip
        elif exited is not None:
            self._divergence(
                first, "grid_sync", site, exited, "exit", exited.exit_site,
                f"{exited.ref} exited (line {exited.exit_site[1]}) while {first.ref} and others "
                f"wait at the grid sync (line {site[1]}); every thread of a cooperative launch "
                "must reach each grid sync (on the GPU this hangs)",
            )  # fmt: skip
        join(waiters + [o for o in self.all_threads if o.state == EXITED])
        for o in waiters:
            o.result = None
            o.state = RUNNABLE
            o.blk.runnable.append(o)
        self.active = sorted(self.parked, key=lambda b: b.index)
        self.parked = []
        self.grid_syncs += 1
