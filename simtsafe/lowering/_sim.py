"""Simulator twins of the device types (``NUMBA_ENABLE_CUDASIM=1``).

On the simulator a kernel is plain Python run by one ``threading.Thread``
per CUDA thread, so views and witnesses are Python objects that make the
same checks the Numba typing rules make, at the moment the line runs, and
raise ``SafetyError`` with the same ``simtsafe:`` text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NoReturn, final

import ml_dtypes
import numpy as np

from .._errors import SafetyError
from .._spaces import (
    LOCAL_SPACE_NDIM,
    SPACE_NDIM,
    field_read_refusal,
    in_bounds_rank_refusal,
    witness_required,
)
from . import _coop_sim, _simrt

__all__ = [
    "SimDisjointSlice",
    "SimInput",
    "SimWitness",
    "builtins",
    "named_record",
    "read_element",
    "store_element",
    "zero_record",
]

SENTINEL: Final = 2**63 - 1
#: Spaces whose witness is valid in one thread of a group (its leader) only.
_LEADER_SPACES: Final = frozenset({"PerBlock", "PerWarp"})

_CTOR_FOR_SPACE = {
    "Index1D": "thread.index_1d() or `for w in thread.grid_stride(out)`",
    "Index2D": "thread.index_2d()",
    "Index3D": "thread.index_3d()",
    "PerWarp": "thread.warp_leader()",
    "PerBlock": "thread.block_leader()",
    "BlockRow": "`for w in thread.block_row(out)`",
    "WarpRow": "`for w in thread.warp_row(out)`",
    "Columns": "`out[row, thread.column()]`",
}


#: Witness attributes that read one coordinate: name -> (rank -> position in the index).
_COORDS: dict[str, dict[int, int]] = {
    "index": {1: 0},
    "row": {2: 0},
    "col": {2: 1},
    "x": {2: 1, 3: 2},
    "y": {2: 0, 3: 1},
    "z": {3: 0},
}

_ACCESSORS = {
    1: "a 1D witness has .index",
    2: "a 2D witness has .row and .col (also .y and .x)",
    3: "a 3D witness has .z, .y and .x",
}


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


class SimWitness:
    """A witness on the simulator: its space and its indices (SENTINEL when invalid).

    Subclassed once, by a chunked row walk's witness (``lowering._rows_sim.SimRowChunk``).
    """

    __slots__ = ("_idx", "_space")

    def __init__(self, space: str, idx: tuple[int, ...], _token: object = None) -> None:
        if _token is not _TOKEN:
            _reject("ThreadIndex has no public constructor; use a simtsafe.thread constructor")
        self._space = space
        self._idx = idx

    def _coordinate(self, attr: str) -> int:
        rank = len(self._idx)
        position = _COORDS[attr].get(rank)
        if position is None:
            _reject(f"ThreadIndex[{self._space}] has no .{attr}; {_ACCESSORS[rank]}")
        return self._idx[position]

    @property
    def index(self) -> int:
        return self._coordinate("index")

    @property
    def row(self) -> int:
        return self._coordinate("row")

    @property
    def col(self) -> int:
        return self._coordinate("col")

    @property
    def x(self) -> int:
        return self._coordinate("x")

    @property
    def y(self) -> int:
        return self._coordinate("y")

    @property
    def z(self) -> int:
        return self._coordinate("z")

    def in_bounds(self, s: Any) -> Any:
        """numpy's bool, as the device's (``~w.in_bounds(a)`` is its negation)."""
        return np.bool_(self._in_bounds(s))

    def _in_bounds(self, s: Any) -> bool:
        shape = _shape_of(s)
        if isinstance(s, SimDisjointSlice) and s._space != self._space:
            _reject(
                f"ThreadIndex[{self._space}].in_bounds() of a DisjointSlice of space {s._space}"
            )
        owner = getattr(s, "_witness_space", None)  # an AppendBuffer (lowering._append_sim)
        if owner is not None and owner != self._space:
            _reject(
                f"ThreadIndex[{self._space}].in_bounds() of a view written by witnesses of {owner}"
            )
        if isinstance(s, SimDisjointSlice) and s._space == "Columns":
            return 0 <= self._idx[0] < shape[1]  # the column exists (in every row)
        if len(shape) != len(self._idx):
            _reject(
                in_bounds_rank_refusal(f"ThreadIndex[{self._space}]", len(self._idx), len(shape))
            )
        return all(0 <= i < n for i, n in zip(self._idx, shape, strict=True))

    def _refuse(self, *args: object) -> NoReturn:
        _reject(
            f"no arithmetic or comparison on a witness (ThreadIndex[{self._space}]); use "
            ".index / .row / .col / .x / .y / .z for a plain int (which can no longer index a "
            "DisjointSlice)"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __floordiv__ = __truediv__ = __mod__ = __neg__ = __index__ = __int__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __bool__ = _refuse
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ThreadIndex[{self._space}]{self._idx}"


_TOKEN = object()


def _shape_of(s: Any) -> tuple[int, ...]:
    if isinstance(s, _SimView):
        return tuple(s._arr.shape)
    return tuple(s.shape)


def _witness_for(
    arr_shape: Sequence[int], w: SimWitness, row: int | None = None
) -> tuple[int, ...] | None:
    """Indices of ``w`` (after ``row``, for a Columns output) if in bounds, None if out of
    bounds; rejects a rank mismatch."""
    idx = w._idx if row is None else (row, *w._idx)
    if len(idx) != len(arr_shape):
        _reject(
            f"a ThreadIndex[{w._space}] witness addresses {len(w._idx)}D elements, but the "
            f"array is {len(arr_shape)}D"
        )
    if all(0 <= i < n for i, n in zip(idx, arr_shape, strict=True)):
        return idx
    return None


def _plain_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _column_access(space: str, key: Any) -> tuple[Any, int | None]:
    """(witness, row) of an access to an output of ``space``: ``out[row, w]`` for Columns."""
    pair = isinstance(key, tuple) and len(key) == 2
    if space != "Columns":
        if pair and any(isinstance(k, SimWitness) for k in key):
            _reject(
                f"a DisjointSlice of space {space} is indexed by the witness alone (`out[w]`), "
                "not by a (row, witness) pair; that form is for Columns outputs "
                "(`out[row, thread.column()]`)"
            )
        return key, None
    if pair and _plain_int(key[0]) and isinstance(key[1], SimWitness):
        return key[1], int(key[0])
    _reject(
        "a Columns output is indexed as out[row, w]: a plain integer row and the thread's "
        f"column witness w = thread.column() (it owns its column in every row); got {key!r}"
    )


class OwnRecord:
    """The thread's own output record on ``simtsafe.sim.check``'s replay (whose memory gives
    a record as a copy, ``numpy.void``): a reference to its bytes, as on the device --
    ``out[w].x = v`` and ``out[w].inner.x = v`` write the field through the array (a
    recorded write of the element), ``r = out[w]`` then ``r.x`` reads it as it is now."""

    __slots__ = ("_arr", "_at", "_path")

    def __init__(self, arr: Any, at: Any, path: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "_arr", arr)
        object.__setattr__(self, "_at", at)
        object.__setattr__(self, "_path", path)

    def value(self) -> Any:
        """The record (or nested record) as it is now, a numpy record."""
        rec = np.array(_plain_record(self._arr[self._at]))
        for name in self._path:
            rec = rec[name]
        return rec[()]

    def __getattr__(self, name: str) -> Any:
        field = self.value()
        if field.dtype.names is None or name not in field.dtype.names:
            raise AttributeError(name)
        if field.dtype[name].names is not None:
            return OwnRecord(self._arr, self._at, (*self._path, name))
        return field[name]

    def __setattr__(self, name: str, v: Any) -> None:
        rec = np.array(_plain_record(self._arr[self._at]))
        target = rec
        for step in self._path:
            target = target[step]
        with np.errstate(all="ignore"):  # converted as the device's store converts
            target[name] = v
        self._arr[self._at] = rec[()]


def _plain_record(value: Any) -> Any:
    """A record read on the simulator (a wrapped 0-d device array view) as a numpy record."""
    if isinstance(value, OwnRecord):
        return value.value()
    inner = getattr(value, "_item", value)  # FakeWithinKernelCUDAArray -> FakeCUDAArray
    inner = getattr(inner, "_ary", inner)  # FakeCUDAArray -> numpy
    if isinstance(inner, np.ndarray) and inner.ndim == 0:
        return inner[()]
    if isinstance(inner, np.void):
        return inner
    return value


class FieldRecord(np.record):  # type: ignore[misc]  # numpy stubs mark np.void final
    """A record whose fields read by name before numpy's own attributes, as on the device.

    Numba types ``r.size`` of a record with a field ``size`` as the field; numpy's record
    scalar answers its own attribute first (``.size`` 1, ``.ndim`` 0, ``.real`` the whole
    record). Here a field wins whenever the record has it (nested records stay
    ``FieldRecord``); every other name is numpy's.
    """

    __slots__ = ()

    def __getattribute__(self, attr: str) -> Any:
        fields = np.void.__getattribute__(self, "dtype").fields
        if fields is not None and attr in fields and not attr.startswith("_"):
            dtype, offset = fields[attr][:2]
            value = np.void.getfield(self, dtype, offset)
            return value if dtype.names is None else value.view((FieldRecord, dtype))
        if attr in _NOT_ON_RECORDS:
            # the compiled form's refusal (lowering._cuda): a record offers its fields only
            _reject(field_read_refusal(attr, "a value of type Record"))
        return np.record.__getattribute__(self, attr)


#: array attributes kernels may name (the rewrite lets them through) that a record without
#: such a field does not have on the device; numpy's record scalar would answer them.
_NOT_ON_RECORDS: Final = frozenset(
    ("T", "conjugate", "imag", "max", "min", "ndim", "real", "shape", "size")
)


def zero_record(dtype: np.dtype[Any]) -> Any:
    """A zero-filled record whose fields read by name (``r.x``): a read out of range."""
    return np.zeros((), np.dtype((FieldRecord, dtype)))[()]


def named_record(value: Any) -> Any:
    """A record read as the device reads it, fields by name (``r.x``, ``r.size``; numpy's
    record scalar reads them by key only, or answers its own attribute): a copy -- Tier-1
    code writes no field of an element it read."""
    plain = np.array(_plain_record(value))
    return plain.view(np.dtype((FieldRecord, plain.dtype)))[()]


_BF16 = np.dtype(ml_dtypes.bfloat16)


def _widened(dtype: Any, value: Any) -> Any:
    """A witness read as the device gives it: a bf16 element as its exact float32."""
    return np.float32(value) if dtype == _BF16 else value


class _SimView:
    """What both simulator views share: the wrapped array's metadata, witness reads."""

    __slots__ = ("_arr",)

    def __init__(self, arr: Any) -> None:
        self._arr = arr

    def _read(self, w: SimWitness, row: int | None = None) -> Any:
        """Bounds-checked read through a witness (and a Columns row): zero when out of range."""
        return self._element(_witness_for(self._arr.shape, w, row))

    def _element(self, idx: tuple[int, ...] | None) -> Any:
        """The element at ``idx`` as a witness read gives it; zero (None: out of range)."""
        if idx is None:
            if self._arr.dtype.names is not None:  # a zero-filled scratch record
                return zero_record(self._arr.dtype)
            return _widened(self._arr.dtype, self._arr.dtype.type(0))
        return _widened(self._arr.dtype, self._arr[idx if len(idx) > 1 else idx[0]])

    def __len__(self) -> int:
        return int(self._arr.shape[0])

    @property
    def size(self) -> int:
        return int(self._arr.size)

    @property
    def ndim(self) -> int:
        return int(self._arr.ndim)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._arr.shape)


@final
class SimDisjointSlice(_SimView):
    """Output view on the simulator: witness-only access, bounds-checked."""

    __slots__ = ("_space",)

    def __init__(self, arr: Any, space: str) -> None:
        super().__init__(arr)
        self._space = space

    def _check_space(self, w: Any, writing: bool) -> None:
        ctor = _CTOR_FOR_SPACE[self._space]
        if not isinstance(w, SimWitness):
            if writing:
                _reject(witness_required(self._space, ctor, type(w).__name__))
            _reject(
                f"a DisjointSlice of space {self._space} is read only through a witness of that "
                f"space (got {type(w).__name__}): any other element may be written by another "
                f"thread. Read through {ctor}, or keep the value in a local"
            )
        if writing and w._space in LOCAL_SPACE_NDIM:
            _reject(
                f"a block-local ThreadIndex[{w._space}] witness cannot write a DisjointSlice: it "
                "is unique within a block only (another block has the same one). It fills "
                f"shared tiles; write the output with {ctor}"
            )
        if w._space != self._space:
            verb = "write" if writing else "read"
            _reject(
                f"a ThreadIndex[{w._space}] witness cannot {verb} a DisjointSlice of space "
                f"{self._space}: its uniqueness is proven for {w._space} only. Use {ctor}"
            )

    def __setitem__(self, key: Any, value: Any) -> None:
        w, row = _column_access(self._space, key)
        self._check_space(w, writing=True)
        idx = _witness_for(self._arr.shape, w, row)
        if self._space in _LEADER_SPACES:  # sim.check: a write no leader ran (sim/_leaders)
            _simrt.leader_write(self._space, SENTINEL not in w._idx)
        if idx is not None:
            store_element(self._arr, idx, value)

    def __getitem__(self, key: Any) -> Any:
        w, row = _column_access(self._space, key)
        self._check_space(w, writing=False)
        value = self._read(w, row)
        if type(value) is np.void and value.dtype.names:  # sim.check's replay: a copy
            idx = _witness_for(self._arr.shape, w, row)
            if idx is not None:
                return OwnRecord(self._arr, idx if len(idx) > 1 else idx[0])
        return value


def store_element(arr: Any, idx: tuple[int, ...], value: Any) -> None:
    """Store ``value`` at ``idx`` of ``arr`` as every device store does (``_bf16.stored_element``):
    into bf16 via float32, rounded to nearest even; a record by value."""
    at = idx if len(idx) > 1 else idx[0]
    if arr.dtype == _BF16:
        with np.errstate(all="ignore"):  # NaN and overflow silently, as on the GPU
            arr[at] = np.float32(value)
        return
    arr[at] = _plain_record(value)


def read_element(view: SimDisjointSlice, idx: tuple[int, ...]) -> Any:
    """``grid.read(view, idx)``: any element, bounds-checked as a witness read (0 outside)."""
    inside = all(0 <= i < n for i, n in zip(idx, view._arr.shape, strict=True))
    return view._element(idx if inside else None)


@final
class SimInput(_SimView):
    """Read-only input view on the simulator."""

    __slots__ = ()

    def __setitem__(self, i: Any, value: Any) -> NoReturn:
        _reject(
            f"cannot store into a read-only input (array({self._arr.dtype}, {self._arr.ndim}d)): "
            "In[...] parameters are read-only. Make the parameter a DisjointSlice output if the "
            "kernel writes it"
        )

    def _read(self, w: SimWitness, row: int | None = None) -> Any:
        value = super()._read(w, row)
        if self._arr.dtype.names and not isinstance(value, FieldRecord):
            # numpy's record scalar reads fields by key only (or answers its own `.size`);
            # the kernel reads `a[w].x` and `a[w].size` as fields (sim.check's replay and
            # Numba's simulator both give other objects; an input's record is never written)
            return named_record(value)
        return value

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, SimWitness):
            return self._read(i)
        if isinstance(i, tuple) and any(isinstance(k, SimWitness) for k in i):
            _reject(
                f"an input is indexed by a witness alone (`a[w]`) or by plain ints; got {i!r}. "
                "Read a 2D input at a column witness's column with its plain int: "
                "a[row, w.index] (not bounds-checked, as any plain-int read)"
            )
        value = self._arr[i]
        if hasattr(value, "shape") and getattr(value, "ndim", 0) > 0:
            return SimInput(value)  # slices of an input stay read-only
        if self._arr.dtype.names and not isinstance(value, FieldRecord | SimInput):
            return named_record(value)  # sim.check's replay: `a[y, x].r` reads by name (port18)
        return value

    @property
    def dtype(self) -> Any:
        return self._arr.dtype


# ----------------------------------------------------------------------------- geometry


def _geometry() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(blockIdx, threadIdx, blockDim, gridDim) of the calling simulated thread.

    Read through the runtime seam (``_simrt``): Numba's simulator by default,
    ``simtsafe.sim.check``'s replay while a check runs.
    """
    return _simrt.geometry()


def _mint(space: str, idx: tuple[int, ...]) -> SimWitness:
    return SimWitness(space, idx, _TOKEN)


def _linear_1d(checked: bool) -> int:
    (bx, by, bz), (tx, _, _), (nx, ny, nz), (_, gy, gz) = _geometry()
    if (ny, nz, gy, gz) != (1, 1, 1, 1):
        if checked:
            return SENTINEL
        raise AssertionError("simtsafe: 1D domain was proven on the host but the launch is not 1D")
    return bx * nx + tx


def _index_2d(checked: bool) -> tuple[int, int]:
    (bx, by, _), (tx, ty, _), (nx, ny, nz), (_, _, gz) = _geometry()
    row = by * ny + ty
    if (nz, gz) != (1, 1):
        if checked:
            row = SENTINEL
        else:
            raise AssertionError("simtsafe: 2D domain was proven on the host but the launch is 3D")
    return row, bx * nx + tx


def _index_3d() -> tuple[int, int, int]:
    # Unique in every launch shape: no check, as on the device.
    (bx, by, bz), (tx, ty, tz), (nx, ny, nz), _ = _geometry()
    return bz * nz + tz, by * ny + ty, bx * nx + tx


def _linear_ids() -> tuple[int, int, int]:
    """(linear block id, linear thread id in block, threads per block)."""
    (bx, by, bz), (tx, ty, tz), (nx, ny, nz), (gx, gy, _) = _geometry()
    return bx + gx * (by + gy * bz), tx + nx * (ty + ny * tz), nx * ny * nz


def _field_read(rec: Any, attr: str) -> Any:
    """A helper's ``v.attr`` (lowering._fieldreads): the field of a record that has it."""
    names = getattr(getattr(rec, "dtype", None), "names", None)
    if isinstance(rec, np.ndarray) or not names or attr not in names:
        what = "Record" if isinstance(rec, np.void) else type(rec).__name__
        _reject(field_read_refusal(attr, f"a value of type {what}"))
    return rec[attr]


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names for a rewritten kernel or helper on the simulator."""
    checked1 = proven_domain != 1
    checked2 = proven_domain != 2

    def index_1d() -> SimWitness:
        return _mint("Index1D", (_linear_1d(checked1),))

    def column() -> SimWitness:
        return _mint("Columns", (_linear_1d(checked1),))

    def index_2d() -> SimWitness:
        return _mint("Index2D", _index_2d(checked2))

    def index_3d() -> SimWitness:
        return _mint("Index3D", _index_3d())

    def warp_leader() -> SimWitness:
        block, tid, nthreads = _linear_ids()
        ok = tid % 32 == 0
        return _mint("PerWarp", (block * ((nthreads + 31) // 32) + tid // 32 if ok else SENTINEL,))

    def block_leader() -> SimWitness:
        block, tid, _ = _linear_ids()
        return _mint("PerBlock", (block if tid == 0 else SENTINEL,))

    def gs_start() -> int:
        return _linear_1d(checked1)

    def gs_step() -> int:
        _, _, (nx, _, _), (gx, _, _) = _geometry()
        return nx * gx

    def mint_1d(k: int) -> SimWitness:
        return _mint("Index1D", (k,))

    def extent(s: Any) -> int:
        shape = _shape_of(s)
        if len(shape) != 1:
            _reject(f"thread.grid_stride() walks 1D arrays; got a {len(shape)}D one")
        return shape[0]

    def no_witness(x: Any) -> Any:
        items = x if isinstance(x, tuple) else (x,)
        if any(
            isinstance(v, SimWitness) or getattr(v, "_helpers_cannot_return", False) for v in items
        ):
            _reject(
                "a device helper may not return a witness, a tile or a thread-private array: "
                "they are made in the function that uses them. Return plain values, or pass the "
                "DisjointSlice (or the tile, or the array) to the helper"
            )
        return x

    def unchecked(s: Any) -> Any:
        if not isinstance(s, SimDisjointSlice):
            _reject(f".unchecked is a DisjointSlice attribute; got {type(s).__name__}")
        return s._arr

    def require_block(x: int, y: int, z: int) -> None:
        return None

    def view_in(arr: Any) -> SimInput:
        return SimInput(arr)

    names: dict[str, Any] = {
        "__ss_index_1d": index_1d,
        "__ss_column": column,
        "__ss_index_2d": index_2d,
        "__ss_index_3d": index_3d,
        "__ss_warp_leader": warp_leader,
        "__ss_block_leader": block_leader,
        "__ss_gs_start": gs_start,
        "__ss_gs_step": gs_step,
        "__ss_mint_1d": mint_1d,
        "__ss_extent": extent,
        "__ss_no_witness": no_witness,
        "__ss_unchecked": unchecked,
        "__ss_require_block": require_block,
        "__ss_max_registers": lambda n: None,  # a register budget: nothing to simulate
        "__ss_bound_block": lambda n: None,  # prepare enforces the bound: nothing to simulate
        "__ss_min_blocks": lambda n: None,  # an occupancy target: nothing to simulate
        "__ss_view_in": view_in,
        "__ss_field": _field_read,
    }
    for space in SPACE_NDIM:
        names[f"__ss_view_{space}"] = (lambda sp: lambda arr: SimDisjointSlice(arr, sp))(space)
    from . import _random

    names.update(_random.builtins())
    from . import _tiles_sim  # imports this module: bound late

    names.update(_tiles_sim.builtins(proven_domain=proven_domain))
    names.update(_coop_sim.builtins(proven_domain=proven_domain))
    from . import _rows_sim  # imports this module: bound late

    names.update(_rows_sim.builtins(proven_domain=proven_domain))
    from . import _ufuncs

    names.update(_ufuncs.sim_builtins())
    from . import _vec_sim

    names.update(_vec_sim.builtins())
    from . import _asyncfill_sim

    names.update(_asyncfill_sim.builtins())

    from . import _mma_sim

    names.update(_mma_sim.builtins(proven_domain=proven_domain))
    from . import _wgmma_sim

    names.update(_wgmma_sim.builtins(proven_domain=proven_domain))
    from . import _append_sim, _hash_sim  # import this module: bound late

    names.update(_append_sim.builtins())
    names.update(_hash_sim.builtins())
    return names
