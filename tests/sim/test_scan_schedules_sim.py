"""The library's scan schedule (``_scan_kernels._make_scan_staged``: the tile staged in shared
memory by ``cp.async``, the look-back by one warp) with small tiles, ``threads`` x ``runs``, on
the simulator: values against numpy over several tiles with a partial last one, the checked
launch's contract, the warp's look-back over status words a GPU would leave, ``sim.check``,
refused parameters."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe.lib import _scan_kernels as sk

pytestmark = pytest.mark.sim

#: Small tiles keep the simulator quick: 64 threads x 2 runs (512 elements, the look-back warp
#: is warp 1), 128 x 1 (the look-back warp is warp 3).
STAGED = [{"threads": 64, "runs": 2}, {"threads": 128, "runs": 1}]


def _word(flag: int, value: object, dtype: type) -> np.uint64:
    bits = int(np.array([value], dtype).view(np.uint32)[0])
    return np.uint64((flag << 32) | bits)


def _launch(schedule: sk.Schedule, x: np.ndarray, status: np.ndarray, start: int, grid: int):  # type: ignore[no-untyped-def]
    out = cuda.to_device(np.full(x.size, 7, x.dtype))
    d_status = cuda.to_device(status)
    ctl = cuda.to_device(np.array([start], np.int32))
    with ss.unsafe(
        "SAFETY: the schedule's block size and shared memory; the contract's grid.x * tile >= "
        "x.size is broken on purpose in the look-back tests (the counter starts at `start`, "
        "so the blocks take tiles from there); out and x are distinct arrays of x.size "
        "elements, status has a word for every tile"
    ):
        schedule.kernel.unchecked[grid, schedule.block, 0, schedule.shared](
            out, cuda.to_device(x), d_status, ctl
        )
    return out.copy_to_host(), d_status.copy_to_host()


def _staged_sizes(tile: int) -> list[int]:
    return [1, tile - 1, tile + 1, 3 * tile + 7]  # ... several tiles and an odd tail


@pytest.mark.parametrize("cfg", STAGED, ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_staged_sizes_match_numpy(cfg: dict[str, int], dtype: type) -> None:
    s = sk._make_scan_staged(np.dtype(dtype), **cfg)
    rng = np.random.default_rng(5)
    for n in _staged_sizes(s.tile):
        x = rng.integers(-50, 50, n).astype(dtype)
        tiles = -(-n // s.tile)
        padded = np.concatenate([x, np.full(3, 9, dtype)])  # out's view is followed by 3 guards
        out = cuda.to_device(np.full(n + 3, -3, dtype))
        with ss.unsafe(
            "SAFETY: the schedule's block size and shared memory, a block per tile; out[:n] "
            "and x are distinct arrays of n elements, status has a word per tile"
        ):
            s.kernel.unchecked[tiles, s.block, 0, s.shared](
                out[:n],
                cuda.to_device(padded)[:n],
                cuda.to_device(np.zeros(tiles, np.uint64)),
                cuda.to_device(np.zeros(1, np.int32)),
            )
        got = out.copy_to_host()
        want = np.cumsum(x, dtype=np.float64 if dtype is np.float32 else dtype)
        np.testing.assert_array_equal(got[:n], want.astype(dtype), err_msg=f"n={n}")
        assert (got[n:] == -3).all(), n  # nothing written past out (x's next elements unread)


@pytest.mark.parametrize("cfg", STAGED, ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_staged_several_tiles_publish_every_prefix(cfg: dict[str, int], dtype: type) -> None:
    """Five blocks, the last tile with 5 elements: the values, and every tile's status word
    left as its inclusive prefix (the aggregate of tiles 1..4 replaced after the look-back)."""
    s = sk._make_scan_staged(np.dtype(dtype), **cfg)
    n = 4 * s.tile + 5  # 5 tiles, the last with 5 elements
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, n).astype(dtype)
    tiles = -(-n // s.tile)
    got, status = _launch(s, x, np.zeros(tiles, np.uint64), 0, tiles)
    want = np.cumsum(x, dtype=np.float64 if dtype is np.float32 else dtype)
    np.testing.assert_array_equal(got, want.astype(dtype))  # small integers: exact in float32
    assert (status >> np.uint64(32) == sk.PREFIX).all()  # every tile published its prefix


def test_staged_checked_launch_runs_the_contract() -> None:
    s = sk._make_scan_staged(np.dtype(np.uint32), threads=64, runs=2)
    n = 3 * s.tile
    x = np.arange(n, dtype=np.uint32)
    status = cuda.to_device(np.zeros(3, np.uint64))
    ctl = cuda.to_device(np.zeros(1, np.int32))
    out = cuda.device_array(n, np.uint32)
    s.kernel.prepare(grid=3, block=s.block, shared_mem=s.shared)(
        out, cuda.to_device(x), status, ctl
    )
    np.testing.assert_array_equal(out.copy_to_host(), np.cumsum(x, dtype=np.uint32))
    with pytest.raises(ss.RequiresViolation, match=r"grid\.x \* 512 >= x\.size is 1024 >= 1536"):
        s.kernel.prepare(grid=2, block=s.block, shared_mem=s.shared)(
            out, cuda.to_device(x), status, ctl
        )


@pytest.mark.filterwarnings("ignore:overflow encountered in scalar add:RuntimeWarning")
def test_staged_int32_sums_wrap_across_tiles() -> None:
    """The running sum passes 2**31 inside tiles and in the look-back's sums of aggregates."""
    s = sk._make_scan_staged(np.dtype(np.int32), threads=64, runs=2)
    n = 3 * s.tile + 7
    x = np.full(n, 2**30 + 3, np.int32)
    report = ss.sim.check(
        s.kernel, 4, s.block,
        np.zeros(n, np.int32), x, np.zeros(4, np.uint64), np.zeros(1, np.int32),
        shared_mem=s.shared,
    )  # fmt: skip
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], np.cumsum(x, dtype=np.int32))


def test_staged_lookback_over_crafted_words() -> None:
    """Tile 40 of the small staged schedule: three aggregates down to a prefix."""
    s = sk._make_scan_staged(np.dtype(np.float32), threads=64, runs=2)
    t = 40
    status = np.zeros(t + 1, np.uint64)
    status[t - 4] = _word(sk.PREFIX, 2.5, np.float32)
    for j in range(t - 3, t):
        status[j] = _word(sk.AGGREGATE, 0.5, np.float32)
    x = np.zeros((t + 1) * s.tile, np.float32)
    x[t * s.tile : t * s.tile + 3] = (1.0, 2.0, 4.0)
    got, after = _launch(s, x, status, t, 1)
    assert after[t] == _word(sk.PREFIX, 4.0 + 7.0, np.float32)
    np.testing.assert_array_equal(after[:t], status[:t])
    np.testing.assert_array_equal(got[t * s.tile : t * s.tile + 4], [5.0, 7.0, 11.0, 11.0])
    assert (got[: t * s.tile] == 7).all()


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_staged_lookback_adds_aggregates_down_to_a_prefix_windows_below(dtype: type) -> None:
    """Tile 70 looks back over 64 aggregates (two windows) to tile 5's prefix; tiles 0-4 have
    published nothing, which does not matter below a prefix."""
    s = sk._make_scan_staged(np.dtype(dtype), threads=64, runs=1)
    t = 70
    status = np.zeros(t + 1, np.uint64)
    status[5] = _word(sk.PREFIX, 100, dtype)
    for j in range(6, t):
        status[j] = _word(sk.AGGREGATE, j % 3, dtype)
    x = np.zeros((t + 1) * s.tile, dtype)
    x[t * s.tile] = 2  # the tile's own first element
    got, after = _launch(s, x, status, t, 1)
    want = 100 + sum(j % 3 for j in range(6, t))
    assert after[t] == _word(sk.PREFIX, want + 2, dtype)
    np.testing.assert_array_equal(after[:t], status[:t])  # predecessors untouched
    assert (got[t * s.tile :] == want + 2).all()
    assert (got[: t * s.tile] == 7).all()  # other tiles not written


def test_staged_lookback_stops_at_the_nearest_prefix() -> None:
    s = sk._make_scan_staged(np.dtype(np.int32), threads=64, runs=1)
    t = 40
    status = np.array([_word(sk.PREFIX, 1000 + j, np.int32) for j in range(t + 1)])
    status[t - 3] = _word(sk.AGGREGATE, 5, np.int32)
    status[t - 2] = _word(sk.AGGREGATE, -7, np.int32)
    status[t - 1] = _word(sk.AGGREGATE, 11, np.int32)
    _, after = _launch(s, np.zeros((t + 1) * s.tile, np.int32), status, t, 1)
    assert after[t] == _word(sk.PREFIX, 1000 + t - 4 + 5 - 7 + 11, np.int32)


def test_check_replays_the_staged_lookback_without_findings() -> None:
    s = sk._make_scan_staged(np.dtype(np.float32), threads=64, runs=1)
    t = 40
    status = np.zeros(t + 1, np.uint64)
    status[3] = _word(sk.PREFIX, 2.5, np.float32)
    for j in range(4, t):
        status[j] = _word(sk.AGGREGATE, 0.5, np.float32)
    n = (t + 1) * s.tile
    x = np.zeros(n, np.float32)
    x[t * s.tile : t * s.tile + 3] = (1.0, 2.0, 4.0)
    report = ss.sim.check(
        s.kernel, 1, s.block,
        np.zeros(n, np.float32), x, status, np.array([t], np.int32),
        shared_mem=s.shared,
    )  # fmt: skip
    assert report.ok, report
    prefix = 2.5 + 0.5 * (t - 4)
    assert report.outputs["status"][t] == _word(sk.PREFIX, prefix + 7.0, np.float32)
    got = report.outputs["out"][t * s.tile : t * s.tile + 4]
    np.testing.assert_array_equal(got, prefix + np.array([1.0, 3.0, 7.0, 7.0], np.float32))


def test_bad_staged_schedules_are_refused() -> None:
    with pytest.raises(ValueError, match="threads 48"):
        sk._make_scan_staged(np.dtype(np.int32), threads=48)
    with pytest.raises(ValueError, match="runs 0"):
        sk._make_scan_staged(np.dtype(np.int32), runs=0)
    with pytest.raises(ValueError, match="40 KiB"):
        sk._make_scan_staged(np.dtype(np.int32), threads=512, runs=8)
