"""Attack round 7 on the simulator (NUMBA_ENABLE_CUDASIM=1): the compile worker's verdict
(the same compiled-form check), sim.check's replay as evidence, and append-buffer counts.

The tests named "Failed on 45de18a" fail on the current code when the hole is real.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import attacks7 as K
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim


def _ab(dtype: type = np.float32, na: int = K.N) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(na, dtype), np.zeros(K.N, dtype)


def _launch(mod: object, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    mod.k.prepare(grid=K.GRID, block=K.BLOCK)(d_a, d_b, np.int32(1))  # type: ignore[attr-defined]
    return d_a.copy_to_host(), d_b.copy_to_host()


# --------------------------------------------------------------------------- finding 1


def test_sim_check_shows_the_broadcast_read_races(tmp_path: Path) -> None:
    # Evidence (passes today): the replay sees the read of a[i + 32] race with its write.
    mod = load_kernel_module(tmp_path, K.BROADCAST_F32)
    report = ss.sim.check(mod.k, K.GRID, K.BLOCK, *_ab(), np.int32(1))
    assert not report.ok
    assert "race on a[" in str(report)


def test_broadcast_read_in_a_writing_phase_is_refused_on_the_simulator(tmp_path: Path) -> None:
    # Failed on 45de18a: the compile worker's verdict accepts it, and the launch runs.
    mod = load_kernel_module(tmp_path, K.BROADCAST_F32)
    with pytest.raises(ss.SafetyError, match="may run in the same grid phase"):
        _launch(mod, *_ab())


# --------------------------------------------------------------------------- finding 2


def test_sim_check_shows_the_raw_syncs_pair_with_tier1_syncs(tmp_path: Path) -> None:
    # Evidence (passes today): the blocks wait at different grid barriers.
    mod = load_kernel_module(tmp_path, K.RAW_SYNC_SHIFT)
    report = ss.sim.check(mod.k, K.GRID, K.BLOCK, *_ab(), np.int32(1))
    assert not report.ok
    assert "threads wait at different grid syncs" in str(report)


def test_grid_read_with_divergent_raw_grid_syncs_is_refused_on_the_simulator(
    tmp_path: Path,
) -> None:
    # Failed on 45de18a: accepted, and it runs.
    mod = load_kernel_module(tmp_path, K.RAW_SYNC_SHIFT)
    with pytest.raises(ss.SafetyError):
        _launch(mod, *_ab())


# --------------------------------------------------------------------------- finding 3


def test_output_tile_then_grid_read_runs(tmp_path: Path) -> None:
    # Failed on 45de18a: refused at decoration (rule "out-tile").
    mod = load_kernel_module(tmp_path, K.TILE_THEN_GRID_READ)
    _, b = _launch(mod, *_ab(na=2 * K.N))
    want = np.append(np.arange(2, 2 * K.N, 2, dtype=np.float32), np.float32(0))
    np.testing.assert_array_equal(b, want)


# --------------------------------------------------------------------------- finding 4


def _compact_from(start: int) -> tuple[np.ndarray, object, object]:
    import tempfile

    mod = load_kernel_module(Path(tempfile.mkdtemp()), K.COMPACT)
    x = np.arange(1, 33, dtype=np.float32)  # 32 claims, every item non-zero
    d_out = cuda.to_device(np.zeros(64, np.float32))  # room for all 32
    count = cuda.to_device(np.array([start], np.uint64))  # any value a device array holds
    mod.k.prepare(grid=1, block=32)(d_out, count, cuda.to_device(x))
    return d_out.copy_to_host(), d_out, count


def test_twin_a_counter_from_zero_stores_every_claim() -> None:
    items, d_out, count = _compact_from(0)
    assert ss.append_result(d_out, count) == ss.AppendResult(stored=32, dropped=0, claimed=32)
    assert sorted(items[:32].tolist()) == list(range(1, 33))


def test_a_counter_near_2_64_does_not_drop_claims_silently() -> None:
    # Failed on 45de18a: 4 claims got slots 2**64 - 4 ... 2**64 - 1 (past the end: dropped),
    # the counter wrapped, and the host was told 28 stored, 0 dropped, 28 claimed. Now the
    # claim marks a counter at or past 2**63 and the host refuses to read it as a count.
    items, d_out, count = _compact_from(2**64 - 4)
    kept = items[items != 0]
    assert len(np.unique(kept)) == len(kept) < 32  # items were lost (none written twice)
    for read in (ss.appended, ss.append_result):
        with pytest.raises(ss.CapacityExceeded, match=r"at or past 2\*\*63"):
            read(d_out, count)
    with pytest.raises(ValueError, match=r"value must be an int in \[0, 2\*\*63\)"):
        ss.counter(2**64 - 4)


def test_sim_check_shows_the_raw_block_barriers_shift_the_tile_phases(tmp_path: Path) -> None:
    # Evidence (passes today) for the block-scope twin of finding 2.
    mod = load_kernel_module(tmp_path, K.RAW_SYNCTHREADS_SHIFT)
    report = ss.sim.check(mod.k, 1, 64, *_ab(), np.int32(1))
    assert not report.ok, report
