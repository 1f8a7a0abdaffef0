"""Device and compiled-function limits that launch checks compare against.

Read once per device (cached); the simulator has fixed stand-in limits.
Used by ``_prepare`` (at preparation) and ``_launch`` (when a new input
layout compiles a new specialization at launch time).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from numba import cuda

from .._errors import DeviceLimitExceeded, FunctionLimitExceeded, SharedMemoryError
from ..lowering._compat import SIMULATOR
from ..lowering._launching import set_max_dynamic_shared

if TYPE_CHECKING:
    from .._compose import Kernel

__all__ = [
    "SIMULATOR_LIMITS",
    "DeviceLimits",
    "check_device_limits",
    "check_function",
    "check_tile_window",
    "device_limits",
    "tile_window",
]

_AXES = ("x", "y", "z")


@dataclass(frozen=True)
class DeviceLimits:
    """The limits of one device that launch checks need (read once per device)."""

    device_id: int
    name: str
    compute_capability: tuple[int, int]
    max_block: tuple[int, int, int]
    max_grid: tuple[int, int, int]
    max_threads_per_block: int
    max_shared_per_block: int
    max_shared_optin: int
    multiprocessors: int
    cooperative: bool
    clusters: bool


#: The simulator's stand-in limits (those of a typical recent GPU).
SIMULATOR_LIMITS = DeviceLimits(
    device_id=0,
    name="CUDA simulator",
    compute_capability=(9, 0),
    max_block=(1024, 1024, 64),
    max_grid=(2**31 - 1, 65535, 65535),
    max_threads_per_block=1024,
    max_shared_per_block=48 * 1024,
    max_shared_optin=227 * 1024,  # sm_90's, as the compute capability above
    multiprocessors=1,
    cooperative=True,  # all blocks run at once (lowering._grid_sim)
    clusters=False,
)


@cache
def _limits_for(device_id: int) -> DeviceLimits:
    dev = cuda.get_current_device()
    cc = tuple(dev.compute_capability)
    return DeviceLimits(
        device_id=device_id,
        name=str(dev.name.decode() if isinstance(dev.name, bytes) else dev.name),
        compute_capability=(int(cc[0]), int(cc[1])),
        max_block=(dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z),
        max_grid=(dev.MAX_GRID_DIM_X, dev.MAX_GRID_DIM_Y, dev.MAX_GRID_DIM_Z),
        max_threads_per_block=dev.MAX_THREADS_PER_BLOCK,
        max_shared_per_block=dev.MAX_SHARED_MEMORY_PER_BLOCK,
        max_shared_optin=dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        multiprocessors=dev.MULTIPROCESSOR_COUNT,
        cooperative=bool(dev.COOPERATIVE_LAUNCH),
        clusters=cc >= (9, 0),
    )


def device_limits() -> DeviceLimits:
    """Limits of the current device (the simulator's stand-ins under NUMBA_ENABLE_CUDASIM)."""
    if SIMULATOR:
        return SIMULATOR_LIMITS
    return _limits_for(cuda.get_current_device().id)


def check_device_limits(
    name: str, grid: tuple[int, ...], block: tuple[int, ...], lim: DeviceLimits
) -> None:
    for what, dims, maxima in (("block", block, lim.max_block), ("grid", grid, lim.max_grid)):
        for axis, value, limit in zip(_AXES, dims, maxima, strict=True):
            if value > limit:
                raise DeviceLimitExceeded(
                    f"kernel {name!r}: {what} {axis} = {value} exceeds the device's limit of "
                    f"{limit} ({lim.name}, max {what} dims {maxima}). "
                    + (
                        "Use fewer threads per block on that axis and more blocks."
                        if what == "block"
                        else "Use larger blocks or a grid-stride loop (thread.grid_stride)."
                    ),
                    kernel=name,
                    axis=axis,
                    actual=value,
                    limit=limit,
                    what=what,
                )
    threads = block[0] * block[1] * block[2]
    if threads > lim.max_threads_per_block:
        raise DeviceLimitExceeded(
            f"kernel {name!r}: block {block} has {threads} threads, over the device's limit of "
            f"{lim.max_threads_per_block} threads per block ({lim.name}). Use a smaller block.",
            kernel=name,
            axis=None,
            actual=threads,
            limit=lim.max_threads_per_block,
            what="threads per block",
        )


def tile_window(kernel: Kernel[Any]) -> int:
    """The bytes of dynamic shared memory that hold the kernel's tiles (contract
    ``tile_shared``; 0 without it): every launch of the kernel adds them."""
    contract = kernel.contract
    return contract.tile_shared or 0 if contract is not None else 0


def check_tile_window(kernel: Kernel[Any], static: int, lim: DeviceLimits) -> None:
    """The contract's ``tile_shared`` (plus ``static`` bytes of static shared memory) fits
    the device's opt-in shared memory per block."""
    window = tile_window(kernel)
    if window and static + window > lim.max_shared_optin:
        name = kernel.name
        room = (lim.max_shared_optin - static) // 16 * 16  # tile_shared is a multiple of 16
        raise SharedMemoryError(
            f"kernel {name!r}: its contract's tile_shared={window} B of shared tiles"
            + (f" (+ {static} B static shared memory)" if static else "")
            + f" exceeds the device's opt-in limit of {lim.max_shared_optin} B per block "
            f"({lim.name}). Use smaller tiles or fewer stages, and declare tile_shared <= "
            f"{room} B",
            kernel=name,
            actual=window,
            limit=room,
        )


def check_function(
    kernel: Kernel[Any],
    cufunc: Any,
    block: tuple[int, int, int],
    shared_mem: int,
    lim: DeviceLimits,
) -> None:
    name = kernel.name
    threads = block[0] * block[1] * block[2]
    attrs = cufunc.attrs
    if threads > attrs.maxthreads:
        raise FunctionLimitExceeded(
            f"kernel {name!r}: the compiled function allows at most {attrs.maxthreads} threads "
            f"per block (it uses {attrs.regs} registers per thread), got {threads}. Use a "
            "smaller block, or declare max_threads in the contract: the kernel is then compiled "
            "with that bound (.maxntid) and the compiler budgets registers for it",
            kernel=name,
            actual=threads,
            limit=attrs.maxthreads,
        )
    check_tile_window(kernel, attrs.shared, lim)
    total = attrs.shared + shared_mem
    if total > lim.max_shared_optin:
        raise SharedMemoryError(
            f"kernel {name!r}: {attrs.shared} B static + {shared_mem} B dynamic shared memory = "
            f"{total} B exceeds the device's opt-in limit of {lim.max_shared_optin} B per block. "
            "Use less shared memory per block (smaller tiles).",
            kernel=name,
            actual=total,
            limit=lim.max_shared_optin,
        )
    if total > lim.max_shared_per_block:
        # Above the portable 48 KiB, a kernel must opt in to more dynamic shared memory.
        error = set_max_dynamic_shared(cufunc, shared_mem, lim.device_id)
        if error is not None:  # pragma: no cover - checked against the limits above
            raise SharedMemoryError(
                f"kernel {name!r}: could not raise the dynamic shared memory limit to "
                f"{shared_mem} B: {error}",
                kernel=name,
                actual=shared_mem,
                limit=lim.max_shared_optin,
            )
