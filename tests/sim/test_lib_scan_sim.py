"""``simtsafe.lib.inclusive_scan`` on the simulator: values against numpy for every dtype and the
tile edges, the look-back over status words a GPU would leave (aggregates, a prefix several
windows down, tiles not published yet below it), ``sim.check`` on the kernel, refusals that
leave the output untouched, scratch per stream."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe.lib import _common, _scan
from simtsafe.lib import _scan_kernels as sk

pytestmark = pytest.mark.sim

DTYPES = [np.int32, np.uint32, np.float32]


def _data(n: int, dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is np.float32:
        return rng.standard_normal(n).astype(np.float32)
    if dtype is np.int32:
        return rng.integers(-1000, 1000, n, dtype=np.int32)
    return rng.integers(0, 2000, n, dtype=np.uint32)


def _expected(x: np.ndarray) -> np.ndarray:
    return np.cumsum(x, dtype=x.dtype)


def _close(got: np.ndarray, x: np.ndarray) -> None:
    if x.dtype == np.float32:  # added in tile and warp order: compare with float64 sums
        want = np.cumsum(x, dtype=np.float64)
        tol = 1e-5 * np.cumsum(np.abs(x), dtype=np.float64) + 1e-6
        assert np.all(np.abs(got - want) <= tol), np.max(np.abs(got - want) - tol)
    else:
        np.testing.assert_array_equal(got, _expected(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 31, 32, 1000])
def test_small_sizes_match_numpy(dtype: type, n: int) -> None:
    x = _data(n, dtype, seed=n)
    out = cuda.to_device(np.full(n, 7, dtype))
    ss.lib.inclusive_scan(out, cuda.to_device(x))
    _close(out.copy_to_host(), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_tiles_match_numpy(dtype: type) -> None:
    n = 4 * sk.TILE + 3  # 5 tiles, the last one with 3 elements (the GPU test runs 2**28)
    x = _data(n, dtype, seed=3)
    out = cuda.to_device(np.zeros(n, dtype))
    ss.lib.inclusive_scan(out, cuda.to_device(x))
    _close(out.copy_to_host(), x)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("n", [sk.TILE - 1, sk.TILE, sk.TILE + 1, 3 * sk.TILE + 4093])
def test_tile_edges(n: int, dtype: type) -> None:
    """A tile short by one element, a whole tile, one element over, several tiles and an odd
    tail (its last 16-byte run partial): the staged copy reads 0 past the end, nothing is
    written past it."""
    x = _data(n, dtype, seed=n)
    big = cuda.to_device(np.full(n + 4, -3, dtype))
    ss.lib.inclusive_scan(big[:n], cuda.to_device(x))
    got = big.copy_to_host()
    _close(got[:n], x)
    assert (got[n:] == -3).all()  # nothing written past out's end


@pytest.mark.filterwarnings("ignore:overflow encountered in scalar add:RuntimeWarning")
def test_int32_sums_wrap_like_numpy() -> None:
    x = np.full(3000, 2**30, np.int32)  # the running sum passes 2**31 many times
    out = cuda.to_device(np.zeros(3000, np.int32))
    ss.lib.inclusive_scan(out, cuda.to_device(x))
    np.testing.assert_array_equal(out.copy_to_host(), np.cumsum(x, dtype=np.int32))


def test_misaligned_views_take_the_element_path() -> None:
    """Views one element off a 16-byte boundary are valid arguments (read and written per element)."""
    n = 1000
    x = _data(n + 1, np.int32, seed=5)
    d_x = cuda.to_device(x)
    big = cuda.to_device(np.full(n + 2, -5, np.int32))
    ss.lib.inclusive_scan(big[1 : n + 1], d_x[1:])
    got = big.copy_to_host()
    np.testing.assert_array_equal(got[1 : n + 1], _expected(x[1:]))
    assert got[0] == -5 and got[n + 1] == -5  # nothing written outside the view


def test_repeated_calls_reuse_and_grow_the_scratch() -> None:
    _scan._SCRATCH.clear()
    for n, seed in ((100, 1), (3 * sk.TILE + 5, 2), (50, 3)):
        x = _data(n, np.uint32, seed)
        out = cuda.to_device(np.zeros(n, np.uint32))
        ss.lib.inclusive_scan(out, cuda.to_device(x))
        _close(out.copy_to_host(), x)
    (scratch,) = [s for _, s in _scan._SCRATCH._by_stream.values()]
    assert scratch.arrays["status"].size >= 4


def test_a_stream_gets_its_own_scratch() -> None:
    _scan._SCRATCH.clear()
    s = cuda.stream()
    x = _data(100, np.int32)
    out = cuda.to_device(np.zeros(100, np.int32))
    ss.lib.inclusive_scan(out, cuda.to_device(x), stream=s)
    ss.lib.inclusive_scan(out, cuda.to_device(x))
    assert len(_scan._SCRATCH._by_stream) == 2
    _close(out.copy_to_host(), x)


def test_scratch_is_dropped_only_once_its_stream_has_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Attack review: under an external memory manager a dropped array may be reused at
    once, so a ninth stream's scratch and an outgrown status array wait for the stream that
    may still use them; the scratch kept is not waited for."""
    _scan._SCRATCH.clear()
    waited: list[object] = []
    monkeypatch.setattr(_common, "retire", waited.append)
    monkeypatch.setattr(_scan, "retire", waited.append)
    x = _data(100, np.int32)
    out = cuda.to_device(np.zeros(100, np.int32))
    streams = [cuda.stream() for _ in range(_common._STREAMS_KEPT + 1)]
    for st in streams[:-1]:
        ss.lib.inclusive_scan(out, cuda.to_device(x), stream=st)
    assert waited == []  # eight streams kept, none dropped
    ss.lib.inclusive_scan(out, cuda.to_device(x), stream=streams[-1])
    assert waited == [streams[0]]  # the oldest, dropped once it has finished
    waited.clear()
    (scratch,) = [sc for st, sc in _scan._SCRATCH._by_stream.values() if st is streams[-1]]
    scratch.arrays["status"] = cuda.device_array(0, np.uint64)  # outgrown by any scan
    ss.lib.inclusive_scan(out, cuda.to_device(x), stream=streams[-1])
    assert waited == [streams[-1]]
    assert scratch.arrays["status"].size >= 1
    _close(out.copy_to_host(), x)
    _scan._SCRATCH.clear()


def test_a_graph_records_the_reset_and_the_scan() -> None:
    """Replayed, the graph resets the scratch before each scan: two replays, two right scans."""
    x_host = _data(700, np.int32, seed=4)
    x = cuda.to_device(x_host)
    out = cuda.to_device(np.full(700, -1, np.int32))
    with ss.graph() as g:
        ss.lib.inclusive_scan(out, x)
    assert len(g) == 2  # reset_scratch, scan_tiles
    assert (out.copy_to_host() == -1).all()  # recorded, not run
    for _ in range(2):
        g.replay()
        _close(out.copy_to_host(), x_host)


# --------------------------------------------------------------------------- the look-back


def _word(flag: int, value: object, dtype: type) -> np.uint64:
    bits = int(np.array([value], dtype).view(np.uint32)[0])
    return np.uint64((flag << 32) | bits)


def _lookback(dtype: type, tile: int, status: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Launch one block that takes tile number ``tile`` over ``status`` (the input has the
    tile's elements, all 0). Returns the status words and ctl afterwards."""
    kernel = sk.SCAN[np.dtype(dtype)]
    d_status = cuda.to_device(status)
    ctl = cuda.to_device(np.array([tile], np.int32))
    n = (tile + 1) * sk.TILE
    out = cuda.to_device(np.zeros(n, dtype))
    with ss.unsafe(
        "SAFETY: one block of the contract's 256 threads and shared memory; the contract's "
        "grid.x * 4096 >= x.size (a block per tile) is what this test breaks on purpose: "
        "the counter starts at `tile`, so the one block takes that tile; out and x are "
        "distinct arrays of n elements, status has a word for every tile"
    ):
        kernel.unchecked[1, sk.BLOCK, 0, sk.SLOT_BYTES](
            out, cuda.to_device(np.zeros(n, dtype)), d_status, ctl
        )
    return d_status.copy_to_host(), ctl.copy_to_host()


@pytest.mark.parametrize("dtype", DTYPES)
def test_lookback_adds_aggregates_down_to_a_prefix_windows_below(dtype: type) -> None:
    """Tile 70 looks back over 64 aggregates (two windows) to tile 5's prefix; tiles 0-4 have
    published nothing, which does not matter below a prefix."""
    t = 70
    status = np.zeros(t + 1, np.uint64)
    status[5] = _word(sk.PREFIX, 100, dtype)
    for j in range(6, t):
        status[j] = _word(sk.AGGREGATE, j % 3, dtype)
    got, ctl = _lookback(dtype, t, status)
    want = 100 + sum(j % 3 for j in range(6, t))
    assert got[t] == _word(sk.PREFIX, want, dtype)  # its own aggregate is 0 (no elements)
    np.testing.assert_array_equal(got[:t], status[:t])  # predecessors untouched
    assert ctl[0] == t + 1


def test_lookback_stops_at_the_nearest_prefix() -> None:
    t = 40
    status = np.array([_word(sk.PREFIX, 1000 + j, np.int32) for j in range(t + 1)])
    status[t - 3] = _word(sk.AGGREGATE, 5, np.int32)
    status[t - 2] = _word(sk.AGGREGATE, -7, np.int32)
    status[t - 1] = _word(sk.AGGREGATE, 11, np.int32)
    got, _ = _lookback(np.int32, t, status)
    assert got[t] == _word(sk.PREFIX, 1000 + t - 4 + 5 - 7 + 11, np.int32)


def test_check_replays_the_lookback_without_findings() -> None:
    t = 40
    status = np.zeros(t + 1, np.uint64)
    status[3] = _word(sk.PREFIX, 2.5, np.float32)
    for j in range(4, t):
        status[j] = _word(sk.AGGREGATE, 0.5, np.float32)
    kernel = sk.SCAN[np.dtype(np.float32)]
    n = (t + 1) * sk.TILE
    x = np.zeros(n, np.float32)
    x[t * sk.TILE : t * sk.TILE + 3] = (1.0, 2.0, 4.0)  # the tile's own elements
    report = ss.sim.check(
        kernel, 1, sk.BLOCK,
        np.zeros(n, np.float32), x, status, np.array([t], np.int32),
        shared_mem=sk.SLOT_BYTES,
    )  # fmt: skip
    assert report.ok, report
    prefix = 2.5 + 0.5 * (t - 4)  # tile 3's prefix and tiles 4..39's aggregates
    assert report.outputs["status"][t] == _word(sk.PREFIX, prefix + 7.0, np.float32)
    got = report.outputs["out"][t * sk.TILE : t * sk.TILE + 4]
    np.testing.assert_array_equal(got, prefix + np.array([1.0, 3.0, 7.0, 7.0], np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_check_finds_no_race_across_blocks(dtype: type) -> None:
    """Three blocks: each publishes, looks back over the others' words and writes its tile."""
    n = 2 * sk.TILE + 100
    x = _data(n, dtype, seed=9)
    report = ss.sim.check(
        sk.SCAN[np.dtype(dtype)], 3, sk.BLOCK,
        np.zeros(n, dtype), x, np.zeros(3, np.uint64), np.zeros(1, np.int32),
        shared_mem=sk.SLOT_BYTES,
    )  # fmt: skip
    assert report.ok, report
    assert report.stats["blocks"] == 3
    _close(report.outputs["out"], x)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_persistent_variant_matches_numpy(dtype: type) -> None:
    """benchmarks/primitives.py's persistent variant: two blocks take the five tiles in turn
    (on the simulator the first block takes them all), each taking its next number early."""
    kernel = sk._make_scan(np.dtype(dtype), persistent=True)
    n = 4 * sk.OLD_TILE + 77
    x = _data(n, dtype, seed=8)
    report = ss.sim.check(
        kernel, 2, sk.OLD_BLOCK,
        np.zeros(n, dtype), x, np.zeros(5, np.uint64), np.zeros(1, np.int32),
        shared_mem=sk.OLD_SLOT_BYTES,
    )  # fmt: skip
    assert report.ok, report
    _close(report.outputs["out"], x)
    assert report.outputs["ctl"][0] == 5 + 2  # five tiles, then one number per block past them


def test_check_of_the_reset_kernel() -> None:
    report = ss.sim.check(
        sk.reset_scratch, -(-200 // sk.BLOCK), sk.BLOCK,
        np.full(300, 9, np.uint64), np.full(1, 4, np.int32), np.int64(200),
    )  # fmt: skip
    assert report.ok, report
    status = report.outputs["status"]
    assert not status[:200].any() and (status[200:] == 9).all()
    assert report.outputs["ctl"][0] == 0


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("make", "error", "fragment"),
    [
        (
            lambda: (np.zeros(8, np.int32), cuda.to_device(np.zeros(8, np.int32))),
            ss.ArgumentTypeError,
            "argument 'out' is a host numpy array",
        ),
        (
            lambda: (cuda.to_device(np.zeros(8, np.float64)),) * 2,
            ss.ArgumentTypeError,
            "argument 'x' has dtype float64; supported: int32, uint32, float32",
        ),
        (
            lambda: (cuda.to_device(np.zeros(8, np.uint32)), cuda.to_device(np.zeros(8, np.int32))),
            ss.ArgumentTypeError,
            "output 'out' has dtype uint32, but x has int32; the scan writes x's dtype",
        ),
        (
            lambda: (cuda.to_device(np.zeros(8, np.int32)), cuda.to_device(np.zeros(9, np.int32))),
            ss.RequiresViolation,
            "out has 8 elements and x has 9; they must be equal",
        ),
        (
            lambda: (cuda.to_device(np.zeros((2, 4), np.int32)),) * 2,
            ss.ArgumentTypeError,
            "argument 'x' is 2-D with shape (2, 4); inclusive_scan takes a 1-D array",
        ),
        (
            lambda: (
                cuda.to_device(np.zeros(4, np.int32)),
                cuda.to_device(np.zeros(8, np.int32))[::2],
            ),
            ss.ArgumentTypeError,
            "argument 'x' is not C-contiguous (strides (8,) for 4-byte elements)",
        ),
    ],
)
def test_refused_before_anything_runs(make, error, fragment) -> None:  # type: ignore[no-untyped-def]
    out, x = make()
    with pytest.raises(error) as info:
        ss.lib.inclusive_scan(out, x)
    assert fragment in str(info.value)
    assert str(info.value).startswith("simtsafe.lib.inclusive_scan: ")


def test_overlap_is_refused_and_the_output_is_untouched() -> None:
    buf = cuda.to_device(np.arange(20, dtype=np.int32))
    with pytest.raises(ss.AliasingError) as info:
        ss.lib.inclusive_scan(buf[2:12], buf[:10])
    assert "output 'out' overlaps argument 'x'" in str(info.value)
    assert info.value.argument == "out" and info.value.other == "x"
    np.testing.assert_array_equal(buf.copy_to_host(), np.arange(20, dtype=np.int32))


def test_a_refused_launch_leaves_the_output_poisoned() -> None:
    out = cuda.to_device(np.full(8, -99, np.int32))
    with pytest.raises(ss.RequiresViolation):
        ss.lib.inclusive_scan(out, cuda.to_device(np.ones(9, np.int32)))
    assert (out.copy_to_host() == -99).all()


# --------------------------------------------------------------------------- attack: the counter


@pytest.mark.parametrize("start", [-100, -1])
def test_a_counter_started_below_zero_touches_nothing(start: int) -> None:
    """The contract asks only ``ctl.size >= 1``: a checked launch whose counter starts below 0
    used to publish at ``status[tile]`` with ``tile < 0`` (Numba's atomics wrap a negative
    index once: ``-100 + 64`` is still before the array). Such a tile is now not processed."""
    n = 100
    backing = cuda.to_device(np.zeros(128, np.uint64))
    status = backing[64:]  # 64 words; the 64 before them stand for other memory
    out = cuda.to_device(np.full(n, 7, np.int32))
    launch = sk.SCAN[np.dtype(np.int32)].prepare(grid=1, block=sk.BLOCK, shared_mem=sk.SLOT_BYTES)
    ctl = cuda.to_device(np.array([start], np.int32))
    launch(out, cuda.to_device(np.ones(n, np.int32)), status, ctl)
    assert not backing.copy_to_host().any()
    assert (out.copy_to_host() == 7).all()


def test_a_counter_started_at_zero_scans_the_same_launch() -> None:
    """The twin of the test above: the same launch from a counter at 0 scans."""
    n = 100
    status = cuda.to_device(np.zeros(64, np.uint64))
    out = cuda.to_device(np.full(n, 7, np.int32))
    launch = sk.SCAN[np.dtype(np.int32)].prepare(grid=1, block=sk.BLOCK, shared_mem=sk.SLOT_BYTES)
    ctl = cuda.to_device(np.zeros(1, np.int32))
    launch(out, cuda.to_device(np.ones(n, np.int32)), status, ctl)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(1, n + 1, dtype=np.int32))
    assert status.copy_to_host()[0] == (sk.PREFIX << 32) | n
