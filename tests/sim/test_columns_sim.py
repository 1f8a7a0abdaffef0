"""The Columns space on the simulator: the same rules and results as on the GPU, covers=,
the bounds of both axes, sim.check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.column_rules import (
    ACCEPTED,
    BLOCK,
    COLS,
    GRID,
    POS,
    RECORD,
    REFUSED,
    ROWS,
    record_expected,
)

pytestmark = pytest.mark.sim


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    x = rng.standard_normal(COLS).astype(np.float32)
    return x, rng.standard_normal((ROWS, COLS)).astype(np.float32)


def _launch(mod: Any, pos: int = POS, grid: int = GRID, block: int = BLOCK) -> np.ndarray:
    x, x2 = _inputs()
    d_out = cuda.to_device(np.zeros((ROWS, COLS), np.float32))
    d_pos = cuda.to_device(np.array([pos], np.int32))
    mod.k.prepare(grid=grid, block=block)(d_out, cuda.to_device(x), d_pos, cuda.to_device(x2))
    return d_out.copy_to_host()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], _launch)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_gives_its_result(tmp_path: Path, case: str) -> None:
    source, expected = ACCEPTED[case]
    np.testing.assert_array_equal(
        _launch(load_kernel_module(tmp_path, source)), expected(*_inputs())
    )


_APPEND = """
from simtsafe import Columns


@ss.kernel(contract=ss.LaunchContract(domain=1, covers="cache"))
def k(cache: DisjointSlice[np.float32, Columns], kv: In[np.float32], pos: In[np.int32]) -> None:
    w = thread.column()
    cache[pos[0], w] = kv[w]
"""


@pytest.mark.parametrize("pos", [-1, ROWS, 2**31 - 1])
def test_a_row_out_of_range_writes_nothing(tmp_path: Path, pos: int) -> None:
    mod = load_kernel_module(tmp_path, _APPEND)
    d_cache = cuda.to_device(np.zeros((ROWS, COLS), np.float32))
    kv = cuda.to_device(np.ones(COLS, np.float32))
    mod.k.prepare(grid=GRID, block=BLOCK)(d_cache, kv, cuda.to_device(np.array([pos], np.int32)))
    assert not d_cache.copy_to_host().any()


def test_covers_needs_a_thread_per_column(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _APPEND)
    d_cache = cuda.to_device(np.zeros((ROWS, COLS), np.float32))
    args = (
        d_cache,
        cuda.to_device(np.ones(COLS, np.float32)),
        cuda.to_device(np.zeros(1, np.int32)),
    )
    with pytest.raises(ss.CoverageError) as info:
        mod.k.prepare(grid=1, block=BLOCK)(*args)
    assert f"the launch owns {BLOCK} along axis 1 and 'cache' has {COLS}" in str(info.value)
    assert info.value.axis == 1
    assert not d_cache.copy_to_host().any()
    # Rows are the kernel's choice: a tall cache needs no more threads.
    tall = cuda.to_device(np.zeros((10_000, COLS), np.float32))
    mod.k.prepare(grid=GRID, block=BLOCK)(tall, *args[1:])
    np.testing.assert_array_equal(tall.copy_to_host()[0], np.ones(COLS, np.float32))


_PER_THREAD_ROWS = """
from simtsafe import Columns


@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, Columns], x: In[np.float32]) -> None:
    w = thread.column()
    for r in range(w.index % 3, out.shape[0]):
        out[r, w] = out[r, w] + x[w]
"""


def test_sim_check_finds_no_race_with_rows_that_differ_between_threads(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _PER_THREAD_ROWS)
    x = np.arange(COLS, dtype=np.float32)
    report = ss.sim.check(mod.k, GRID, BLOCK, np.zeros((ROWS, COLS), np.float32), x)
    assert report.ok, report
    expected = np.zeros((ROWS, COLS), np.float32)
    for c in range(COLS):
        expected[c % 3 :, c] = x[c]
    np.testing.assert_array_equal(report.outputs["out"], expected)


def test_a_record_field_of_the_own_element(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RECORD)
    out = cuda.to_device(np.zeros((ROWS, COLS), mod.REC))
    mod.k.prepare(grid=GRID, block=BLOCK)(out, cuda.to_device(np.array([POS], np.int32)))
    np.testing.assert_array_equal(out.copy_to_host(), record_expected(mod.REC))
