"""Block-local shared memory in Tier 1: tiles with fill/read phases, and accumulators.

``tile(shape, dtype)`` gives the block a shared tile of a static shape (ints
known when the kernel compiles: literals or module constants). Between two
``simtsafe.block.sync()`` barriers a tile is either *filled* -- each element
written by at most one thread, through a block-local witness
(``thread.local_index()``, ``thread.local_index_2d()``,
``for w in thread.block_stride(tile)``), and read only through the writing
thread's own witness -- or *read* by any thread, anywhere, written by
none. The decorator checks the phases over the kernel's control flow.

``dynamic_tile(dtype)`` is a 1D tile over the launch's whole dynamic shared
memory (``prepare(shared_mem=...)``); a kernel that uses it must declare
``dynamic_shared`` in its contract. ``accumulator(n, dtype)`` is a shared
accumulator: atomic ``add``/``min``/``max`` by any thread, then, after a
barrier, reads.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api
from ._coopviews import SharedAccumulator, SharedTile
from ._spaces import Local1D, Local2D

__all__ = ["accumulator", "dynamic_tile", "tile"]

T = TypeVar("T", bound=np.generic)


@overload
def tile(shape: int | tuple[int], dtype: type[T]) -> SharedTile[T, Local1D]: ...
@overload
def tile(shape: tuple[int, int], dtype: type[T], pad: int = 0) -> SharedTile[T, Local2D]: ...
@kernel_api("shared.tile")
def tile(shape: Any, dtype: type[T], pad: int = 0) -> Any:
    """A shared tile of ``shape`` (1 or 2 static ints) and element type ``dtype``.

    ``pad`` (2D only, a static int) adds that many unused elements to each row of
    the storage, e.g. a 32 x 32 tile stored 32 x 33 so that reading a column hits
    32 different banks; the tile's shape, bounds and ``block_stride`` stay 32 x 32.
    """
    host_call("shared.tile")


@kernel_api("shared.dynamic_tile")
def dynamic_tile(dtype: type[T]) -> SharedTile[T, Local1D]:
    """A 1D tile over the launch's dynamic shared memory (``shared_mem // itemsize`` elements)."""
    host_call("shared.dynamic_tile")


@kernel_api("shared.accumulator")
def accumulator(n: int, dtype: type[T]) -> SharedAccumulator[T]:
    """A shared accumulator of ``n`` elements, zero-initialized by the block before use."""
    host_call("shared.accumulator")
