"""Attack round 8 on the simulator (NUMBA_ENABLE_CUDASIM=1): the same refusals (decoration
decides the tile phases), the twins run, and sim.check shows the twins clean.

Tests marked "Failed on f92dfcc" failed before this round's fixes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import attacks8 as K
from tests.kernels import line_of, load_kernel_module

pytestmark = pytest.mark.sim


def _args(n: int = 0) -> tuple[np.ndarray, np.ndarray, np.int64]:
    return np.zeros(64, np.float32), np.arange(64, dtype=np.float32), np.int64(n)


def _run(mod: object, n: int = 0) -> np.ndarray:
    out, a, nn = _args(n)
    d_out = cuda.to_device(out)
    mod.k.prepare(grid=1, block=64)(d_out, cuda.to_device(a), nn)  # type: ignore[attr-defined]
    return d_out.copy_to_host()


def _refused(tmp_path: Path, source: str, fragment: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _run(load_kernel_module(tmp_path, source))
    assert info.value.rule == "tile-phase", info.value
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


# --------------------------------------------------------------------------- finding 1


def test_chained_comparison_barrier_is_refused(tmp_path: Path) -> None:
    # Failed on f92dfcc: ran, with a race on shared[1] in sim.check's replay.
    _refused(tmp_path, K.CHAINED_BARRIER, "shared tile `t` is read by index at line")


def test_chained_comparison_wait_is_refused(tmp_path: Path) -> None:
    # Failed on f92dfcc: ran; the copy lands only at the wait, which n = 0 skips.
    _refused(tmp_path, K.CHAINED_ASYNC, "filled asynchronously at line")


@pytest.mark.parametrize("name", ["CHAINED_BARRIER_TWIN", "CHAINED_ASYNC_TWIN"])
def test_twins_run_and_replay_clean(tmp_path: Path, name: str) -> None:
    mod = load_kernel_module(tmp_path, getattr(K, name))
    got = _run(mod)
    assert np.array_equal(got, (np.arange(64, dtype=np.float32) + 1) % 64)
    report = ss.sim.check(mod.k, 1, 64, *_args())
    assert report.ok, report


# --------------------------------------------------------------------------- finding 2


@pytest.mark.parametrize("name", ["DEAD_AFTER_RETURN", "DEAD_AFTER_RAISE", "DEAD_AFTER_IF_ELSE"])
def test_barrier_after_return_is_refused(tmp_path: Path, name: str) -> None:
    # Failed on f92dfcc: ran, with a race on shared[0] in sim.check's replay.
    _refused(tmp_path, getattr(K, name), "shared tile `t` is read by index at line")


def test_dead_twin_runs_and_replays_clean(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, K.DEAD_TWIN)
    assert np.array_equal(_run(mod), np.zeros(64, np.float32))
    report = ss.sim.check(mod.k, 1, 64, *_args())
    assert report.ok, report


# --------------------------------------------------------------------------- finding 3


def test_augmented_store_before_its_barrier_is_refused(tmp_path: Path) -> None:
    # Failed on f92dfcc: ran; sim.check saw the read of t[1] race with thread 0's copy.
    _refused(tmp_path, K.AUG_ASYNC, "read through a witness at line")


def test_augmented_store_twin_runs_and_replays_clean(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, K.AUG_ASYNC_TWIN)
    # t[i] = a[i] + 64 (the block's sum of ones); thread i reads t[i + 1].
    want = (np.arange(64, dtype=np.float32) + 1) % 64 + 64
    assert np.array_equal(_run(mod), want)
    report = ss.sim.check(mod.k, 1, 64, *_args())
    assert report.ok, report


# --------------------------------------------------------------------------- finding 4


def test_for_target_write_in_the_read_phase_is_refused(tmp_path: Path) -> None:
    # Failed on f92dfcc: ran; sim.check saw the loop's stores race with the reads.
    _refused(tmp_path, K.FOR_TARGET, "shared tile `t` is read by index at line")


def test_for_target_twin_runs_and_replays_clean(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, K.FOR_TARGET_TWIN)
    assert np.array_equal(_run(mod), np.full(64, 2, np.float32))
    report = ss.sim.check(mod.k, 1, 64, *_args())
    assert report.ok, report


# --------------------------------------------------------------------------- finding 5


def test_parameter_named_like_a_witness_is_refused(tmp_path: Path) -> None:
    # Failed on f92dfcc: ran; sim.check saw t[5] read while thread 5 wrote it.
    _refused(tmp_path, K.PARAM_WITNESS, "shared tile `t` is read by index at line")


def test_parameter_witness_twin_runs_and_replays_clean(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, K.PARAM_WITNESS_TWIN)
    out, a, _ = _args()
    d_out = cuda.to_device(out)
    mod.k.prepare(grid=1, block=64)(d_out, cuda.to_device(a), np.int64(5))
    assert np.array_equal(d_out.copy_to_host(), 5 + np.arange(64, dtype=np.float32))
    report = ss.sim.check(mod.k, 1, 64, out, a, np.int64(5))
    assert report.ok, report
