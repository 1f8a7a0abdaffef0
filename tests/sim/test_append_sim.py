"""Append buffers on the simulator: the rules, exact counts, the launch checks, the host API.

Property tests (seeded numpy RNG): for many sizes, thresholds and
capacities at and below the need, every selected element is stored once or
counted as dropped, and the counts are exact. Small sizes: the simulator runs
one Python thread per CUDA thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.append_rules import ACCEPTED, BLOCK, GRID, REFUSED, TYPED, N

pytestmark = pytest.mark.sim


def _x(seed: int = 3) -> np.ndarray[Any, Any]:
    """Distinct values, about half of them positive (so a stored set identifies its items)."""
    rng = np.random.default_rng(seed)
    return (rng.permutation(N) - N // 2 + 0.5).astype(np.float32)


def _launch(mod: Any, x: np.ndarray[Any, Any], cap: int = N) -> dict[str, Any]:
    d = {
        "out": cuda.to_device(np.full(cap, np.nan, np.float32)),
        "n": ss.counter(),
        "out2": cuda.to_device(np.full(cap, np.nan, np.float32)),
        "n2": ss.counter(),
        "o": cuda.to_device(np.zeros(N, np.float32)),
        "x": cuda.to_device(x),
    }
    mod.k.prepare(grid=GRID, block=BLOCK)(*d.values())
    return d


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source), _x())
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_stores_every_selected_element_once(tmp_path: Path, case: str) -> None:
    x = _x()
    d = _launch(load_kernel_module(tmp_path, ACCEPTED[case]), x)
    want = np.sort(x[x > 0])
    n = ss.appended(d["out"], d["n"])
    assert n == want.size
    np.testing.assert_array_equal(np.sort(d["out"].copy_to_host()[:n]), want)
    if case == "each-buffer-its-own-claim":
        n2 = ss.appended(d["out2"], d["n2"])
        np.testing.assert_array_equal(np.sort(d["out2"].copy_to_host()[:n2]), want)


_COMPACT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, x: In[np.int64], t: np.int64) -> None:
    for w in thread.grid_stride(x):
        if x[w] > t:
            s = out.claim()
            out[s] = x[w]
"""


@pytest.fixture(scope="module")
def compact(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_kernel_module(tmp_path_factory.mktemp("compact"), _COMPACT).k


def _check_append(
    kernel: Any, x: np.ndarray[Any, Any], t: int, cap: int, grid: int
) -> ss.AppendResult:
    selected = x[x > t]
    d_out = cuda.to_device(np.full(cap, -1, np.int64))
    d_n = ss.counter()
    kernel.prepare(grid=grid, block=32)(d_out, d_n, cuda.to_device(x), np.int64(t))
    r = ss.append_result(d_out, d_n)
    assert r.claimed == selected.size  # every claim counted, stored or not
    assert r.stored == min(selected.size, cap)
    assert r.dropped == max(0, selected.size - cap)
    got = d_out.copy_to_host()
    stored = got[: r.stored]
    assert np.unique(stored).size == stored.size  # no slot given twice
    assert np.isin(stored, selected).all()  # only selected elements
    assert (got[r.stored :] == -1).all()  # nothing written past the stored ones
    if cap >= selected.size:
        np.testing.assert_array_equal(np.sort(stored), np.sort(selected))
    return r


def test_every_item_is_stored_or_counted_as_dropped(compact: Any) -> None:
    rng = np.random.default_rng(19)
    for _trial in range(8):
        n = int(rng.integers(1, 160))
        x = rng.permutation(n).astype(np.int64)  # distinct values
        t = int(rng.integers(-1, n))
        need = int((x > t).sum())
        grid = int(rng.integers(1, 4))
        for cap in sorted({need, max(need - 1, 0), need // 2, 0, need + 3}):
            _check_append(compact, x, t, cap, grid)


def test_an_empty_buffer_drops_everything(compact: Any) -> None:
    x = np.arange(40, dtype=np.int64)
    r = _check_append(compact, x, 9, 0, 1)
    assert (r.stored, r.dropped, r.claimed) == (0, 30, 30)


def test_appended_raises_when_items_were_dropped(compact: Any) -> None:
    x = np.arange(50, dtype=np.int64)
    d_out = cuda.to_device(np.zeros(10, np.int64))
    d_n = ss.counter()
    compact.prepare(grid=2, block=32)(d_out, d_n, cuda.to_device(x), np.int64(19))
    with pytest.raises(ss.CapacityExceeded) as info:
        ss.appended(d_out, d_n)
    assert (info.value.actual, info.value.limit, info.value.dropped) == (30, 10, 20)
    assert "the append buffer holds 10 items, but 30 slots were claimed: 20 items were " in str(
        info.value
    )
    assert "at least 30 elements" in str(info.value)


def test_a_counter_that_is_not_reset_appends_after_the_items_there(compact: Any) -> None:
    d_out = cuda.to_device(np.full(64, -1, np.int64))
    d_n = ss.counter()
    launch = compact.prepare(grid=1, block=32)
    launch(d_out, d_n, cuda.to_device(np.arange(20, dtype=np.int64)), np.int64(9))  # 10..19
    launch(d_out, d_n, cuda.to_device(np.arange(100, 130, dtype=np.int64)), np.int64(119))
    assert ss.appended(d_out, d_n) == 20
    got = d_out.copy_to_host()
    np.testing.assert_array_equal(np.sort(got[:10]), np.arange(10, 20))
    np.testing.assert_array_equal(np.sort(got[10:20]), np.arange(120, 130))
    start = ss.counter(60)  # a counter may start anywhere: 4 slots left, 6 dropped
    launch(d_out, start, cuda.to_device(np.arange(10, dtype=np.int64)), np.int64(-1))
    r = ss.append_result(d_out, start)
    assert (r.stored, r.dropped, r.claimed) == (64, 6, 70)
    assert np.isin(d_out.copy_to_host()[60:], np.arange(10)).all()


# ----------------------------------------------------------------------------- launch checks


def test_the_counter_must_have_exactly_one_element(compact: Any) -> None:
    launch = compact.prepare(grid=1, block=32)
    d_out = cuda.to_device(np.full(8, 7, np.int64))
    x = cuda.to_device(np.arange(8, dtype=np.int64))
    for _ in range(2):  # the second launch takes the generated fast check
        with pytest.raises(ss.RequiresViolation) as info:
            launch(d_out, cuda.to_device(np.zeros(2, np.uint64)), x, np.int64(0))
        assert (
            "argument 'n' is the Counter of the AppendBuffer 'out' (appends in its launch "
            "contract) and must hold exactly one element, got 2" in str(info.value)
        )
    assert (d_out.copy_to_host() == 7).all()  # nothing launched


def test_the_counter_is_a_uint64_array(compact: Any) -> None:
    with pytest.raises(ss.ArgumentTypeError) as info:
        compact.prepare(grid=1, block=32)(
            cuda.to_device(np.zeros(8, np.int64)),
            cuda.to_device(np.zeros(1, np.int64)),
            cuda.to_device(np.arange(8, dtype=np.int64)),
            np.int64(0),
        )
    assert "argument 'n' is declared Counter (1D uint64), got a 1D int64 array" in str(info.value)


_SAME_DTYPE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.uint64], n: ss.Counter, x: In[np.uint64]) -> None:
    for w in thread.grid_stride(x):
        s = out.claim()
        out[s] = x[w]
"""


def test_items_aliasing_the_counter_or_an_input_are_refused(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, _SAME_DTYPE).k
    launch = k.prepare(grid=1, block=32)
    whole = cuda.to_device(np.full(16, 5, np.uint64))
    x = cuda.to_device(np.arange(8, dtype=np.uint64))
    with pytest.raises(ss.AliasingError) as info:  # the counter inside the items
        launch(whole[:8], whole[3:4], x)
    assert "output 'out' overlaps the memory of argument 'n'" in str(info.value)
    with pytest.raises(ss.AliasingError) as info:  # the items are the input
        launch(whole[:8], ss.counter(), whole[:8])
    assert "output 'out' overlaps the memory of argument 'x'" in str(info.value)
    assert (whole.copy_to_host() == 5).all()  # no launch happened


def test_the_host_api_checks_its_arguments(compact: Any) -> None:
    items = cuda.to_device(np.zeros(4, np.int64))
    with pytest.raises(ss.ArgumentTypeError) as info:
        ss.appended(items, cuda.to_device(np.zeros(2, np.uint64)))
    assert "counter must be the one-element uint64 device array" in str(info.value)
    with pytest.raises(ss.ArgumentTypeError):
        ss.append_result(np.zeros(4), ss.counter())
    with pytest.raises(ValueError):
        ss.counter(-1)


# ----------------------------------------------------------------------------- reuse


_REUSE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, x: In[np.int64]) -> None:
    a = out.claim()
    b = out.claim()
    for w in thread.grid_stride(x):
        last = out.claim()
        out[last] = x[w]
        out[a] = x[w]
    out[b] = -1
    out[a] = -2
"""


def test_witnesses_kept_and_reused_write_only_their_own_slots(tmp_path: Path) -> None:
    # A thread may write a slot it won as often as it likes (it is its own); a later
    # claim never gives the same slot to anyone. sim.check sees no race.
    k = load_kernel_module(tmp_path, _REUSE).k
    x = np.arange(100, dtype=np.int64)
    out = np.zeros(300, np.int64)
    report = ss.sim.check(k, 2, 32, out, np.zeros(1, np.uint64), x)
    assert report.ok, str(report)
    assert int(report.outputs["n"][0]) == 64 * 2 + 100
    got = report.outputs["out"][: 64 * 2 + 100]
    assert (got == -1).sum() == 64 and (got == -2).sum() == 64
    np.testing.assert_array_equal(np.sort(got[got >= 0]), x)


def test_record_and_bf16_items(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, TYPED)
    x = np.random.default_rng(2).standard_normal(100).astype(np.float32)
    d_out = cuda.to_device(np.zeros(100, mod.Rec))
    d_h = cuda.to_device(np.zeros(100, np.uint16)).view(ss.bfloat16)
    d_n, d_m = ss.counter(), ss.counter()
    mod.k.prepare(grid=2, block=32)(d_out, d_n, d_h, d_m, cuda.to_device(x))
    kept = int((x > 0).sum())
    assert ss.appended(d_out, d_n) == ss.appended(d_h, d_m) == kept
    recs = d_out.copy_to_host()[:kept]
    np.testing.assert_array_equal(np.sort(recs["i"]), np.flatnonzero(x > 0))
    np.testing.assert_array_equal(recs["v"], x[recs["i"]])
    want = np.sort(x[x > 0].astype(ss.bfloat16).astype(np.float32))
    got = np.sort(d_h.copy_to_host()[:kept].astype(np.float32))
    np.testing.assert_array_equal(got, want)
