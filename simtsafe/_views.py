"""Parameter annotations for kernels: ``DisjointSlice``, ``In``, ``ThreadIndex``.

These classes are *descriptions*, read by ``@simtsafe.kernel`` from the
kernel's annotations and by mypy/pyright. No instance ever exists on the
host: inside a compiled kernel the parameters are Numba types (see
``simtsafe.device``), on the simulator they are the simulator's twins. The
method signatures below are what static checkers hold kernel code to.

Invariant: a ``ThreadIndex[S]`` value can only come from a ``simtsafe.thread``
constructor, so it addresses an element owned by the current thread alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, NoReturn, final, overload

import numpy as np
from typing_extensions import TypeVar, deprecated

from ._spaces import (
    Appended,
    BlockRow,
    Columns,
    Found,
    Index1D,
    Index2D,
    Index3D,
    IndexSpace,
    Inserted,
    Local1D,
    Local2D,
    PerBlock,
    PerWarp,
    WarpRow,
)

if TYPE_CHECKING:
    from ._atomicviews import AppendBuffer, HashValues

__all__ = [
    "DisjointSlice",
    "DisjointSlice2D",
    "DisjointSlice3D",
    "In",
    "In2D",
    "In3D",
    "Index1D",
    "Index2D",
    "Index3D",
    "PerBlock",
    "PerWarp",
    "RowChunk",
    "ThreadIndex",
]

T = TypeVar("T", bound=np.generic)
S = TypeVar("S", bound=IndexSpace, default=Index1D)
S_co = TypeVar("S_co", bound=IndexSpace, default=Index1D, covariant=True)
# Element-type families for the store rules of ``DisjointSlice.__setitem__``.
_F = TypeVar("_F", bound=np.floating[Any])
_I = TypeVar("_I", bound=np.integer[Any])
_C = TypeVar("_C", bound=np.complexfloating[Any, Any])
_G = TypeVar("_G", bound=np.generic)


_NO_HOST_VALUES = (
    "{name} exists only inside simtsafe kernels; pass a device array as the "
    "argument and let the kernel's annotation turn it into a {name}"
)


class _KernelOnly:
    """No public constructor (the trio pattern): values are made by the kernel."""

    __slots__ = ()

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError(_NO_HOST_VALUES.format(name=type(self).__name__))


# Not @final: a chunked row walk's witness (RowChunk, below, @final) is one, with two
# more attributes. No instance exists on the host either way (_KernelOnly).
class ThreadIndex(_KernelOnly, Generic[S_co]):
    """A witness that the current thread owns one element of space ``S``.

    Only ``simtsafe.thread`` constructors make one. It has no arithmetic and
    no comparison; ``index`` (1D spaces), ``row``/``col`` (``Index2D``, with
    the aliases ``y``/``x``) and ``z``/``y``/``x`` (``Index3D``) give plain
    ints that can read inputs but never index a ``DisjointSlice``. An
    invalid witness (the thread owns nothing) is out of bounds for every
    slice: writes through it do nothing.
    """

    __slots__ = ()

    def in_bounds(
        self,
        s: DisjointSlice[Any, S_co]
        | In[Any]
        | In2D[Any]
        | In3D[Any]
        | AppendBuffer[Any]
        | HashValues[Any],
    ) -> bool:
        """Does this witness address an element of ``s``?"""
        raise NotImplementedError

    @property
    def index(
        self: ThreadIndex[Index1D]
        | ThreadIndex[Columns]
        | ThreadIndex[PerWarp]
        | ThreadIndex[PerBlock]
        | ThreadIndex[Local1D]
        | ThreadIndex[Appended]
        | ThreadIndex[Inserted]
        | ThreadIndex[Found],
    ) -> int:
        """The linear element index (1D spaces), as a plain int."""
        raise NotImplementedError

    @property
    def row(
        self: ThreadIndex[Index2D]
        | ThreadIndex[Local2D]
        | ThreadIndex[BlockRow]
        | ThreadIndex[WarpRow],
    ) -> int:
        """Row (y) of a 2D witness, as a plain int."""
        raise NotImplementedError

    @property
    def col(
        self: ThreadIndex[Index2D]
        | ThreadIndex[Local2D]
        | ThreadIndex[BlockRow]
        | ThreadIndex[WarpRow],
    ) -> int:
        """Column (x) of a 2D witness, as a plain int."""
        raise NotImplementedError

    @property
    def x(self: ThreadIndex[Index2D] | ThreadIndex[Index3D] | ThreadIndex[Local2D]) -> int:
        """The x coordinate (last array axis; ``col`` of a 2D witness), as a plain int."""
        raise NotImplementedError

    @property
    def y(self: ThreadIndex[Index2D] | ThreadIndex[Index3D] | ThreadIndex[Local2D]) -> int:
        """The y coordinate (``row`` of a 2D witness, axis 1 of a 3D one), as a plain int."""
        raise NotImplementedError

    @property
    def z(self: ThreadIndex[Index3D]) -> int:
        """The z coordinate of a 3D witness (array axis 0), as a plain int."""
        raise NotImplementedError


@final
class RowChunk(ThreadIndex[S_co]):
    """A chunked row walk's witness (``thread.block_row_chunks`` / ``warp_row_chunks``).

    A ``ThreadIndex`` of its row space -- it reads and writes what a row walk's witness
    does -- for column ``start + chunk * step`` of the row, which in the last chunk may lie
    past the row's end: such a witness addresses no element (a write does nothing, a read
    gives 0), and ``valid`` is False.
    """

    __slots__ = ()

    @property
    def valid(self) -> bool:
        """Does the witness address an element of the walked array (row and column)?"""
        raise NotImplementedError

    @property
    def chunk(self) -> int:
        """The chunk's number ``k`` (the loop's iteration: 0, 1, ...), as a plain int."""
        raise NotImplementedError


@final
class DisjointSlice(_KernelOnly, Generic[T, S]):
    """An output array that a thread may write only where it owns the element.

    ``DisjointSlice[np.float32]`` is a 1D output in ``Index1D``;
    ``DisjointSlice2D[np.float32]`` a 2D one, ``DisjointSlice3D[np.float32]``
    a 3D one; ``DisjointSlice[np.float32,
    PerBlock]`` a per-block result. Reads and writes take a witness of the same
    space and are bounds-checked against this array's own shape: out of range,
    a write does nothing and a read gives zero.
    """

    __slots__ = ()

    @overload
    @deprecated(
        "simtsafe: a Columns output is indexed as out[row, w], a plain int row and the "
        "thread.column() witness, never by the witness alone"
    )
    def __getitem__(self: DisjointSlice[_G, Columns], w: ThreadIndex[Columns]) -> _G: ...
    @overload
    def __getitem__(self, w: ThreadIndex[S]) -> T: ...
    @overload
    def __getitem__(self: DisjointSlice[T, Columns], w: tuple[int, ThreadIndex[Columns]]) -> T: ...
    def __getitem__(self, w: ThreadIndex[Any] | tuple[int, ThreadIndex[Columns]]) -> Any:
        """The element at the witness (``out[row, w]`` for a ``Columns`` output); 0 out of range."""
        raise NotImplementedError

    @overload
    @deprecated(
        "simtsafe: a Columns output is indexed as out[row, w], a plain int row and the "
        "thread.column() witness, never by the witness alone"
    )
    def __setitem__(
        self: DisjointSlice[_G, Columns], w: ThreadIndex[Columns], value: object
    ) -> None: ...
    @overload
    def __setitem__(
        self: DisjointSlice[T, Columns], w: tuple[int, ThreadIndex[Columns]], value: T
    ) -> None: ...
    @overload
    def __setitem__(
        self: DisjointSlice[_F, Columns], w: tuple[int, ThreadIndex[Columns]], value: float
    ) -> None: ...
    @overload
    def __setitem__(
        self: DisjointSlice[_I, Columns], w: tuple[int, ThreadIndex[Columns]], value: int
    ) -> None: ...
    @overload
    def __setitem__(self, w: ThreadIndex[S], value: T) -> None: ...
    @overload
    @deprecated(
        "simtsafe: storing a float64 into a lower-precision output narrows silently; "
        "convert explicitly, e.g. np.float32(v)"
    )
    def __setitem__(self: DisjointSlice[_F, S], w: ThreadIndex[S], value: np.float64) -> None: ...
    @overload
    def __setitem__(
        self: DisjointSlice[np.float64, S],
        w: ThreadIndex[S],
        value: float | np.float32 | np.float16,
    ) -> None: ...
    @overload
    def __setitem__(self: DisjointSlice[_F, S], w: ThreadIndex[S], value: float) -> None: ...
    @overload
    def __setitem__(self: DisjointSlice[_I, S], w: ThreadIndex[S], value: int) -> None: ...
    @overload
    def __setitem__(self: DisjointSlice[_C, S], w: ThreadIndex[S], value: complex) -> None: ...
    @overload
    def __setitem__(self: DisjointSlice[np.bool_, S], w: ThreadIndex[S], value: bool) -> None: ...
    def __setitem__(
        self, w: ThreadIndex[Any] | tuple[int, ThreadIndex[Columns]], value: object
    ) -> None:
        """Store ``value`` at the witness's element (nothing when out of bounds).

        A ``Columns`` output is written as ``out[row, w]``: any int row, the
        thread's column witness (``thread.column()``).

        Static store rule: a value of the element type ``T``; or a Python
        scalar of the same kind (``float``/``int`` into a floating output,
        ``int`` into an integer one, ``complex`` into a complex one, ``bool``
        into a bool one); or a float32/float16 into a float64 output. A
        ``np.float64`` into a lower-precision float output is reported as
        deprecated (``np.float64`` subclasses ``float``, so only an
        overload marked ``@deprecated`` can single it out).
        """
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        """Number of elements."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        raise NotImplementedError

    @property
    def unchecked(self) -> _UncheckedView[T]:
        """The raw array: plain-int writes, no witness.

        Safety:
            Only inside ``with simtsafe.unsafe("SAFETY: ..."):``. The caller
            guarantees no two threads write the same element and every index
            is in bounds.
        """
        raise NotImplementedError


DisjointSlice2D = DisjointSlice[T, Index2D]
"""A 2D output addressed by ``thread.index_2d()`` witnesses."""

DisjointSlice3D = DisjointSlice[T, Index3D]
"""A 3D output addressed by ``thread.index_3d()`` witnesses."""


@final
class _UncheckedView(_KernelOnly, Generic[T]):
    """What ``DisjointSlice.unchecked`` gives: a raw, writable array."""

    __slots__ = ()

    def __getitem__(self, i: int | tuple[int, ...]) -> T:
        raise NotImplementedError

    @overload
    def __setitem__(self, i: int | tuple[int, ...], value: T) -> None: ...
    @overload
    @deprecated(
        "simtsafe: storing a float64 into a lower-precision output narrows silently; "
        "convert explicitly, e.g. np.float32(v)"
    )
    def __setitem__(
        self: _UncheckedView[_F], i: int | tuple[int, ...], value: np.float64
    ) -> None: ...
    @overload
    def __setitem__(
        self: _UncheckedView[np.float64],
        i: int | tuple[int, ...],
        value: float | np.float32 | np.float16,
    ) -> None: ...
    @overload
    def __setitem__(self: _UncheckedView[_F], i: int | tuple[int, ...], value: float) -> None: ...
    @overload
    def __setitem__(self: _UncheckedView[_I], i: int | tuple[int, ...], value: int) -> None: ...
    @overload
    def __setitem__(self: _UncheckedView[_C], i: int | tuple[int, ...], value: complex) -> None: ...
    @overload
    def __setitem__(
        self: _UncheckedView[np.bool_], i: int | tuple[int, ...], value: bool
    ) -> None: ...
    def __setitem__(self, i: int | tuple[int, ...], value: object) -> None:
        """Same store rule as ``DisjointSlice.__setitem__``."""
        raise NotImplementedError


class _Input(_KernelOnly):
    """What both read-only inputs share; stores are hidden from checkers."""

    __slots__ = ()

    if not TYPE_CHECKING:
        # Hidden from checkers, so that a store is a static error
        # ("Unsupported target for indexed assignment", code ``index``).
        def __setitem__(self, i: object, value: object) -> NoReturn:
            raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        """Number of elements."""
        raise NotImplementedError


@final
class In(_Input, Generic[T]):
    """A read-only 1D input. Any store is rejected when the kernel compiles."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(
        self, i: ThreadIndex[Index1D] | ThreadIndex[Columns] | ThreadIndex[Found]
    ) -> T: ...
    def __getitem__(
        self, i: int | ThreadIndex[Index1D] | ThreadIndex[Columns] | ThreadIndex[Found]
    ) -> T:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int]:
        """The array's shape."""
        raise NotImplementedError


@final
class In2D(_Input, Generic[T]):
    """A read-only 2D input. Any store is rejected when the kernel compiles."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: tuple[int, int]) -> T: ...
    @overload
    def __getitem__(
        self, i: ThreadIndex[Index2D] | ThreadIndex[BlockRow] | ThreadIndex[WarpRow]
    ) -> T: ...
    def __getitem__(
        self,
        i: tuple[int, int] | ThreadIndex[Index2D] | ThreadIndex[BlockRow] | ThreadIndex[WarpRow],
    ) -> T:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, int]:
        """The array's shape."""
        raise NotImplementedError


@final
class In3D(_Input, Generic[T]):
    """A read-only 3D input. Any store is rejected when the kernel compiles."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: tuple[int, int, int]) -> T: ...
    @overload
    def __getitem__(self, i: ThreadIndex[Index3D]) -> T: ...
    def __getitem__(self, i: tuple[int, int, int] | ThreadIndex[Index3D]) -> T:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, int, int]:
        """The array's shape."""
        raise NotImplementedError
