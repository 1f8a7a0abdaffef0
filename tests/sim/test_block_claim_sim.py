"""Block claims on the simulator: the rules, nothing lost at any capacity, sim.check.

Property tests (seeded numpy RNG): for several sizes, thresholds, grids and
capacities at and below the need, every selected element is stored once or
counted as dropped, the counts are exact, and a thread that keeps nothing
writes nothing (the buffer past the stored items keeps its fill value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.block_claim_rules import ACCEPTED, REFUSED, UNIFORM_LOOP
from tests.sim.test_append_sim import _launch, _x

pytestmark = pytest.mark.sim


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
    got = d["out"].copy_to_host()
    np.testing.assert_array_equal(np.sort(got[:n]), want)
    assert np.isnan(got[n:]).all()  # threads that kept nothing wrote nothing


_COMPACT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, x: In[np.int64], t: np.int64) -> None:
""" + "".join(
    f"    {line}\n"
    for line in UNIFORM_LOOP.replace(
        "{body}", "    s = out.block_claim(i < size and v > t)\n    out[s] = v"
    )
    .replace("np.float32(0)", "t")
    .splitlines()
)


@pytest.fixture(scope="module")
def compact(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_kernel_module(tmp_path_factory.mktemp("block_compact"), _COMPACT).k


def _check(kernel: Any, x: np.ndarray[Any, Any], t: int, cap: int, grid: int) -> ss.AppendResult:
    selected = x[x > t]
    d_out = cuda.to_device(np.full(cap, -1, np.int64))
    d_n = ss.counter()
    kernel.prepare(grid=grid, block=64)(d_out, d_n, cuda.to_device(x), np.int64(t))
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
    rng = np.random.default_rng(1919)
    for _trial in range(5):
        n = int(rng.integers(1, 300))
        x = rng.permutation(n).astype(np.int64)  # distinct values
        t = int(rng.integers(-1, n))
        need = int((x > t).sum())
        grid = int(rng.integers(1, 4))
        for cap in sorted({need, max(need - 1, 0), need // 3, 0}):
            _check(compact, x, t, cap, grid)


def test_a_block_keeping_nothing_adds_nothing(compact: Any) -> None:
    x = np.arange(200, dtype=np.int64)
    r = _check(compact, x, 1000, 5, 2)
    assert (r.stored, r.dropped, r.claimed) == (0, 0, 0)


def test_the_counter_keeps_counting_over_launches(compact: Any) -> None:
    x = np.arange(100, dtype=np.int64)
    d_out = cuda.to_device(np.full(120, -1, np.int64))
    d_n = ss.counter()
    launch = compact.prepare(grid=2, block=64)
    launch(d_out, d_n, cuda.to_device(x), np.int64(49))  # 50 items
    launch(d_out, d_n, cuda.to_device(x + 1000), np.int64(1039))  # 60 more
    assert ss.appended(d_out, d_n) == 110
    got = np.sort(d_out.copy_to_host()[:110])
    np.testing.assert_array_equal(got, np.concatenate([x[50:], x[40:] + 1000]))


def test_a_counter_past_two_to_the_63_is_marked(compact: Any) -> None:
    d_out = cuda.to_device(np.full(8, -1, np.int64))
    d_n = cuda.to_device(np.array([2**63 + 5], np.uint64))
    compact.prepare(grid=1, block=64)(d_out, d_n, cuda.to_device(np.arange(10)), np.int64(4))
    assert (d_out.copy_to_host() == -1).all()  # slots past the end: nothing written
    with pytest.raises(ss.CapacityExceeded, match="2\\*\\*63"):
        ss.appended(d_out, d_n)


def test_the_example_runs_on_the_simulator() -> None:
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    assert importlib.import_module("compact").run(n=3_001, blocks=2)
