"""The uninitialized rule: an undefined value is reported where it is used, not where it is loaded.

Refused/accepted pairs: a load of memory no thread wrote whose value is
dropped (a plain load, ``zip`` fetching one element past the shorter
sequence, a copy into another tile nobody reads) is clean; the same value
used as a condition, an index, a store into global memory, a shuffle's value
-- directly, after arithmetic, or after a trip through shared memory -- is
an ``uninitialized`` finding naming the array, element, both threads and
both lines.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from simtsafe import sim

from . import uninit_kernels as K

N = K.B


def _x() -> np.ndarray:
    return np.arange(1, N + 1, dtype=np.float32)


def _marked(fn: Any, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn.py_func)
    [line] = [first + k for k, text in enumerate(lines) if f"# {marker}" in text]
    return line


def _only_finding(kernel: Any, *args: Any) -> sim.Finding:
    report = sim.check(kernel, 1, N, *args)
    assert report.complete, report.stopped
    [f] = report.findings
    assert f.kind == "uninitialized", str(report)
    return f


@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (K.load_discarded_clean, lambda: (np.zeros(N, np.float32), _x())),
        (K.zip_past_end_clean, lambda: (np.zeros(1, np.float32), _x())),
        (K.copied_not_used_clean, lambda: (np.zeros(N, np.float32), _x())),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_an_undefined_value_that_is_never_used_is_clean(kernel: Any, args: Any) -> None:
    report = sim.check(kernel, 1, N, *args())
    assert report.ok, str(report)


def test_zip_past_the_end_computes_the_dot_product() -> None:
    x = _x()
    report = sim.assert_clean(K.zip_past_end_clean, 1, N, np.zeros(1, np.float32), x)
    assert report.outputs["out"][0] == np.float32((x * x).sum())


def test_a_branch_on_an_undefined_value_is_reported_at_the_branch() -> None:
    f = _only_finding(K.branch_used, np.zeros(N, np.float32), _x())
    load, use = _marked(K.branch_used, "LOAD"), _marked(K.branch_used, "USE")
    assert (f.array, f.index, f.lines, f.accesses) == ("shared", (N,), (load, use), ("read", "use"))
    assert str(f.threads[0]) == str(f.threads[1]) == "block (0, 0, 0) thread (31, 0, 0)"
    decl = load - 4
    assert f.message == (
        f"shared[{N}] is read but no thread wrote it earlier in this launch (shared memory, "
        f"declared at line {decl}, starts undefined): the value block (0, 0, 0) thread "
        f"(31, 0, 0) read at line {load} is used as a condition at line {use}"
    )


def test_an_undefined_index_is_reported_at_the_access() -> None:
    f = _only_finding(K.index_used, np.zeros(N, np.float32), _x(), np.zeros(N, np.int32))
    load, use = _marked(K.index_used, "LOAD"), _marked(K.index_used, "USE")
    assert (f.array, f.index, f.lines, f.count) == ("local", (1,), (load, use), N)
    assert f"read at line {load} is used as an index (an address, a loop bound or a " in (f.message)
    assert "no thread wrote it" in f.message and "local memory" in f.message


def test_a_store_into_global_memory_is_a_use() -> None:
    f = _only_finding(K.store_used, np.zeros(N, np.float32), _x())
    load, use = _marked(K.store_used, "LOAD"), _marked(K.store_used, "USE")
    assert f.lines == (load, use)
    assert f.message.endswith(
        f"read at line {load} is stored to out[{N - 1}] (global memory, which the caller "
        f"reads) at line {use}"
    )


def test_an_undefined_value_stored_in_shared_memory_keeps_its_origin() -> None:
    f = _only_finding(K.copied_then_used, np.zeros(N, np.float32), _x())
    load, use = _marked(K.copied_then_used, "LOAD"), _marked(K.copied_then_used, "USE")
    # The original load (tile[B] by thread B - 1) and the use by thread 0 of the copy.
    assert (f.index, f.lines) == ((N,), (load, use))
    assert [str(t) for t in f.threads] == [
        "block (0, 0, 0) thread (31, 0, 0)",
        "block (0, 0, 0) thread (0, 0, 0)",
    ]
    assert f.message.endswith(
        f"read at line {load} is used as a condition by block (0, 0, 0) thread (0, 0, 0) at "
        f"line {use}"
    )


def test_an_undefined_shuffle_value_is_a_use() -> None:
    f = _only_finding(K.shuffle_used, np.zeros(N, np.float32), _x())
    assert f.lines == (_marked(K.shuffle_used, "LOAD"), _marked(K.shuffle_used, "USE"))
    assert "is passed as the value of shfl_sync at line" in f.message


def test_a_read_explained_by_a_race_is_the_race() -> None:
    report = sim.check(K.race_explains_read, 1, N, np.zeros(N, np.float32), _x())
    assert [f.kind for f in report.findings] == ["race"], str(report)


def test_an_undefined_argument_of_a_simtsafe_collective_is_a_use() -> None:
    x = _x()
    clean = sim.check(K.collective_clean, 1, N, np.zeros(1, np.float32), x)
    assert clean.ok, str(clean)
    assert clean.outputs["out"][0] == x.sum()
    f = _only_finding(K.collective_used, np.zeros(1, np.float32), x)
    assert f.lines == (_marked(K.collective_used, "LOAD"), _marked(K.collective_used, "USE"))
    assert "is passed to block.sum at line" in f.message


def test_arithmetic_propagates_an_undefined_value_and_uses_report_it() -> None:
    from simtsafe.sim._poison import Poison

    uses: list[str] = []

    class Replay:
        def undefined_use(self, origin: object, what: str) -> None:
            uses.append(what)

    origin: Any = type("Origin", (), {"replay": Replay()})()
    p = Poison(np.float32(2), origin)
    # Operators (either side, numpy scalars too), ufuncs, comparisons, derived attributes:
    # undefined, with the same origin, and no use.
    for value in (
        p + 1,
        np.float32(1) - p,
        3 * p,
        p / np.float64(4),
        -p,
        abs(p),
        p**2,
        np.sqrt(p),
        np.maximum(p, 1),
        p < 3,
        p.real,
        p.item(),
        round(p),
    ):
        assert type(value) is Poison and value.o is origin, value
    assert p.dtype == np.float32 and p.ndim == 0  # metadata is defined
    assert uses == []
    assert bool(p < 3) is True
    assert [10, 20, 30][Poison(np.int64(1), origin)] == 20
    assert float(p) == 2.0
    assert uses == [
        "used as a condition",
        "used as an index (an address, a loop bound or a shift)",
        "converted to a Python number (int(), float(), a numpy or Numba cast, a math function; "
        "the checker follows undefined values through operators and numpy ufuncs only)",
    ]
