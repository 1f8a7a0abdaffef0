"""Per-launch argument checks and the fast launch path.

``LaunchPlan`` is built once by ``prepare``: per parameter it knows what to
expect (kind, dtype string, rank), and it holds the driver-level launch
configuration. ``launch(args)`` then, for every call:

1. reads each array's ``__cuda_array_interface__`` (Numba, CuPy, PyTorch...)
   and checks kind, dtype, rank, C-contiguity and writability of outputs;
2. checks that no output's byte range overlaps another argument's;
3. checks ``requires`` and ``covers``;
4. packs the kernel parameters exactly as Numba's ABI wants them and calls
   ``cuda.core.launch`` on the cached compiled function -- no Numba dispatch.

Invariant: every check runs before the launch call, so a failing launch
touches no output.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, final

import numpy as np

from .._errors import (
    AliasingError,
    ArgumentTypeError,
    ContextMismatch,
    CoverageError,
)
from ..lowering._compat import SIMULATOR
from ..lowering._launching import (
    compiled_function,
    core_launcher,
    core_stream,
    launch_config,
    max_active_clusters,
    simulate_launch,
)
from ..lowering._scalars import scalar_kind
from ._argfacts import Facts, array_facts, current_device, record_dtype, several_devices
from ._fastcheck import build_fast_check
from ._requires import launch_env

if TYPE_CHECKING:
    from ..decoration._decorators import Kernel
    from ..decoration._params import Param

__all__ = ["LaunchPlan"]


def check_device(kernel: str, prepared_on: int, current: int | None, arrays: Any) -> None:
    """Refuse a launch whose context or arrays belong to another device than its preparation.

    Args:
        kernel: kernel name, for the message.
        prepared_on: ordinal of the device the launch was prepared on.
        current: ordinal of the calling thread's current device.
        arrays: (parameter name, device ordinal or None) pairs.

    Raises:
        ContextMismatch: naming both devices and the fix.
    """
    if current is not None and current != prepared_on:
        raise ContextMismatch(
            f"kernel {kernel!r}: this PreparedLaunch was prepared on device {prepared_on}, but "
            f"the calling thread's current device is {current}. Launch it with device "
            f"{prepared_on} current (`with numba.cuda.gpus[{prepared_on}]:`), or prepare the "
            f"kernel again on device {current} (one PreparedLaunch per device)",
            kernel=kernel,
            actual=current,
            limit=prepared_on,
        )
    for name, dev in arrays:
        if dev is not None and dev != prepared_on:
            raise ContextMismatch(
                f"kernel {kernel!r}: argument {name!r} lives on device {dev}, but this launch was "
                f"prepared on device {prepared_on}. Copy the array to device {prepared_on}, or "
                f"launch a PreparedLaunch prepared on device {dev}",
                kernel=kernel,
                argument=name,
                actual=dev,
                limit=prepared_on,
            )


#: How many recently checked argument sets a prepared launch remembers.
_MEMO_SIZE = 8


def _evict_oldest(entries: dict[Any, Any]) -> None:
    """Make room for one entry (oldest first); tolerant of other threads doing the same."""
    while len(entries) >= _MEMO_SIZE:
        try:
            entries.pop(next(iter(entries)), None)
        except (RuntimeError, StopIteration):  # changed by another thread meanwhile
            break


@final
class _Memo:
    """The last checked launch: which objects and scalar values it was checked for."""

    __slots__ = ("kernel", "params", "refs", "scalars")

    def __init__(
        self,
        args: tuple[Any, ...],
        array_idx: tuple[int, ...],
        scalar_idx: tuple[int, ...],
        kernel: Any,
        params: tuple[Any, ...],
    ) -> None:
        self.kernel = kernel
        self.params = params
        ref = weakref.ref
        self.refs = tuple([(i, ref(args[i])) for i in array_idx])
        self.scalars = tuple([(i, type(args[i]), args[i]) for i in scalar_idx])

    def matches(self, args: tuple[Any, ...]) -> bool:
        """Same array objects (by identity, still alive) and equal scalars of the same type."""
        if len(args) != len(self.refs) + len(self.scalars):
            return False
        for i, ref in self.refs:
            if ref() is not args[i]:
                return False
        for i, kind, value in self.scalars:
            a = args[i]
            if type(a) is not kind or a != value:
                return False
        return True


@final
class LaunchPlan:
    """Everything a launch needs that the arguments do not change."""

    __slots__ = (
        "_cfg",
        "_cufuncs",
        "_dispatch",
        "_fast_check",
        "_array_idx",
        "_core_launch",
        "_default_layouts",
        "_memo",
        "_scalar_idx",
        "_seen",
        "_stream",
        "block",
        "capacity",
        "covers",
        "device_id",
        "expect",
        "grid",
        "kernel",
        "name",
        "needs_env",
        "shared_mem",
    )

    def __init__(
        self,
        kernel: Kernel[Any],
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_mem: int,
        stream: Any,
        device_id: int,
    ) -> None:
        self.kernel = kernel
        self.name = kernel.name
        self.grid = grid
        self.block = block
        self.shared_mem = shared_mem
        self.device_id = device_id
        # Per parameter: (param, typestr expected, itemsize) -- dtype compared as a string.
        self.expect = tuple(
            (p, p.dtype.str if p.is_array else "", p.dtype.itemsize) for p in kernel.params
        )
        bound = kernel.bound
        self.needs_env = bool(bound and bound.per_launch)
        self.covers = bound.covers if bound else None
        self.capacity = self._capacity()
        self._cufuncs: dict[tuple[str, ...], Any] = {}
        # Recently checked argument sets (ping-pong buffers hit too), by array identities.
        self._memo: dict[tuple[int, ...], _Memo] = {}
        self._seen: dict[tuple[int, ...], None] = {}
        self._default_layouts = tuple("C" for p in kernel.params if p.kind == "in")
        self._array_idx = tuple(i for i, p in enumerate(kernel.params) if p.is_array)
        self._scalar_idx = tuple(i for i, p in enumerate(kernel.params) if not p.is_array)
        self._core_launch: Any = None
        self._fast_check = build_fast_check(self, check_devices=several_devices())
        self._stream = stream
        if SIMULATOR:
            self._dispatch = kernel._get_dispatcher()
            self._cfg = None
        else:
            self._stream = core_stream(stream)
            cluster = kernel.contract.cluster if kernel.contract else None
            self._cfg = launch_config(
                grid,
                block,
                shared_mem,
                tuple(cluster) if cluster is not None else None,  # type: ignore[arg-type]
                bool(kernel.contract and kernel.contract.cooperative),
            )
            self._dispatch = None
            self._core_launch = core_launcher()

    def _capacity(self) -> tuple[int, ...] | None:
        """How many elements of the ``covers`` parameter the launch's threads can own."""
        if self.covers is None:
            return None
        param = next(p for p in self.kernel.params if p.name == self.covers)
        g, b = self.grid, self.block
        if param.space in ("Index2D", "Index3D") or (param.kind == "in" and param.ndim > 1):
            # One thread per element along each axis: the array's last axis follows
            # x, the one before y, then z (rows follow y; 3D: (z, y, x)).
            return tuple(g[axis] * b[axis] for axis in reversed(range(param.ndim)))
        blocks = g[0] * g[1] * g[2]
        if param.space == "PerBlock":
            return (blocks,)
        if param.space == "PerWarp":
            return (blocks * ((b[0] * b[1] * b[2] + 31) // 32),)
        return (g[0] * b[0] * g[1] * b[1] * g[2] * b[2],)

    # ------------------------------------------------------------------ per launch

    def launch(self, args: tuple[Any, ...]) -> None:
        if several_devices():
            current = current_device()
            if current != self.device_id:
                check_device(self.name, self.device_id, current, ())
        key = None
        if len(args) == len(self.expect):
            key = tuple([id(args[i]) for i in self._array_idx])
            memo = self._memo.get(key)
            if memo is not None and memo.matches(args):
                # Same array objects (immutable metadata) and equal scalars as a recent
                # checked launch: every check would give the same answer.
                self._core_launch(self._stream, self._cfg, memo.kernel, *memo.params)
                return
        self._launch_checked(args, key)

    def _launch_checked(self, args: tuple[Any, ...], key: tuple[int, ...] | None) -> None:
        checked = self._fast_check(args)
        if checked is None:  # some check failed: the general loop raises the precise error
            checked = self._check(args)
        layouts, params, memoizable = checked
        if SIMULATOR:
            simulate_launch(self._dispatch, self.grid, self.block, self.shared_mem, args, self.name)
            return
        cufunc = self._cufuncs.get(layouts)
        if cufunc is None:
            cufunc = self._compile_for(layouts)
        self._core_launch(self._stream, self._cfg, cufunc.kernel, *params)
        if memoizable and key is not None:
            # Remember an argument set from its second checked launch on: sets that
            # never repeat (or repeat too rarely to stay) cost no memo entry.
            seen = self._seen
            if key not in seen:
                _evict_oldest(seen)
                seen[key] = None
                return
            _evict_oldest(self._memo)
            self._memo[key] = _Memo(args, self._array_idx, self._scalar_idx, cufunc.kernel, params)

    def _check(self, args: tuple[Any, ...]) -> tuple[tuple[str, ...], tuple[Any, ...], bool]:
        """Every argument check, in order; raises the first failure's error.

        Returns (input layouts, packed kernel parameters, all arrays cacheable).
        """
        name = self.name
        expect = self.expect
        if len(args) != len(expect):
            raise ArgumentTypeError(
                f"kernel {name!r} takes {len(expect)} arguments "
                f"({', '.join(p.name for p, _, _ in expect)}), got {len(args)}",
                kernel=name,
                actual=len(args),
                limit=len(expect),
            )
        params: list[Any] = []
        ranges: list[tuple[int, int, str, bool]] = []
        layouts: list[str] = []
        env: dict[str, Any] = {}
        shapes: dict[str, tuple[int, ...]] = {}
        memoizable = True
        devices: list[tuple[str, int | None]] = []
        for (param, typestr, itemsize), obj in zip(expect, args, strict=True):
            if param.kind == "scalar":
                params += self._scalar(param, obj)
                env[param.name] = obj
                continue
            facts = array_facts(obj, param, name, itemsize)
            memoizable = memoizable and facts.stable
            shape = facts.shape
            if facts.typestr != typestr or len(shape) != param.ndim:
                self._wrong_array(param, facts.typestr, shape)
            if param.dtype.names is not None and record_dtype(obj) != param.dtype:
                self._wrong_record(param, obj)
            if param.kind in ("out", "acc"):
                if not facts.c_contiguous or facts.readonly:
                    self._bad_output(param, facts)
            else:
                layouts.append("C" if facts.c_contiguous else "A")
            if facts.size:
                ranges.append((facts.lo, facts.hi, param.name, param.kind in ("out", "acc")))
                if facts.device is not None:
                    devices.append((param.name, facts.device))
            shapes[param.name] = shape
            params += facts.packed
        if devices:
            check_device(name, self.device_id, None, devices)
        if len(ranges) > 1:
            self._check_aliasing(ranges)
        if self.needs_env:
            bound = self.kernel.bound
            assert bound is not None
            env.update(shapes)
            env.update(launch_env(self.grid, self.block))
            bound.check_requires(env)
        if self.capacity is not None:
            self._check_covers(shapes[self.covers])  # type: ignore[index]
        return tuple(layouts), tuple(params), memoizable

    def scalar_packer(self, param: Param) -> Callable[[Any], Any]:
        """Check and pack one scalar argument (raises ArgumentTypeError)."""
        return lambda obj: self._scalar(param, obj)

    def extent(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The ``covers`` parameter's extent per axis of the launch capacity."""
        capacity = self.capacity
        assert capacity is not None
        if len(capacity) == len(shape):
            return shape
        size = 1
        for n in shape:
            size *= n
        return (size,)

    def max_active_clusters(self) -> int:
        """How many clusters of this launch's shape can be resident at once (GPU only)."""
        cufunc = self._cufuncs.get(self._default_layouts) or self._compile_for(
            self._default_layouts
        )
        return max_active_clusters(cufunc, self._cfg, self._stream)

    def _compile_for(self, layouts: tuple[str, ...]) -> Any:
        from ._limits import check_function, device_limits

        spec = self.kernel.specialize(layouts)
        cufunc = compiled_function(spec.numba_kernel)
        check_function(self.kernel, cufunc, self.block, self.shared_mem, device_limits())
        self._cufuncs[layouts] = cufunc
        return cufunc

    def _scalar(self, param: Param, obj: Any) -> tuple[Any, ...]:
        """Check one scalar argument against the scalar table and pack it (ABI order)."""
        kind = scalar_kind(param.dtype)
        assert kind is not None  # refused at decoration otherwise
        if not kind.admits(obj):
            raise ArgumentTypeError(
                f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation}, got "
                f"{type(obj).__name__} {obj!r}",
                kernel=self.name,
                argument=param.name,
                actual=type(obj).__name__,
            )
        problem = kind.out_of_range(obj)
        if problem is not None:
            limit: Any = None
            if param.dtype.kind in "iu":
                info = np.iinfo(param.dtype)
                limit = (int(info.min), int(info.max))
            else:
                limit = float(np.finfo(param.dtype).max)
            raise ArgumentTypeError(
                f"kernel {self.name!r}: argument {param.name!r} = {obj} {problem}. Pass a value "
                f"that fits, or declare the parameter with a wider type",
                kernel=self.name,
                argument=param.name,
                actual=obj,
                limit=limit,
            )
        if SIMULATOR:
            return (obj,)
        return kind.pack(obj)

    def _bad_output(self, param: Param, facts: Facts) -> None:
        if not facts.c_contiguous:
            raise ArgumentTypeError(
                f"kernel {self.name!r}: output {param.name!r} must be C-contiguous (got strides "
                f"{facts.strides} for shape {facts.shape}); pass a contiguous array (e.g. "
                "numba.cuda.device_array(shape, dtype))",
                kernel=self.name,
                argument=param.name,
                actual=facts.strides,
            )
        raise ArgumentTypeError(
            f"kernel {self.name!r}: output {param.name!r} is a read-only array; pass a writable one",
            kernel=self.name,
            argument=param.name,
        )

    def _wrong_record(self, param: Param, obj: Any) -> None:
        got = record_dtype(obj)
        raise ArgumentTypeError(
            f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation} with "
            f"the record dtype {param.dtype}, got "
            + (
                f"the record dtype {got}"
                if got is not None
                else "an array whose record layout "
                "cannot be read (no .dtype, no 'descr' in its __cuda_array_interface__)"
            )
            + ". Pass an array of exactly that dtype (same fields, types, offsets)",
            kernel=self.name,
            argument=param.name,
            actual=str(got),
            limit=str(param.dtype),
        )

    def _wrong_array(self, param: Param, typestr: str, shape: tuple[int, ...]) -> None:
        got = f"{len(shape)}D {np.dtype(typestr).name}"
        want = f"{param.ndim}D {param.dtype.name}"
        raise ArgumentTypeError(
            f"kernel {self.name!r}: argument {param.name!r} is declared {param.annotation} "
            f"({want}), got a {got} array of shape {shape}. Pass a {want} device array "
            "(convert with .astype / reshape before copying to the device)",
            kernel=self.name,
            argument=param.name,
            actual=got,
            limit=want,
        )

    def _check_aliasing(self, ranges: list[tuple[int, int, str, bool]]) -> None:
        for i, (lo1, hi1, n1, out1) in enumerate(ranges):
            for lo2, hi2, n2, out2 in ranges[i + 1 :]:
                if (out1 or out2) and lo1 < hi2 and lo2 < hi1:
                    out, other = (n1, n2) if out1 else (n2, n1)
                    raise AliasingError(
                        f"kernel {self.name!r}: output {out!r} overlaps the memory of argument "
                        f"{other!r} (bytes [{lo1:#x}, {hi1:#x}) and [{lo2:#x}, {hi2:#x})); an "
                        "output must not alias any other argument. Pass separate buffers (copy "
                        "the input first if you meant to update in place)",
                        kernel=self.name,
                        argument=out,
                        other=other,
                    )

    def _check_covers(self, shape: tuple[int, ...]) -> None:
        capacity = self.capacity
        assert capacity is not None
        for axis, (n, cap) in enumerate(zip(self.extent(shape), capacity, strict=True)):
            if n > cap:
                raise CoverageError(
                    f"kernel {self.name!r} must cover every element of {self.covers!r} by its "
                    f"launch contract, but the launch owns {cap} along axis {axis} and "
                    f"{self.covers!r} has {n}. Prepare with a larger grid (simtsafe.cover(n, "
                    "block) blocks).",
                    kernel=self.name,
                    argument=self.covers,
                    axis=axis,
                    actual=n,
                    limit=cap,
                )
