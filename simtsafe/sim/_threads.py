"""Simulated CUDA threads and blocks: coordinates, scheduling state, vector clock.

Each ``SimThread`` is also the runtime (``simtsafe.lowering._simrt``) of the
OS thread that runs it, so simtsafe's simulator twins read its geometry.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..lowering import _simrt
from ._memory import Buffer, RecArray
from ._report import Location, ThreadRef

if TYPE_CHECKING:
    from ._sched import Replay

__all__ = [
    "EXITED",
    "RUNNABLE",
    "WAIT_ACTIVE",
    "WAIT_BAR",
    "WAIT_GRID",
    "WAIT_WARP",
    "Block",
    "Dim3",
    "Halt",
    "SimThread",
]

RUNNABLE: Final = 0
WAIT_BAR: Final = 1
WAIT_WARP: Final = 2
WAIT_ACTIVE: Final = 3
WAIT_GRID: Final = 4
EXITED: Final = 5


class Dim3(NamedTuple):
    x: int
    y: int
    z: int


class Halt(BaseException):
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
        "spinning",
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
        self.spinning = False  # yielded after SPIN_STEPS accesses without synchronizing
        self.wait: Any = None
        self.result: Any = None
        self.base: dict[int, int] = _EMPTY
        self.own = 0
        self.rel: tuple[dict[int, int], int] | None = None
        self.acquired: dict[tuple[int, int], dict[int, int]] = {}
        self.exit_site: Location = replay.def_site
        #: call site -> (the function call's frame, the thread's local array made there)
        self.locals: dict[Any, tuple[Any, RecArray]] = {}

    # The runtime seam (simtsafe.lowering._simrt) for code running in this thread.

    def geometry(self) -> _simrt.Geometry:
        r = self.replay
        return (tuple(self.blk.bidx), tuple(self.tidx), tuple(r.block), tuple(r.grid))

    def barrier(self, site: Location | None) -> None:
        self.replay.barrier("syncthreads", None, site or self.replay.site())

    def warp_sync(self, mask: int, site: Location | None) -> None:
        self.replay.warp_op("syncwarp", mask, None, 0, 32, site or self.replay.site())

    def warp_exchange(self, mask: int, call: str, site: Location) -> None:
        self.replay.warp_op(call, mask, None, 0, 32, site)

    def defined(self, value: Any, what: str) -> Any:
        return self.replay.defined(value, what)

    def grid_sync(self, site: Location | None) -> None:
        self.replay.grid_sync(site or self.replay.site())

    def shared_array(self, shape: Any, dtype: Any, site: Location | None) -> Any:
        frame = self.replay.user_frame()
        key = site or (id(frame.f_code), frame.f_lasti)  # by identity (sim._device)
        return self.replay.shared_array(shape, dtype, key)

    def local_array(self, shape: Any, dtype: Any, site: Any, call: Any) -> Any:
        return self.replay.local_array(shape, dtype, site, call)

    def record_read(self, array: Any, index: Any, site: Location | None) -> None:
        if isinstance(array, RecArray):
            array[index]  # noqa: B018 - the read is recorded by the array

    def record_write(self, array: Any, index: Any, site: Location | None) -> None:
        if isinstance(array, RecArray):
            e = array.locate(index)
            if e is not None:
                self.replay.access(array, e, 1)

    def leader_write(self, space: str, valid: bool) -> None:
        self.replay.leader_write(self, space, valid, self.replay.site())

    def atomic(self, array: Any, index: Any, op: str, update: Any) -> Any:
        if isinstance(array, RecArray):
            from ._device import recorded_atomic

            return recorded_atomic(self.replay, array, index, op, update)
        old = array[index]  # one simulated thread runs at a time: nothing interleaves
        array[index] = update(old)
        return old


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
