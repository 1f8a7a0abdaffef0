"""The replay: simulated CUDA threads run one at a time, in a fixed order, under a baton.

Each simulated thread runs in its own OS thread, but exactly one of them
runs at any moment: the holder of the baton. A thread runs until it
reaches a synchronization point (a block barrier, a warp collective,
``activemask``, a grid sync, or its end); it then picks the next thread to
run and hands the baton over. The order is fixed (thread-id order within a
block; blocks one after another), so a replay never depends on the OS
scheduler and the same inputs give the same report.

When no thread of a block can run, the scheduler resolves what they wait
for, in this order:

1. ``activemask``: lanes waiting there get the mask of the lanes of their
   warp waiting at the same call (the lanes that would be converged);
2. warp collectives that cannot complete (a lane named in the mask exited
   or waits at a block barrier): a ``warp_mask`` finding, then the lanes
   that did arrive are released together;
3. block barriers: released when every live thread waits at one; threads
   at different barriers, at a grid sync, or exited while others wait give a
   ``barrier_divergence`` finding, and the waiters are released anyway.

A warp collective completes as soon as every lane named in the masks of
its group has arrived. A block whose live threads all wait at a grid sync
is parked and the next block starts; when every block is parked or done,
the grid sync is resolved the same way. So a replay never hangs on a
divergent barrier: it reports it and goes on.

Invariant: only the baton holder reads or writes replay state (the main
thread only sets ``stop``); every handoff releases exactly one thread's lock.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
import types
from collections import deque
from typing import Any, Final, NamedTuple

import numpy as np

from ..lowering import _simrt
from ._findings import Collector
from ._hb import MemoryModel, join
from ._memory import LOCAL, SHARED, Buffer, RecArray
from ._report import Location, ThreadRef
from ._warp import FULL_MASK, WarpWait, compute

__all__ = ["Dim3", "Replay", "SimThread"]

RUNNABLE: Final = 0
WAIT_BAR: Final = 1
WAIT_WARP: Final = 2
WAIT_ACTIVE: Final = 3
WAIT_GRID: Final = 4
EXITED: Final = 5

#: Stack of each simulated thread's OS thread (kernel code is shallow).
STACK_BYTES: Final = 512 * 1024

_PKG: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Dim3(NamedTuple):
    x: int
    y: int
    z: int


class _Halt(BaseException):
    """Unwinds a simulated thread when the replay stops early (not an ``Exception``)."""


class SimThread:
    """One simulated CUDA thread: coordinates, scheduling state, vector clock."""

    __slots__ = (
        "acquired",
        "base",
        "blk",
        "exit_site",
        "gid",
        "lane",
        "locals",
        "ltid",
        "os",
        "own",
        "ref",
        "rel",
        "replay",
        "result",
        "sem",
        "state",
        "tidx",
        "wait",
        "wid",
    )

    def __init__(self, replay: Replay, blk: Block, ltid: int, tidx: Dim3) -> None:
        self.replay = replay
        self.blk = blk
        self.ltid = ltid
        self.tidx = tidx
        self.gid = blk.index * replay.nthreads + ltid
        self.lane = ltid % 32
        self.wid = ltid // 32
        self.ref = ThreadRef(tuple(blk.bidx), tuple(tidx))  # type: ignore[arg-type]
        self.sem = threading.Lock()
        self.sem.acquire()  # Invariant: locked while the thread may not run
        self.os: threading.Thread | None = None
        self.state = RUNNABLE
        self.wait: Any = None
        self.result: Any = None
        self.base: dict[int, int] = _EMPTY
        self.own = 0
        self.rel: tuple[dict[int, int], int] | None = None
        self.acquired: dict[tuple[int, int], dict[int, int]] = {}
        self.exit_site: Location = replay.def_site
        self.locals: dict[Any, RecArray] = {}

    # The runtime seam (simtsafe.lowering._simrt) for code running in this thread.

    def geometry(self) -> _simrt.Geometry:
        r = self.replay
        return (tuple(self.blk.bidx), tuple(self.tidx), tuple(r.block), tuple(r.grid))

    def barrier(self, site: Location | None) -> None:
        self.replay.barrier("syncthreads", None, site or self.replay.site())

    def warp_sync(self, mask: int, site: Location | None) -> None:
        self.replay.warp_op("syncwarp", mask, None, 0, 32, site or self.replay.site())

    def shared_array(self, shape: Any, dtype: Any, site: Location | None) -> Any:
        frame = self.replay.user_frame()
        key = site or (frame.f_code, frame.f_lasti)
        return self.replay.shared_array(shape, dtype, key)

    def record_read(self, array: Any, index: Any, site: Location | None) -> None:
        if isinstance(array, RecArray):
            array[index]  # noqa: B018 - the read is recorded by the array

    def record_write(self, array: Any, index: Any, site: Location | None) -> None:
        if isinstance(array, RecArray):
            e = array.locate(index)
            if e is not None:
                self.replay.access(array, e, 1)


_EMPTY: dict[int, int] = {}


class Block:
    """The threads of one block and what they share."""

    __slots__ = (
        "bidx",
        "dynamic",
        "index",
        "live",
        "runnable",
        "shared",
        "threads",
        "warp_waiting",
        "warps",
    )

    def __init__(self, index: int, bidx: Dim3) -> None:
        self.index = index
        self.bidx = bidx
        self.threads: list[SimThread] = []
        self.warps: list[list[SimThread]] = []
        self.runnable: deque[SimThread] = deque()
        self.shared: dict[Any, RecArray] = {}
        self.dynamic: Buffer | None = None
        self.warp_waiting: list[int] = []
        self.live = 0


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


class Replay(MemoryModel):
    """One checked launch: its threads, memory, findings and the scheduler."""

    def __init__(
        self,
        fn: types.FunctionType,
        *,
        name: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_mem: int,
        max_steps: int,
        timeout: float,
    ) -> None:
        self.fn = fn
        self.args: list[Any] = []
        self.name = name
        self.grid = Dim3(*grid)
        self.block = Dim3(*block)
        self.shared_mem = shared_mem
        self.step_limit = max_steps
        self.timeout = timeout
        self.def_site: Location = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
        self.nthreads = block[0] * block[1] * block[2]
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.findings = Collector()
        self.steps = 0
        self.stop: str | None = None
        self.error: tuple[BaseException, SimThread | None] | None = None
        self.cur: SimThread = None  # type: ignore[assignment]
        self._pending = {}
        self._internal: dict[types.CodeType, bool] = {}
        self.next_block = 0
        self.active: list[Block] = []
        self.parked: list[Block] = []
        self.first_exit: SimThread | None = None  # of a block that finished
        self.all_threads: list[SimThread] = []
        self.done = threading.Event()
        self.tearing = False
        self.barriers = 0
        self.grid_syncs = 0
        self.warp_ops = 0
        self.const_arrays: dict[Any, RecArray] = {}

    # ------------------------------------------------------------------ where kernel code is

    def user_frame(self) -> types.FrameType:
        """The innermost frame of kernel code (not simtsafe's own)."""
        f: types.FrameType | None = sys._getframe(1)
        internal = self._internal
        while f is not None:
            code = f.f_code
            flag = internal.get(code)
            if flag is None:
                flag = internal[code] = code.co_filename.startswith(_PKG)
            if not flag:
                return f
            f = f.f_back
        return sys._getframe(0)

    def site(self) -> Location:
        """(file, line) of the kernel code running now."""
        f: types.FrameType | None = sys._getframe(1)
        internal = self._internal
        while f is not None:
            code = f.f_code
            flag = internal.get(code)
            if flag is None:
                flag = internal[code] = code.co_filename.startswith(_PKG)
            if not flag:
                return (code.co_filename, f.f_lineno)
            f = f.f_back
        return ("<unknown>", 0)

    def _halt(self) -> None:
        if self.stop is None:
            self.stop = (
                f"step limit reached after {self.step_limit} steps (memory accesses and "
                "synchronizations); the kernel may spin forever, or needs a larger max_steps "
                "(--max-steps)"
            )
        raise _Halt

    # ------------------------------------------------------------------ memory spaces

    def shared_array(self, shape: Any, dtype: Any, key: Any) -> RecArray:
        blk = self.cur.blk
        arr = blk.shared.get(key)
        if arr is not None:
            return arr
        dims = _shape(shape)
        dt = as_dtype(dtype)
        site = self.site()
        if dims == (0,):
            if blk.dynamic is None:
                blk.dynamic = Buffer(
                    "shared",
                    SHARED,
                    np.zeros(self.shared_mem, np.uint8),
                    dynamic=True,
                    decl=site,
                )
            arr = RecArray.over(self, blk.dynamic, dt)
        else:
            arr = RecArray.over(self, Buffer("shared", SHARED, np.zeros(dims, dt), decl=site))
        blk.shared[key] = arr
        return arr

    def local_array(self, shape: Any, dtype: Any, key: Any) -> RecArray:
        t = self.cur
        arr = t.locals.get(key)
        if arr is None:
            buf = Buffer("local", LOCAL, np.zeros(_shape(shape), as_dtype(dtype)), decl=self.site())
            arr = t.locals[key] = RecArray.over(self, buf)
        return arr

    # ------------------------------------------------------------------ synchronization points

    def _wait(self, state: int, wait: Any) -> Any:
        t = self.cur
        self.steps += 1
        if self.stop is not None or self.steps > self.step_limit:
            self._halt()
        t.state = state
        t.wait = wait
        return self._block(t)

    def _block(self, t: SimThread) -> Any:
        self._schedule()
        t.sem.acquire()
        if self.tearing or self.stop is not None:
            raise _Halt
        return t.result

    def barrier(self, op: str, pred: Any, site: Location) -> Any:
        """A block barrier (``syncthreads`` or a predicate variant)."""
        return self._wait(WAIT_BAR, (op, site, pred))

    def grid_sync(self, site: Location) -> None:
        """``cg.this_grid().sync()``: a barrier across the whole (cooperative) grid."""
        self._wait(WAIT_GRID, ("grid_sync", site, None))

    def activemask(self, site: Location) -> int:
        return int(self._wait(WAIT_ACTIVE, ("activemask", site, None)))

    def warp_op(self, op: str, mask: Any, value: Any, arg: Any, width: int, site: Location) -> Any:
        """A warp collective: wait until every lane named in the mask arrives."""
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
                f"{n} lane(s). Name only existing lanes (e.g. a mask from ballot_sync or "
                "activemask)",
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
            if o.wait.op != first.wait.op or o.wait.mask != first.wait.mask:
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

    # ------------------------------------------------------------------ the baton

    def _pick(self) -> SimThread | None:
        while True:
            for blk in self.active:
                if blk.runnable:
                    return blk.runnable.popleft()
            for blk in list(self.active):
                if self._progress(blk):
                    return blk.runnable.popleft()
                self.active.remove(blk)
                if blk.live:
                    self.parked.append(blk)
                else:
                    self._finish_block(blk)
            if self.next_block < self.nblocks:
                self._start_block()
            elif self.parked:
                self._grid_release()
            else:
                return None

    def _schedule(self) -> None:
        """Hand the baton to the next thread (run by the current holder)."""
        try:
            nxt = self._pick()
        except BaseException as exc:  # a bug here must not hang the replay
            if self.error is None:
                self.error = (exc, None)
            self.stop = self.stop or "internal error"
            self._teardown()
            return
        if nxt is None:
            self.done.set()
            return
        self.cur = nxt
        nxt.sem.release()

    def _start_block(self) -> None:
        k = self.next_block
        self.next_block += 1
        gx, gy, _ = self.grid
        nx, ny, _ = self.block
        blk = Block(k, Dim3(k % gx, (k // gx) % gy, k // (gx * gy)))
        for ltid in range(self.nthreads):
            t = SimThread(self, blk, ltid, Dim3(ltid % nx, (ltid // nx) % ny, ltid // (nx * ny)))
            blk.threads.append(t)
        blk.warps = [blk.threads[i : i + 32] for i in range(0, self.nthreads, 32)]
        blk.warp_waiting = [0] * len(blk.warps)
        blk.live = self.nthreads
        blk.runnable.extend(blk.threads)
        old = threading.stack_size()
        threading.stack_size(STACK_BYTES)
        try:
            for t in blk.threads:
                t.os = threading.Thread(
                    target=self._worker, args=(t,), daemon=True, name=f"simtsafe-sim-{t.gid}"
                )
                t.os.start()
        finally:
            threading.stack_size(old)
        self.all_threads.extend(blk.threads)
        self.active.append(blk)

    def _finish_block(self, blk: Block) -> None:
        if self.first_exit is None and blk.threads:
            self.first_exit = blk.threads[0]
        blk.shared = {}
        blk.runnable.clear()

    def _worker(self, t: SimThread) -> None:
        _simrt.install(t)
        try:
            t.sem.acquire()
            if not self.tearing and self.stop is None:
                self._invoke(t)
        except _Halt:
            pass
        except BaseException as exc:
            if self.error is None:
                self.error = (exc, t)
            if self.stop is None:
                self.stop = "error"
        finally:
            _simrt.uninstall()
            tearing = self.tearing
            t.state = EXITED
            if not tearing:
                if self.stop is not None:
                    self._teardown()
                else:
                    t.blk.live -= 1
                    self._schedule()

    def _invoke(self, t: SimThread) -> None:
        frames: list[types.FrameType] = []

        def capture(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "call":
                frames.append(frame)
                sys.setprofile(None)

        sys.setprofile(capture)
        try:
            self.fn(*self.args)
        finally:
            sys.setprofile(None)
        if frames:
            t.exit_site = (frames[0].f_code.co_filename, frames[0].f_lineno)

    def _teardown(self) -> None:
        """Stop the replay: wake every thread so that it unwinds, and finish."""
        self.tearing = True
        for t in self.all_threads:
            if t.state != EXITED:
                try:
                    t.sem.release()
                except RuntimeError:  # already released (cannot happen; be safe)
                    pass
        self.done.set()

    # ------------------------------------------------------------------ driving

    def run(self) -> float:
        """Replay the launch from the calling (main) thread; the time it took."""
        start = time.perf_counter()
        deadline = start + self.timeout
        self._schedule()
        injected = stopped_at = 0.0
        # How long a stopped replay may take to reach a point where it sees `stop`.
        grace = min(2.0, max(0.2, self.timeout))
        try:
            while not self.done.wait(0.05):
                now = time.perf_counter()
                if self.stop is None and now > deadline:
                    self.stop = (
                        f"time limit of {self.timeout:g} s reached; the kernel may spin forever, "
                        "or needs a larger timeout"
                    )
                if self.stop is not None:
                    stopped_at = stopped_at or now
                    if not injected and now > stopped_at + grace and self.cur is not None:
                        # The running thread makes no access that would see `stop`: interrupt it.
                        ident = self.cur.os.ident if self.cur.os is not None else None
                        if ident is not None:
                            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                                ctypes.c_ulong(ident), ctypes.py_object(_Halt)
                            )
                        injected = now
                    if injected and now > injected + 5 * grace:
                        break  # give up on it: the threads are daemons
        except KeyboardInterrupt:
            self.stop = "interrupted"
            self.done.wait(5.0)
            raise
        for t in self.all_threads:
            if t.os is not None and t.os is not threading.current_thread():
                t.os.join(timeout=1.0)
        self.flush_uninitialized()
        return time.perf_counter() - start


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, tuple | list):
        return tuple(int(s) for s in shape)
    return (int(shape),)


def as_dtype(dtype: Any) -> np.dtype[Any]:
    """A numpy dtype from a numpy type, a dtype, a string or a Numba scalar type."""
    try:
        return np.dtype(dtype)  # type: ignore[no-any-return]
    except TypeError:
        pass
    try:
        return np.dtype(str(dtype))
    except TypeError:
        raise TypeError(f"{dtype!r} is not a dtype the checker knows") from None
