"""The simulated-thread runtime seam: who is running, in which launch geometry.

Code that runs as a simulated CUDA thread on the CPU (the simulator twins in
``_sim``, later Tier-1 collectives) asks this module, never a particular
simulator, for the calling thread's coordinates and for its synchronization
and memory hooks. Two runtimes exist:

* Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``), the default: one
  ``threading.Thread`` per CUDA thread, coordinates on the thread object.
* ``simtsafe.sim.check``'s replay, which installs its own runtime in each of
  its worker threads for the duration of a check (thread-local, so the rest
  of the process keeps running kernels as before).

Invariant: a runtime is installed only in the OS thread that executes the
simulated CUDA thread it describes, and removed when that thread ends.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

__all__ = [
    "Geometry",
    "atomic",
    "SimRuntime",
    "barrier",
    "current",
    "defined",
    "geometry",
    "grid_sync",
    "install",
    "leader_write",
    "record_read",
    "record_write",
    "shared_array",
    "uninstall",
    "warp_exchange",
    "warp_sync",
]

#: (blockIdx, threadIdx, blockDim, gridDim), each an (x, y, z) tuple.
Geometry = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


class SimRuntime(Protocol):
    """What a simulated thread's runtime provides to device-side Python code."""

    def geometry(self) -> Geometry:
        """(blockIdx, threadIdx, blockDim, gridDim) of the calling simulated thread."""
        ...

    def barrier(self, site: tuple[str, int] | None) -> None:
        """Block barrier (``syncthreads``) reached at ``site``."""
        ...

    def warp_sync(self, mask: int, site: tuple[str, int] | None) -> None:
        """``syncwarp(mask)`` reached at ``site``."""
        ...

    def warp_exchange(self, mask: int, call: str, site: tuple[str, int]) -> None:
        """The lanes of ``mask`` meet at a simtsafe warp collective ``call`` (``warp.sum``)
        made at ``site`` (one call: its file, instruction and line).

        On the GPU the collective is shuffles: the lanes exchange values, but nothing orders
        their memory accesses (a ``syncwarp`` does); and only lanes at the same call meet.
        """
        ...

    def grid_sync(self, site: tuple[str, int] | None) -> None:
        """``cuda.cg.this_grid().sync()`` of a cooperative launch reached at ``site``."""
        ...

    def defined(self, value: Any, what: str) -> Any:
        """``value`` where it must be defined (an argument of a collective): the plain value.

        ``simtsafe.sim.check`` reports an undefined value (one loaded from memory no
        thread wrote) used there; Numba's simulator has none.
        """
        ...

    def shared_array(self, shape: Any, dtype: Any, site: tuple[Any, ...] | None) -> Any:
        """The block's shared array declared at ``site``."""
        ...

    def local_array(self, shape: Any, dtype: Any, site: Any, call: Any) -> Any:
        """The calling thread's private array made at ``site`` in the function call ``call``
        (its frame): one per thread, site and call, zero-filled when the call first makes it.

        Numba allocates a local array in the entry block of the function that makes it and
        zero-fills it there, so made in a loop it keeps the previous iteration's values.
        ``simtsafe.sim.check`` gives a recorded array whose elements are undefined until
        stored (a read of one is reported at its use).
        """
        ...

    def record_read(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        """Note a read of ``array[index]`` made outside the array's own accessors."""
        ...

    def record_write(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        """Note a write of ``array[index]`` made outside the array's own accessors."""
        ...

    def atomic(self, array: Any, index: Any, op: str, update: Any) -> Any:
        """Atomically ``array[index] = update(old)``; returns ``old`` (a recorded atomic)."""
        ...

    def leader_write(self, space: str, valid: bool) -> None:
        """A write through a leader witness of ``space`` (``PerBlock``: ``block_leader``,
        ``PerWarp``: ``warp_leader``), ``valid`` in the leader (``simtsafe.sim.check``
        reports a write that no leader ran; Numba's simulator has nothing to do)."""
        ...


_local = threading.local()


def install(runtime: SimRuntime) -> None:
    """Make ``runtime`` the calling OS thread's simulated-thread runtime."""
    _local.runtime = runtime


def uninstall() -> None:
    """Remove the calling OS thread's runtime (back to Numba's simulator)."""
    _local.runtime = None


def current() -> SimRuntime:
    """The calling thread's runtime: an installed one, else Numba's simulator."""
    runtime: SimRuntime | None = getattr(_local, "runtime", None)
    return runtime if runtime is not None else _NUMBA_SIMULATOR


def geometry() -> Geometry:
    """(blockIdx, threadIdx, blockDim, gridDim) of the calling simulated thread."""
    runtime = getattr(_local, "runtime", None)
    if runtime is not None:
        return runtime.geometry()  # type: ignore[no-any-return]
    return _NUMBA_SIMULATOR.geometry()


def barrier(site: tuple[str, int] | None = None) -> None:
    current().barrier(site)


def warp_sync(mask: int, site: tuple[str, int] | None = None) -> None:
    current().warp_sync(mask, site)


def warp_exchange(mask: int, call: str, site: tuple[str, int]) -> None:
    current().warp_exchange(mask, call, site)


def grid_sync(site: tuple[str, int] | None = None) -> None:
    current().grid_sync(site)


def defined(value: Any, what: str) -> Any:
    runtime = getattr(_local, "runtime", None)
    return value if runtime is None else runtime.defined(value, what)


def shared_array(shape: Any, dtype: Any, site: tuple[Any, ...] | None = None) -> Any:
    return current().shared_array(shape, dtype, site)


#: The sites of shared tiles that a ``tile_shared`` contract places in the launch's dynamic
#: shared memory: their own arrays on the simulator, not static shared memory on the GPU.
WINDOW_SITES: set[Any] = set()


def check_static_shared(arrays: Any) -> None:
    """Refuse a block whose static shared arrays (``arrays``: (site, bytes) of each; the
    simulator's exchange buffers of Python objects, the dynamic array and the tiles of a
    ``tile_shared`` window left out by the caller or here) add up to more than a block may
    declare on a GPU: the compiled form's check (``verify._sharedsize``), in the simulator's
    words."""
    from .._errors import SafetyError
    from ._cooprule import STATIC_SHARED_LIMIT, static_shared_advice
    from ._irform import laid_out

    # laid out in the order they are made, each at a multiple of 16 bytes (the alignment of
    # simtsafe's tiles and accumulators), as ptxas places them (attack round 26)
    total = laid_out([(n, 16) for site, n in arrays if site not in WINDOW_SITES])
    if total > STATIC_SHARED_LIMIT:
        raise SafetyError(
            f"simtsafe: the block's shared objects take {total} bytes of static shared memory; "
            + static_shared_advice(),
            rule="shared-memory",
        )


def local_array(shape: Any, dtype: Any, site: Any, call: Any) -> Any:
    return current().local_array(shape, dtype, site, call)


def record_read(array: Any, index: Any, site: tuple[str, int] | None = None) -> None:
    current().record_read(array, index, site)


def record_write(array: Any, index: Any, site: tuple[str, int] | None = None) -> None:
    current().record_write(array, index, site)


def leader_write(space: str, valid: bool) -> None:
    """A write through a leader witness ran (``SimRuntime.leader_write``)."""
    runtime = getattr(_local, "runtime", None)
    if runtime is not None:
        runtime.leader_write(space, valid)


def atomic(array: Any, index: Any, op: str, update: Any) -> Any:
    """Atomic read-modify-write of ``array[index]``: stores ``update(old)``, returns ``old``.

    Tier-1 atomics of the simulator twins (append buffers' counters, hash tables'
    keys) go through here, so that ``simtsafe.sim.check`` records them as atomics
    (which never race with each other) rather than as a read and a write.
    """
    return current().atomic(array, index, op, update)


class _NumbaSimulatorRuntime:
    """Numba's simulator: coordinates live on ``threading.current_thread()``."""

    def _thread(self) -> Any:
        t: Any = threading.current_thread()
        if getattr(t, "_manager", None) is None:
            raise RuntimeError("simtsafe witness constructors run only inside a simulated kernel")
        return t

    def geometry(self) -> Geometry:
        t = self._thread()
        manager = t._manager
        return (
            tuple(t.blockIdx),
            tuple(t.threadIdx),
            tuple(manager._block_dim),
            tuple(manager._grid_dim),
        )

    def leader_write(self, space: str, valid: bool) -> None:
        """Nothing to record: Numba's simulator reports no finding."""

    def barrier(self, site: tuple[str, int] | None) -> None:
        self._thread().syncthreads()

    def warp_exchange(self, mask: int, call: str, site: tuple[str, int]) -> None:
        """Numba's simulator orders and reports nothing: a ``syncwarp`` meeting."""
        self.warp_sync(mask, site)

    def warp_sync(self, mask: int, site: tuple[str, int] | None) -> None:
        """Wait until every lane named in ``mask`` (of this warp) has arrived.

        Numba's simulator runs each CUDA thread as an OS thread; a barrier per
        (block, warp, mask) lets warp collectives exchange values. Lanes not
        present (past the end of a partial warp) are not waited for.
        """
        t = self._thread()
        (_, tid, dims, _) = self.geometry()
        linear = tid[0] + dims[0] * (tid[1] + dims[1] * tid[2])
        threads = dims[0] * dims[1] * dims[2]
        warp = linear // 32
        present = min(32, threads - warp * 32)
        parties = bin(mask & ((1 << present) - 1)).count("1")
        if parties <= 1:
            return
        state = _block_state(t._manager)
        with state.lock:
            barrier = state.warp_barriers.get((warp, mask))
            if barrier is None:
                barrier = threading.Barrier(parties)
                state.warp_barriers[(warp, mask)] = barrier
        barrier.wait()

    def grid_sync(self, site: tuple[str, int] | None) -> None:
        """The grid barrier of a cooperative launch (``_grid_sim`` runs all blocks at once).

        Numba's simulator runs the blocks of any other launch one after another, so
        a grid sync there cannot wait for the other blocks: it is refused.
        """
        sync = getattr(self._thread(), "grid_sync", None)
        if sync is None:
            from .._errors import SafetyError

            raise SafetyError(
                "simtsafe: a grid sync ran in a launch that is not cooperative; the simulator "
                "runs a cooperative grid only for a kernel launched through kernel.prepare(...) "
                "with cooperative=True in its launch contract",
                rule="grid-sync",
            )
        sync(site)

    def shared_array(self, shape: Any, dtype: Any, site: tuple[Any, ...] | None) -> Any:
        """The block's array for ``site`` (one per block and site, zero-filled once)."""
        import numpy as np

        state = _block_state(self._thread()._manager)
        with state.lock:
            array = state.arrays.get(site)
            if array is None:
                array = np.zeros(shape, dtype)
                state.arrays[site] = array
                check_static_shared(
                    (key, a.nbytes) for key, a in state.arrays.items() if a.dtype != object
                )
        return array

    def local_array(self, shape: Any, dtype: Any, site: Any, call: Any) -> Any:
        """The simulated thread's array for ``site`` in ``call`` (zero-filled once per call)."""
        import numpy as np

        t = self._thread()
        held_by_site: dict[Any, tuple[Any, Any]] | None = getattr(t, "_ss_locals", None)
        if held_by_site is None:
            held_by_site = t._ss_locals = {}
        held = held_by_site.get(site)
        if held is None or held[0] is not call:
            held = held_by_site[site] = (call, np.zeros(shape, dtype))
        return held[1]

    def record_read(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        return None

    def defined(self, value: Any, what: str) -> Any:
        return value

    def record_write(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        return None

    def atomic(self, array: Any, index: Any, op: str, update: Any) -> Any:
        with _ATOMIC_LOCK:
            old = array[index]
            array[index] = update(old)
        return old


#: One lock for the simulator's Tier-1 atomics (the GPU's are per address; one lock is
#: coarser and as correct).
_ATOMIC_LOCK = threading.Lock()


class _BlockState:
    """Per-block storage of the Numba-simulator runtime (shared arrays, warp barriers)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.arrays: dict[Any, Any] = {}
        self.warp_barriers: dict[tuple[int, int], threading.Barrier] = {}


_STATE_LOCK = threading.Lock()


def _block_state(manager: Any) -> _BlockState:
    """The state of the block a Numba ``BlockManager`` runs (one manager per block)."""
    state = getattr(manager, "_simtsafe_state", None)
    if state is None:
        with _STATE_LOCK:
            state = getattr(manager, "_simtsafe_state", None)
            if state is None:
                state = _BlockState()
                manager._simtsafe_state = state
    return state


_NUMBA_SIMULATOR = _NumbaSimulatorRuntime()
