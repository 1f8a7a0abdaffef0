"""Hash tables on the simulator: the rules, every key present or counted, values, lookups.

Property tests (seeded numpy RNG) over load factors from 0.01 to 0.95 and
past capacity, with duplicate keys: afterwards every key is in the table or
each of its insert calls was counted as failed, the failure count is exact,
every value slot holds the value of a call with that key (the one that
inserted it), and ``hashing.find`` and ``simtsafe.hash_lookup`` find every
key. Small sizes: the simulator runs one Python thread per CUDA thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.hash_rules import ACCEPTED, BLOCK, CAP, GRID, REFUSED, N

pytestmark = pytest.mark.sim

EMPTY32 = np.uint32(0xFFFFFFFF)


def _q(seed: int = 5) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).choice(1_000_000, N, replace=False).astype(np.uint32)


def _launch(mod: Any, q: np.ndarray[Any, Any]) -> dict[str, Any]:
    d = {
        "keys": ss.empty_keys(CAP, np.uint32),
        "vals": cuda.to_device(np.full(CAP, np.nan, np.float32)),
        "nf": ss.counter(),
        "keys2": ss.empty_keys(CAP, np.uint32),
        "vals2": cuda.to_device(np.full(CAP, np.nan, np.float32)),
        "nf2": ss.counter(),
        "o": cuda.to_device(np.zeros(N, np.float32)),
        "q": cuda.to_device(q),
        "x": cuda.to_device(q.astype(np.float32) * np.float32(0.5)),
    }
    mod.k.prepare(grid=GRID, block=BLOCK)(*d.values())
    return d


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source), _q())
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_inserts_every_key_with_its_value(tmp_path: Path, case: str) -> None:
    q = _q()
    d = _launch(load_kernel_module(tmp_path, ACCEPTED[case]), q)
    assert ss.inserted(d["keys"], d["nf"]) == N
    keys, vals = d["keys"].copy_to_host(), d["vals"].copy_to_host()
    slots = [ss.hash_lookup(keys, int(k)) for k in q]
    assert min(slots) >= 0
    np.testing.assert_array_equal(vals[slots], q.astype(np.float32) * np.float32(0.5))
    if case == "insert-then-insert-or-find":
        np.testing.assert_array_equal(d["o"].copy_to_host(), np.array(slots, np.float32))


# ----------------------------------------------------------------------------- properties

_INSERT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), tables={
    "keys": {"values": ["vals"], "failed": "nf"}}))
def k(keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.int64], nf: ss.Counter,
      q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = w.index


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def look(out: DisjointSlice[np.int64], keys: In[np.uint32], vals: In[np.int64],
         q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        f = ss.hashing.find(keys, q[w])
        out[w] = vals[f] if f.in_bounds(vals) else -1
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_kernel_module(tmp_path_factory.mktemp("hash"), _INSERT)


def _insert_and_check(mod: Any, q: np.ndarray[Any, Any], cap: int, grid: int) -> ss.InsertResult:
    d_keys, d_vals, d_nf = (
        ss.empty_keys(cap, np.uint32),
        cuda.to_device(np.full(cap, -7)),
        ss.counter(),
    )
    d_q = cuda.to_device(q)
    mod.k.prepare(grid=grid, block=32)(d_keys, d_vals, d_nf, d_q)
    r = ss.insert_result(d_keys, d_nf)
    keys, vals = d_keys.copy_to_host(), d_vals.copy_to_host()
    occupied = keys[keys != EMPTY32]
    distinct = np.unique(q[q != EMPTY32])  # the EMPTY key is never stored
    assert np.unique(occupied).size == occupied.size == r.occupied  # no key twice
    assert np.isin(occupied, distinct).all()  # only inserted keys
    present = np.isin(q, occupied)
    assert r.failed == int((~present).sum())  # every failed call is counted, nothing else
    assert r.occupied == min(distinct.size, cap)  # inserts fail only when the table is full
    for key in occupied:  # each value slot holds the index of a call with that key
        slot = ss.hash_lookup(keys, int(key))
        assert q[vals[slot]] == key
    # The device's lookups agree with the host's probe, for present and absent keys.
    probes = np.concatenate([q, np.arange(5, dtype=np.uint32) + 2_000_000])
    d_out = cuda.to_device(np.zeros(probes.size, np.int64))
    mod.look.prepare(grid=grid, block=32)(d_out, d_keys, d_vals, cuda.to_device(probes))
    want = [vals[s] if (s := ss.hash_lookup(keys, int(p))) >= 0 else -1 for p in probes]
    np.testing.assert_array_equal(d_out.copy_to_host(), want)
    return r


@pytest.mark.parametrize("load", [0.01, 0.1, 0.5, 0.75, 0.9, 0.95, 1.0, 1.3])
def test_every_key_is_present_or_its_insert_counted(tables: Any, load: float) -> None:
    rng = np.random.default_rng(int(load * 1000))
    cap = 64
    distinct = max(1, round(load * cap))
    pool = rng.choice(2**32 - 1, distinct, replace=False).astype(np.uint32)  # never EMPTY
    q = rng.choice(pool, distinct + distinct // 3)  # every key, about a third twice
    q[:distinct] = pool
    rng.shuffle(q)
    r = _insert_and_check(tables, q, cap, grid=int(rng.integers(1, 4)))
    assert (r.failed == 0) == (distinct <= cap)


def test_hash_collisions_and_wraparound(tables: Any) -> None:
    # Keys whose first slot is the last one: the probe wraps to slot 0.
    from simtsafe.lowering._hash_sim import home

    cap = 16
    last = [k for k in range(5000) if home(k, 32, cap) == cap - 1][:6]
    r = _insert_and_check(tables, np.array(last, np.uint32), cap, grid=1)
    assert (r.occupied, r.failed) == (6, 0)


def test_the_empty_key_is_refused_and_counted(tables: Any) -> None:
    q = np.array([1, 2, 0xFFFFFFFF, 3, 0xFFFFFFFF], np.uint32)
    r = _insert_and_check(tables, q, 8, grid=1)
    assert (r.occupied, r.failed) == (3, 2)


def test_inserted_raises_when_an_insert_failed(tables: Any) -> None:
    q = np.arange(1, 21, dtype=np.uint32)
    d_keys, d_nf = ss.empty_keys(12, np.uint32), ss.counter()
    tables.k.prepare(grid=1, block=32)(
        d_keys, cuda.to_device(np.zeros(12, np.int64)), d_nf, cuda.to_device(q)
    )
    with pytest.raises(ss.CapacityExceeded) as info:
        ss.inserted(d_keys, d_nf)
    assert (info.value.actual, info.value.limit, info.value.dropped) == (12, 12, 8)
    assert "8 inserts into the hash table failed (nothing was stored for them): it has 12 " in str(
        info.value
    )


def test_a_table_grows_over_launches(tables: Any) -> None:
    d_keys, d_vals, d_nf = (
        ss.empty_keys(64, np.uint32),
        cuda.to_device(np.zeros(64, np.int64)),
        ss.counter(),
    )
    launch = tables.k.prepare(grid=1, block=32)
    launch(d_keys, d_vals, d_nf, cuda.to_device(np.arange(10, 30, dtype=np.uint32)))
    launch(d_keys, d_vals, d_nf, cuda.to_device(np.arange(20, 40, dtype=np.uint32)))
    keys, vals = d_keys.copy_to_host(), d_vals.copy_to_host()
    assert ss.inserted(d_keys, d_nf) == 30
    # 20..29 were there before the second launch: it found them and wrote no value.
    for key in range(10, 40):
        slot = ss.hash_lookup(keys, key)
        assert vals[slot] == (key - 10 if key < 30 else key - 20)


_AGGREGATE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), tables={
    "keys": {"failed": "nf"}}))
def k(keys: ss.HashTable[np.int64], nf: ss.Counter, counts: ss.Accumulate[np.uint32],
      q: In[np.int64]) -> None:
    for w in thread.grid_stride(q):
        counts.add(keys.insert_or_find(q[w]), 1)
"""


def test_insert_or_find_counts_keys_with_an_accumulator(tmp_path: Path) -> None:
    # Hash aggregation in Tier 1: every call gets its key's slot, atomics update it.
    k = load_kernel_module(tmp_path, _AGGREGATE).k
    rng = np.random.default_rng(8)
    q = rng.integers(-50, 50, 300).astype(np.int64)
    d_keys, d_nf, d_counts = (
        ss.empty_keys(128, np.int64),
        ss.counter(),
        cuda.to_device(np.zeros(128, np.uint32)),
    )
    k.prepare(grid=3, block=32)(d_keys, d_nf, d_counts, cuda.to_device(q))
    keys, counts = d_keys.copy_to_host(), d_counts.copy_to_host()
    assert ss.inserted(d_keys, d_nf) == np.unique(q).size
    for key, n in zip(*np.unique(q, return_counts=True), strict=True):
        assert counts[ss.hash_lookup(keys, int(key))] == n


# ----------------------------------------------------------------------------- launch checks


def test_values_must_have_one_element_per_slot(tables: Any) -> None:
    launch = tables.k.prepare(grid=1, block=32)
    for _ in range(2):  # the second launch takes the generated fast check
        with pytest.raises(ss.RequiresViolation) as info:
            launch(
                ss.empty_keys(16),
                cuda.to_device(np.zeros(15, np.int64)),
                ss.counter(),
                cuda.to_device(np.arange(4, dtype=np.uint32)),
            )
        assert (
            "argument 'vals' holds the values of the hash table 'keys' (tables in its launch "
            "contract): one per slot, keys.size = 16, got 15" in str(info.value)
        )


def test_the_failure_counter_must_have_one_element(tables: Any) -> None:
    with pytest.raises(ss.RequiresViolation) as info:
        tables.k.prepare(grid=1, block=32)(
            ss.empty_keys(16),
            cuda.to_device(np.zeros(16, np.int64)),
            cuda.to_device(np.zeros(3, np.uint64)),
            cuda.to_device(np.arange(4, dtype=np.uint32)),
        )
    assert "argument 'nf' is the failure Counter of the hash table 'keys'" in str(info.value)


def test_keys_of_another_type_and_aliasing_are_refused(tables: Any) -> None:
    launch = tables.k.prepare(grid=1, block=32)
    with pytest.raises(ss.ArgumentTypeError) as info:
        launch(
            ss.empty_keys(16, np.int64),
            cuda.to_device(np.zeros(16, np.int64)),
            ss.counter(),
            cuda.to_device(np.arange(4, dtype=np.uint32)),
        )
    assert "argument 'keys' is declared HashTable (1D uint32), got a 1D int64 array" in str(
        info.value
    )
    keys = ss.empty_keys(16)
    with pytest.raises(ss.AliasingError) as info:  # the keys are also the input
        launch(keys, cuda.to_device(np.zeros(16, np.int64)), ss.counter(), keys)
    assert "output 'keys' overlaps the memory of argument 'q'" in str(info.value)


def test_the_host_helpers_check_their_arguments() -> None:
    with pytest.raises(ValueError):
        ss.empty_keys(8, np.float32)
    with pytest.raises(ss.ArgumentTypeError):
        ss.insert_result(cuda.to_device(np.zeros(4, np.float32)), ss.counter())
    assert ss.hash_lookup(np.full(4, -1, np.int32), 3) == -1
    assert (ss.empty_keys(3, np.int64).copy_to_host() == -1).all()


# ----------------------------------------------------------------------------- attack: counter wrap


def _fill_one_slot(mod: Any, start: int) -> Any:
    """Two distinct keys into a table of one slot (one insert fails); the counter at ``start``."""
    d_keys, d_nf = ss.empty_keys(1, np.uint32), cuda.to_device(np.array([start], np.uint64))
    q = cuda.to_device(np.array([3, 4], np.uint32))
    mod.k.prepare(grid=1, block=32)(d_keys, cuda.to_device(np.full(1, -7)), d_nf, q)
    return d_keys, d_nf


def test_a_failure_counter_that_wraps_is_refused_by_the_host(tables: Any) -> None:
    """A counter not reset at 2**64 - 1 used to read 0 after the failed insert (wrapped), so
    ``inserted`` reported a full table as a success; the failure now marks its top bit."""
    d_keys, d_nf = _fill_one_slot(tables, 2**64 - 1)
    with pytest.raises(ss.CapacityExceeded, match=r"failure counter holds \d+, at or past 2\*\*63"):
        ss.inserted(d_keys, d_nf)


def test_a_failure_counter_from_zero_counts_the_failed_insert(tables: Any) -> None:
    """The twin from 0: one failed insert, counted and reported."""
    d_keys, d_nf = _fill_one_slot(tables, 0)
    assert ss.insert_result(d_keys, d_nf) == ss.InsertResult(occupied=1, failed=1)
    with pytest.raises(ss.CapacityExceeded, match="1 inserts into the hash table failed"):
        ss.inserted(d_keys, d_nf)


# --------------------------------------------------------------- one writer per value slot

_TWICE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), tables={
    "keys": {"values": ["vals"], "failed": "nf"}}))
def k(keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.int64], nf: ss.Counter,
      q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = vals[s] + w.index + 1  # read, then write: a second writer would race
        again = keys.insert(q[w])  # the same key by the same call: found, an invalid witness
        vals[again] = -1000
"""


@pytest.mark.parametrize(
    ("cap", "q"),
    [
        (8, [7] * 64),  # one key by every thread
        (1, [7] * 64),  # ... into one slot
        (1, [7, 8] * 32),  # two keys, one slot: every call of the second key fails
        (0, [7, 8, 9]),  # no slot: every insert fails
        (4, [0xFFFFFFFF, 5, 0xFFFFFFFF]),  # the EMPTY key
        (16, list(range(16)) * 4),  # load factor 1.0, each key 4 times
        (16, list(range(17))),  # one key past capacity
    ],
)
def test_one_writer_per_value_slot_and_every_failure_counted(
    tmp_path: Path, cap: int, q: list[int]
) -> None:
    # Attack round on the counted probe (5c96bb3): against a sequential model, every
    # slot's value is one inserting call's (never a sum, never the second insert's), and
    # each failed call is counted (both inserts of a failing key fail).
    mod = load_kernel_module(tmp_path, _TWICE)
    keys_in = np.array(q, np.uint32)
    d_keys, d_nf = ss.empty_keys(cap, np.uint32), ss.counter()
    d_vals = cuda.to_device(np.zeros(cap, np.int64))
    prep = mod.k.prepare(grid=2, block=32)
    args = (d_keys, d_vals, d_nf, cuda.to_device(keys_in))
    assert ss.sim.check(prep, *args).ok
    prep(*args)
    stored: set[int] = set()
    failed = 0
    for key in q:  # the model: any order of the calls stores the same keys
        if key == EMPTY32 or (key not in stored and len(stored) == cap):
            failed += 1
        else:
            stored.add(key)
    r = ss.insert_result(d_keys, d_nf)
    assert (r.occupied, r.failed) == (len(stored), 2 * failed)
    keys, vals = d_keys.copy_to_host(), d_vals.copy_to_host()
    for slot in range(cap):
        if keys[slot] == EMPTY32:
            assert vals[slot] == 0
        else:
            assert keys_in[vals[slot] - 1] == keys[slot]  # one call's w.index + 1
