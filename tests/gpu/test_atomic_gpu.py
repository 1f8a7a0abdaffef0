"""Ownership won by atomics on a real GPU: the warp-aggregated claim under any divergence.

The simulator claims one slot per call (a lock), so only a GPU runs the
aggregated lowering (``activemask``, one ``atom.add`` per group, two
``shfl.sync.idx``). Each test stores, for every claim, a value that names
the thread and the claim, and checks that every value is there exactly once
(or counted as dropped), at sizes and capacities the simulator cannot reach.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import load_kernel_module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

_CLAIMS = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, reps: In[np.int32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(reps):
        r = reps[w]
        tag = np.int64(w.index) * 64
        if r % 2 == 0:  # two groups of lanes claim at different times
            s = out.claim()
            out[s] = tag
        else:
            s = out.claim()
            out[s] = tag
        j = 1
        while j < r:  # lanes leave this loop at different iterations
            if (j + r) % 3 == 0:
                s = out.claim()
                out[s] = tag + j
            else:
                s = out.claim()
                out[s] = tag + j
            j += 1
"""


def _expected(reps: np.ndarray) -> np.ndarray:
    tags = [np.int64(i) * 64 + np.arange(max(r, 1), dtype=np.int64) for i, r in enumerate(reps)]
    return np.sort(np.concatenate(tags))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_divergent_claims_get_distinct_slots(tmp_path: Path, seed: int) -> None:
    k = load_kernel_module(tmp_path, _CLAIMS).k
    rng = np.random.default_rng(seed)
    reps = rng.integers(0, 40, 100_003).astype(np.int32)
    want = _expected(reps)
    for cap in (want.size, want.size - 1, want.size // 3):
        d_out = cuda.to_device(np.full(cap, -1, np.int64))
        d_n = ss.counter()
        k.prepare(grid=ss.cover(reps.size, 128), block=128)(d_out, d_n, cuda.to_device(reps))
        r = ss.append_result(d_out, d_n)
        assert (r.claimed, r.stored) == (want.size, min(cap, want.size))
        got = np.sort(d_out.copy_to_host())
        assert np.unique(got).size == got.size  # no slot given twice
        assert np.isin(got, want).all()
        if cap == want.size:
            np.testing.assert_array_equal(got, want)


def test_the_compaction_example_at_full_size() -> None:
    assert example("compact").run(n=10_000_019, blocks=264)


def test_claims_across_many_blocks_and_launches(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, _CLAIMS).k
    reps = np.ones(1_000_000, np.int32)
    d_out = cuda.to_device(np.full(3_000_000, -1, np.int64))
    d_n = ss.counter()
    launch = k.prepare(grid=ss.cover(reps.size, 128), block=128)
    for _ in range(3):  # a queue over launches: the counter is not reset
        launch(d_out, d_n, cuda.to_device(reps))
    assert ss.appended(d_out, d_n) == 3_000_000
    got = d_out.copy_to_host()
    counts = np.bincount(got // 64, minlength=reps.size)
    assert (counts == 3).all()


_TABLE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1), tables={
    "keys": {"values": ["vals"], "failed": "nf"}}))
def k(keys: ss.HashTable[np.uint64], vals: ss.HashValues[np.int64], nf: ss.Counter,
      q: In[np.uint64]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = w.index


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def look(out: DisjointSlice[np.int64], keys: In[np.uint64], vals: In[np.int64],
         q: In[np.uint64]) -> None:
    for w in thread.grid_stride(q):
        f = ss.hashing.find(keys, q[w])
        out[w] = vals[f] if f.in_bounds(vals) else -1
"""


@pytest.mark.parametrize("load", [0.01, 0.5, 0.9, 0.95, 1.2])
def test_hash_inserts_at_load_factors(tmp_path: Path, load: float) -> None:
    mod = load_kernel_module(tmp_path, _TABLE)
    rng = np.random.default_rng(int(load * 100))
    cap = 1 << 20
    distinct = max(1, int(load * cap))
    draws = rng.integers(0, 2**64 - 1, distinct + distinct // 8 + 8, dtype=np.uint64)
    pool = np.unique(draws)[:distinct]  # distinct keys, never EMPTY (2**64 - 1)
    assert pool.size == distinct
    q = np.concatenate([pool, rng.choice(pool, distinct // 4)])  # a quarter inserted twice
    rng.shuffle(q)
    d_keys, d_vals, d_nf = (
        ss.empty_keys(cap, np.uint64),
        cuda.to_device(np.full(cap, -1)),
        ss.counter(),
    )
    d_q = cuda.to_device(q)
    mod.k.prepare(grid=528, block=256)(d_keys, d_vals, d_nf, d_q)
    r = ss.insert_result(d_keys, d_nf)
    keys, vals = d_keys.copy_to_host(), d_vals.copy_to_host()
    occupied = keys[keys != np.uint64(2**64 - 1)]
    assert np.unique(occupied).size == occupied.size == r.occupied == min(distinct, cap)
    present = np.isin(q, occupied)
    assert r.failed == int((~present).sum())  # every lost insert is counted
    filled = vals != -1
    assert filled.sum() == r.occupied  # one value per inserted key, written by its inserter
    np.testing.assert_array_equal(q[vals[filled]], keys[filled])
    # The device's lookups find every key where the host's probe does (same hash, same order).
    d_out = cuda.to_device(np.zeros(q.size, np.int64))
    mod.look.prepare(grid=528, block=256)(d_out, d_keys, d_vals, d_q)
    out = d_out.copy_to_host()
    assert (out[present] >= 0).all() and (out[~present] == -1).all()
    sample = rng.choice(q.size, min(200, q.size), replace=False)
    for i in sample:
        slot = ss.hash_lookup(keys, int(q[i]))
        assert (slot >= 0) == present[i] and (slot < 0 or out[i] == vals[slot])
