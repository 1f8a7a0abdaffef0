"""Row spaces (BlockRow, WarpRow) on the simulator: the same rules, results, covers=, sim.check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.row_rules import ACCEPTED, BLOCK, COLLECTIVES, COLS, GRID, REFUSED, ROWS

pytestmark = pytest.mark.sim


def _x() -> np.ndarray:
    return np.random.default_rng(5).standard_normal((ROWS, COLS)).astype(np.float32)


def _launch(mod: Any, grid: Any = GRID, block: Any = BLOCK, rows: int = ROWS) -> np.ndarray:
    x = _x()[:rows] if rows <= ROWS else np.zeros((rows, COLS), np.float32)
    d_out = cuda.to_device(np.full((rows, COLS), np.nan, np.float32))
    mod.k.prepare(grid=grid, block=block)(d_out, cuda.to_device(x))
    return d_out.copy_to_host()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source))
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_accepted_on_the_simulator(tmp_path: Path, case: str) -> None:
    grid, block = ((6, 10), (8, 8)) if "index-2d" in case else (GRID, BLOCK)
    out = _launch(load_kernel_module(tmp_path, ACCEPTED[case]), grid, block)
    np.testing.assert_array_equal(out, _x())


@pytest.mark.parametrize("case", sorted(COLLECTIVES))
def test_collective_after_the_loop_accepted_inside_refused(tmp_path: Path, case: str) -> None:
    source, fragment = COLLECTIVES[case]
    if fragment is None:
        out = _launch(load_kernel_module(tmp_path, source))
        np.testing.assert_allclose(out, np.repeat(_x().sum(1, keepdims=True), COLS, 1), rtol=1e-5)
        return
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source))
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


_FREE = """
from simtsafe import BlockRow, WarpRow


@ss.kernel
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    for w in thread.block_row(x):
        out[w] = x[w]
"""

_WARP = """
from simtsafe import WarpRow


@ss.kernel
def k(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    for w in thread.warp_row(out):
        out[w] = x[w]
"""


def test_a_launch_that_is_not_1d_writes_nothing(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _FREE)
    assert np.isnan(_launch(mod, (GRID, 2), BLOCK)).all()
    assert np.isnan(_launch(mod, GRID, (32, 2))).all()


def test_warp_rows_with_a_partial_last_warp(tmp_path: Path) -> None:
    # 48 threads: warps of 32 and 16 lanes, two rows per block; the partial warp's
    # row gets the columns of its 16 lanes only (covers= refuses such a launch).
    out = _launch(load_kernel_module(tmp_path, _WARP), 2, 48)
    x = _x()
    np.testing.assert_array_equal(out[[0, 2]], x[[0, 2]])
    for r in (1, 3):
        cols = np.arange(COLS) % 32 < 16
        np.testing.assert_array_equal(out[r, cols], x[r, cols])
        assert np.isnan(out[r, ~cols]).all()


_COVERS = """
from simtsafe import BlockRow, WarpRow


@ss.kernel(contract=ss.LaunchContract(domain=1, covers="out"))
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    for w in thread.block_row(x):
        out[w] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, covers="out"))
def kw(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    for w in thread.warp_row(x):
        out[w] = x[w]
"""


def test_covers_needs_a_block_per_row(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _COVERS)
    np.testing.assert_array_equal(_launch(mod, ROWS, 32), _x())  # any width: 32 < 37 columns
    for _ in range(2):  # the second launch takes the generated fast check
        with pytest.raises(ss.CoverageError) as info:
            _launch(mod, ROWS - 1, 32)
        assert "the launch has 3 blocks" in str(info.value)
        assert "'out' has 4 rows. Prepare with grid=4 (one block per row)" in str(info.value)


def test_covers_needs_a_warp_per_row(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _COVERS)
    mod.k = mod.kw
    np.testing.assert_array_equal(_launch(mod, 2, 64), _x())
    with pytest.raises(ss.CoverageError, match=r"the launch has 2 warps \(1 blocks of 2"):
        _launch(mod, 1, 64)
    with pytest.raises(ss.CoverageError, match="not a multiple of 32"):
        _launch(mod, 4, 48)


@pytest.mark.parametrize(
    "src",
    [COLLECTIVES["block-sum-after-the-row-loop"][0], ACCEPTED["block-row-walk-of-the-output"]],
)
def test_sim_check_finds_no_race(tmp_path: Path, src: str) -> None:
    # The compiled-form verdict accepts these (above); the replay records every element
    # access and finds each output element written by one thread, no race on the buffer.
    mod = load_kernel_module(tmp_path, src)
    out = np.zeros((ROWS, COLS), np.float32)
    report = ss.sim.check(mod.k, GRID, BLOCK, out, _x())
    assert report.ok, report


@pytest.mark.parametrize("name", ["softmax", "softmax_warp", "rmsnorm", "layernorm"])
def test_raw_twins_match_numpy(name: str) -> None:
    # The raw twins (tests/ptx/raw_rows.py) are the zero-cost comparison and the
    # benchmark's baseline: they compute what the examples compute.
    from tests.coop_examples import example
    from tests.ptx import raw_rows
    from tests.sim import shfl_shim

    x = np.random.default_rng(8).standard_normal((3, 70)).astype(np.float32)
    g = np.random.default_rng(9).standard_normal(70).astype(np.float32)
    b = np.random.default_rng(10).standard_normal(70).astype(np.float32)
    eps = np.float32(1e-5)
    out = cuda.to_device(np.zeros_like(x))
    ex = example(name.removesuffix("_warp"))
    kernel = cuda.jit(getattr(raw_rows, f"{name}_raw"))
    with shfl_shim.installed():
        if name == "softmax":
            kernel[3, 64](out, cuda.to_device(x))
            want = ex.reference(x)
        elif name == "softmax_warp":
            kernel[1, 96](out, cuda.to_device(x))
            want = ex.reference(x)
        elif name == "rmsnorm":
            kernel[3, 64](out, cuda.to_device(x), cuda.to_device(g), eps)
            want = ex.reference(x, g, float(eps))
        else:
            kernel[3, 64](out, cuda.to_device(x), cuda.to_device(g), cuda.to_device(b), eps)
            want = ex.reference(x, g, b, float(eps))
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-4, atol=1e-5)


_COUNT = """
from simtsafe import Accumulate


@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(n: Accumulate[np.uint32], x: In2D[np.float32]) -> None:
    for w in thread.block_row(x):
        n.add(0, 1)
"""


def test_blocks_past_the_last_row_walk_nothing(tmp_path: Path) -> None:
    # As on the device: the walk stops at once in a row the walked array does not have.
    mod = load_kernel_module(tmp_path, _COUNT)
    n = cuda.to_device(np.zeros(1, np.uint32))
    mod.k.prepare(grid=ROWS + 2, block=BLOCK)(n, cuda.to_device(_x()))
    assert n.copy_to_host()[0] == ROWS * COLS
