"""Annotations and value types of block cooperation (Tier 1): tiles, output tiles, accumulators.

Like ``_views``, these are descriptions for the kernel decorator and for
mypy/pyright; no instance exists on the host. Inside a kernel they are Numba
types (``simtsafe.lowering``), on the simulator their Python twins.

* ``SharedTile[T, S]`` -- a block's shared-memory tile (``simtsafe.shared.tile``).
  Between two barriers (``simtsafe.block.sync()``) it is either being *filled*
  (each element written by at most one thread, through a block-local witness
  of space ``S``: ``Local1D`` or ``Local2D``) or *read* (any thread reads any
  element, nobody writes). The decorator checks the phases.
* ``OutTile[T]`` / ``OutTile2D[T]`` -- the several output elements a thread
  owns (``thread.tile_1d``, ``thread.tile_2d``, ``thread.tile_2d_strided``),
  written with local indices; out of range, nothing is written.
* ``Accumulate[T]`` -- an output parameter updated only by atomic
  ``add``/``min``/``max``: atomics never race. ``SharedAccumulator[T]`` is its
  block-local twin (``simtsafe.shared.accumulator``), read after a barrier;
  ``SharedAccumulator2D[T]`` its 2D form, indexed by pairs.
"""

from __future__ import annotations

from typing import Any, Generic, final, overload

import numpy as np
from typing_extensions import TypeVar

from ._spaces import IndexSpace, Local1D
from ._views import ThreadIndex, _KernelOnly

__all__ = [
    "Accumulate",
    "OutTile",
    "OutTile2D",
    "SharedAccumulator",
    "SharedAccumulator2D",
    "SharedTile",
]

T = TypeVar("T", bound=np.generic)
L = TypeVar("L", bound=IndexSpace, default=Local1D)


@final
class SharedTile(_KernelOnly, Generic[T, L]):
    """A shared-memory tile of the block, filled and read in barrier-separated phases.

    ``SharedTile[np.float32, Local1D]`` is 1D (filled through
    ``thread.local_index()`` or ``thread.block_stride(tile)``);
    ``SharedTile[np.float32, Local2D]`` is 2D (``thread.local_index_2d()``).
    """

    __slots__ = ()

    @overload
    def __getitem__(self, i: ThreadIndex[L]) -> T: ...
    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: tuple[int, int]) -> T: ...
    def __getitem__(self, i: ThreadIndex[L] | int | tuple[int, int]) -> T:
        """Read an element: through the filling thread's own witness in a fill phase,
        anywhere in a read phase (bounds-checked: out of range reads 0)."""
        raise NotImplementedError

    def __setitem__(self, w: ThreadIndex[L], value: T | float | int) -> None:
        """Fill the witness's element (fill phase only; out of range: nothing)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """The tile's shape, as given to ``simtsafe.shared.tile``."""
        raise NotImplementedError


@final
class OutTile(_KernelOnly, Generic[T]):
    """The ``n`` consecutive output elements one thread owns (``thread.tile_1d``)."""

    __slots__ = ()

    def __getitem__(self, k: int) -> T:
        raise NotImplementedError

    def __setitem__(self, k: int, value: T | float | int) -> None:
        """Write local element ``k`` (0 <= k < n); out of range or past the output: nothing."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


@final
class OutTile2D(_KernelOnly, Generic[T]):
    """The ``tm x tn`` output elements one thread owns (``thread.tile_2d`` and ``_strided``)."""

    __slots__ = ()

    def __getitem__(self, rc: tuple[int, int]) -> T:
        raise NotImplementedError

    def __setitem__(self, rc: tuple[int, int], value: T | float | int) -> None:
        """Write local element ``(r, c)``; out of range or past the output: nothing."""
        raise NotImplementedError


@final
class Accumulate(_KernelOnly, Generic[T]):
    """An output updated only atomically: ``acc.add(i, v)``, ``acc.min(i, v)``, ``acc.max(i, v)``.

    Any int index (out of range: ignored); no plain read or write during the
    launch, so no two accesses race. Float sums are not deterministic (the
    order of additions varies run to run): see docs/safety.md.
    """

    __slots__ = ()

    def add(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically add ``value`` to element ``i`` (an index out of range does nothing)."""
        raise NotImplementedError

    def min(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically lower element ``i`` to ``value`` if smaller (out of range: nothing)."""
        raise NotImplementedError

    def max(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically raise element ``i`` to ``value`` if larger (out of range: nothing)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        """The number of elements (as ``array.size``)."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array (as ``array.shape``)."""
        raise NotImplementedError


@final
class SharedAccumulator(_KernelOnly, Generic[T]):
    """A block's shared accumulator (``simtsafe.shared.accumulator``): atomic updates, then
    (after a barrier) reads."""

    __slots__ = ()

    def add(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically add ``value`` to element ``i`` (update phase; out of range: nothing)."""
        raise NotImplementedError

    def min(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically lower element ``i`` to ``value`` if smaller (update phase)."""
        raise NotImplementedError

    def max(self, i: int | np.integer[Any], value: T | float | int) -> None:
        """Atomically raise element ``i`` to ``value`` if larger (update phase)."""
        raise NotImplementedError

    def __getitem__(self, i: int | np.integer[Any] | ThreadIndex[Local1D]) -> T:
        """Read (read phase only: after the barrier that ends the updates)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


_Pair = tuple[int | np.integer[Any], int | np.integer[Any]]


@final
class SharedAccumulator2D(_KernelOnly, Generic[T]):
    """A block's 2D shared accumulator (``simtsafe.shared.accumulator((R, C), dtype)``,
    row-major): atomic updates at ``(i, j)``, then (after a barrier) reads ``acc[i, j]``.
    Each axis is checked: an update out of range does nothing, a read gives 0."""

    __slots__ = ()

    def add(self, ij: _Pair, value: T | float | int) -> None:
        """Atomically add ``value`` to element ``(i, j)`` (update phase)."""
        raise NotImplementedError

    def min(self, ij: _Pair, value: T | float | int) -> None:
        """Atomically lower element ``(i, j)`` to ``value`` if smaller (update phase)."""
        raise NotImplementedError

    def max(self, ij: _Pair, value: T | float | int) -> None:
        """Atomically raise element ``(i, j)`` to ``value`` if larger (update phase)."""
        raise NotImplementedError

    def __getitem__(self, ij: _Pair) -> T:
        """Read (read phase only: after the barrier that ends the updates)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError
