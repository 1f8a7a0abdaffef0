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
    "SimRuntime",
    "barrier",
    "current",
    "geometry",
    "install",
    "record_read",
    "record_write",
    "shared_array",
    "uninstall",
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

    def shared_array(self, shape: Any, dtype: Any, site: tuple[str, int] | None) -> Any:
        """The block's shared array declared at ``site``."""
        ...

    def record_read(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        """Note a read of ``array[index]`` made outside the array's own accessors."""
        ...

    def record_write(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        """Note a write of ``array[index]`` made outside the array's own accessors."""
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


def shared_array(shape: Any, dtype: Any, site: tuple[str, int] | None = None) -> Any:
    return current().shared_array(shape, dtype, site)


def record_read(array: Any, index: Any, site: tuple[str, int] | None = None) -> None:
    current().record_read(array, index, site)


def record_write(array: Any, index: Any, site: tuple[str, int] | None = None) -> None:
    current().record_write(array, index, site)


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

    def barrier(self, site: tuple[str, int] | None) -> None:
        self._thread().syncthreads()

    def warp_sync(self, mask: int, site: tuple[str, int] | None) -> None:
        # Numba's simulator has no warp intrinsics; its threads are not lock-stepped,
        # so there is nothing to wait for that a block barrier would not over-do.
        self._thread()

    def shared_array(self, shape: Any, dtype: Any, site: tuple[str, int] | None) -> Any:
        raise NotImplementedError(
            "shared arrays of simtsafe device features need simtsafe.sim.check's runtime; "
            "Numba's simulator allocates them only through numba.cuda.shared.array"
        )

    def record_read(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        return None

    def record_write(self, array: Any, index: Any, site: tuple[str, int] | None) -> None:
        return None


_NUMBA_SIMULATOR = _NumbaSimulatorRuntime()
