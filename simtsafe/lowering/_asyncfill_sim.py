"""Simulator twins of ``shared.fill_async`` / ``fill_transposed`` and the copy groups.

The same runs per thread and the same values as the compiled form
(``_asyncfill``), the same refusals (``_fillrule``). An asynchronous copy
**lands when the thread waits for its group**, not when it is issued: the
thread keeps its copies (not yet closed, then in closed groups, oldest
first), ``wait_group(n)`` performs every group but the ``n`` newest,
``wait_all()`` all of them, and copies never waited for never land. So a
missing wait leaves the tile as it was (``simtsafe.sim.check`` reports a use
of an element nobody wrote as ``uninitialized``), and the writes are
recorded at the wait, by the thread that waits.
"""

from __future__ import annotations

import threading
from typing import Any, NoReturn

import numpy as np

from .._errors import SafetyError
from . import _simrt
from ._fillrule import dynamic_run_bytes, fill_refusal, run_bytes, second_call, wait_refusal
from ._sim import _plain_record

__all__ = ["builtins"]

_LOCAL = threading.local()


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


class _Copies:
    """One simulated thread's copies in flight: the open group and the closed ones."""

    def __init__(self) -> None:
        self.open: list[tuple[Any, tuple[int, ...], Any, tuple[int, ...]]] = []
        self.closed: list[list[tuple[Any, tuple[int, ...], Any, tuple[int, ...]]]] = []


def _copies() -> _Copies:
    """The calling simulated thread's copies (a fresh set for a new simulated thread)."""
    runtime = getattr(_simrt._local, "runtime", None)
    holder = runtime if runtime is not None else threading.current_thread()
    where = _simrt.geometry()
    if getattr(_LOCAL, "holder", None) is not holder or getattr(_LOCAL, "where", None) != where:
        _LOCAL.holder, _LOCAL.where, _LOCAL.copies = holder, where, _Copies()
    copies: _Copies = _LOCAL.copies
    return copies


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Is an array of ``shape`` and ``strides`` C-contiguous as numpy (so Numba's layout
    "C", the only one the compiled fill takes) counts it: every axis of more than one
    element at the stride of the axes after it (attack round 18: a view of the first
    columns of each row passed here, refused when compiled)."""
    if 0 in shape:
        return True
    step = itemsize
    for n, stride in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1 and stride != step:
            return False
        step *= n
    return True


def _check(what: str, t: Any, a: Any, origin: Any) -> tuple[int, tuple[int, int]]:
    """The arguments' refusal, as the compiled form's; returns (run bytes, (r0, c0))."""
    from ._sim import SimDisjointSlice
    from ._swizzlerule import only_fill_and_wgmma
    from ._tiles_sim import SimLocalArray, SimSharedTile, SimSwizzledTile

    if isinstance(t, SimSwizzledTile) and what != "shared.fill_async":
        _reject(only_fill_and_wgmma(t, what))
    if not isinstance(t, SimSharedTile | SimSwizzledTile):
        _reject(f"{what} fills a shared tile (shared.tile); got {type(t).__name__}")
    ndim = len(t._shape)
    if isinstance(a, SimDisjointSlice | SimSharedTile | SimSwizzledTile | SimLocalArray):
        source = type(a).__name__
    else:
        source = "input" if hasattr(a, "shape") and hasattr(a, "dtype") else type(a).__name__
    arr = a
    origin_ok = (ndim == 1 and _is_int(origin)) or (
        ndim == 2 and isinstance(origin, tuple) and len(origin) == 2 and all(map(_is_int, origin))
    )
    itemsize = t._arr.dtype.itemsize
    if t._dynamic:  # 16-byte runs up to the launch length, the last one partial
        run = dynamic_run_bytes(itemsize)
    elif what == "shared.fill_transposed":
        run = run_bytes(t._shape[0], t._shape[0], itemsize) if ndim == 2 else 4
    else:
        run = run_bytes(t._shape[-1], t._arr.shape[-1], itemsize)
    strides = getattr(getattr(arr, "_arr", arr), "strides", None)  # (a SimInput wraps it)
    contiguous = source == "input" and (
        strides is None or _c_contiguous(tuple(arr.shape), tuple(strides), arr.dtype.itemsize)
    )
    refusal = fill_refusal(
        what,
        tile_ndim=ndim,
        dynamic=t._dynamic,
        readonly=t._readonly,
        source=source,
        source_ndim=len(arr.shape) if source == "input" else 0,
        contiguous=contiguous,
        same_dtype=source == "input" and arr.dtype == t._arr.dtype,
        origin_ok=origin_ok,
        run=run,
    )
    if refusal is not None:
        _reject(refusal)
    assert run is not None
    r0, c0 = (0, int(origin)) if ndim == 1 else (int(origin[0]), int(origin[1]))
    return run, (r0, c0)


def _runs(total: int) -> range:
    (_, (tx, ty, tz), (nx, ny, nz), _) = _simrt.geometry()
    tid = tx + nx * (ty + ny * tz)
    return range(tid, total, nx * ny * nz)


def _zero(dtype: np.dtype[Any]) -> Any:
    """The element of ``dtype`` whose bytes are all 0 (a record's too: ``dtype.type(0)`` of a
    record dtype is a void of one byte, not a record)."""
    return np.zeros((), dtype)[()]


def _source(a: Any, gr: int, gc: int) -> Any:
    """``a[gr, gc]`` (1D: ``a[gc]``, gr == 0), 0 outside; a record as a numpy record (the
    simulator reads one as a 0-d view)."""
    if len(a.shape) == 1:
        inside = gr == 0 and 0 <= gc < a.shape[0]
        return _plain_record(a[gc]) if inside else _zero(a.dtype)
    if 0 <= gr < a.shape[0] and 0 <= gc < a.shape[1]:
        return _plain_record(a[gr, gc])
    return _zero(a.dtype)


def fill_async(t: Any, a: Any, origin: Any) -> None:
    size, (r0, c0) = _check("shared.fill_async", t, a, origin)
    n = size // t._arr.dtype.itemsize
    rows = t._shape[0] if len(t._shape) == 2 else 1
    per_row = -(-t._shape[-1] // n)  # a dynamic tile's last run may be partial
    copies = _copies()
    flying = {id(c[0]._arr) for group in [*copies.closed, copies.open] for c in group}
    if id(t._arr) in flying:
        # The thread's own copies of the same elements, both in flight, land in either order
        # on the GPU (the phase analysis refuses this; here for kernels it did not see).
        raise SafetyError(
            "simtsafe: this shared tile is filled asynchronously again while this thread's "
            "earlier copies into it may still be in flight: the two copies of an element "
            "land in either order. Wait for the copies (shared.wait_group(n) or wait_all()) "
            "before the tile is filled again",
            rule="tile-phase",
        )
    for k in _runs(rows * per_row):
        i, j = divmod(k, per_row)
        for e in range(min(n, t._shape[-1] - j * n)):
            idx = (i, j * n + e) if len(t._shape) == 2 else (j * n + e,)
            copies.open.append((t, idx, a, (r0 + i, c0 + j * n + e)))


def fill_async_pair(t1: Any, a1: Any, o1: Any, t2: Any, a2: Any, o2: Any, line2: int) -> None:
    """Two consecutive ``fill_async`` calls (``decoration._fillpairs``): both checked, then
    their copies, the second's as written on source line ``line2``."""
    _check("shared.fill_async", t1, a1, o1)
    try:
        _check("shared.fill_async", t2, a2, o2)
    except SafetyError as e:
        raise SafetyError(second_call(str(e.args[0]), line2), rule="typing") from None
    fill_async(t1, a1, o1)
    fill_async(t2, a2, o2)


def fill_transposed(t: Any, a: Any, origin: Any) -> None:
    size, (r0, c0) = _check("shared.fill_transposed", t, a, origin)
    n = size // t._arr.dtype.itemsize
    per_row = t._shape[0] // n
    for k in _runs(t._shape[1] * per_row):
        r, q = divmod(k, per_row)
        for e in range(n):
            t._store((q * n + e, r), _source(a, r0 + r, c0 + q * n + e))


def _land(group: list[tuple[Any, tuple[int, ...], Any, tuple[int, ...]]]) -> None:
    for t, idx, a, (gr, gc) in group:
        t._store(idx, _source(a, gr, gc))


def commit_group() -> None:
    copies = _copies()
    copies.closed.append(copies.open)
    copies.open = []


def wait_group(n: Any) -> None:
    refusal = wait_refusal(n)
    if refusal is not None:
        _reject(refusal)
    copies = _copies()
    keep = len(copies.closed) - int(n)
    for group in copies.closed[: max(keep, 0)]:
        _land(group)
    copies.closed = copies.closed[max(keep, 0) :]


def wait_all() -> None:
    copies = _copies()
    for group in [*copies.closed, copies.open]:
        _land(group)
    copies.closed, copies.open = [], []


def builtins() -> dict[str, Any]:
    """The ``__ss_shared_*`` names of the whole-tile fills and copy groups on the simulator."""
    return {
        "__ss_shared_fill_async": fill_async,
        "__ss_shared_fill_async_pair": fill_async_pair,
        "__ss_shared_fill_transposed": fill_transposed,
        "__ss_shared_commit_group": commit_group,
        # a kernel that uses wgmma: the device's waits also fence the copies (no proxies here)
        "__ss_shared_wait_group_fenced": wait_group,
        "__ss_shared_wait_all_fenced": wait_all,
        "__ss_shared_wait_group": wait_group,
        "__ss_shared_wait_all": wait_all,
    }
