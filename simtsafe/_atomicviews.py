"""Annotations of ownership won by an atomic: append buffers, hash tables, their counters.

Like ``_views``, these are descriptions for the kernel decorator and for
mypy/pyright; no instance exists on the host. Inside a kernel they are Numba
types (``simtsafe.lowering._append``), on the simulator their Python twins.

* ``AppendBuffer[T]`` -- a 1D output written only at slots this thread won:
  ``w = buf.claim()`` performs the fetch-add on the buffer's counter and
  returns a witness of the slot (``ThreadIndex[Appended]``). A claim past the
  buffer's end gives the invalid witness (writes through it do nothing) and
  is still counted, so the host learns how many items were dropped
  (``simtsafe.appended``).
* ``Counter`` -- the buffer's item counter, a one-element ``uint64`` device
  array. The contract pairs each buffer with its counter
  (``LaunchContract(appends={"out": "count"})``); the kernel never reads or
  writes it: only ``claim()`` adds to it.
* ``HashTable[K]`` -- the keys of an open-addressing hash table (a 1D integer
  array, empty slots hold the all-ones ``EMPTY`` key). ``w = keys.insert(k)``
  inserts ``k`` with a compare-and-swap (linear probing, at most one probe
  per slot) and returns a witness of its value slot -- valid only for the
  call that inserted it, so each value slot has one writer.
  ``keys.insert_or_find(k)`` returns the key's slot as an int (inserted or
  found; -1 when it failed), for atomic updates of an ``Accumulate``.
  Failed inserts (a full table, the ``EMPTY`` key) add to the table's
  ``Counter`` (``simtsafe.inserted`` reads it).
* ``HashValues[V]`` -- an array of one value per slot of its table, written
  only through that table's ``insert`` witnesses.

The contract pairs them: ``LaunchContract(appends={"out": "count"}, tables={"keys":
{"values": ["vals"], "failed": "nfail"}})``.
"""

from __future__ import annotations

from typing import Any, Generic, final, overload

import numpy as np
from typing_extensions import TypeVar, deprecated

from ._spaces import Appended, Inserted
from ._views import ThreadIndex, _KernelOnly

__all__ = ["AppendBuffer", "Counter", "HashTable", "HashValues"]

T = TypeVar("T", bound=np.generic)
K = TypeVar("K", bound=np.integer[Any])
_F = TypeVar("_F", bound=np.floating[Any])
_I = TypeVar("_I", bound=np.integer[Any])
_C = TypeVar("_C", bound=np.complexfloating[Any, Any])


@final
class AppendBuffer(_KernelOnly, Generic[T]):
    """A 1D output whose slots threads win with an atomic counter (stream compaction, queues).

    ``w = buf.claim()`` adds one to the buffer's counter and gives this thread
    the slot it won; ``buf[w] = v`` writes it (bounds-checked: a claim past
    the end is the invalid witness and writes nothing, and is counted as
    dropped). ``buf[w]`` reads it back. The slots of one launch go to
    different threads by the atomic's semantics, in no particular order.
    ``w = buf.block_claim(keep)`` is the block collective form (every thread
    of the block calls it; one atomic per block instead of one per warp).
    """

    __slots__ = ()

    def claim(self) -> ThreadIndex[Appended]:
        """Win the next slot: one fetch-add on the counter (a warp's claims share one)."""
        raise NotImplementedError

    def block_claim(self, keep: bool | np.bool_) -> ThreadIndex[Appended]:
        """A block collective: every thread of the block calls it (block-uniform control
        flow, checked when the kernel compiles), and each thread whose ``keep`` is true
        wins a slot -- one fetch-add of the block's total on the counter. A thread whose
        ``keep`` is false gets the invalid witness (writes through it do nothing)."""
        raise NotImplementedError

    def __getitem__(self, w: ThreadIndex[Appended]) -> T:
        raise NotImplementedError

    @overload
    def __setitem__(self, w: ThreadIndex[Appended], value: T) -> None: ...
    @overload
    @deprecated(
        "simtsafe: storing a float64 into a lower-precision output narrows silently; "
        "convert explicitly, e.g. np.float32(v)"
    )
    def __setitem__(
        self: AppendBuffer[_F], w: ThreadIndex[Appended], value: np.float64
    ) -> None: ...
    @overload
    def __setitem__(
        self: AppendBuffer[np.float64],
        w: ThreadIndex[Appended],
        value: float | np.float32 | np.float16,
    ) -> None: ...
    @overload
    def __setitem__(self: AppendBuffer[_F], w: ThreadIndex[Appended], value: float) -> None: ...
    @overload
    def __setitem__(self: AppendBuffer[_I], w: ThreadIndex[Appended], value: int) -> None: ...
    @overload
    def __setitem__(self: AppendBuffer[_C], w: ThreadIndex[Appended], value: complex) -> None: ...
    @overload
    def __setitem__(
        self: AppendBuffer[np.bool_], w: ThreadIndex[Appended], value: bool
    ) -> None: ...
    def __setitem__(self, w: ThreadIndex[Appended], value: object) -> None:
        """Store ``value`` in the claimed slot (nothing for a dropped claim).

        Same static store rule as ``DisjointSlice.__setitem__``.
        """
        raise NotImplementedError

    def __len__(self) -> int:
        """The capacity (the array's length)."""
        raise NotImplementedError

    @property
    def size(self) -> int:
        """The capacity: how many items fit."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int]:
        """The array's shape."""
        raise NotImplementedError


@final
class Counter(_KernelOnly):
    """The item counter of an ``AppendBuffer``: a one-element ``uint64`` device array.

    Kernel code does not touch it (``buf.claim()`` adds to it); read it on the
    host after the launch with ``simtsafe.appended(items, counter)``.
    """

    __slots__ = ()


@final
class HashTable(_KernelOnly, Generic[K]):
    """The keys of an open-addressing hash table: inserts by compare-and-swap, nothing else.

    Empty slots hold ``EMPTY``, the all-ones key (-1 for signed keys);
    ``simtsafe.empty_keys(capacity, dtype)`` makes an empty table. The key
    ``k`` is probed from slot ``hash(k) % capacity`` onwards, one slot at a
    time, at most ``capacity`` slots (docs/atomics.md gives the hash).
    """

    __slots__ = ()

    def insert(self, key: K | int) -> ThreadIndex[Inserted]:
        """Insert ``key``; the witness of its value slot if this call inserted it.

        Invalid (writes nothing) when the key was already there -- another call
        owns its values -- and when the insert failed (a full table, or ``key``
        is ``EMPTY``): then the table's failure counter counts it.
        """
        raise NotImplementedError

    def insert_or_find(self, key: K | int) -> int:
        """Insert ``key`` or find it; its slot, or -1 when the insert failed (counted)."""
        raise NotImplementedError

    def __len__(self) -> int:
        """The capacity (slots)."""
        raise NotImplementedError

    @property
    def size(self) -> int:
        """The capacity (slots)."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int]:
        """The keys array's shape."""
        raise NotImplementedError


@final
class HashValues(_KernelOnly, Generic[T]):
    """One value per slot of a hash table, written only by the call that inserted the slot's key."""

    __slots__ = ()

    def __getitem__(self, w: ThreadIndex[Inserted]) -> T:
        raise NotImplementedError

    @overload
    def __setitem__(self, w: ThreadIndex[Inserted], value: T) -> None: ...
    @overload
    @deprecated(
        "simtsafe: storing a float64 into a lower-precision output narrows silently; "
        "convert explicitly, e.g. np.float32(v)"
    )
    def __setitem__(self: HashValues[_F], w: ThreadIndex[Inserted], value: np.float64) -> None: ...
    @overload
    def __setitem__(
        self: HashValues[np.float64],
        w: ThreadIndex[Inserted],
        value: float | np.float32 | np.float16,
    ) -> None: ...
    @overload
    def __setitem__(self: HashValues[_F], w: ThreadIndex[Inserted], value: float) -> None: ...
    @overload
    def __setitem__(self: HashValues[_I], w: ThreadIndex[Inserted], value: int) -> None: ...
    @overload
    def __setitem__(self: HashValues[_C], w: ThreadIndex[Inserted], value: complex) -> None: ...
    @overload
    def __setitem__(self: HashValues[np.bool_], w: ThreadIndex[Inserted], value: bool) -> None: ...
    def __setitem__(self, w: ThreadIndex[Inserted], value: object) -> None:
        """Store ``value`` in the inserted key's slot (same store rule as ``DisjointSlice``)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        """The number of slots."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int]:
        """The array's shape."""
        raise NotImplementedError
