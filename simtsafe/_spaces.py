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
    "field_read_refusal",
    "in_bounds_rank_refusal",
    "witness_required",
    "other_buffer_advice",
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


def other_buffer_advice(space: str, param: str) -> str:
    """The fix for a witness of ``space`` used on AppendBuffer ``param``: a slot won on
    another buffer is not one of ``param``'s, and a second claim would give a slot in its own
    counter's order (the two buffers' items would not pair up) -- one buffer of records does."""
    if not (space.startswith("Appended[") and space.endswith("]")):
        return f"Claim with w = {param}.claim()"
    other = space[len("Appended[") : -1]
    return (
        f"The slot was won on {other!r}, and {param!r} has a counter of its own: a second "
        f"claim, w2 = {param}.claim(), would give a slot in that counter's order, so {other}[k] and "
        f"{param}[k] would not hold one item. To append several values per item, append "
        "records to one buffer: an AppendBuffer of np.dtype([('v', np.float32), ('i', "
        "np.int64)]), written as out[w].v = ... and out[w].i = ..."
    )


def field_read_refusal(attr: str, what: str) -> str:
    """The refusal of a helper's ``v.attr`` (``attr`` also an array attribute) on a value
    that is no record with that field (lowering._fieldreads)."""
    return (
        f"attribute `.{attr}` is not allowed in kernels on {what} (array methods and attributes "
        f"can alias or write their array); `.{attr}` is read only as a field of a record that "
        "has one"
    )


def in_bounds_rank_refusal(witness: str, rank: int, ndim: int) -> str:
    """The refusal of ``w.in_bounds(a)`` where the witness has ``rank`` indices and the
    array ``ndim`` axes."""
    which = "its index" if rank == 1 else f"its {rank} indices"
    return (
        f"{witness}.in_bounds() of a {ndim}D array: the witness holds {which} and the array "
        f"has {ndim} axes, so the test could not say which axes it checks. Compare the "
        "coordinate with the axis you mean (w.index < a.shape[0] for a thread per row of a "
        f"2D input), or use a witness of the array's rank (thread.index_{ndim}d() in a "
        f"domain={ndim} kernel)"
        if ndim in (1, 2, 3)
        else f"{witness}.in_bounds() of a {ndim}D array: compare the coordinates with the "
        "array's shape instead"
    )


def witness_required(space: str, ctor: str, got: str) -> str:
    """The refusal of a write to a ``space`` output at an index of type ``got``."""
    text = (
        f"a DisjointSlice is written only through a ThreadIndex witness of its space ({space}); "
        f"got an index of type {got}. Get a witness with {ctor}"
    )
    if space == "Index1D" and not got.startswith(("ThreadIndex", "UniTuple", "Tuple")):
        text += (
            ". A write at a position computed from data (a scatter, a stream compaction's "
            "out[offset + rank] = v) owns its slot by an atomic claim instead: an "
            "AppendBuffer's append(), or block_claim() for a block's items in order "
            "(docs/atomics.md)"
        )
    if space in ("Index2D", "Index3D"):
        text += (
            ". A thread that writes several elements (a short row, a pair, a vector) owns them "
            "as an output tile: thread.tile_1d(out, n) over a flat output (n elements a thread, "
            "e.g. a 1D view of an [N, 3] array), thread.tile_2d(out, tm, tn) in a 2D launch"
        )
    return text + ', or write out.unchecked[...] inside `with simtsafe.unsafe("SAFETY: ...")`'
