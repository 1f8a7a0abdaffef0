"""Simulator twins of shared tiles, block-local witnesses, output tiles and local arrays.

The same rules as the Numba typing in ``_tiles`` (same ``simtsafe:`` texts),
checked when the line runs, and the same results: accesses out of range
write nothing and read 0. Launch geometry, barriers and per-block shared
storage come from the simulated-thread runtime (``_simrt``), so these twins
run under Numba's simulator and under ``simtsafe.sim.check`` alike.
"""

from __future__ import annotations

import sys
import threading
import weakref
from types import CodeType
from typing import Any, Final, NoReturn, final

import numpy as np

from .._records import array_field, misaligned_record, misaligned_refusal, record_field_refusal
from .._spaces import out_tile_too_large
from . import _simrt
from ._construle import READ_ONLY, bad_index, refused_array
from ._coop_sim import SimSharedAccumulator
from ._cooprule import WALK_2D_ACCUMULATOR
from ._sim import (
    _BF16,
    SENTINEL,
    SimDisjointSlice,
    SimWitness,
    _mint,
    _plain_record,
    _reject,
    named_record,
    store_element,
    zero_record,
)
from ._swizzlerule import helper_refusal, only_fill_and_wgmma, swizzle_refusal

__all__ = ["SimLocalArray", "SimOutTile", "SimSharedTile", "builtins"]

_TILE_SPACE: Final = {1: "Local1D", 2: "Local2D"}
_LOCAL_CTOR: Final = {
    "Local1D": "thread.local_index() or `for w in thread.block_stride(tile)`",
    "Local2D": "thread.local_index_2d() or `for w in thread.block_stride(tile)`",
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _int_index(i: Any, ndim: int, plain: bool = False) -> tuple[int, ...] | None:
    """``i`` as a tuple of ints if it is an int (1D) or a tuple of ``ndim`` ints."""
    if ndim == 1 and _is_int(i):
        return (int(i),)
    if isinstance(i, tuple) and len(i) == ndim:
        if ndim == 2:  # the common case, without generators (the simulator's hot path)
            a, b = i
            if _is_int(a) and _is_int(b):
                return (int(a), int(b))
        elif all(_is_int(v) for v in i):
            return tuple(int(v) for v in i)
    if plain:
        return None
    # An index loaded from memory no thread wrote (simtsafe.sim.check): a use, reported
    # by the runtime; the plain value indexes.
    if isinstance(i, tuple):
        return _int_index(tuple(_simrt.defined(v, _AS_INDEX) for v in i), ndim, True)
    return _int_index(_simrt.defined(i, _AS_INDEX), ndim, True)


_AS_INDEX = "used as an index"
_INTO_LOCAL = (
    "stored to a thread-private array (the checker does not follow undefined values into "
    "simtsafe's local arrays)"
)
_PLAIN = (np.generic, int, float, complex)


def _type_name(i: Any) -> str:
    if isinstance(i, SimWitness):
        return f"ThreadIndex[{i._space}]"
    if isinstance(i, tuple):
        return "(" + ", ".join(_type_name(v) for v in i) + ")"
    return type(i).__name__


def _inside(shape: tuple[int, ...], idx: tuple[int, ...]) -> bool:
    if len(idx) == 2 and len(shape) == 2:  # the common case, without a generator
        return 0 <= idx[0] < shape[0] and 0 <= idx[1] < shape[1]
    return all(0 <= i < n for i, n in zip(idx, shape, strict=True))


def _zero(dtype: np.dtype[Any]) -> Any:
    """An element read out of range: 0, or a zero-filled record whose fields read as 0."""
    if dtype.names is not None:
        return zero_record(dtype)
    return dtype.type(0)


def _element_of(arr: Any, idx: tuple[int, ...]) -> Any:
    """The element at ``idx``; a record as one whose fields read by name (``r.x``), as the
    device reads them (numpy's own record scalar has no attributes)."""
    value = arr[idx if len(idx) > 1 else idx[0]]
    return named_record(value) if arr.dtype.names is not None else value


def _as_dtype(dtype: Any, what: str | None = None) -> np.dtype[Any]:
    """``dtype`` as numpy's; for the element of ``what`` (a tile, a local array) a record
    with an array field is refused, as the typing does (``_tilebase.dtype_of``)."""
    if isinstance(dtype, np.dtype):
        parsed: np.dtype[Any] = dtype
    else:
        try:
            parsed = np.dtype(dtype)
        except TypeError:
            from numba.cuda.np.numpy_support import as_dtype

            parsed = as_dtype(dtype)  # a Numba type such as numba.float32
    field = array_field(parsed) if what is not None else None
    if field is not None:
        _reject(record_field_refusal(what or "", field))
    nested = misaligned_record(parsed) if what is not None else None
    if nested is not None:
        _reject(misaligned_refusal(what or "", nested, parsed))
    return parsed


def _static_shape(shape: Any, what: str) -> tuple[int, ...]:
    dims = (shape,) if _is_int(shape) else shape
    if not isinstance(dims, tuple) or not dims or not all(_is_int(n) and n >= 1 for n in dims):
        _reject(
            f"{what} needs a static positive shape: an int or a tuple of ints known when the "
            f"kernel compiles, got {shape!r}"
        )
    return tuple(int(n) for n in dims)


class _Holder:
    """A tile or a local array on the simulator: a numpy array indexed with checks."""

    __slots__ = ("_arr", "_shape")
    _what = "array"
    _helpers_cannot_return = True

    def __init__(self, arr: Any, shape: tuple[int, ...] | None = None) -> None:
        self._arr = arr  # the storage (a padded tile's rows are longer)
        self._shape = tuple(int(n) for n in arr.shape) if shape is None else shape

    def _load(self, idx: tuple[int, ...]) -> Any:
        bf16 = self._arr.dtype == _BF16  # read as its exact float32, as on the device
        if not _inside(self._shape, idx):
            return np.float32(0) if bf16 else _zero(self._arr.dtype)
        value = _element_of(self._arr, idx)
        return np.float32(value) if bf16 else value

    def _store(self, idx: tuple[int, ...], value: Any) -> None:
        if type(self._arr) is np.ndarray and not isinstance(value, _PLAIN):
            # A thread-private array keeps no shadow: an undefined value stored is a use.
            value = _simrt.defined(value, _INTO_LOCAL)
        if _inside(self._shape, idx):
            if self._arr.dtype == _BF16:  # via float32, rounded to nearest even
                store_element(self._arr, idx, value)
                return
            at = idx if len(idx) > 1 else idx[0]
            self._arr[at] = _plain_record(value) if self._arr.dtype.names else value

    def __iter__(self) -> NoReturn:
        _reject(f"a {self._what} cannot be iterated; loop over range(len(...)) and index it")

    def __len__(self) -> int:
        return self._shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def size(self) -> int:
        return int(np.prod(self._shape))

    @property
    def ndim(self) -> int:
        return len(self._shape)


@final
@final
class _AccumulatorWalk:
    """What ``thread.block_stride(acc)`` needs of a 1D shared accumulator."""

    __slots__ = ("shape",)
    ndim = 1
    _space = "Local1D"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


class SimSharedTile(_Holder):
    """A block's shared tile: filled through block-local witnesses, read with them or ints."""

    __slots__ = ("_dynamic", "_readonly", "_space")
    _what = "shared tile"

    def __init__(
        self,
        arr: Any,
        shape: tuple[int, ...] | None = None,
        readonly: bool = False,
        dynamic: bool = False,
    ) -> None:
        super().__init__(arr, shape)
        self._space = _TILE_SPACE[len(self._shape)]
        self._readonly = readonly
        self._dynamic = dynamic  # the launch's dynamic shared memory (its length at launch)

    def read_view(self) -> SimSharedTile:
        """The read-only view a helper receives (``__ss_tile_read``)."""
        return SimSharedTile(self._arr, self._shape, readonly=True, dynamic=self._dynamic)

    def __setitem__(self, w: Any, value: Any) -> None:
        if self._readonly:
            _reject(
                f"a shared tile passed to a helper ({self!r}, read-only) is read-only there: "
                "the call is a read of the tile (in its read phase, after a barrier). Fill "
                "tiles in the kernel that makes them"
            )
        if not isinstance(w, SimWitness) or w._space != self._space:
            _reject(
                f"a shared tile ({self!r}) is filled only through a block-local witness of its "
                f"space ({self._space}): each element then has one writer. Got an index of type "
                f"{_type_name(w)}; use {_LOCAL_CTOR[self._space]}"
            )
        self._store(w._idx, value)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, SimWitness):
            if i._space != self._space:
                _reject(
                    f"a ThreadIndex[{i._space}] witness cannot index a {self!r} (its space is "
                    f"{self._space}); read with ints, e.g. w.index or (w.row, w.col)"
                )
            return self._load(i._idx)
        idx = _int_index(i, self.ndim)
        if idx is None:
            what = "an int" if self.ndim == 1 else "(row, col) ints"
            _reject(
                f"a {self.ndim}D shared tile is read with a {self._space} witness or {what}, "
                f"got {_type_name(i)}; tiles have no slices"
            )
        return self._load(idx)

    def __iter__(self) -> NoReturn:
        _reject(
            f"a shared tile ({self!r}) cannot be iterated; fill it with "
            "`for w in thread.block_stride(tile)` and read it with indices"
        )

    def __repr__(self) -> str:
        return f"SharedTile[{self._arr.dtype}, {'x'.join(str(n) for n in self._shape)}]"


@final
class SimSwizzledTile(_Holder):
    """A shared tile in the 128-byte swizzled layout: filled by ``fill_async`` and read by
    ``wgmma.mma`` / ``mma_async`` only (its elements are kept as rows here)."""

    __slots__ = ()
    _what = "swizzled shared tile"
    _dynamic = False
    _readonly = False

    def __setitem__(self, w: Any, value: Any) -> NoReturn:
        _reject(only_fill_and_wgmma(self, "a store"))

    def __getitem__(self, i: Any) -> NoReturn:
        _reject(only_fill_and_wgmma(self, "an element read"))

    def __iter__(self) -> NoReturn:
        _reject(only_fill_and_wgmma(self, "iteration"))

    def __repr__(self) -> str:
        rows, cols = self._shape
        return f"SharedTile[{self._arr.dtype}, {rows}x{cols}, swizzle 128]"


@final
class SimLocalArray(_Holder):
    """A thread-private array: ints index it, out of range writes nothing and reads 0."""

    __slots__ = ()
    _what = "thread-private array"

    def _index(self, i: Any) -> tuple[int, ...]:
        idx = _int_index(i, self.ndim)
        if idx is None:
            many = "an int" if self.ndim == 1 else f"{self.ndim} ints"
            _reject(
                f"a thread-private array ({self!r}) is indexed with {many}, got {_type_name(i)}"
            )
        return idx

    def __setitem__(self, i: Any, value: Any) -> None:
        self._store(self._index(i), value)

    def __getitem__(self, i: Any) -> Any:
        return self._load(self._index(i))

    def __repr__(self) -> str:
        return f"LocalArray[{self._arr.dtype}, {'x'.join(str(n) for n in self._shape)}]"


@final
class SimConstArray(_Holder):
    """A constant array (``cuda.const.array_like``): read by ints, out of range reads 0, and
    never written (the same refusals as the compiled form's typing, ``_constarrays``)."""

    __slots__ = ()
    _what = "constant array"

    def _index(self, i: Any) -> tuple[int, ...]:
        idx = _int_index(i, self.ndim)
        if idx is None:
            _reject(bad_index(self.ndim))
        return idx

    def __setitem__(self, i: Any, value: Any) -> NoReturn:
        _reject(READ_ONLY)

    def __getitem__(self, i: Any) -> Any:
        return self._load(self._index(i))

    def __repr__(self) -> str:
        return f"ConstArray[{self._arr.dtype}, {self.ndim}d]"


@final
class SimOutTile:
    """The rectangle of an output one thread owns, indexed with local indices."""

    __slots__ = ("_arr", "_origins", "_steps", "_tile")
    _helpers_cannot_return = True

    def __init__(
        self, arr: Any, origins: tuple[int, ...], steps: tuple[int, ...], tile: tuple[int, ...]
    ) -> None:
        self._arr = arr
        self._origins = origins
        self._steps = steps
        self._tile = tile

    def _element(self, i: Any) -> tuple[int, ...] | None:
        """The output coordinates of local index ``i``, None when it is not the thread's."""
        idx = _int_index(i, len(self._tile))
        if idx is None:
            how = "t[k] = v" if len(self._tile) == 1 else "t[r, c] = v"
            _reject(
                f"an output tile ({self!r}) is written with local indices ({how}), got "
                f"{_type_name(i)}"
            )
        if not _inside(self._tile, idx):
            return None
        coords = tuple(o + k * s for o, k, s in zip(self._origins, idx, self._steps, strict=True))
        return coords if _inside(tuple(self._arr.shape), coords) else None

    def __setitem__(self, i: Any, value: Any) -> None:
        coords = self._element(i)
        if coords is not None:
            store_element(self._arr, coords, value)

    def __getitem__(self, i: Any) -> Any:
        coords = self._element(i)
        if coords is None:
            return _zero(self._arr.dtype)
        return _element_of(self._arr, coords)

    def __len__(self) -> int:
        if len(self._tile) != 1:
            _reject(f"len() of a 2D output tile ({self!r}); its shape is static")
        return self._tile[0]

    def __iter__(self) -> NoReturn:
        _reject(f"a {self!r} cannot be iterated; loop over range(len(...)) and index it")

    def __repr__(self) -> str:
        return f"OutTile[{self._arr.dtype}, {'x'.join(str(n) for n in self._tile)}]"


# ----------------------------------------------------------------------------- call sites


def _caller_site(what: str) -> tuple[str, int, int]:
    """The storage key per block of the kernel code that makes a tile: its file, line, and
    the instruction on that line (two tiles made on one line are two call sites, as on the
    GPU, where each call site is its own shared array)."""
    frame = sys._getframe(2)
    return frame.f_code.co_filename, frame.f_lineno, frame.f_lasti


#: Per kernel code object, by identity (id -> (a weak reference to it, its sites)): the
#: bytes of each tile site of its tile_shared window. Not a WeakKeyDictionary: code objects
#: compare equal when their bodies are equal, whatever their file, so two kernels of one
#: body in two modules would share (and sum) one window.
_WINDOWS: dict[int, tuple[weakref.ref[CodeType], dict[tuple[str, int, int], int]]] = {}
_WINDOW_LOCK = threading.Lock()


def _window_sites(code: CodeType) -> dict[tuple[str, int, int], int]:
    """The tile sites of ``code``'s window (the caller holds ``_WINDOW_LOCK``)."""
    key = id(code)
    entry = _WINDOWS.get(key)
    if entry is None or entry[0]() is not code:

        def gone(ref: weakref.ref[CodeType]) -> None:
            # (no lock: the collector may run this while a thread holds _WINDOW_LOCK; the
            # entry is dropped only if it is still the dead code's, not a successor's)
            if (e := _WINDOWS.get(key)) is not None and e[0] is ref:
                _WINDOWS.pop(key, None)

        entry = _WINDOWS[key] = (weakref.ref(code, gone), {})
    return entry[1]


def _dynamic_array(dtype: np.dtype[Any], site: tuple[str, int, int]) -> Any:
    """The launch's dynamic shared memory viewed as ``dtype`` elements."""
    runtime = _simrt.current()
    if isinstance(runtime, _simrt._NumbaSimulatorRuntime):
        from numba.cuda.simulator.kernel import _get_kernel_context

        return _get_kernel_context().shared.array(0, dtype)
    return _simrt.shared_array((0,), dtype, site)  # the checker's dynamic buffer


# ----------------------------------------------------------------------------- geometry


def _linear_tid() -> int:
    _, (tx, ty, tz), (nx, ny, _), _ = _simrt.geometry()
    return tx + nx * (ty + ny * tz)


def _proof_broken(what: str) -> NoReturn:
    raise AssertionError(f"simtsafe: {what} was proven on the host but the launch breaks it")


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names of tiles, block-local witnesses and local arrays on the simulator."""
    z_proven = proven_domain in (1, 2)

    def shared_tile(
        shape: Any, dtype: Any, pad: Any = 0, swizzle: Any = 0
    ) -> SimSharedTile | SimSwizzledTile:
        return make_tile(shape, dtype, pad, swizzle, _caller_site("shared.tile()"))

    def make_tile(
        shape: Any, dtype: Any, pad: Any, swizzle: Any, site: tuple[str, int, int]
    ) -> SimSharedTile | SimSwizzledTile:
        dims = _static_shape(shape, "shared.tile(shape, dtype)")
        if len(dims) not in _TILE_SPACE:
            _reject(f"shared.tile(): a tile is 1D or 2D with positive extents, got {dims}")
        if not (_is_int(pad) and pad >= 0) or (pad and len(dims) != 2):
            _reject(
                "shared.tile(): pad is a compile-time int >= 0 that pads the rows of a 2D tile, "
                f"got {pad!r} for a {len(dims)}D tile"
            )
        if not _is_int(swizzle) or swizzle not in (0, 128):
            _reject(
                f"shared.tile(): swizzle is 0 (rows) or 128 (the 128-byte swizzled layout that "
                f"wgmma.mma reads), a compile-time int; got {swizzle!r}"
            )
        elem = _as_dtype(dtype, "shared.tile")
        if swizzle:
            refusal = swizzle_refusal(dims, elem, elem in (_BF16, np.dtype(np.float16)), int(pad))
            if refusal is not None:
                _reject(refusal)
            return SimSwizzledTile(_simrt.shared_array(dims, elem, site), dims)
        storage = (dims[0], dims[1] + int(pad)) if pad else dims
        return SimSharedTile(_simrt.shared_array(storage, elem, site), dims)

    def shared_wtile(
        window: Any, shape: Any, dtype: Any, pad: Any = 0, swizzle: Any = 0
    ) -> SimSharedTile | SimSwizzledTile:
        # A tile of a kernel whose contract declares tile_shared: on the GPU it is carved
        # from that window of the dynamic shared memory; here it is its own array, and the
        # window is checked as the compiler does (the kernel's tile sites, 16-byte rounded).
        site = _caller_site("shared.tile()")
        _simrt.WINDOW_SITES.add(site)  # dynamic shared memory on the GPU: not static bytes
        tile = make_tile(shape, dtype, pad, swizzle, site)
        storage = _static_shape(shape, "shared.tile(shape, dtype)")
        elems = int(np.prod(storage[:-1])) * (storage[-1] + int(pad))
        nbytes = -(-elems * _as_dtype(dtype).itemsize // 16) * 16
        if swizzle:
            nbytes += 1024  # room to start at a multiple of 1024 (lowering._tiles)
        with _WINDOW_LOCK:
            sites = _window_sites(sys._getframe(1).f_code)
            sites[site] = nbytes
            used = sum(sites.values())
        if used > window:
            _reject(
                f"the kernel's shared tiles need more than the {window} B its contract declares "
                f"as tile_shared: the tile made at line {site[1]} ({nbytes} B) brings them to "
                f"{used} B. Raise tile_shared to the sum of the tiles' bytes (each rounded up "
                "to 16, a swizzled tile 1024 more), or use smaller tiles"
            )
        return tile

    def shared_dynamic_tile(dtype: Any) -> SimSharedTile:
        site = _caller_site("shared.dynamic_tile()")
        return SimSharedTile(
            _dynamic_array(_as_dtype(dtype, "shared.dynamic_tile"), site), dynamic=True
        )

    def local_array(shape: Any, dtype: Any, alignment: Any = None) -> SimLocalArray:
        dims = _static_shape(shape, "cuda.local.array(shape, dtype)")
        elem = _as_dtype(dtype, "cuda.local.array")
        # One array per thread, site and call of the function that makes it, zero-filled
        # once: Numba's alloca and its zero-fill sit in the function's entry block, so made
        # in a loop the array keeps the previous iteration's values (checked on the IR).
        call = sys._getframe(1)
        return SimLocalArray(_simrt.local_array(dims, elem, (call.f_code, call.f_lasti), call))

    def const_array(arr: Any) -> SimConstArray:
        refused = refused_array(arr)
        if refused is not None:
            _reject(f"cuda.const.array_like {refused}")
        return SimConstArray(arr)

    def local_index() -> SimWitness:
        return _mint("Local1D", (_linear_tid(),))

    def local_index_2d() -> SimWitness:
        _, (tx, ty, _), (_, _, nz), _ = _simrt.geometry()
        if nz != 1:
            if z_proven:
                _proof_broken("blockDim.z == 1")
            ty = SENTINEL
        return _mint("Local2D", (ty, tx))

    def tile_of(t: Any) -> SimSharedTile | _AccumulatorWalk:
        if isinstance(t, SimSwizzledTile):
            _reject(only_fill_and_wgmma(t, "thread.block_stride()"))
        if isinstance(t, SimSharedAccumulator):
            # its Local1D witnesses read it (acc[w]), as lowering._tiles walks it
            if len(t._shape) != 1:
                _reject(WALK_2D_ACCUMULATOR.format(what=f"SharedAccumulator{t._shape}"))
            return _AccumulatorWalk(t._shape)
        if not isinstance(t, SimSharedTile):
            _reject(
                "thread.block_stride() walks a shared tile or a 1D shared accumulator "
                f"(shared.accumulator(n, dtype)), got {type(t).__name__}"
            )
        return t

    def bs_row_start(t: Any) -> int:
        if tile_of(t).ndim == 1:
            return 0
        _, (_, ty, tz), (_, ny, _), _ = _simrt.geometry()
        return ty + ny * tz

    def bs_rows(t: Any) -> int:
        tile = tile_of(t)
        return 1 if tile.ndim == 1 else tile.shape[0]

    def bs_row_step(t: Any) -> int:
        if tile_of(t).ndim == 1:
            return 1
        _, _, (_, ny, nz), _ = _simrt.geometry()
        return ny * nz

    def bs_col_start(t: Any) -> int:
        if tile_of(t).ndim == 1:
            return _linear_tid()
        _, (tx, _, _), _, _ = _simrt.geometry()
        return tx

    def bs_cols(t: Any) -> int:
        tile = tile_of(t)
        return tile.shape[tile.ndim - 1]

    def bs_col_step(t: Any) -> int:
        _, _, (nx, ny, nz), _ = _simrt.geometry()
        return nx * ny * nz if tile_of(t).ndim == 1 else nx

    def mint_local(t: Any, r: int, c: int) -> SimWitness:
        tile = tile_of(t)
        return _mint(tile._space, (c,) if tile.ndim == 1 else (r, c))

    def out_of(out: Any, space: str, what: str) -> Any:
        if not isinstance(out, SimDisjointSlice) or out._space != space:
            _reject(
                f"thread.{what}() takes a DisjointSlice of space {space} (an output of a "
                f"{space[-2]} launch), got {type(out).__name__}"
            )
        return out._arr

    def sizes(values: tuple[Any, ...], what: str) -> tuple[int, ...]:
        if not all(_is_int(v) and v >= 1 for v in values):
            _reject(
                f"thread.{what}(): tile sizes must be positive compile-time ints (literals or "
                f"module constants), got {values}"
            )
        too_large = out_tile_too_large(what, tuple(int(v) for v in values))
        if too_large is not None:
            _reject(too_large)
        return tuple(int(v) for v in values)

    def tile_1d(out: Any, n: Any) -> SimOutTile:
        arr = out_of(out, "Index1D", "tile_1d")
        (size,) = sizes((n,), "tile_1d")
        (bx, _, _), (tx, _, _), (nx, ny, nz), (_, gy, gz) = _simrt.geometry()
        g = bx * nx + tx
        if (ny, nz, gy, gz) != (1, 1, 1, 1):
            if proven_domain == 1:
                _proof_broken("a 1D launch")
            g = SENTINEL
        origin = g * size if g != SENTINEL else SENTINEL
        return SimOutTile(arr, (origin,), (1,), (size,))

    def tile_2d(out: Any, tm: Any, tn: Any) -> SimOutTile:
        arr = out_of(out, "Index2D", "tile_2d")
        shape = sizes((tm, tn), "tile_2d")
        (bx, by, _), (tx, ty, _), (nx, ny, nz), (_, _, gz) = _simrt.geometry()
        origins = ((by * ny + ty) * shape[0], (bx * nx + tx) * shape[1])
        if (nz, gz) != (1, 1):
            if proven_domain == 2:
                _proof_broken("a 2D launch")
            origins = (SENTINEL, SENTINEL)
        return SimOutTile(arr, origins, (1, 1), shape)

    def tile_2d_strided(out: Any, tm: Any, tn: Any) -> SimOutTile:
        arr = out_of(out, "Index2D", "tile_2d_strided")
        shape = sizes((tm, tn), "tile_2d_strided")
        (bx, by, _), (tx, ty, _), (nx, ny, nz), (_, _, gz) = _simrt.geometry()
        origins = (by * shape[0] * ny + ty, bx * shape[1] * nx + tx)
        if (nz, gz) != (1, 1):
            if proven_domain == 2:
                _proof_broken("a 2D launch")
            origins = (SENTINEL, SENTINEL)
        return SimOutTile(arr, origins, (ny, nx), shape)

    def tile_read(tile: Any) -> Any:
        if isinstance(tile, SimSwizzledTile):
            _reject(helper_refusal(tile))
        if not isinstance(tile, SimSharedTile):
            _reject(f"__ss_tile_read takes a shared tile, got {_type_name(tile)}")
        return tile.read_view()

    return {
        "__ss_shared_tile": shared_tile,
        "__ss_shared_wtile": shared_wtile,
        "__ss_tile_read": tile_read,
        "__ss_shared_dynamic_tile": shared_dynamic_tile,
        "__ss_local_array": local_array,
        "__ss_const_array": const_array,
        "__ss_local_index": local_index,
        "__ss_local_index_2d": local_index_2d,
        "__ss_bs_row_start": bs_row_start,
        "__ss_bs_rows": bs_rows,
        "__ss_bs_row_step": bs_row_step,
        "__ss_bs_col_start": bs_col_start,
        "__ss_bs_cols": bs_cols,
        "__ss_bs_col_step": bs_col_step,
        "__ss_mint_local": mint_local,
        "__ss_tile_1d": tile_1d,
        "__ss_tile_2d": tile_2d,
        "__ss_tile_2d_strided": tile_2d_strided,
    }
