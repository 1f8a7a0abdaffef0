"""Vector access in Tier 1: a run of 2, 4 or 8 elements in one access.

``vec.load(a, j, n)`` reads the run ``a[j*n : (j+1)*n]`` of a 1D input;
``vec.load(a, (r, j), n)`` reads the run ``a[r, j*n : (j+1)*n]`` of a 2D one.
The result is a tuple of ``n`` values of the element type.

``n`` is a compile-time int (2, 4 or 8) and ``n * itemsize`` must be 4, 8 or
16 bytes; the input must be C-contiguous. When the whole run lies inside the
array and its address is a multiple of ``n * itemsize``, the read is ONE
vector access (``ld.global.v2``/``.v4``); otherwise it reads element by
element and every element outside the array reads as 0. So the read never
leaves the array, whatever the indices and the alignment (docs/cooperation.md,
"Vector access"). The launch, though, wants the fast path: an input passed
directly to ``vec.load`` / ``vec.load_runs`` with a constant ``n`` must have a
data pointer (and, 2D, a row pitch in bytes) that is a multiple of the run's
bytes, else the launch raises ``ArgumentTypeError`` (speed, not safety: pad
the rows, e.g. an int8 matrix of 130 columns to 132, or read element by
element).

``vec.load_runs(a, idxs, n)`` is ``vec.load(a, i, n)`` for each index ``i`` of the
tuple ``idxs`` (ints, or ``(r, j)`` pairs of a 2D input; 1 to 16 of them), as a tuple
of runs: when every run is whole and aligned, its vector accesses are issued back to
back, with nothing between them that waits for one (a single ``vec.load`` keeps the
check of its run between its access and the next one's). It is how a loop keeps
several 16-byte reads in flight per thread (a GEMV's weight stream).

``vec.store(t, values)`` writes the ``n`` values into the thread's 1D output
tile ``t = thread.tile_1d(out, n)`` (the run ``out[g*n : (g+1)*n]`` it owns):
ONE vector store (``st.global.v2``/``.v4``) when the tile lies inside ``out``
and its address is a multiple of ``n * itemsize``, else element by element,
nothing outside ``out``.

``vec.store_at(raw, j, values)`` is the Tier-2 form: it writes the run
``raw[j*n : (j+1)*n]`` of a raw 1D array (``out.unchecked`` or a shared
array), one vector store when the run is whole and aligned, else element by
element, never outside the array. Nothing proves the run is the thread's own,
so it is allowed only inside ``with simtsafe.unsafe("SAFETY: ..."):``
(docs/unsafe.md).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api
from ._coopviews import OutTile, SharedTile
from ._views import In, In2D

__all__ = ["load", "load_runs", "store", "store_at"]

T = TypeVar("T", bound=np.generic)


class _RawArray(Protocol):
    """A raw writable array indexed by ints: ``out.unchecked``, a shared array."""

    def __setitem__(self, i: int, value: Any, /) -> None: ...


@overload
def load(a: In[T], j: int, n: Literal[2, 4, 8]) -> tuple[T, ...]: ...
@overload
def load(a: In2D[T], j: tuple[int, int], n: Literal[2, 4, 8]) -> tuple[T, ...]: ...
@overload
def load(a: SharedTile[T, Any], j: int | tuple[int, int], n: Literal[2, 4, 8]) -> tuple[T, ...]: ...
@kernel_api("vec.load")
def load(a: Any, j: int | tuple[int, int], n: Literal[2, 4, 8]) -> tuple[Any, ...]:
    """The run ``[j*n, (j+1)*n)`` of a 1D input (or of row ``r`` of a 2D input, with
    ``j = (r, j)``), or of a shared tile in its read phase, as a tuple of ``n`` values;
    elements outside the array (the tile's logical extents) read 0. A launch refuses an
    input given here whose data pointer or row pitch is not a multiple of the run's bytes
    (the module's docstring)."""
    host_call("vec.load")


@overload
def load_runs(
    a: In[T], idxs: tuple[int, ...], n: Literal[2, 4, 8]
) -> tuple[tuple[T, ...], ...]: ...
@overload
def load_runs(
    a: In2D[T], idxs: tuple[tuple[int, int], ...], n: Literal[2, 4, 8]
) -> tuple[tuple[T, ...], ...]: ...
@overload
def load_runs(
    a: SharedTile[T, Any], idxs: tuple[Any, ...], n: Literal[2, 4, 8]
) -> tuple[tuple[T, ...], ...]: ...
@kernel_api("vec.load_runs")
def load_runs(a: Any, idxs: tuple[Any, ...], n: Literal[2, 4, 8]) -> tuple[tuple[Any, ...], ...]:
    """``tuple(vec.load(a, i, n) for i in idxs)`` (``idxs``: 1 to 16 indices, each an int or,
    for a 2D input, a ``(row, j)`` pair); when every run is whole and aligned, the vector
    loads are issued back to back and all are in flight together."""
    host_call("vec.load_runs")


@kernel_api("vec.store")
def store(t: OutTile[T], values: tuple[Any, ...]) -> None:
    """Write ``values`` (a tuple of ``len(t)`` values) into the thread's 1D output tile
    ``t = thread.tile_1d(out, n)``: one vector store when the tile is inside ``out`` and
    aligned, else element by element; nothing is written outside ``out``."""
    host_call("vec.store")


@kernel_api("vec.store_at")
def store_at(raw: _RawArray, j: int, values: tuple[Any, ...]) -> None:
    """Write ``values`` (a tuple of ``n`` values, ``n`` in 2, 4, 8) into the run
    ``raw[j*n : (j+1)*n]`` of a raw 1D array (``out.unchecked``, a shared array).

    One vector store (``st.global.v2``/``.v4``) when the whole run lies inside
    ``raw`` and its address is a multiple of its size, else one store per
    element that lies inside ``raw``: nothing is written outside the array.

    Safety:
        Only inside ``with simtsafe.unsafe("SAFETY: ..."):``. Nothing proves
        that no other thread writes the same run: the reason must say why
        (e.g. the run belongs to a tile this block won from an atomic counter).
    """
    host_call("vec.store_at")
