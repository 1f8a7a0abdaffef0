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
    "simulate_launch",
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


def _host_view(obj: Any) -> Any:
    """A numpy view of an object exposing only ``__cuda_array_interface__`` (simulator).

    The simulator's "device" memory is host memory, so the interface's data
    pointer addresses host memory; Numba's simulator would pass such an
    object through unchanged. Arrays it knows (its own, numpy) pass as they are.
    """
    import ctypes

    import numpy as np

    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None or simulator_array_interface(obj) is not None or isinstance(obj, np.ndarray):
        return obj
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = tuple(dtype.itemsize * int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    strides = tuple(int(s) for s in strides)
    if any(s < 0 for s in strides):
        return obj  # not representable without an offset; the launch reports it
    if not shape or 0 in shape:
        return np.empty(shape, dtype)
    span = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + dtype.itemsize
    buffer = (ctypes.c_byte * span).from_address(int(cai["data"][0]))
    return np.ndarray(shape, dtype, buffer=buffer, strides=strides)


def simulate_launch(
    dispatcher: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    args: tuple[Any, ...],
    kernel: str,
) -> None:
    """Run a checked launch on Numba's simulator; errors come out as simtsafe errors."""
    from .._errors import SafetyError
    from ._diagnostics import translate_simulator_error

    converted = tuple(_host_view(a) for a in args)
    try:
        dispatcher[grid, block, 0, shared_mem](*converted)
    except (SafetyError, AttributeError, TypeError) as exc:
        raise translate_simulator_error(exc, kernel).with_traceback(exc.__traceback__) from None
