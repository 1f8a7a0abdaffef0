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

``fill_async(t, a, origin)`` fills a whole tile from an input with
``cp.async`` (sm_80 and later): each thread copies its own runs of 16, 8 or 4
bytes, and the copies land when the thread waits for their group:
``commit_group()`` closes the group of the copies issued since the last one,
``wait_group(n)`` waits until at most the ``n`` newest groups are in flight,
``wait_all()`` waits for every copy. The tile is read after the wait and a
block barrier (the decorator checks it). ``fill_transposed(t, a, origin)``
fills a 2D tile with the transpose of a rectangle of the input, read with
coalesced vector loads.
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api
from ._coopviews import SharedAccumulator, SharedAccumulator2D, SharedTile
from ._spaces import Local1D, Local2D
from ._views import In, In2D

__all__ = [
    "accumulator",
    "commit_group",
    "dynamic_tile",
    "fill_async",
    "fill_transposed",
    "tile",
    "wait_all",
    "wait_group",
]

T = TypeVar("T", bound=np.generic)


@overload
def tile(shape: int | tuple[int], dtype: type[T]) -> SharedTile[T, Local1D]: ...
@overload
def tile(
    shape: tuple[int, int], dtype: type[T], pad: int = 0, swizzle: int = 0
) -> SharedTile[T, Local2D]: ...
@kernel_api("shared.tile")
def tile(shape: Any, dtype: type[T], pad: int = 0, swizzle: int = 0) -> Any:
    """A shared tile of ``shape`` (1 or 2 static ints) and element type ``dtype``.

    ``pad`` (2D only, a static int) adds that many unused elements to each row of
    the storage, e.g. a 32 x 32 tile stored 32 x 33 so that reading a column hits
    32 different banks; the tile's shape, bounds and ``block_stride`` stay 32 x 32.

    ``swizzle=128`` (2D, ``ss.bfloat16`` or ``np.float16``, rows a multiple of 8,
    columns of 64, no ``pad``) stores the tile in the 128-byte swizzled layout that
    ``wgmma.mma`` reads; such a tile is filled by ``fill_async`` and read by
    ``wgmma.mma`` only.
    """
    host_call("shared.tile")


@kernel_api("shared.dynamic_tile")
def dynamic_tile(dtype: type[T]) -> SharedTile[T, Local1D]:
    """A 1D tile over the launch's dynamic shared memory (``shared_mem // itemsize`` elements)."""
    host_call("shared.dynamic_tile")


@overload
def accumulator(n: int, dtype: type[T]) -> SharedAccumulator[T]: ...
@overload
def accumulator(n: tuple[int, int], dtype: type[T]) -> SharedAccumulator2D[T]: ...
@kernel_api("shared.accumulator")
def accumulator(n: Any, dtype: type[T]) -> Any:
    """A shared accumulator of ``n`` elements (an int), or of ``(R, C)`` elements (a pair:
    row-major, updated at ``acc.add((i, j), v)`` and read at ``acc[i, j]``), of a static
    shape, zero-initialized by the block before use.

    The 2D form suits privatized copies: ``shared.accumulator((NBINS, 32), np.uint32)``
    with ``acc.add((b, lane), 1)`` gives each lane of a warp its own copy of the bins
    (bin ``b`` of lane ``l`` in bank ``l``), and its update is one multiply-add from the
    lane's base address (see examples/histogram_vec.py).
    """
    host_call("shared.accumulator")


@overload
def fill_async(t: SharedTile[T, Local1D], a: In[T], origin: int) -> None: ...
@overload
def fill_async(t: SharedTile[T, Local2D], a: In2D[T], origin: tuple[int, int]) -> None: ...
@kernel_api("shared.fill_async")
def fill_async(t: Any, a: Any, origin: Any) -> None:
    """Start copying ``a[r0 + i, c0 + j]`` into ``t[i, j]`` for every element of the 2D
    tile ``t`` (``origin = (r0, c0)``; a 1D tile: ``a[start + j]`` into ``t[j]``), 0 where
    ``a`` has no such element, with ``cp.async``. ``t`` may be the dynamic tile: its
    length is read at launch, and a last run shorter than 16 bytes is copied element by
    element.

    Each thread copies its own runs (16, 8 or 4 bytes: thread ``tid`` takes runs
    ``tid, tid + T, ...`` of the tile, row by row), so no element has two writers.
    The copies land when the thread waits for their group (``commit_group()``, then
    ``wait_group(n)`` or ``wait_all()``); read the tile after that wait and a
    ``simtsafe.block.sync()``. Needs a GPU of compute capability 8.0 or later.
    """
    host_call("shared.fill_async")


@kernel_api("shared.fill_transposed")
def fill_transposed(t: SharedTile[T, Local2D], a: In2D[T], origin: tuple[int, int]) -> None:
    """Fill the ``(K, M)`` tile ``t`` with ``t[c, r] = a[r0 + r, c0 + c]`` (0 outside ``a``):
    the transpose of the ``M x K`` rectangle of ``a`` at ``origin = (r0, c0)``.

    Each thread loads its own runs of ``a``'s rows (coalesced, one vector load when whole
    and aligned) and stores them down a column of the tile; plain stores, read after a
    ``simtsafe.block.sync()``.
    """
    host_call("shared.fill_transposed")


@kernel_api("shared.commit_group")
def commit_group() -> None:
    """Close the group of this thread's ``fill_async`` copies issued since the last one."""
    host_call("shared.commit_group")


@kernel_api("shared.wait_group")
def wait_group(n: int) -> None:
    """Wait until at most the ``n`` newest closed groups of this thread are in flight
    (``n`` an int literal, 0 to 7); copies not yet in a closed group are not waited for."""
    host_call("shared.wait_group")


@kernel_api("shared.wait_all")
def wait_all() -> None:
    """Wait for every ``fill_async`` copy this thread issued, closed into a group or not."""
    host_call("shared.wait_all")
