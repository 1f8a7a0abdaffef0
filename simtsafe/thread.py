"""Witness constructors: the only way to get a ``ThreadIndex``.

Call these inside a ``@simtsafe.kernel`` or ``@simtsafe.device`` function.
The decorator binds each call to the kernel's proven launch domain (a
contract with ``domain=1`` makes ``index_1d()`` the plain
``blockIdx.x * blockDim.x + threadIdx.x``; without that proof the witness
checks the launch shape at run time and turns invalid when it is wrong).
Called on the host, outside a kernel, they raise ``RuntimeError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar, overload

import numpy as np

from ._coopviews import OutTile, OutTile2D, SharedTile
from ._spaces import (
    BlockRow,
    Columns,
    Index1D,
    Index2D,
    Index3D,
    Local1D,
    Local2D,
    PerBlock,
    PerWarp,
    WarpRow,
)
from ._views import DisjointSlice, In, In2D, RowChunk, ThreadIndex

__all__ = [
    "block_leader",
    "block_row",
    "block_row_chunks",
    "block_stride",
    "column",
    "grid_stride",
    "index_1d",
    "index_2d",
    "index_3d",
    "local_index",
    "local_index_2d",
    "tile_1d",
    "tile_2d",
    "tile_2d_strided",
    "warp_leader",
    "warp_row",
    "warp_row_chunks",
]

T = TypeVar("T", bound=np.generic)

_F = TypeVar("_F", bound=Callable[..., Any])


def _builtin(name: str) -> Callable[[_F], _F]:
    """Tag a public witness constructor so the kernel decorator can find it."""

    def tag(fn: _F) -> _F:
        fn.__simtsafe_builtin__ = name  # type: ignore[attr-defined]
        return fn

    return tag


def _host_call(name: str) -> NoReturn:
    raise RuntimeError(
        f"simtsafe.thread.{name}() is a witness constructor: call it inside a "
        "@simtsafe.kernel or @simtsafe.device function, not on the host"
    )


@_builtin("index_1d")
def index_1d() -> ThreadIndex[Index1D]:
    """This thread's element of a 1D launch: ``blockIdx.x * blockDim.x + threadIdx.x``.

    Unique per thread when the launch is 1D (proven by a ``domain=1``
    contract, else checked on the device: the witness is invalid when
    ``blockDim`` or ``gridDim`` has y or z other than 1).
    """
    _host_call("index_1d")


@_builtin("column")
def column() -> ThreadIndex[Columns]:
    """This thread's column of a 2D ``Columns`` output, in every row of it.

    The column is ``blockIdx.x * blockDim.x + threadIdx.x``, unique per thread
    of a 1D launch (proven by a ``domain=1`` contract, else checked on the
    device as for ``index_1d``). Write ``out[row, w]`` with any integer
    ``row`` -- a position read on the device, a loop counter: no other thread
    writes the column, so no row choice can race. Both indices are
    bounds-checked against ``out``'s shape. ``w.index`` is the column as a
    plain int; ``a[w]`` reads a 1D input at the column.
    """
    _host_call("column")


@_builtin("index_2d")
def index_2d() -> ThreadIndex[Index2D]:
    """This thread's (row, col) of a 2D launch; row follows y, col follows x.

    ``row = blockIdx.y * blockDim.y + threadIdx.y`` and ``col = blockIdx.x *
    blockDim.x + threadIdx.x`` (also readable as ``w.y`` and ``w.x``): on a
    C-order array, consecutive x threads own consecutive elements of a row,
    so their accesses coalesce. Unique per thread when the launch is 2D
    (proven by a ``domain=2`` contract, else checked on the device: invalid
    when z is not 1).
    """
    _host_call("index_2d")


@_builtin("index_3d")
def index_3d() -> ThreadIndex[Index3D]:
    """This thread's (z, y, x) of a 3D launch: array axes 0, 1, 2 follow z, y, x.

    Each coordinate is ``blockIdx * blockDim + threadIdx`` of its axis, so on
    a C-order 3D array consecutive x threads own consecutive elements. Unique
    per thread in every launch (no axis is left out), so it needs no device
    check; a kernel with a contract must declare ``domain=3`` to use it.
    """
    _host_call("index_3d")


@_builtin("grid_stride")
def grid_stride(s: DisjointSlice[Any, Index1D] | In[Any]) -> Iterator[ThreadIndex[Index1D]]:
    """Iterate over this thread's elements of ``s``: i, i + P, i + 2P, ... < s.size.

    ``i`` is ``index_1d()`` and the period ``P`` is the number of threads in
    the launch, read from the launch geometry (never supplied by the user), so
    the elements of different threads never coincide. Use it only as the
    iterable of a ``for`` loop.
    """
    _host_call("grid_stride")


@_builtin("warp_leader")
def warp_leader() -> ThreadIndex[PerWarp]:
    """The global warp number, valid in lane 0 of each warp only.

    Warps are numbered ``block * warps_per_block + warp_in_block`` with
    ``warps_per_block = ceil(threads_per_block / 32)``, so a block size that
    is not a multiple of 32 is handled. Size the output accordingly.
    """
    _host_call("warp_leader")


@_builtin("block_leader")
def block_leader() -> ThreadIndex[PerBlock]:
    """The linear block number, valid in thread (0, 0, 0) of each block only.

    Blocks are numbered ``x + gridDim.x * (y + gridDim.y * z)``: one element
    per block, for per-block partial results.
    """
    _host_call("block_leader")


@_builtin("block_row")
def block_row(s: DisjointSlice[Any, BlockRow] | In2D[Any]) -> Iterator[ThreadIndex[BlockRow]]:
    """Iterate over this thread's elements of its block's row of the 2D ``s``.

    Block ``b`` of a 1D launch owns row ``b``; thread ``t`` walks the columns
    ``t, t + blockDim.x, t + 2 * blockDim.x, ... < s.shape[1]`` (any width).
    Witnesses have ``.row`` and ``.col``; the row is bounds-checked against
    the array each access addresses. Unique per thread when the launch is 1D
    (proven by a ``domain=1`` contract, else checked on the device: the
    witness is invalid when ``blockDim`` or ``gridDim`` has y or z other than
    1). ``s`` may be an input, to walk it with the same witness. Use it only
    as the iterable of a ``for`` loop.
    """
    _host_call("block_row")


@_builtin("warp_row")
def warp_row(s: DisjointSlice[Any, WarpRow] | In2D[Any]) -> Iterator[ThreadIndex[WarpRow]]:
    """Iterate over this thread's elements of its warp's row of the 2D ``s``.

    Global warp ``g = blockIdx.x * ceil(blockDim.x / 32) + threadIdx.x // 32``
    of a 1D launch owns row ``g``; lane ``l`` walks the columns ``l, l + 32,
    l + 64, ... < s.shape[1]`` (any width). Launch shape as ``block_row``. A
    block size that is not a multiple of 32 stays sound, but the last, partial
    warp of each block walks only the columns of its lanes: ``covers=``
    refuses such a launch. Use it only as the iterable of a ``for`` loop.
    """
    _host_call("warp_row")


@_builtin("block_row_chunks")
def block_row_chunks(
    s: DisjointSlice[Any, BlockRow] | In2D[Any],
) -> Iterator[RowChunk[BlockRow]]:
    """Walk the block's row of the 2D ``s`` in whole chunks of ``blockDim.x`` columns.

    Chunk ``k = 0, 1, ..., ceil(s.shape[1] / blockDim.x) - 1`` gives thread ``t`` the
    witness of column ``t + k * blockDim.x`` of row ``blockIdx.x`` -- in the last chunk
    possibly past the row's end, where it addresses nothing (a write does nothing, a read
    gives 0) and ``.valid`` is False. Every thread of the block runs the loop the same
    number of times, so a block collective may sit inside it (a row scan: ``s =
    ss.block.scan(x[c])``; the compiled form proves the trip count uniform from
    ``s.shape[1]`` and ``blockDim.x``). The witness writes a ``BlockRow`` output like
    ``block_row``'s; ``.row``, ``.col``, ``.chunk`` (k) are plain ints. Launch shape as
    ``block_row``. Use it only as the iterable of a ``for`` loop.
    """
    _host_call("block_row_chunks")


@_builtin("warp_row_chunks")
def warp_row_chunks(
    s: DisjointSlice[Any, WarpRow] | In2D[Any],
) -> Iterator[RowChunk[WarpRow]]:
    """Walk the warp's row of the 2D ``s`` in whole chunks of 32 columns.

    Chunk ``k = 0, 1, ..., ceil(s.shape[1] / 32) - 1`` gives lane ``l`` the witness of
    column ``l + 32 * k`` of the warp's row (``warp_row``'s); past the row's end it
    addresses nothing and ``.valid`` is False. Every thread of the launch runs the loop
    the same number of times, so a warp collective may sit inside it. Launch shape and
    partial warps as ``warp_row``. Use it only as the iterable of a ``for`` loop.
    """
    _host_call("warp_row_chunks")


# ------------------------------------------------------------------ block-local witnesses


@_builtin("local_index")
def local_index() -> ThreadIndex[Local1D]:
    """This thread's linear index in its block: ``x + blockDim.x * (y + blockDim.y * z)``.

    Unique within the block, so it writes block-local storage (a 1D shared
    tile) but never an output (another block has the same local index).
    """
    _host_call("local_index")


@_builtin("local_index_2d")
def local_index_2d() -> ThreadIndex[Local2D]:
    """This thread's ``(threadIdx.y, threadIdx.x)`` in a 2D block (invalid if blockDim.z > 1)."""
    _host_call("local_index_2d")


@overload
def block_stride(t: SharedTile[Any, Local1D]) -> Iterator[ThreadIndex[Local1D]]: ...
@overload
def block_stride(t: SharedTile[Any, Local2D]) -> Iterator[ThreadIndex[Local2D]]: ...
@_builtin("block_stride")
def block_stride(t: Any) -> Any:
    """Iterate over this thread's elements of a shared tile, the block's threads together
    covering it once: 1D ``tid, tid + T, ...`` (``T`` threads per block); 2D
    ``(ty + i * blockDim.y, tx + j * blockDim.x)``. Only as the iterable of a ``for``.
    """
    _host_call("block_stride")


# ------------------------------------------------------------------ output tiles


@_builtin("tile_1d")
def tile_1d(out: DisjointSlice[T, Index1D], n: int) -> OutTile[T]:
    """The ``n`` elements ``[g * n, (g + 1) * n)`` of ``out`` that thread ``g`` owns
    (``g = index_1d()``; 1D launch). Written ``t[k] = v``, ``0 <= k < n``."""
    _host_call("tile_1d")


@_builtin("tile_2d")
def tile_2d(out: DisjointSlice[T, Index2D], tm: int, tn: int) -> OutTile2D[T]:
    """The ``tm x tn`` block of ``out`` at ``(row * tm, col * tn)`` that thread
    ``(row, col) = index_2d()`` owns. Written ``t[r, c] = v``. ``tm``/``tn``: static ints."""
    _host_call("tile_2d")


@_builtin("tile_2d_strided")
def tile_2d_strided(out: DisjointSlice[T, Index2D], tm: int, tn: int) -> OutTile2D[T]:
    """A ``tm x tn`` sub-tile of the block's ``(tm * blockDim.y) x (tn * blockDim.x)`` tile of
    ``out``, interleaved so that a warp's stores are coalesced: thread ``(ty, tx)`` of block
    ``(by, bx)`` owns ``(by * tm * bdy + ty + r * bdy, bx * tn * bdx + tx + c * bdx)``."""
    _host_call("tile_2d_strided")
