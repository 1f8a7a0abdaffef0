"""``simtsafe.sim.check`` records Tier-1 atomics as atomics: append buffers and accumulators.

The simulator twins of ``buf.claim()`` and ``acc.add(i, v)`` update their
arrays through the runtime seam (``_simrt.atomic``), so the checker sees an
atomic read-modify-write, which never races with another atomic -- not a
plain read and write, which would. A counter updated without an atomic is
still reported.
"""

from __future__ import annotations

import numpy as np

from simtsafe import sim

from . import atomic_kernels as K


def test_append_buffer_claims_do_not_race() -> None:
    x = np.random.default_rng(4).permutation(300).astype(np.int32)
    report = sim.check(
        K.compact, 3, 32, np.full(300, -1, np.int32), np.zeros(1, np.uint64), x, np.int32(149)
    )
    assert report.ok, str(report)
    assert int(report.outputs["n"][0]) == 150
    stored = report.outputs["out"][:150]
    np.testing.assert_array_equal(np.sort(stored), np.arange(150, 300))
    assert (report.outputs["out"][150:] == -1).all()


def test_append_buffer_overflow_is_counted_under_the_checker() -> None:
    x = np.arange(100, dtype=np.int32)
    report = sim.check(
        K.compact, 2, 32, np.zeros(10, np.int32), np.zeros(1, np.uint64), x, np.int32(-1)
    )
    assert report.ok, str(report)
    assert int(report.outputs["n"][0]) == 100  # 10 stored, 90 counted as dropped
    assert np.unique(report.outputs["out"]).size == 10


def test_accumulate_updates_do_not_race() -> None:
    x = np.arange(256, dtype=np.int32) % 8
    report = sim.check(K.histogram, 2, 32, np.zeros(8, np.uint32), x)
    assert report.ok, str(report)
    np.testing.assert_array_equal(report.outputs["h"], np.full(8, 32, np.uint32))


def test_a_counter_without_an_atomic_races() -> None:
    x = np.arange(64, dtype=np.int32)
    report = sim.check(
        K.compact_plain_counter_bug, 1, 32, np.zeros(64, np.int32), np.zeros(1, np.uint64), x, 10
    )
    assert not report.ok
    assert {f.kind for f in report.findings} == {"race"}
    assert any(f.array == "n" for f in report.findings)


def test_hash_inserts_do_not_race() -> None:
    q = np.random.default_rng(6).integers(0, 40, 120).astype(np.int32)  # many duplicates
    keys = np.full(64, -1, np.int32)
    report = sim.check(K.insert, 2, 32, keys, np.zeros(64, np.int32), np.zeros(1, np.uint64), q)
    assert report.ok, str(report)
    stored = report.outputs["keys"]
    np.testing.assert_array_equal(np.sort(stored[stored != -1]), np.unique(q))
    vals = report.outputs["vals"]
    np.testing.assert_array_equal(vals[stored != -1], stored[stored != -1] * 2)
    assert int(report.outputs["nf"][0]) == 0


def test_a_hash_insert_without_a_compare_and_swap_races() -> None:
    q = np.array([5, 5, 37, 69], np.int32)  # 5 twice; 37 and 69 share slot 5 of 32
    report = sim.check(
        K.insert_plain_bug, 1, 32, np.full(32, -1, np.int32), np.zeros(32, np.int32), q
    )
    assert not report.ok
    assert any(f.kind == "race" and f.array == "keys" for f in report.findings)


def test_block_claims_do_not_race() -> None:
    # The block claim's exchange (shared memory, between its barriers) and its one atomic
    # per block are recorded as they are: no race, every selected element stored once.
    x = np.random.default_rng(5).permutation(300).astype(np.int32)
    report = sim.check(
        K.block_compact, 2, 64, np.full(300, -1, np.int32), np.zeros(1, np.uint64), x, 149
    )
    assert report.ok, str(report)
    assert int(report.outputs["n"][0]) == 150
    np.testing.assert_array_equal(np.sort(report.outputs["out"][:150]), np.arange(150, 300))
    assert (report.outputs["out"][150:] == -1).all()


def test_block_claim_overflow_is_counted_under_the_checker() -> None:
    x = np.arange(200, dtype=np.int32)
    report = sim.check(
        K.block_compact, 2, 64, np.full(10, -1, np.int32), np.zeros(1, np.uint64), x, -1
    )
    assert report.ok, str(report)
    assert int(report.outputs["n"][0]) == 200  # 10 stored, 190 counted as dropped
    assert np.unique(report.outputs["out"]).size == 10


def test_a_block_claim_without_its_second_barrier_races() -> None:
    x = np.arange(64, dtype=np.int32)
    report = sim.check(
        K.block_compact_missing_barrier_bug,
        1,
        64,
        np.full(64, -1, np.int32),
        np.zeros(1, np.uint64),
        x,
        10,
    )
    assert not report.ok
    assert {f.kind for f in report.findings} == {"race"}
    assert "race on shared[2]" in str(report)  # the base, written by thread 0, read unordered
