"""What an append buffer's or a hash table's counter says after the launch.

Append buffers: items stored, items dropped.

An ``AppendBuffer`` claim adds one to the buffer's ``Counter`` whether or not
a slot was left, so after the launch the counter holds every claim: the first
``min(counter, capacity)`` slots hold items, and ``counter - capacity`` claims
(when positive) found no slot and wrote nothing. Nothing is dropped silently:

* ``appended(items, counter)`` -> the item count; raises ``CapacityExceeded``
  when any claim was dropped.
* ``append_result(items, counter)`` -> ``AppendResult(stored, dropped,
  claimed)``, never raises on drops.
* ``counter(value=0)`` -> a fresh counter (a one-element ``uint64`` device array).

The counter is read with ``to_host`` (after every launch that writes it has
finished). A counter that is not reset keeps counting: the next launch
appends after the items already there (a queue that grows over launches).

Hash tables: a failed insert (a full table, or the ``EMPTY`` key itself)
adds one to the table's failure counter.

* ``empty_keys(capacity, dtype)`` -> a device array of ``EMPTY`` keys.
* ``inserted(keys, failed)`` -> the number of occupied slots; raises
  ``CapacityExceeded`` when an insert failed.
* ``insert_result(keys, failed)`` -> ``InsertResult(occupied, failed)``.
* ``hash_lookup(keys, key)`` -> the slot of ``key`` in a host copy of the keys
  (the device's probe, in numpy), or -1.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._errors import ArgumentTypeError, CapacityExceeded
from ._handles import _facts as array_facts_of
from ._handles import to_host

__all__ = [
    "AppendResult",
    "InsertResult",
    "append_result",
    "appended",
    "counter",
    "empty_keys",
    "hash_lookup",
    "insert_result",
    "inserted",
]


class AppendResult(NamedTuple):
    """What an append buffer holds after a launch.

    Attributes:
        stored: items stored: ``items[:stored]`` hold them, in no particular order.
        dropped: claims past the capacity; nothing was written for them.
        claimed: every claim since the counter was reset (``stored + dropped``).
    """

    stored: int
    dropped: int
    claimed: int


def _capacity(items: Any) -> int:
    facts = array_facts_of(items)
    if facts is None or len(facts.shape) != 1:
        raise ArgumentTypeError(
            "simtsafe.appended(items, counter): items must be the 1D device array passed as the "
            f"AppendBuffer, got {type(items).__name__}"
            + (f" of shape {facts.shape}" if facts is not None else ""),
            actual=type(items).__name__,
        )
    return int(facts.shape[0])


def _claimed(counter: Any, what: str = "append counter", counted: str = "claims") -> int:
    facts = array_facts_of(counter)
    if facts is None or facts.typestr != np.dtype(np.uint64).str or facts.shape != (1,):
        got = type(counter).__name__ if facts is None else f"{facts.typestr} {facts.shape}"
        raise ArgumentTypeError(
            "simtsafe: the counter must be the one-element uint64 device array passed as the "
            f"Counter, got {got}. Make one with simtsafe.counter()",
            actual=got,
        )
    value = int(to_host(counter)[0])
    if value >= COUNT_LIMIT:
        raise CapacityExceeded(
            f"the {what} holds {value}, at or past 2**63: it was not reset before the "
            f"launch (or started there) and its {counted} wrapped around, so the number of "
            f"{counted} is lost and dropped items cannot be counted. Reset it with "
            "simtsafe.counter() before each launch that fills the buffer from its start",
            actual=value,
            limit=COUNT_LIMIT,
            dropped=-1,
        )
    return value


#: Counts at or above this are refused: a device claim marks a counter that reaches it.
COUNT_LIMIT = 2**63


def append_result(items: Any, counter: Any) -> AppendResult:
    """How many items an append buffer holds and how many claims were dropped.

    Waits for the launches that write ``counter`` (``simtsafe.to_host``), then
    reads it.

    Args:
        items: the device array passed as the ``AppendBuffer``.
        counter: the device array passed as its ``Counter``.

    Raises:
        ArgumentTypeError: ``items`` is not a 1D device array, or ``counter`` is
            not a one-element ``uint64`` device array.
    """
    capacity = _capacity(items)
    claimed = _claimed(counter)
    stored = min(claimed, capacity)
    return AppendResult(stored=stored, dropped=claimed - stored, claimed=claimed)


def appended(items: Any, counter: Any) -> int:
    """The number of items an append buffer holds after its launches: ``items[:n]``.

    Raises:
        CapacityExceeded: a claim found no slot (the buffer was too small);
            ``dropped`` says how many items were lost, ``actual`` how many
            slots were claimed, ``limit`` the capacity.
        ArgumentTypeError: as ``append_result``.
    """
    r = append_result(items, counter)
    if r.dropped:
        capacity = r.stored
        raise CapacityExceeded(
            f"the append buffer holds {capacity} items, but {r.claimed} slots were claimed: "
            f"{r.dropped} items were dropped (nothing was written for them). Launch again with "
            f"a buffer of at least {r.claimed} elements (and the counter reset to 0), or, to "
            "keep the first items, read them with simtsafe.append_result(items, counter)",
            actual=r.claimed,
            limit=capacity,
            dropped=r.dropped,
        )
    return r.stored


def counter(value: int = 0) -> Any:
    """A fresh append-buffer counter: a one-element ``uint64`` device array holding ``value``."""
    from numba import cuda

    if (
        isinstance(value, bool)
        or not isinstance(value, int | np.integer)
        or not 0 <= value < COUNT_LIMIT
    ):
        raise ValueError(
            f"simtsafe.counter(value): value must be an int in [0, 2**63), got {value!r}"
        )
    return cuda.to_device(np.array([value], np.uint64))


# ----------------------------------------------------------------------------- hash tables

#: The key types of a HashTable.
_KEY_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))


class InsertResult(NamedTuple):
    """What a hash table holds after its inserts.

    Attributes:
        occupied: slots holding a key.
        failed: insert calls that found no slot (a full table) or inserted the
            ``EMPTY`` key, since the counter was reset; nothing was stored for them.
    """

    occupied: int
    failed: int


def _empty(dtype: np.dtype[Any]) -> Any:
    return dtype.type(-1) if dtype.kind == "i" else np.iinfo(dtype).max


def empty_keys(capacity: int, dtype: Any = np.uint32) -> Any:
    """A fresh hash table's keys: a device array of ``capacity`` ``EMPTY`` keys (all ones)."""
    from numba import cuda

    dt = np.dtype(dtype)
    if dt not in _KEY_DTYPES:
        raise ValueError(
            f"simtsafe.empty_keys: hash table keys are int32, uint32, int64 or uint64; got {dt}"
        )
    if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer) or capacity < 0:
        raise ValueError(f"simtsafe.empty_keys: capacity must be an int >= 0, got {capacity!r}")
    return cuda.to_device(np.full(int(capacity), _empty(dt), dt))


def _keys_host(keys: Any) -> np.ndarray[Any, Any]:
    facts = array_facts_of(keys)
    if facts is None or len(facts.shape) != 1 or np.dtype(facts.typestr) not in _KEY_DTYPES:
        got = type(keys).__name__ if facts is None else f"{facts.typestr} {facts.shape}"
        raise ArgumentTypeError(
            "simtsafe.inserted(keys, failed): keys must be the 1D int32/uint32/int64/uint64 "
            f"device array passed as the HashTable, got {got}",
            actual=got,
        )
    return np.asarray(to_host(keys))


def insert_result(keys: Any, failed: Any) -> InsertResult:
    """How many slots of a hash table hold a key, and how many inserts failed.

    Waits for the launches that write them (``simtsafe.to_host``), then reads
    the keys and the failure counter.

    Raises:
        ArgumentTypeError: ``keys`` is not a 1D integer device array of a key
            type, or ``failed`` is not a one-element ``uint64`` device array.
    """
    host = _keys_host(keys)
    n_failed = _claimed(failed, "hash table's failure counter", "failed inserts")
    return InsertResult(occupied=int((host != _empty(host.dtype)).sum()), failed=n_failed)


def inserted(keys: Any, failed: Any) -> int:
    """The number of occupied slots of a hash table; refuses a table an insert failed on.

    Raises:
        CapacityExceeded: an insert found no slot (the table was full) or tried
            the ``EMPTY`` key: ``dropped`` says how many; ``limit`` is the capacity,
            ``actual`` the occupied slots.
        ArgumentTypeError: as ``insert_result``.
    """
    r = insert_result(keys, failed)
    capacity = int(array_facts_of(keys).shape[0])  # type: ignore[union-attr]
    if r.failed:
        raise CapacityExceeded(
            f"{r.failed} inserts into the hash table failed (nothing was stored for them): it "
            f"has {capacity} slots and {r.occupied} hold keys, so the table was full when they "
            "probed, or a key was the EMPTY key (all ones) itself. Launch again with a larger "
            "table (a load factor below about 0.9 keeps probes short) and the counter reset to "
            "0, or read what was stored with simtsafe.insert_result(keys, failed)",
            actual=r.occupied,
            limit=capacity,
            dropped=r.failed,
        )
    return r.occupied


def hash_lookup(keys: np.ndarray[Any, Any], key: int) -> int:
    """The slot of ``key`` in a host copy of a table's keys, probed as the device does; -1."""
    from ..lowering._hash_sim import probe

    arr = np.asarray(keys)
    if arr.ndim != 1 or arr.dtype not in _KEY_DTYPES:
        raise ValueError(
            "simtsafe.hash_lookup(keys, key): keys must be a 1D int32/uint32/int64/uint64 numpy "
            f"array, got {arr.dtype} of shape {arr.shape}"
        )
    outcome, slot = probe(arr, int(key), False)
    return slot if outcome == 1 else -1
