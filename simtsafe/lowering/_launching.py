"""The launch seam: every numba-cuda / cuda.core detail the host launch path needs.

The host side (``simtsafe.host``) decides *whether* a launch may happen;
this module knows *how* numba-cuda lays out the kernel's parameters and how
to reach the compiled function and the driver, so a numba-cuda upgrade
changes this file and ``_compat`` only.

Invariant: ``pack_array`` produces exactly the fields of numba-cuda's array
data model, in its order (``meminfo, parent, nitems, itemsize, data,
shape..., strides...``); ``tests/ptx/test_packing.py`` pins it against
Numba's own model.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ._compat import SIMULATOR

__all__ = [
    "ARRAY_MODEL_FIELDS",
    "compiled_function",
    "cooperative_blocks",
    "core_launcher",
    "core_stream",
    "current_device",
    "device_array_type",
    "launch_config",
    "max_active_clusters",
    "pack_array",
    "pointer_device",
    "set_max_dynamic_shared",
    "simulator_array_interface",
    "uses_grid_sync",
]

#: numba-cuda's array data model, flattened into kernel parameters in this order.
ARRAY_MODEL_FIELDS = ("meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides")


def pack_array(
    ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], size: int, itemsize: int
) -> tuple[int, ...]:
    """One array argument as the kernel's parameters (no meminfo, no parent)."""
    return (0, 0, size, itemsize, ptr, *shape, *strides)


def core_stream(stream: Any) -> Any:
    """A cuda.core stream for what ``prepare(stream=...)`` was given (0/None: default)."""
    from numba.cuda.cudadrv.driver import _to_core_stream

    return _to_core_stream(stream or 0)


def launch_config(
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    cluster: tuple[int, int, int] | None,
    cooperative: bool,
) -> Any:
    from cuda.core import LaunchConfig

    kwargs: dict[str, Any] = {"grid": grid, "block": block, "shmem_size": shared_mem}
    if cluster is not None:
        kwargs["cluster"] = tuple(cluster)
    if cooperative:
        kwargs["is_cooperative"] = True
    return LaunchConfig(**kwargs)


def core_launcher() -> Any:
    """``cuda.core.launch(stream, config, kernel, *params)``: one driver call per launch."""
    from cuda.core import launch

    return launch


def compiled_function(numba_kernel: Any) -> Any:
    """The loaded function (``.kernel``, ``.attrs``, ``.handle``) of a compiled specialization."""
    return numba_kernel._codelibrary.get_cufunc()


def uses_grid_sync(numba_kernel: Any) -> bool:
    """Does the compiled kernel synchronize the whole grid (needs a cooperative launch)?"""
    return bool(numba_kernel is not None and numba_kernel.cooperative)


def cooperative_blocks(numba_kernel: Any, block: tuple[int, int, int], shared_mem: int) -> int:
    """How many blocks of this shape a cooperative launch can keep co-resident."""
    return int(numba_kernel.max_cooperative_grid_blocks(block, shared_mem))


def max_active_clusters(cufunc: Any, config: Any, stream: Any) -> int:
    return int(cufunc.kernel.occupancy.max_active_clusters(config, stream=stream))


def set_max_dynamic_shared(cufunc: Any, nbytes: int, device_id: int) -> str | None:
    """Raise the function's dynamic shared memory limit (opt-in above 48 KiB); error text or None."""
    from cuda.bindings import driver as drv

    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    (err,) = drv.cuKernelSetAttribute(attr, nbytes, cufunc.handle, device_id)
    return None if err == drv.CUresult.CUDA_SUCCESS else str(err)


@cache
def device_array_type() -> type | None:
    """Numba's DeviceNDArray class (None on the simulator)."""
    if SIMULATOR:
        return None
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return DeviceNDArray


def simulator_array_interface(obj: Any) -> dict[str, Any] | None:
    """The host buffer's ``__array_interface__`` of a simulator device array, else None."""
    if not SIMULATOR:
        return None
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    if isinstance(obj, FakeCUDAArray):
        return obj._ary.__array_interface__  # type: ignore[no-any-return]
    return None


def pointer_device(ptr: int) -> int | None:
    """Ordinal of the device that owns device pointer ``ptr`` (None if the driver cannot tell)."""
    from cuda.bindings import driver as drv

    err, value = drv.cuPointerGetAttribute(
        drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr
    )
    return int(value) if err == drv.CUresult.CUDA_SUCCESS else None


def current_device() -> int | None:
    """Ordinal of the device of the calling thread's current CUDA context (None if none)."""
    from cuda.bindings import driver as drv

    err, dev = drv.cuCtxGetDevice()
    return int(dev) if err == drv.CUresult.CUDA_SUCCESS else None
