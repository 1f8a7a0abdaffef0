"""The replay: simulated CUDA threads run one at a time, in a fixed order, under a baton.

Each simulated thread runs in its own OS thread, but exactly one of them
runs at any moment: the holder of the baton. A thread runs until it
reaches a synchronization point (a block barrier, a warp collective,
``activemask``, a grid sync, or its end); it then picks the next thread to
run (``_pick``) and hands the baton over. The order is fixed (thread-id
order within a block; blocks one after another, each started when the
previous one is done or parked at a grid sync), so a replay never depends
on the OS scheduler and the same inputs give the same report. When no
thread of the running blocks can go on, ``_sync`` resolves what they wait
for; it never leaves them waiting.

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
from typing import Any, Final

import numpy as np

from ..lowering import _simrt
from ._findings import Collector
from ._hb import MemoryModel
from ._leaders import LeaderWrites
from ._memory import LOCAL, SHARED, Buffer, RecArray
from ._report import Location
from ._sync import SyncPoints
from ._threads import EXITED, Block, Dim3, Halt, SimThread
from ._uninit import UndefinedMemory

__all__ = ["Dim3", "Replay", "SimThread", "as_dtype"]

#: Stack of each simulated thread's OS thread (kernel code is shallow).
STACK_BYTES: Final = 512 * 1024

#: Memory accesses a thread may make in one turn before it yields (it may be spinning
#: on a flag that a thread of a later block sets: the next block then starts).
SPIN_STEPS: Final = 10_000
#: Blocks alive at once because of spinning threads (a long loop looks like spinning too).
SPIN_BLOCKS: Final = 8

_PKG: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: simtsafe.lib's kernels are kernel code like a user's, not simtsafe's own frames: their
#: lines name findings and key their shared arrays (two arrays on two lines are two arrays).
_LIB: Final = _PKG + "lib" + os.sep


def _internal(filename: str) -> bool:
    """A frame of simtsafe's own machinery (skipped when looking for the kernel's code)."""
    return filename.startswith(_PKG) and not filename.startswith(_LIB)


class Replay(UndefinedMemory, LeaderWrites, SyncPoints, MemoryModel):
    """One checked launch: its threads, memory, findings and the scheduler.

    (``UndefinedMemory`` comes first: the other two declare the hooks of it they call.)
    """

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
        self.yield_at = max_steps
        self.nspinning = 0
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
        self._uses = {}
        self._leaders = {}
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
                flag = internal[code] = _internal(code.co_filename)
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
                flag = internal[code] = _internal(code.co_filename)
            if not flag:
                return (code.co_filename, f.f_lineno)
            f = f.f_back
        return ("<unknown>", 0)

    def _over(self) -> None:
        """The running thread passed its turn's access budget or the step limit."""
        if self.stop is not None or self.steps > self.step_limit:
            self._halt()
        t = self.cur
        if not t.spinning:
            t.spinning = True
            self.nspinning += 1
        t.blk.runnable.append(t)
        self._block(t)

    def _progressed(self, t: SimThread) -> None:
        """``t`` reached a synchronization point or its end: it is not spinning."""
        if t.spinning:
            t.spinning = False
            self.nspinning -= 1

    def _halt(self) -> None:
        if self.stop is None:
            self.stop = (
                f"step limit reached after {self.step_limit} steps (memory accesses and "
                "synchronizations); the kernel may spin forever, or needs a larger max_steps "
                "(--max-steps)"
            )
        raise Halt

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
        _simrt.check_static_shared(
            (k, a._buf.raw.nbytes)
            for k, a in blk.shared.items()
            if not a._buf.dynamic and a._buf.raw.dtype != object
        )
        return arr

    def local_array(self, shape: Any, dtype: Any, key: Any, call: Any) -> RecArray:
        """The running thread's local array made at ``key`` (a call site) in the function
        call ``call`` (its frame), undefined until stored.

        Numba allocates a local array in the entry block of the function that makes it and
        zero-fills it there: each call of a helper has its own, and one made in a loop keeps
        the previous iteration's values (one per thread, site and call).
        """
        t = self.cur
        held = t.locals.get(key)
        if held is None or held[0] is not call:
            buf = Buffer("local", LOCAL, np.zeros(_shape(shape), as_dtype(dtype)), decl=self.site())
            held = t.locals[key] = (call, RecArray.over(self, buf))
        return held[1]

    # ------------------------------------------------------------------ synchronization points

    def _wait(self, state: int, wait: Any) -> Any:
        t = self.cur
        self.steps += 1
        if self.stop is not None or self.steps > self.step_limit:
            self._halt()
        self._progressed(t)
        t.state = state
        t.wait = wait
        return self._block(t)

    def _block(self, t: SimThread) -> Any:
        self._schedule()
        t.sem.acquire()
        if self.tearing or self.stop is not None:
            raise Halt
        return t.result

    # ------------------------------------------------------------------ the baton

    def _pick(self) -> SimThread | None:
        while True:
            t = self._next_runnable()
            if t is not None:
                return t
            # No thread can run but spinners: resolve what stuck blocks wait for.
            for blk in list(self.active):
                if blk.runnable:
                    continue  # spinners only: they may wait for another block
                if self._progress(blk):
                    return blk.runnable.popleft()
                self.active.remove(blk)
                if blk.live:
                    self.parked.append(blk)
                else:
                    self._finish_block(blk)
            spinners = next((b for b in self.active if b.runnable), None)
            if spinners is not None:
                # Spinners wait for something only another thread can do: start the next
                # block if there is room, else let them spin on (to the step limit).
                if (
                    self.next_block < self.nblocks
                    and len(self.active) + len(self.parked) < SPIN_BLOCKS
                ):
                    self._start_block()
                    continue
                return spinners.runnable.popleft()
            if self.next_block < self.nblocks:
                self._start_block()
            elif self.parked:
                self._grid_release()
            else:
                return None

    def _next_runnable(self) -> SimThread | None:
        """The first runnable thread in block order that is not spinning."""
        for blk in self.active:
            if not blk.runnable:
                continue
            if not self.nspinning:
                return blk.runnable.popleft()
            for t in blk.runnable:
                if not t.spinning:
                    blk.runnable.remove(t)
                    return t
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
        self.yield_at = min(self.step_limit, self.steps + SPIN_STEPS)
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
        self.all_threads.extend(blk.threads)  # first: a teardown must reach every started one
        old = threading.stack_size()
        threading.stack_size(STACK_BYTES)
        try:
            for t in blk.threads:
                t.os = threading.Thread(
                    target=self._worker, args=(t,), daemon=True, name=f"simtsafe-sim-{t.gid}"
                )
                try:
                    t.os.start()
                except RuntimeError as exc:  # the OS refuses more threads
                    t.os = None
                    live = sum(1 for o in self.all_threads if o.state != EXITED)
                    raise RuntimeError(
                        f"simtsafe.sim.check could not start another OS thread ({live} simulated "
                        "threads alive): the replay runs one per simulated thread of every block "
                        "alive at once (a cooperative grid sync keeps all blocks alive); check "
                        "a smaller grid"
                    ) from exc
        finally:
            threading.stack_size(old)
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
        except Halt:
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
                    self._progressed(t)
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
                                ctypes.c_ulong(ident), ctypes.py_object(Halt)
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
        self.flush_leader_writes()
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
