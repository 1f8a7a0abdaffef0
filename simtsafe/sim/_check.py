"""``simtsafe.sim.check``: replay one launch on the CPU and report what went wrong.

Ties the parts together: resolve the kernel (``_source``), copy the
arguments into recorded buffers (``_memory``), run the replay
(``_sched``), and turn what it collected into a ``CheckReport``.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from .._errors import KernelCheckError
from ._memory import GLOBAL, Buffer, RecArray
from ._report import CheckReport
from ._sched import Replay
from ._source import Rebuilder, Target, resolve

__all__ = ["DEFAULT_MAX_STEPS", "DEFAULT_TIMEOUT", "assert_clean", "check"]

#: Memory accesses plus synchronizations a replay may take before it stops.
DEFAULT_MAX_STEPS: Final = 10_000_000
#: Seconds a replay may take before it stops.
DEFAULT_TIMEOUT: Final = 300.0


def _dims(value: Any, what: str, name: str) -> tuple[int, int, int]:
    items = value if isinstance(value, tuple | list) else (value,)
    dims: list[int] = []
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(
                f"simtsafe.sim.check of {name!r}: {what} must be an int or a tuple of 1 to 3 "
                f"ints, got {value!r}"
            )
        dims.append(int(v))
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise ValueError(
            f"simtsafe.sim.check of {name!r}: {what} must have 1 to 3 axes, each >= 1; got "
            f"{value!r}"
        )
    while len(dims) < 3:
        dims.append(1)
    return (dims[0], dims[1], dims[2])


def _host_copy(value: Any, name: str) -> np.ndarray[Any, Any] | None:
    """A host numpy copy of an array argument, or None for a scalar."""
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True, order="C")
    if hasattr(value, "copy_to_host"):  # Numba device arrays (GPU and simulator)
        return np.ascontiguousarray(value.copy_to_host())
    if hasattr(value, "__cuda_array_interface__"):
        try:
            from numba import cuda

            return np.ascontiguousarray(cuda.as_cuda_array(value).copy_to_host())
        except Exception as exc:  # no device, or an interface Numba cannot read
            raise TypeError(
                f"argument {name!r}: a __cuda_array_interface__ array ({type(value).__name__}) "
                f"could not be copied to the host ({exc}); pass a numpy copy, e.g. "
                "cupy.asnumpy(x) or x.cpu().numpy()"
            ) from None
    if isinstance(value, bool | int | float | complex | np.generic):
        return None
    if isinstance(value, tuple) and all(
        isinstance(v, bool | int | float | complex | np.generic) for v in value
    ):
        return None  # a tuple of scalars, passed by value like a scalar
    raise TypeError(
        f"argument {name!r}: simtsafe.sim.check takes numpy arrays, Numba device arrays and "
        f"scalars; got {type(value).__name__}"
    )


def _arguments(replay: Replay, target: Target, args: tuple[Any, ...]) -> dict[str, Buffer]:
    if len(args) != len(target.params):
        raise TypeError(
            f"kernel {target.name!r} takes {len(target.params)} argument(s) "
            f"({', '.join(target.params)}), got {len(args)}"
        )
    params = {p.name: p for p in target.kernel.params} if target.kernel is not None else {}
    buffers: dict[str, Buffer] = {}
    for name, value in zip(target.params, args, strict=True):
        host = _host_copy(value, name)
        p = params.get(name)
        if host is None:
            if p is not None and p.is_array:
                raise TypeError(
                    f"kernel {target.name!r}: parameter {name!r} is an array ({p.annotation}), "
                    f"got the scalar {value!r}"
                )
            replay.args.append(p.dtype.type(value) if p is not None else value)
            continue
        if p is not None:
            if not p.is_array:
                raise TypeError(
                    f"kernel {target.name!r}: parameter {name!r} is a scalar ({p.annotation}), "
                    f"got an array"
                )
            if host.dtype != p.dtype or host.ndim != p.ndim:
                raise TypeError(
                    f"kernel {target.name!r}: parameter {name!r} is {p.annotation} "
                    f"({p.ndim}D {p.dtype}), got a {host.ndim}D {host.dtype} array"
                )
        buf = Buffer(name, GLOBAL, host, track=p is None or p.kind != "in")
        buffers[name] = buf
        replay.args.append(RecArray.over(replay, buf))
    return buffers


def check(
    kernel: Any,
    *launch: Any,
    grid: Any = None,
    block: Any = None,
    shared_mem: int | None = None,
    strict: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    timeout: float = DEFAULT_TIMEOUT,
) -> CheckReport:
    """Replay one launch of ``kernel`` on the CPU and report races and synchronization errors.

    Call it as ``check(kernel, grid, block, *args)`` or, for a
    ``PreparedLaunch`` (grid, block and shared memory taken from it),
    ``check(prepared, *args)``; ``grid=`` / ``block=`` keywords work too.
    Needs no GPU and leaves the rest of the process alone: the kernel's
    Python source runs under the checker's own scheduler, with or without
    ``NUMBA_ENABLE_CUDASIM``.

    Args:
        kernel: a ``@simtsafe.kernel``, a ``PreparedLaunch``, a
            ``numba.cuda.jit`` kernel or a plain Python function.
        *launch: ``grid, block, *args`` (or only ``*args`` with a
            ``PreparedLaunch`` or the keywords). Arrays (numpy, Numba device
            arrays) are copied: the caller's data is never modified;
            ``report.outputs`` holds their final values.
        shared_mem: dynamic shared memory in bytes (``shared.array(0, ...)``).
        strict: raise ``KernelCheckError`` instead of returning a report
            that is not ``ok``.
        max_steps: stop after this many memory accesses and synchronizations
            (the report is then ``complete=False``).
        timeout: stop after this many seconds (same).

    Returns:
        The ``CheckReport``.

    Raises:
        KernelCheckError: ``strict`` and the report is not ``ok``.
        TypeError, ValueError: bad arguments or launch shape.
        Exception: whatever the kernel raised in a simulated thread (with a
            note naming the thread).
    """
    target = resolve(kernel)
    rest = list(launch)
    if target.launch is not None:
        prepared = target.launch
        grid, block = prepared.grid, prepared.block
        shared_mem = prepared.shared_mem if shared_mem is None else shared_mem
    elif grid is None or block is None:
        if len(rest) < 2:
            raise TypeError(
                f"simtsafe.sim.check of {target.name!r} needs a grid and a block: "
                "check(kernel, grid, block, *args)"
            )
        grid, block, rest = rest[0], rest[1], rest[2:]
    grid3 = _dims(grid, "grid", target.name)
    block3 = _dims(block, "block", target.name)
    shared = int(shared_mem or 0)
    if target.kernel is not None and target.kernel.contract is not None and target.launch is None:
        from ..host._contract import check_static

        check_static(target.kernel.contract, grid3, block3, shared, kernel=target.name)
    replay = Replay(
        target.function,
        name=target.name,
        grid=grid3,
        block=block3,
        shared_mem=shared,
        max_steps=max_steps,
        timeout=timeout,
    )
    replay.fn = Rebuilder(replay).kernel_function(target)
    buffers = _arguments(replay, target, tuple(rest))
    elapsed = replay.run()
    if replay.error is not None and replay.stop in ("error", "internal error"):
        exc, thread = replay.error
        where = f"simulated thread {thread.ref}" if thread is not None else "the scheduler"
        exc.add_note(f"raised in {where} while simtsafe.sim.check replayed {target.name!r}")
        raise exc
    report = CheckReport(
        kernel=target.name,
        grid=grid3,
        block=block3,
        shared_mem=shared,
        findings=replay.findings.findings(),
        stats={
            "threads": len(replay.all_threads),
            "blocks": replay.next_block,
            "accesses": replay.steps,
            "barriers": replay.barriers,
            "warp_ops": replay.warp_ops,
            "grid_syncs": replay.grid_syncs,
            "time_s": round(elapsed, 4),
        },
        complete=replay.stop is None,
        stopped=replay.stop,
        outputs={name: buf.raw for name, buf in buffers.items()},
    )
    if strict and not report.ok:
        first = report.findings[0] if report.findings else None
        raise KernelCheckError(
            str(report),
            report=report,
            kernel=target.name,
            filename=first.locations[1][0] if first else None,
            lineno=first.locations[1][1] if first else None,
        )
    return report


def assert_clean(kernel: Any, *launch: Any, **options: Any) -> CheckReport:
    """For tests: ``check`` and fail with the report's text unless it is ``ok``.

    Raises:
        AssertionError: the report has findings or is incomplete; its text is the message.
    """
    __tracebackhide__ = True
    report = check(kernel, *launch, **options)
    if not report.ok:
        raise AssertionError(str(report))
    return report
