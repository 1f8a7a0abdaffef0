"""``kernel.prepare(...)``: check a launch configuration once, bind it to a device.

Check order (cuda-oxide's): dimensions -> contract (domain, exact block or
thread budget, dynamic shared memory, ``requires`` relations over the launch
dimensions only) -> live device limits per axis and per
block -> the compiled function's own limits (max threads, static shared
memory) -> static + dynamic shared memory against the portable limit, then
the opt-in limit (raising the function's dynamic-shared attribute when
needed) -> compute capability -> cluster -> cooperative residency.

Everything a launch needs that does not depend on the arguments is computed
here, so a ``PreparedLaunch`` makes no device query when it is reused.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, final

from .._errors import (
    ClusterError,
    ComputeCapabilityError,
    ContextMismatch,
    CooperativeLaunchError,
    FunctionLimitExceeded,
    GraphError,
    SharedMemoryError,
)
from ..lowering._compat import SIMULATOR
from ..lowering._launching import (
    LEGACY_STREAM,
    PER_THREAD_STREAM,
    compiled_function,
    cooperative_blocks,
    device_array_type,
    record_event,
    stream_device,
    stream_handle,
    uses_grid_sync,
)
from ._bound import BoundLaunch
from ._contract import check_static, normalize_dims
from ._foreign import ambient_reader, ambient_stream, producer_reader
from ._handles import LaunchHandle
from ._launch import RECORDING, LaunchPlan, current_recorder
from ._limits import (
    DeviceLimits,
    check_device_limits,
    check_function,
    check_tile_window,
    device_limits,
    tile_window,
)
from ._streams import stream_key

if TYPE_CHECKING:
    from .._compose import Kernel

__all__ = ["PreparedLaunch", "prepare"]

_AXES = ("x", "y", "z")
_PORTABLE_CLUSTER = 8


def _check_stream(name: str, stream: Any, lim: DeviceLimits) -> None:
    """A stream must be a stream, and belong to the device the launch is prepared on.

    Accepted: None / 0 (default stream), int handles, Numba and cuda.core
    streams, CuPy and PyTorch streams, anything with ``__cuda_stream__``.
    """
    try:
        stream_handle(stream)
    except TypeError as exc:
        raise TypeError(f"kernel {name!r}: prepare(stream=...): {exc}") from None
    if not stream or SIMULATOR:
        return
    device = stream_device(stream)
    if device is not None and device != lim.device_id:
        raise ContextMismatch(
            f"kernel {name!r}: the stream belongs to device {device}, but the launch is being "
            f"prepared on device {lim.device_id} (the current device). Prepare with device "
            f"{device} current (`with numba.cuda.gpus[{device}]:`), or use a stream of device "
            f"{lim.device_id}",
            kernel=name,
            actual=device,
            limit=lim.device_id,
        )


def _check_capability(kernel: Kernel[Any], lim: DeviceLimits) -> None:
    contract = kernel.contract
    if contract is None or contract.min_compute_capability is None:
        return
    need = tuple(contract.min_compute_capability)
    if lim.compute_capability < need:
        raise ComputeCapabilityError(
            f"kernel {kernel.name!r} needs compute capability {need[0]}.{need[1]} by its launch "
            f"contract, but {lim.name} is {lim.compute_capability[0]}."
            f"{lim.compute_capability[1]}. Run on a newer GPU or lower min_compute_capability.",
            kernel=kernel.name,
            actual=lim.compute_capability,
            limit=need,
        )


def _check_cluster(kernel: Kernel[Any], grid: tuple[int, int, int], lim: DeviceLimits) -> None:
    contract = kernel.contract
    if contract is None or contract.cluster is None:
        return
    cluster = tuple(contract.cluster)
    name = kernel.name
    if not lim.clusters:
        raise ClusterError(
            f"kernel {name!r} uses thread-block clusters {cluster}, which {lim.name} does not "
            "support (clusters need a GPU of compute capability 9.0 or newer; the simulator has "
            "none). Run on such a GPU, or drop `cluster` from the contract.",
            kernel=name,
            actual=lim.compute_capability,
            limit=(9, 0),
        )
    size = cluster[0] * cluster[1] * cluster[2]
    if size > _PORTABLE_CLUSTER:
        raise ClusterError(
            f"kernel {name!r}: cluster {cluster} has {size} blocks, over the portable limit of "
            f"{_PORTABLE_CLUSTER}. Use a cluster of at most {_PORTABLE_CLUSTER} blocks.",
            kernel=name,
            actual=size,
            limit=_PORTABLE_CLUSTER,
        )
    for axis, g, c in zip(_AXES, grid, cluster, strict=True):
        if g % c:
            raise ClusterError(
                f"kernel {name!r}: grid {axis} = {g} is not a multiple of the cluster's {axis} = "
                f"{c}. Round the grid up to a multiple of {c} (simtsafe.cover(n, block) gives the "
                "block count to round).",
                kernel=name,
                axis=axis,
                actual=g,
                limit=c,
            )


def _check_cluster_occupancy(kernel: Kernel[Any], plan: LaunchPlan, lim: DeviceLimits) -> None:
    """At least one cluster of the contract's shape must fit on the device at once."""
    contract = kernel.contract
    if contract is None or contract.cluster is None:
        return
    fits = plan.max_active_clusters()
    if fits < 1:
        raise ClusterError(
            f"kernel {kernel.name!r}: not one cluster {tuple(contract.cluster)} of blocks "
            f"{plan.block} with {plan.shared_mem} B dynamic shared memory can be resident on "
            f"{lim.name} (its blocks' registers or shared memory exceed one GPC). Use a smaller "
            "cluster, smaller blocks or less shared memory.",
            kernel=kernel.name,
            actual=fits,
            limit=1,
        )


def _check_cooperative(
    kernel: Kernel[Any],
    numba_kernel: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    lim: DeviceLimits,
) -> None:
    contract = kernel.contract
    name = kernel.name
    declared = contract is not None and contract.cooperative
    if not declared:
        # The simulator has no compiled kernel: it reads the same fact from the source.
        used = kernel._api_closure() if SIMULATOR else frozenset()
        syncs = "cuda.cg.this_grid" in used or "grid.sync" in used
        if syncs or uses_grid_sync(numba_kernel):
            raise CooperativeLaunchError(
                f"kernel {name!r} synchronizes the whole grid (simtsafe.grid.sync() or "
                "cuda.cg.this_grid().sync()), which "
                "needs a cooperative launch whose blocks are all resident at once; declare "
                "cooperative=True in its launch contract so prepare checks residency and launches "
                "it cooperatively",
                kernel=name,
            )
        return
    if not lim.cooperative:
        raise CooperativeLaunchError(
            f"kernel {name!r} is cooperative by its contract, but {lim.name} does not support "
            "cooperative launches.",
            kernel=name,
        )
    blocks = grid[0] * grid[1] * grid[2]
    if numba_kernel is None and not SIMULATOR:
        return
    resident = cooperative_blocks(numba_kernel, block, shared_mem, lim.multiprocessors)
    if blocks > resident:
        raise CooperativeLaunchError(
            f"kernel {name!r}: a cooperative grid must be co-resident, but {blocks} blocks of "
            f"{block} exceed the {resident} that fit on {lim.name} at once. Launch at most "
            f"{resident} blocks (with a grid-stride loop).",
            kernel=name,
            actual=blocks,
            limit=resident,
        )


def _check_blocks_per_sm(
    kernel: Kernel[Any], numba_kernel: Any, block: tuple[int, int, int], shared_mem: int
) -> None:
    """The contract's ``blocks_per_sm`` blocks of this shape fit on one multiprocessor at once.

    The compiler was told (``.minnctapersm``) and limits registers for it; what it cannot
    limit -- the launch's block size and shared memory -- may still keep fewer resident.
    """
    want = kernel.contract.blocks_per_sm if kernel.contract is not None else None
    if want is None:
        return
    fit = cooperative_blocks(numba_kernel, block, shared_mem, 1)
    if not SIMULATOR:
        fit //= device_limits().multiprocessors  # numba counts every multiprocessor
    if fit < want:
        raise FunctionLimitExceeded(
            f"kernel {kernel.name!r}: its contract asks for blocks_per_sm={want} resident "
            f"blocks per multiprocessor, but {fit} blocks of {block} with {shared_mem} B of "
            "dynamic shared memory fit (registers, shared memory and threads per "
            "multiprocessor decide it). Launch smaller blocks, use less shared memory, or "
            f"lower blocks_per_sm to {fit}",
            kernel=kernel.name,
            actual=fit,
            limit=want,
        )


def prepare(
    kernel: Kernel[Any], *, grid: Any, block: Any, shared_mem: int, stream: Any
) -> PreparedLaunch:
    """Run every launch check that does not need the arguments; see the module docstring."""
    name = kernel.name
    grid3 = normalize_dims(grid, kernel=name, what="grid")
    block3 = normalize_dims(block, kernel=name, what="block")
    if kernel.contract is not None:
        check_static(kernel.contract, grid3, block3, shared_mem, kernel=name)
        assert kernel.bound is not None
        kernel.bound.check_launch(grid3, block3)
    elif not isinstance(shared_mem, int) or isinstance(shared_mem, bool) or shared_mem < 0:
        raise SharedMemoryError(
            f"kernel {name!r}: shared_mem must be a non-negative int (bytes), got {shared_mem!r}",
            kernel=name,
            actual=shared_mem,
        )
    lim = device_limits()
    _check_stream(name, stream, lim)
    check_device_limits(name, grid3, block3, lim)
    spec = kernel.specialize()
    # The launch's dynamic shared memory: the caller's plus the contract's tile window.
    launch_shared = shared_mem + tile_window(kernel)
    if not SIMULATOR:
        cufunc = compiled_function(spec.numba_kernel)
        check_function(kernel, cufunc, block3, launch_shared, lim)
    elif tile_window(kernel):
        check_tile_window(kernel, 0, lim)
    elif shared_mem > lim.max_shared_per_block:
        raise SharedMemoryError(
            f"kernel {name!r}: {shared_mem} B dynamic shared memory exceeds the simulator's "
            f"limit of {lim.max_shared_per_block} B.",
            kernel=name,
            actual=shared_mem,
            limit=lim.max_shared_per_block,
        )
    _check_capability(kernel, lim)
    _check_cluster(kernel, grid3, lim)
    plan = LaunchPlan(kernel, grid3, block3, shared_mem, stream, lim.device_id)
    if not SIMULATOR:
        _check_cluster_occupancy(kernel, plan, lim)
    _check_cooperative(kernel, spec.numba_kernel, grid3, block3, launch_shared, lim)
    _check_blocks_per_sm(kernel, spec.numba_kernel, block3, launch_shared)
    return PreparedLaunch._mint(kernel, grid3, block3, shared_mem, stream, lim, plan)


_MODULES = sys.modules
#: Numba's device array class (None on the simulator): its arrays keep the default stream.
_NUMBA_ARRAY = device_array_type()

#: How many ambient streams (CuPy's / PyTorch's current streams) one PreparedLaunch keeps a
#: plan for; the oldest goes first.
_AMBIENT_PLANS = 8


@final
class PreparedLaunch:
    """A launch configuration checked against a kernel's contract, device and compiled code.

    Minted only by ``kernel.prepare``; immutable; bound to its kernel and to
    the device that was current when it was prepared. Calling it checks the
    arguments (kinds, dtypes, ranks, layout, aliasing, ``requires``,
    ``covers``) and launches; on any failure nothing is enqueued.
    """

    __slots__ = ("_ambient", "_plan", "block", "device", "grid", "kernel", "shared_mem", "stream")

    kernel: Kernel[Any]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    stream: Any
    device: DeviceLimits
    _plan: LaunchPlan

    #: Prepared without a stream: the plans for CuPy's / PyTorch's current streams, by the
    #: stream's handle (None: a stream was given, launches always go there).
    _ambient: dict[Any, LaunchPlan] | None

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("PreparedLaunch is made by kernel.prepare(grid=..., block=...)")

    @classmethod
    def _mint(
        cls,
        kernel: Kernel[Any],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_mem: int,
        stream: Any,
        device: DeviceLimits,
        plan: LaunchPlan,
    ) -> PreparedLaunch:
        self = object.__new__(cls)
        for key, value in (
            ("kernel", kernel),
            ("grid", grid),
            ("block", block),
            ("shared_mem", shared_mem),
            ("stream", stream),
            ("device", device),
            ("_plan", plan),
            ("_ambient", {} if stream is None else None),
        ):
            object.__setattr__(self, key, value)
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("PreparedLaunch is immutable; prepare a new one")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("PreparedLaunch is immutable")

    def __call__(self, *args: Any) -> None:
        """Check the arguments, then launch. Nothing is enqueued if a check fails.

        Inside ``with simtsafe.graph():`` the checked launch is recorded into
        the graph instead of run. Prepared without a stream, a launch whose
        arrays all come from CuPy (or all from PyTorch) runs on that library's
        current stream; any other goes to the default stream.
        """
        if self._ambient is None or ("cupy" not in _MODULES and "torch" not in _MODULES):
            self._plan.launch(args)
        else:
            plan, known = self._plan_for(args)
            plan.launch(args, known)

    def bind(self, *args: Any) -> BoundLaunch:
        """Check ``args`` now and return a ``BoundLaunch`` that launches exactly them.

        Raises what a call with ``args`` raises (nothing is launched). Each call of the
        bound launch skips what the arguments' identity settles (the memo's lookup and
        match); the current device, the stream ordering and, for CuPy and PyTorch arrays,
        every check still run per call (docs/execution.md).
        """
        self._plan.checked(args)
        return BoundLaunch._mint(self, args)

    def launch(self, *args: Any) -> LaunchHandle:
        """Like calling the launch, and return a ``LaunchHandle`` (``wait()``, ``done()``, ``event``).

        The handle's event is recorded on the launch stream right after the
        launch (one event per call: use ``prepared(*args)`` where no handle
        is needed).

        Raises:
            GraphError: inside ``with simtsafe.graph():`` (a recorded launch
                has no event; ``graph.launch()`` gives one per replay).
        """
        if current_recorder() is not None:
            raise GraphError(
                f"kernel {self.kernel.name!r}: prepared.launch() inside `with simtsafe.graph():` "
                "would need an event of a launch that is only being recorded; call prepared(*args) "
                "there, and take the handle of a replay with graph.launch()",
                kernel=self.kernel.name,
            )
        plan, known = (self._plan, None) if self._ambient is None else self._plan_for(args)
        seq = plan.launch(args, known)
        event = record_event(plan.core_stream)
        stream = self.stream if plan is self._plan else plan.stream_object
        return LaunchHandle._mint(plan.stream_state, seq, event, self.kernel.name, stream)

    def _plan_for(self, args: tuple[Any, ...]) -> tuple[LaunchPlan, tuple[Any, Any] | None]:
        """The plan of the stream a launch without a given stream goes to (see ``__call__``).

        CuPy's and PyTorch's own operations on their arrays run on the library's
        current stream; a kernel launched on their arrays joins it, so it is
        ordered with them as their own operations are. Numba arrays, mixed
        arguments and recorded launches (a graph replays on its own stream)
        keep the default stream. Per launch this costs a few type compares and
        the one read of the library's current stream that the producer-stream
        check needs anyway: returned with the plan, for the launch to use.
        """
        plan = self._plan
        ambient = self._ambient
        arrays = plan.array_indices
        if ambient is None or not arrays or len(args) != len(plan.expect):
            return plan, None
        if RECORDING[0] and current_recorder() is not None:
            # this thread records a graph (replayed on the graph's stream); another thread's
            # recording leaves this one's launches on their library's stream (attack round 16)
            return plan, None
        first = args[arrays[0]]
        tp = type(first)
        if tp is _NUMBA_ARRAY:  # the usual case, decided by one compare
            return plan, None
        read = ambient_reader(tp)
        if read is None:
            return plan, None
        for i in arrays:
            t = type(args[i])
            if t is not tp and ambient_reader(t) is not read:
                return plan, None  # a mix of libraries: the default stream
        memo_read, handle = read(first)
        known = (memo_read, handle) if memo_read is not None else None
        # The per-thread default stream is each thread's own: its plan (and ledger stream)
        # too, never another thread's (attack round 16: one cached plan hid a race).
        key = (handle, threading.get_ident()) if handle == PER_THREAD_STREAM else handle
        other = ambient.get(key)
        if other is not None:
            return other, known
        if not handle or stream_key(handle, plan.device_id) == plan.stream_state.key:
            if handle == LEGACY_STREAM:  # one stream for all threads: remember it
                ambient[key] = plan
            return plan, known  # the library's default stream is the default stream
        found = ambient_stream([args[i] for i in arrays])
        if found is None:
            return plan, known
        library, _, device, make = found
        other = self._ambient_plan(library, device, make())
        while len(ambient) >= _AMBIENT_PLANS:
            ambient.pop(next(iter(ambient)), None)
        ambient[key] = other
        return other, known

    def _ambient_plan(self, library: str, device: int | None, stream: Any) -> LaunchPlan:
        """A plan like this one's, on ``library``'s current stream ``stream``."""
        name = self.kernel.name
        lim = self.device
        if device is None and not SIMULATOR and not isinstance(stream, int):
            device = stream_device(stream)
        if device is not None and device != lim.device_id:
            raise ContextMismatch(
                f"kernel {name!r}: every array argument is {library}'s, so this launch, prepared "
                f"without a stream, would run on {library}'s current stream -- which belongs to "
                f"device {device}, but the launch was prepared on device {lim.device_id}. Make "
                f"device {lim.device_id} {library}'s current device for the launch, or pass "
                "stream= to prepare",
                kernel=name,
                actual=device,
                limit=lim.device_id,
            )
        plan = LaunchPlan(
            self.kernel,
            self.grid,
            self.block,
            self.shared_mem,
            stream,
            lim.device_id,
            own_reader=producer_reader(library, device),
        )
        if not SIMULATOR:
            _check_cluster_occupancy(self.kernel, plan, lim)
        return plan

    def __repr__(self) -> str:
        return (
            f"PreparedLaunch(kernel={self.kernel.name!r}, grid={self.grid}, block={self.block}"
            + (f", shared_mem={self.shared_mem}" if self.shared_mem else "")
            + ")"
        )
