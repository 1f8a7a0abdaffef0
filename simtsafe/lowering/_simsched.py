"""The simulator's block scheduler without a busy loop (``NUMBA_ENABLE_CUDASIM=1``).

Numba's simulator runs each CUDA thread of a block as an OS thread, and its
``BlockManager.run`` waits for them by polling their states in a loop that never
blocks. Under the GIL that loop competes with the threads it waits for: a
thread woken from a barrier or from a warp exchange (``_simrt.warp_sync``)
waits for the poller to give up the interpreter, up to the switch interval
(5 ms) at each wake-up, so a kernel with warp collectives ran tens of
milliseconds per collective (examples/histogram_vec.py: 40 s for 3001 bytes).

``install`` replaces the loop with one that sleeps on a condition the block's
threads notify when they reach ``syncthreads`` or end. What a launch does is
unchanged: the block's barrier opens when every live thread of the block waits
at it; the first exception of a thread aborts the others (their next barrier
raises) and is re-raised by the launch, with the simulator's ``tid=[...]
ctaid=[...]`` prefix.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["install"]

#: Seconds the scheduler sleeps between looks when nothing notifies it (a safety net:
#: every state change it waits for notifies).
_POLL = 0.05


def _changed(thread: Any) -> threading.Condition:
    cond: threading.Condition = thread._manager._ss_changed
    return cond


def _syncthreads(self: Any) -> None:
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads call")
    cond = _changed(self)
    with cond:
        self.syncthreads_blocked = True
        cond.notify()
    self.syncthreads_event.wait()
    self.syncthreads_event.clear()
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads clear")


def _thread_run(original: Any) -> Any:
    def run(self: Any) -> None:
        try:
            original(self)  # records an exception in self.exception
        finally:
            cond = _changed(self)
            with cond:
                self._ss_done = True
                cond.notify()

    return run


def _abort(threads: list[Any]) -> None:
    for other in threads:
        other.abort = True
        other.syncthreads_blocked = False
        other.syncthreads_event.set()


def _block_run(block_thread: Any) -> Any:
    def run(self: Any, grid_point: Any, *args: Any) -> None:
        cond = self._ss_changed = threading.Condition()
        threads: list[Any] = []

        def target() -> None:
            self._f(*args)

        for block_point in np.ndindex(*self._block_dim):
            t = block_thread(target, self, grid_point, block_point, self._debug)
            threads.append(t)
            t.start()
        live = list(threads)
        with cond:
            while True:
                failed = next((t for t in threads if t.exception), None)
                if failed is not None:
                    _abort(threads)
                    raise failed.exception[0].with_traceback(failed.exception[1])
                live = [t for t in live if not t._ss_done]
                if not live:
                    return
                if all(t.syncthreads_blocked for t in live):
                    for t in live:
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                    continue
                cond.wait(_POLL)

    return run


def install() -> None:
    """Replace Numba's polling block scheduler (once; idempotent)."""
    from numba.cuda.simulator import kernel

    if getattr(kernel.BlockManager, "_ss_scheduler", False):
        return
    kernel.BlockThread._ss_done = False
    kernel.BlockThread.syncthreads = _syncthreads
    kernel.BlockThread.run = _thread_run(kernel.BlockThread.run)
    kernel.BlockManager.run = _block_run(kernel.BlockThread)
    kernel.BlockManager._ss_scheduler = True
