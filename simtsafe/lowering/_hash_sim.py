"""Simulator twins of hash tables (``NUMBA_ENABLE_CUDASIM=1`` and ``simtsafe.sim.check``).

The same probe as the device (``lowering._hash``): the same hash, the same
slot order. The key of each probed slot is read and swapped through the
runtime seam (``_simrt.atomic``), so on Numba's simulator two inserts never
both claim a slot, and ``simtsafe.sim.check`` records atomics (which never
race with each other) on the keys. Every other use is refused with the
device's ``simtsafe:`` text.
"""

from __future__ import annotations

from typing import Any, NoReturn, final

import numpy as np

from . import _simrt
from ._sim import _BF16, SENTINEL, SimWitness, _mint, _plain_record, _reject, _SimView, _witness_for

__all__ = ["SimHashTable", "SimHashValues", "builtins", "home", "probe"]

_WHAT_TABLE_OFFERS = (
    "a HashTable offers w = keys.insert(k), keys.insert_or_find(k), and keys.size, "
    "keys.shape, len(keys)"
)
_INSERTED, _FOUND, _FAILED = 0, 1, 2


def home(key: int, bits: int, capacity: int) -> int:
    """The first slot of ``key`` (its bits as unsigned): MurmurHash3's finalizer, mod capacity."""
    mask = (1 << bits) - 1
    h = key & mask
    if bits == 32:
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & mask
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & mask
        h ^= h >> 16
    else:
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & mask
        h ^= h >> 33
        h = (h * 0xC4CEB9FE1A85EC53) & mask
        h ^= h >> 33
    return h % capacity


def _key_of(value: Any, dtype: np.dtype[Any], what: str) -> int:
    value = _simrt.defined(value, what)
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        _reject(f"{what}: the key must be an integer; got {type(value).__name__}")
    v = int(value)
    info = np.iinfo(dtype)
    if not info.min <= v <= info.max:
        _reject(
            f"{what}: the key {v} does not fit the table's {dtype} keys; convert it explicitly, "
            f"e.g. np.{dtype}(k)"
        )
    return v


def probe(keys: Any, key: int, insert: bool) -> tuple[int, int]:
    """(outcome, slot) of the device's linear probe (``insert``: claim an EMPTY slot)."""
    dtype = np.dtype(keys.dtype)
    bits = dtype.itemsize * 8
    empty = -1 if dtype.kind == "i" else (1 << bits) - 1
    cap = int(keys.shape[0])
    if key == empty or cap == 0:
        return _FAILED, SENTINEL
    slot = home(key, bits, cap)
    typed = dtype.type(key)
    for _ in range(cap):
        if insert:
            cur = int(_simrt.atomic(keys, slot, "cas", lambda old: typed if old == empty else old))
        else:
            cur = int(keys[slot])
        if cur == key:
            return _FOUND, slot
        if cur == empty:
            return (_INSERTED, slot) if insert else (_FAILED, SENTINEL)
        slot = slot + 1 if slot + 1 < cap else 0
    return _FAILED, SENTINEL


@final
class SimHashTable:
    """A ``HashTable`` parameter on the simulator: inserts only."""

    __slots__ = ("_counter", "_keys", "_param")

    def __init__(self, keys: Any, counter: Any, param: str) -> None:
        self._keys = keys
        self._counter = counter
        self._param = param

    def _insert(self, key: Any, what: str) -> tuple[int, int]:
        k = _key_of(key, np.dtype(self._keys.dtype), f"{self._param}.{what}(k)")
        outcome, slot = probe(self._keys, k, True)
        if outcome == _FAILED and self._counter.shape[0] > 0:
            with np.errstate(over="ignore"):  # as the device: the counter wraps, then is marked
                old = int(_simrt.atomic(self._counter, 0, "add", lambda v: v + np.uint64(1)))
            if old >= 2**63:  # a start value there: mark the counter (as the device does)
                _simrt.atomic(self._counter, 0, "or", lambda v: v | np.uint64(1 << 63))
        return outcome, slot

    def insert(self, key: Any) -> SimWitness:
        outcome, slot = self._insert(key, "insert")
        return _mint(f"Inserted[{self._param}]", (slot if outcome == _INSERTED else SENTINEL,))

    def insert_or_find(self, key: Any) -> int:
        outcome, slot = self._insert(key, "insert_or_find")
        return -1 if outcome == _FAILED else slot

    def __len__(self) -> int:
        return int(self._keys.shape[0])

    @property
    def size(self) -> int:
        return int(self._keys.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return (int(self._keys.shape[0]),)

    def __getitem__(self, i: Any) -> NoReturn:
        _reject(
            "the keys of a hash table are not read during the launch (other threads are "
            f"inserting); {_WHAT_TABLE_OFFERS}. Read them in a later launch as an input, with "
            "simtsafe.hashing.find(keys, k)"
        )

    def __setitem__(self, i: Any, v: Any) -> NoReturn:
        _reject(
            "the keys of a hash table are written only by keys.insert(k) (a compare-and-swap); "
            f"{_WHAT_TABLE_OFFERS}"
        )

    def __getattr__(self, name: str) -> NoReturn:
        _reject(f"a HashTable has no .{name}: {_WHAT_TABLE_OFFERS}")


@final
class SimHashValues(_SimView):
    """A ``HashValues`` parameter on the simulator: written through its table's inserts."""

    __slots__ = ("_table", "_witness_space")

    def __init__(self, arr: Any, table: str) -> None:
        super().__init__(arr)
        self._table = table
        self._witness_space = f"Inserted[{table}]"

    def _check(self, w: Any, verb: str) -> None:
        if not isinstance(w, SimWitness):
            _reject(
                f"a HashValues is {verb} only at a slot whose key this thread inserted: w = "
                f"{self._table}.insert(k), then vals[w]; got an index of type {type(w).__name__}"
            )
        if w._space != self._witness_space:
            _reject(
                f"a ThreadIndex[{w._space}] witness cannot "
                f"{'write' if verb == 'written' else 'read'} the values of the hash table "
                f"{self._table!r}: only the call that inserted a key into {self._table!r} owns "
                f"its value slot. Use w = {self._table}.insert(k)"
            )

    def __setitem__(self, w: Any, value: Any) -> None:
        self._check(w, "written")
        idx = _witness_for(self._arr.shape, w)
        if idx is None:
            return
        if self._arr.dtype == _BF16:
            with np.errstate(all="ignore"):
                self._arr[idx[0]] = np.float32(value)
            return
        self._arr[idx[0]] = _plain_record(value)

    def __getitem__(self, w: Any) -> Any:
        self._check(w, "read")
        return self._read(w)


def builtins() -> dict[str, Any]:
    """``__ss_view_Table``, ``__ss_view_Values`` and ``__ss_hashing_find`` on the simulator."""
    from ._append_sim import SimCounter
    from ._sim import SimInput

    def view_table(keys: Any, counter: Any, param: str) -> SimHashTable:
        if isinstance(counter, SimCounter):
            counter = counter._arr
        return SimHashTable(keys, counter, param)

    def view_values(arr: Any, table: str) -> SimHashValues:
        return SimHashValues(arr, table)

    def find(keys: Any, key: Any) -> SimWitness:
        if isinstance(keys, SimHashTable):
            _reject(
                "hashing.find(keys, k) reads a table that no thread is inserting into: pass its "
                "keys as an input (In[...]) in a later launch. During inserts use "
                "keys.insert_or_find(k)"
            )
        arr = keys._arr if isinstance(keys, SimInput) else keys
        k = _key_of(key, np.dtype(arr.dtype), "hashing.find(keys, k)")
        outcome, slot = probe(arr, k, False)
        return _mint("Found", (slot if outcome == _FOUND else SENTINEL,))

    return {
        "__ss_view_Table": view_table,
        "__ss_view_Values": view_values,
        "__ss_hashing_find": find,
    }
