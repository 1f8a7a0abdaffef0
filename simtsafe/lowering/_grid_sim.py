"""Cooperative launches on Numba's simulator: every block at once, and a real grid barrier.

Numba's simulator runs the blocks of a launch one after another, so its
``cuda.cg.this_grid().sync()`` can only be a block barrier: a second phase
that reads what other blocks wrote before the sync reads stale memory. A
launch prepared with ``cooperative=True`` runs here instead: one OS thread
per CUDA thread of the whole grid, all started together, each with its own
block's shared memory; ``this_grid().sync()`` goes through the runtime seam
(``_simrt.grid_sync``) to a barrier that releases once every thread of the
grid waits at it.

Block barriers keep the semantics of Numba's simulator (a barrier releases
once every thread of the block that has not exited waits at it). A launch
that can no longer progress -- some threads exited, or wait at a block
barrier, while the others wait at the grid sync (on the GPU it hangs) --
stops with a ``SafetyError`` naming both sites instead of hanging.

Invariant: every counter of a launch (``_Launch``, ``_Block``) is read and
written only with the launch's condition held.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from typing import Any, Final

import numpy as np

from .._errors import SafetyError

__all__ = ["run_cooperative"]

Site = tuple[str, int]

_PKG: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIB: Final = _PKG + "lib" + os.sep  # simtsafe.lib's kernels: kernel code, not machinery


class _Abort(BaseException):
    """Ends a simulated thread waiting at a barrier after the launch failed."""


def _user_site() -> Site | None:
    """(file, line) of the innermost frame of kernel code (not simtsafe's, not Numba's)."""
    f: types.FrameType | None = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        own = name.startswith(_PKG) and not name.startswith(_LIB)
        if not own and f"{os.sep}numba" not in name:
            return (name, f.f_lineno)
        f = f.f_back
    return None


class _Shared:
    """``cuda.shared`` of a cooperative launch: each block its own arrays.

    (The simulator's own allocates one array per source line for the whole
    launch, which is right only when blocks run one after another.)
    """

    def array(self, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        caller = sys._getframe(1)
        thread: Any = threading.current_thread()
        return thread._manager.shared_array(
            shape, dtype, (caller.f_code.co_filename, caller.f_lineno)
        )


class _GridGroup:
    def sync(self) -> None:
        from . import _simrt

        caller = sys._getframe(1)
        _simrt.grid_sync((caller.f_code.co_filename, caller.f_lineno))


class _CG:
    """``cuda.cg`` of a cooperative launch."""

    def this_grid(self) -> _GridGroup:
        return _GridGroup()


class _Block:
    """One block's barrier state and shared memory (the ``_manager`` of its threads)."""

    def __init__(self, launch: _Launch, grid: tuple[int, ...], block: tuple[int, ...]) -> None:
        self.launch = launch
        self._grid_dim = grid
        self._block_dim = block
        self.live = int(np.prod(block))
        self.waiting = 0  # threads at this block's barrier
        self.generation = 0
        self.site: Site | None = None  # where the first waiter waits
        self.block_state = np.zeros(block, dtype=np.bool_)
        self._arrays: dict[Site, Any] = {}
        self._dynamic = np.zeros(launch.shared_mem, dtype=np.byte)
        self._lock = threading.Lock()

    def shared_array(self, shape: Any, dtype: Any, site: Site) -> Any:
        from numba.cuda import types
        from numba.cuda.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        if shape == 0:  # dynamic shared memory: every such array aliases the same bytes
            count = self._dynamic.size // np.dtype(dtype).itemsize
            return np.frombuffer(self._dynamic.data, dtype=dtype, count=count)
        with self._lock:
            array = self._arrays.get(site)
            if array is None:
                array = self._arrays[site] = np.empty(shape, dtype)
        return array


class _Thread(threading.Thread):
    """One CUDA thread of a cooperative launch, as the simulator's kernel API expects it."""

    def __init__(self, fn: Any, args: tuple[Any, ...], block: _Block, bidx: Any, tidx: Any) -> None:
        super().__init__(daemon=True, name=f"simtsafe-coop-{tuple(bidx)}-{tuple(tidx)}")
        self._fn = fn
        self._fn_args = args
        self._manager = block
        self.blockIdx = bidx
        self.threadIdx = tidx
        dims = block._block_dim
        self.thread_id = tidx.x + dims[0] * (tidx.y + dims[1] * tidx.z)
        self.exit_site: Site | None = None

    def run(self) -> None:
        launch = self._manager.launch
        try:
            self._fn(*self._fn_args)
        except _Abort:
            pass
        except BaseException as exc:  # the kernel's error: the launch re-raises it
            launch.fail(self, exc)
        finally:
            launch.exited(self)

    def __str__(self) -> str:
        return f"block {tuple(self.blockIdx)} thread {tuple(self.threadIdx)}"

    # The block barriers of the simulator's kernel API (FakeCUDAModule calls these).

    def syncthreads(self) -> None:
        self._manager.launch.block_barrier(self, _user_site())

    def _vote(self, value: Any) -> np.ndarray[Any, Any]:
        state = self._manager.block_state
        tidx = self.threadIdx
        state[tidx.x, tidx.y, tidx.z] = bool(value)
        self.syncthreads()
        votes = state.copy()
        self.syncthreads()
        return votes

    def syncthreads_count(self, value: Any) -> int:
        return int(np.count_nonzero(self._vote(value)))

    def syncthreads_and(self, value: Any) -> int:
        return 1 if np.all(self._vote(value)) else 0

    def syncthreads_or(self, value: Any) -> int:
        return 1 if np.any(self._vote(value)) else 0

    # The runtime seam (_simrt) reaches the grid barrier here.

    def grid_sync(self, site: Site | None) -> None:
        self._manager.launch.grid_barrier(self, site)


class _Launch:
    """The barrier bookkeeping of one cooperative launch."""

    def __init__(self, name: str, total: int, shared_mem: int) -> None:
        self.name = name
        self.total = total
        self.shared_mem = shared_mem
        self.cond = threading.Condition()
        self.exits = 0
        self.waiting = 0  # threads at any barrier (block or grid)
        self.at_grid = 0
        self.generation = 0
        self.grid_site: Site | None = None
        self.blocks: list[_Block] = []
        self.error: tuple[BaseException, _Thread | None] | None = None
        self.exited_thread: _Thread | None = None

    # ------------------------------------------------------------------ barriers

    def block_barrier(self, t: _Thread, site: Site | None) -> None:
        blk = t._manager
        with self.cond:
            self._check()
            blk.waiting += 1
            self.waiting += 1
            if blk.site is None:
                blk.site = site
            generation = blk.generation
            self._progress()
            while blk.generation == generation and self.error is None:
                self.cond.wait()
            self._check()

    def grid_barrier(self, t: _Thread, site: Site | None) -> None:
        with self.cond:
            self._check()
            self.at_grid += 1
            self.waiting += 1
            if self.grid_site is None:
                self.grid_site = site
            generation = self.generation
            self._progress()
            while self.generation == generation and self.error is None:
                self.cond.wait()
            self._check()

    def exited(self, t: _Thread) -> None:
        with self.cond:
            self.exits += 1
            if self.exited_thread is None:
                self.exited_thread = t
            t._manager.live -= 1
            self._progress()

    def fail(self, t: _Thread, exc: BaseException) -> None:
        with self.cond:
            if self.error is None:
                self.error = (exc, t)
            self.cond.notify_all()

    def _check(self) -> None:
        if self.error is not None:
            raise _Abort

    def _progress(self) -> None:
        """Release what can be released; report a launch that cannot go on (lock held)."""
        released = False
        if self.at_grid and self.at_grid == self.total:
            self.waiting -= self.at_grid
            self.at_grid = 0
            self.grid_site = None
            self.generation += 1
            released = True
        for blk in self.blocks:
            if blk.waiting and blk.waiting == blk.live:
                self.waiting -= blk.waiting
                blk.waiting = 0
                blk.site = None
                blk.generation += 1
                released = True
        if released:
            self.cond.notify_all()
            return
        alive = self.total - self.exits
        if self.at_grid and self.waiting == alive and self.error is None:
            self.error = (self._stuck(), None)
            self.cond.notify_all()

    def _stuck(self) -> SafetyError:
        where = self.grid_site
        line = f" (line {where[1]})" if where else ""
        blocked = next((b for b in self.blocks if b.waiting), None)
        if blocked is not None:
            other = f" line {blocked.site[1]}" if blocked.site else ""
            cause = (
                f"{blocked.waiting} thread(s) of a block wait at a block barrier{other} while "
                f"{self.at_grid} wait at the grid sync{line}"
            )
        else:
            t = self.exited_thread
            cause = (
                f"{self.exits} thread(s) exited (the first: {t}) while the other "
                f"{self.at_grid} wait at the grid sync{line}"
            )
        return SafetyError(
            f"kernel {self.name!r}: {cause}; every thread of a cooperative launch must reach "
            "each grid sync (on the GPU this launch hangs). simtsafe.sim.check(...) reports "
            "the threads and both source lines",
            kernel=self.name,
            rule="grid-sync",
            filename=where[0] if where else None,
            lineno=where[1] if where else None,
        )


def _kernel_args(dispatcher: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments as kernel code on the simulator sees them (its device-array wrappers)."""
    from numba.cuda.simulator.cudadrv.devicearray import (
        FakeCUDAArray,
        FakeWithinKernelCUDAArray,
    )

    if getattr(dispatcher, "extensions", None):
        raise TypeError("a cooperative launch on the simulator takes no argument extensions")
    out: list[Any] = []
    for arg in args:
        if isinstance(arg, np.ndarray) and arg.ndim > 0 or isinstance(arg, np.void):
            arg = FakeCUDAArray(arg)  # the simulator's device memory is host memory
        out.append(FakeWithinKernelCUDAArray(arg) if isinstance(arg, FakeCUDAArray) else arg)
    return tuple(out)


def run_cooperative(
    dispatcher: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    args: tuple[Any, ...],
    kernel: str,
) -> None:
    """Run a cooperative launch of a simulator kernel: all blocks at once, a real grid sync.

    Raises:
        SafetyError: the launch cannot go on (a divergent grid sync).
        Exception: what the kernel raised in a simulated thread, as the simulator
            re-raises it (``tid=[...] ctaid=[...]: message``).
    """
    from numba.cuda.simulator.kernel import _push_kernel_context
    from numba.cuda.simulator.kernelapi import Dim3, FakeCUDAModule, swapped_cuda_module

    fn = dispatcher.py_func
    nthreads = block[0] * block[1] * block[2]
    launch = _Launch(kernel, nthreads * grid[0] * grid[1] * grid[2], shared_mem)
    module = FakeCUDAModule(grid, block, shared_mem)
    module._cg = _CG()
    module._shared = _Shared()
    kernel_args = _kernel_args(dispatcher, args)
    threads: list[_Thread] = []
    for bpoint in np.ndindex(*grid):
        blk = _Block(launch, grid, block)
        launch.blocks.append(blk)
        for tpoint in np.ndindex(*block):
            threads.append(_Thread(fn, kernel_args, blk, Dim3(*bpoint), Dim3(*tpoint)))
    with _push_kernel_context(module), swapped_cuda_module(fn, module):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if launch.error is None:
        return
    exc, thread = launch.error
    if thread is None:
        raise exc
    prefix = f"tid={list(thread.threadIdx)} ctaid={list(thread.blockIdx)}"
    try:
        raised = type(exc)(f"{prefix}: {exc}")
    except Exception:  # an exception class that takes other arguments
        raised = RuntimeError(f"{prefix}: {type(exc).__name__}: {exc}")
    raise raised.with_traceback(exc.__traceback__)
