"""Index spaces: which elements of an output a witness may address.

A witness (``ThreadIndex[S]``) and an output (``DisjointSlice[T, S]``) both
carry an index space ``S``. A write needs the two spaces to match, because
uniqueness of a witness across threads is only proven *within* its space:

* ``Index1D``  -- one element per thread of a 1D grid (``thread.index_1d()``,
  ``thread.grid_stride(...)``).
* ``Index2D``  -- one (row, col) element per thread of a 2D grid
  (``thread.index_2d()``); row follows y, col follows x.
* ``Index3D``  -- one (z, y, x) element per thread of a 3D grid
  (``thread.index_3d()``); the last (contiguous) axis of a C-order array
  follows x.
* ``PerWarp``  -- one element per warp of the launch (``thread.warp_leader()``).
* ``PerBlock`` -- one element per block of the launch (``thread.block_leader()``).
* ``BlockRow`` -- one row of a 2D output per block of a 1D launch: block ``b`` owns
  row ``b``, thread ``t`` its columns ``t, t + blockDim.x, ...``
  (``for w in thread.block_row(s)``).
* ``WarpRow``  -- one row of a 2D output per warp of a 1D launch: global warp ``g``
  owns row ``g``, lane ``l`` its columns ``l, l + 32, ...``
  (``for w in thread.warp_row(s)``).
* ``Columns``  -- one column of a 2D output per thread of a 1D launch, in every row:
  the witness (``thread.column()``) is 1D and names the column; the row is any int
  (``out[r, w]``), so a row chosen at run time -- a position read on the device --
  is written without a race.
* ``Appended`` -- a slot of an ``AppendBuffer`` won by an atomic fetch-add on its
  counter (``buf.claim()``): unique by the atomic, not by the thread's index. A
  witness of one buffer writes that buffer only (the compile ties it to the buffer's
  parameter).
* ``Inserted`` -- the value slot of a key this thread inserted into a ``HashTable``
  (``keys.insert(k)``): the compare-and-swap that filled the slot succeeds once. It
  writes the table's ``HashValues`` only.
* ``Found`` -- the slot of a key found in a read-only table (``hashing.find(keys, k)``):
  reads inputs, writes nothing.

Shared vocabulary: imports nothing from simtsafe.
"""

from __future__ import annotations

from typing import final

__all__ = [
    "LOCAL_SPACE_NDIM",
    "MAX_OUT_TILE",
    "SPACE_NDIM",
    "WITNESS_NDIM",
    "Appended",
    "BlockRow",
    "Columns",
    "Found",
    "Index1D",
    "Index2D",
    "Index3D",
    "IndexSpace",
    "Inserted",
    "Local1D",
    "Local2D",
    "PerBlock",
    "PerWarp",
    "WarpRow",
    "out_tile_too_large",
]


class IndexSpace:
    """Base of the index-space markers; never instantiated."""

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is an index-space marker, not a value")


@final
class Index1D(IndexSpace):
    """One element per thread of a 1D launch."""


@final
class Index2D(IndexSpace):
    """One (row, col) element per thread of a 2D launch."""


@final
class Index3D(IndexSpace):
    """One (z, y, x) element per thread of a 3D launch."""


@final
class PerWarp(IndexSpace):
    """One element per warp of the launch (lane 0 writes)."""


@final
class PerBlock(IndexSpace):
    """One element per block of the launch (thread (0, 0, 0) writes)."""


@final
class BlockRow(IndexSpace):
    """One row of a 2D output per block of a 1D launch; the block's threads stride its columns."""


@final
class WarpRow(IndexSpace):
    """One row of a 2D output per warp of a 1D launch; the warp's lanes stride its columns."""


@final
class Columns(IndexSpace):
    """One column of a 2D output per thread of a 1D launch, in every row of it."""


@final
class Appended(IndexSpace):
    """A slot of an ``AppendBuffer`` this thread won with the buffer's atomic counter."""


@final
class Inserted(IndexSpace):
    """The value slot of a key this thread inserted into a ``HashTable`` (its CAS won)."""


@final
class Found(IndexSpace):
    """The slot of a key found in a read-only hash table: reads only."""


@final
class Local1D(IndexSpace):
    """One element per thread of a block: the thread's linear index in its block.

    Unique within a block only, so it addresses block-local storage (shared
    tiles and accumulators), never a ``DisjointSlice``.
    """


@final
class Local2D(IndexSpace):
    """One (row, col) = (threadIdx.y, threadIdx.x) element per thread of a 2D block."""


#: Rank of the block-local spaces (witnesses of shared tiles; never of outputs).
LOCAL_SPACE_NDIM: dict[str, int] = {"Local1D": 1, "Local2D": 2}

#: Rank of the arrays each space addresses (the spaces an output may have).
SPACE_NDIM: dict[str, int] = {
    "Index1D": 1,
    "Index2D": 2,
    "Index3D": 3,
    "PerWarp": 1,
    "PerBlock": 1,
    "BlockRow": 2,
    "WarpRow": 2,
    "Columns": 2,
}

#: Rank of each output space's witnesses where it is not the output's rank: a ``Columns``
#: witness names a column; the row is a plain int of the access (``out[r, w]``).
WITNESS_NDIM: dict[str, int] = {**SPACE_NDIM, "Columns": 1}

#: The largest output tile (``thread.tile_1d/2d/2d_strided``), per axis and in all: the
#: elements one thread owns. It keeps every tile origin ``g * n`` (and its last element)
#: far below 2**63 for any launch (g < 2**41), so no tile wraps around in 64-bit
#: arithmetic onto another thread's.
MAX_OUT_TILE = 2**16


def out_tile_too_large(what: str, sizes: tuple[int, ...]) -> str | None:
    """The refusal of a ``thread.<what>`` tile of ``sizes`` over ``MAX_OUT_TILE``, else None."""
    total = 1
    for n in sizes:
        total *= n
    if max(sizes) <= MAX_OUT_TILE and total <= MAX_OUT_TILE:
        return None
    extent = " x ".join(str(n) for n in sizes)
    return (
        f"thread.{what}(): a tile of {extent} elements is too large: a thread owns at most "
        f"{MAX_OUT_TILE} (2**16) elements of an output, per axis and in all (the origin of "
        "a larger tile could wrap around in 64 bits onto another thread's tile); use a "
        "smaller tile"
    )
