"""Recorded memory: every array a replayed kernel can reach, and its accessors.

A ``Buffer`` is one allocation (a kernel argument copied from the caller, a
block's shared array, a thread's local array, a constant array) with the
shadow state the checker keeps about it. A ``RecArray`` is what kernel code
holds: a view of a buffer (shape, element strides, offset) whose
``__getitem__`` / ``__setitem__`` check bounds per dimension (negative
indices are out of bounds, never wrapped) and report every element access to
the replay, which records it with the calling thread and source line.

Invariant: every element access of kernel code to a buffer goes through
``RecArray`` and is reported to ``Replay.access`` before it happens;
out-of-bounds accesses are reported instead and skipped (reads give 0). A
load of an undefined element gives a ``Poison`` (``_poison``), a store of one
goes through ``Replay.store_undefined``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ._poison import Poison

if TYPE_CHECKING:
    from ._poison import Origin
    from ._sched import Replay

__all__ = ["ATOMIC", "CONST", "GLOBAL", "LOCAL", "READ", "SHARED", "WRITE", "Buffer", "RecArray"]

READ: Final = 0
WRITE: Final = 1
ATOMIC: Final = 2
ACCESS_NAMES: Final = ("read", "write", "atomic")

GLOBAL: Final = "global"
SHARED: Final = "shared"
LOCAL: Final = "local"
CONST: Final = "const"


class Buffer:
    """One allocation and what the checker knows about it.

    Attributes:
        label: how findings name it: the parameter name, ``shared``, ``local``, ``const``.
        space: ``global``, ``shared``, ``local`` or ``const``.
        raw: the backing numpy array (C order; bytes for dynamic shared memory).
        shadow: byte offset -> access history (global and shared memory), else None.
        written: one flag per byte offset (shared and local memory), set by the
            first store, else None: a load of an element without it is undefined.
        undefined: byte offset -> the origin of the undefined value stored there
            (shared and local memory: a store of a poison), else None.
        sync: byte offset -> the vector clock released by fenced atomics there.
        track: False for inputs the kernel cannot write (simtsafe ``In``):
            reads of them cannot race and are not recorded.
        decl: where it was declared (shared/local/const), for messages.
    """

    __slots__ = (
        "decl",
        "dynamic",
        "label",
        "raw",
        "shadow",
        "space",
        "sync",
        "track",
        "undefined",
        "written",
    )

    def __init__(
        self,
        label: str,
        space: str,
        raw: np.ndarray[Any, Any],
        *,
        track: bool = True,
        dynamic: bool = False,
        decl: tuple[str, int] | None = None,
    ) -> None:
        self.label = label
        self.space = space
        self.raw = raw
        self.dynamic = dynamic
        self.decl = decl
        self.track = track and space in (GLOBAL, SHARED)
        self.shadow: dict[int, Any] | None = {} if self.track else None
        uninit = space in (SHARED, LOCAL)
        self.written: bytearray | None = bytearray(max(raw.nbytes, 1)) if uninit else None
        self.undefined: dict[int, Origin] | None = {} if uninit else None
        self.sync: dict[int, dict[int, int]] = {}

    def index_of(self, key: int, itemsize: int) -> tuple[int, ...]:
        """The element index (in the buffer's own shape) of byte offset ``key``."""
        if self.dynamic:
            return (key // itemsize,)
        flat = key // self.raw.itemsize
        return tuple(int(i) for i in np.unravel_index(flat, self.raw.shape))


def _index(i: Any) -> int:
    if type(i) is int:
        return i
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"array index must be an integer, got {type(i).__name__} ({i!r})") from None


class RecArray:
    """A recorded view of a ``Buffer``: what kernel code sees as an array."""

    __slots__ = (
        "_buf",
        "_data",
        "_isz",
        "_n0",
        "_n1",
        "_off",
        "_r",
        "_s0",
        "_s1",
        "_strides",
        "dtype",
        "ndim",
        "shape",
    )

    def __init__(
        self,
        replay: Replay,
        buf: Buffer,
        data: np.ndarray[Any, Any],
        off: int,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
    ) -> None:
        self._r = replay
        self._buf = buf
        self._data = data  # flat, typed view of buf.raw; element e is byte e * itemsize
        self._off = off
        self.shape = shape
        self._strides = strides
        self.ndim = len(shape)
        self.dtype = data.dtype
        self._isz = data.dtype.itemsize
        self._n0 = shape[0] if shape else 0
        self._s0 = strides[0] if strides else 0
        self._n1 = shape[1] if len(shape) > 1 else 0
        self._s1 = strides[1] if len(strides) > 1 else 0

    @classmethod
    def over(cls, replay: Replay, buf: Buffer, dtype: Any = None) -> RecArray:
        """A view of the whole buffer (as ``dtype`` for dynamic shared memory)."""
        if buf.dynamic:
            dt = np.dtype(dtype)
            n = buf.raw.nbytes // dt.itemsize
            data = buf.raw[: n * dt.itemsize].view(dt)
            return cls(replay, buf, data, 0, (n,), (1,))
        raw = buf.raw
        shape = tuple(int(n) for n in raw.shape)
        strides: list[int] = []
        step = 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return cls(replay, buf, raw.reshape(-1), 0, shape, tuple(reversed(strides)))

    # ------------------------------------------------------------------ metadata

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self._n0

    def __iter__(self) -> Iterator[Any]:
        for i in range(self._n0):
            yield self[i]

    def __repr__(self) -> str:
        return f"<{self._buf.space} array {self._buf.label!r} {self.dtype} {self.shape}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        raise TypeError(
            f"{self._buf.label!r} is a recorded kernel array: numpy operations on whole "
            "arrays are not kernel code; index its elements"
        )

    # ------------------------------------------------------------------ element access

    def __getitem__(self, idx: Any) -> Any:
        # Fast paths (1D int, 2D pair of ints) first: they are most of a kernel's accesses.
        if type(idx) is int and self.ndim == 1:
            if 0 <= idx < self._n0:
                e = self._off + idx * self._s0
                o = self._r.access(self, e, READ)
                return self._data[e] if o is None else Poison(self._data[e], o)
            return self._r.out_of_bounds(self, (idx,), READ)
        if type(idx) is tuple and self.ndim == 2 and len(idx) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < self._n0 and 0 <= j < self._n1:
                e = self._off + i * self._s0 + j * self._s1
                o = self._r.access(self, e, READ)
                return self._data[e] if o is None else Poison(self._data[e], o)
        found = self._element(idx)
        if found is None:
            return self._r.out_of_bounds(self, _as_tuple(idx), READ)
        if isinstance(found, RecArray):
            return found
        o = self._r.access(self, found, READ)
        return self._data[found] if o is None else Poison(self._data[found], o)

    def __setitem__(self, idx: Any, value: Any) -> None:
        if type(idx) is int and self.ndim == 1:
            if 0 <= idx < self._n0:
                e = self._off + idx * self._s0
                self._r.access(self, e, WRITE)
                self._store(e, value)
            else:
                self._r.out_of_bounds(self, (idx,), WRITE)
            return
        if type(idx) is tuple and self.ndim == 2 and len(idx) == 2:
            i, j = idx
            if type(i) is int and type(j) is int and 0 <= i < self._n0 and 0 <= j < self._n1:
                e = self._off + i * self._s0 + j * self._s1
                self._r.access(self, e, WRITE)
                self._store(e, value)
                return
        found = self._element(idx)
        if found is None:
            self._r.out_of_bounds(self, _as_tuple(idx), WRITE)
        elif isinstance(found, RecArray):
            found._assign(value)
        else:
            self._r.access(self, found, WRITE)
            self._store(found, value)

    def _store(self, e: int, value: Any) -> None:
        if type(value) is Poison:
            value = self._r.store_undefined(self, e, value)
        try:
            self._data[e] = value
        except (OverflowError, TypeError):
            # CUDA stores wrap to the element type; numpy refuses out-of-range Python ints.
            self._data[e] = np.asarray(value).astype(self.dtype)

    def locate(self, idx: Any) -> int | None:
        """Flat element of a full index (atomics, cache-hinted loads), None when out of bounds."""
        e = self._element(idx)
        if isinstance(e, RecArray):
            raise TypeError(
                f"an atomic or cache-hinted access of {self._buf.label!r} needs one element; "
                f"got index {idx!r} of a {self.ndim}D array"
            )
        return e

    def _element(self, idx: Any) -> int | RecArray | None:
        """Flat element index of ``idx``, a sub-view, or None when out of bounds."""
        items = idx if isinstance(idx, tuple) else (idx,)
        if len(items) > self.ndim:
            raise IndexError(
                f"too many indices for {self._buf.label!r}: the array is {self.ndim}D, "
                f"got {len(items)} indices"
            )
        if len(items) == self.ndim:
            e = self._off
            for i, n, s in zip(items, self.shape, self._strides, strict=True):
                if type(i) is slice:
                    return self._view(items)
                k = _index(i)
                if not 0 <= k < n:
                    return None
                e += k * s
            return e
        return self._view(items)

    def _view(self, items: tuple[Any, ...]) -> RecArray | None:
        off = self._off
        shape: list[int] = []
        strides: list[int] = []
        padded = items + (slice(None),) * (self.ndim - len(items))
        for item, n, s in zip(padded, self.shape, self._strides, strict=True):
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                off += start * s
                shape.append(len(range(start, stop, step)))
                strides.append(s * step)
            else:
                k = _index(item)
                if not 0 <= k < n:
                    return None
                off += k * s
        return RecArray(self._r, self._buf, self._data, off, tuple(shape), tuple(strides))

    def _assign(self, value: Any) -> None:
        """``view[...] = value``: element by element, each write recorded."""
        src = value if isinstance(value, RecArray) else None
        for pos in np.ndindex(*self.shape):
            v = src[pos if len(pos) > 1 else pos[0]] if src is not None else value
            self[pos if len(pos) > 1 else pos[0]] = v

    # ------------------------------------------------------------------ array-like conveniences

    def copy_to_host(self) -> np.ndarray[Any, Any]:
        raise TypeError("copy_to_host() is a host operation; kernels index arrays")


def _as_tuple(idx: Any) -> tuple[Any, ...]:
    return idx if isinstance(idx, tuple) else (idx,)
