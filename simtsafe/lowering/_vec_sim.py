"""Simulator twins of ``simtsafe.vec.load`` / ``vec.store``: the same values, one recorded
access per element.

Elements outside the array read 0, as on the device; the device's single
vector access is a speed matter only, so the simulator reads element by
element (``sim.check`` records each read through the array it wraps).
"""

from __future__ import annotations

from typing import Any, NoReturn

import ml_dtypes
import numpy as np

from .._errors import SafetyError
from ._vecrule import MAX_RUNS, vec_refusal, vec_store_at_refusal, vec_store_refusal

__all__ = ["builtins"]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


def vec_load(a: Any, idx: Any, n: Any) -> tuple[Any, ...]:
    from ._swizzlerule import only_fill_and_wgmma
    from ._tiles_sim import SimSharedTile, SimSwizzledTile  # imports _sim: bound late

    arr = getattr(a, "_arr", a)
    if isinstance(a, SimSwizzledTile):
        _reject(only_fill_and_wgmma(a, "vec.load"))
    if hasattr(a, "_shape") and not isinstance(a, SimSharedTile):
        _reject(f"vec.load reads an In[...] input array or a shared tile; got {type(a).__name__}")
    extents = a._shape if isinstance(a, SimSharedTile) else tuple(arr.shape)
    dtype = arr.dtype
    last = arr.ndim - 1  # the simulator's shape tuples refuse negative indices
    strides = getattr(arr, "strides", None)  # sim.check's recording arrays are C-ordered
    contiguous = strides is None or strides[last] == dtype.itemsize or arr.shape[last] <= 1
    bf16 = dtype == _BF16
    kind = "f" if bf16 else dtype.kind
    refusal = vec_refusal(arr.ndim, contiguous, kind, dtype.itemsize, n)
    if refusal is not None:
        _reject(refusal)
    if arr.ndim == 1:
        if isinstance(idx, tuple):
            _reject(f"vec.load of a 1D input takes an int j as its index; got {idx!r}")
        row: tuple[int, ...] = ()
        j = int(idx)
        in_row = True
    else:
        if not isinstance(idx, tuple) or len(idx) != 2:
            _reject(
                f"vec.load of a 2D input takes a pair (row, j) of ints as its index; got {idx!r}"
            )
        r, j = int(idx[0]), int(idx[1])
        row = (r,)
        in_row = 0 <= r < extents[0]
    length = extents[last]
    zero = np.float32(0) if bf16 else dtype.type(0)
    out = []
    for k in range(n):
        at = j * n + k
        inside = in_row and j >= 0 and at < length
        value = arr[(*row, at) if row else at] if inside else zero
        out.append(np.float32(value) if bf16 else value)
    return tuple(out)


def vec_load_runs(a: Any, idxs: Any, n: Any) -> tuple[tuple[Any, ...], ...]:
    """``vec.load(a, i, n)`` for each index of the tuple ``idxs`` (the compiled form issues
    the vector loads together; the values are the same)."""
    if not isinstance(idxs, tuple) or not 1 <= len(idxs) <= MAX_RUNS:
        _reject(f"vec.load_runs takes a tuple of 1 to {MAX_RUNS} run indices; got {idxs!r}")
    return tuple(vec_load(a, i, n) for i in idxs)


def vec_store(t: Any, values: Any) -> None:
    from ._tiles_sim import SimOutTile  # imports _sim: bound late

    if not isinstance(t, SimOutTile):
        _reject(
            "vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got "
            f"{type(t).__name__}"
        )
    if not isinstance(values, tuple):
        _reject(f"vec.store takes a tuple of {t._tile[0]} values; got {type(values).__name__}")
    dtype = t._arr.dtype
    kind = "1d" if len(t._tile) == 1 else "2d" if t._steps == (1, 1) else "2d_strided"
    refusal = vec_store_refusal(
        kind, t._tile, "f" if dtype == _BF16 else dtype.kind, dtype.itemsize, len(values)
    )
    if refusal is not None:
        _reject(refusal)
    for v in values:
        if isinstance(v, (complex, np.complexfloating)) or not np.isscalar(v):
            _reject(f"vec.store writes int, float or bool values; got {type(v).__name__}")
    for k, v in enumerate(values):
        t[k] = v  # converted as the tile's element store does (_sim.store_element)


def vec_store_at(raw: Any, j: Any, values: Any) -> None:
    from ._sim import SimDisjointSlice, SimInput, store_element  # imports this module: late

    what = (
        "view"
        if isinstance(raw, SimDisjointSlice)
        else "input"
        if isinstance(raw, SimInput)
        else "raw"
        if hasattr(raw, "dtype") and hasattr(raw, "shape") and hasattr(raw, "__setitem__")
        else type(raw).__name__
    )
    ok = what == "raw"
    if ok and not isinstance(values, tuple):
        _reject(f"vec.store_at takes a tuple of 2, 4 or 8 values; got {type(values).__name__}")
    if ok:
        dtype = raw.dtype
        strides = getattr(raw, "strides", None)  # sim.check's recording arrays are C-ordered
        contiguous = strides is None or raw.ndim != 1 or strides[0] == dtype.itemsize
        refusal = vec_store_at_refusal(
            what,
            raw.ndim,
            contiguous,
            "f" if dtype == _BF16 else dtype.kind,
            dtype.itemsize,
            len(values),
        )
    else:
        refusal = vec_store_at_refusal(what, 0, False, "", 0, 0)
    if refusal is not None:
        _reject(refusal)
    if isinstance(j, bool) or not isinstance(j, (int, np.integer)):
        _reject(f"vec.store_at takes an int run index j; got {type(j).__name__}")
    for v in values:
        if isinstance(v, (complex, np.complexfloating)) or not np.isscalar(v):
            _reject(f"vec.store_at writes int, float or bool values; got {type(v).__name__}")
    n = len(values)
    length = raw.shape[0]
    for k, v in enumerate(values):
        at = int(j) * n + k
        if j >= 0 and at < length:
            store_element(raw, (at,), v)  # converted as every device store does


def builtins() -> dict[str, Any]:
    return {
        "__ss_vec_load": vec_load,
        "__ss_vec_load_runs": vec_load_runs,
        "__ss_vec_store": vec_store,
        "__ss_vec_store_at": vec_store_at,
    }
