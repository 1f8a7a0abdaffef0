"""Chunked row walks on the simulator: the same rules as on the device, and the values.

A row cumsum (``block.scan`` + ``block.sum`` inside the chunk loop), a row softmax (a
``block.max`` and a ``block.sum`` per chunk) and a warp-per-row cumsum give numpy's
values at widths 1, B - 1, B, B + 1 and 3B + 5 for blocks of 32, 64 and 96 threads; the
witnesses carry the row, column and chunk the device's do; columns past the row's end
are written nowhere; ``sim.check`` finds no race; ``covers=`` treats the space as
``block_row`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.row_chunk_rules import KERNELS, REFUSED, TWINS, source

pytestmark = pytest.mark.sim

ROWS = 2


def _x(rows: int, cols: int, seed: int = 7) -> np.ndarray:
    # small integers: every partial sum is exact in float32, so the scan matches exactly
    return np.random.default_rng(seed).integers(-3, 4, (rows, cols)).astype(np.float32)


def _launch(mod: Any, x: np.ndarray, grid: Any, block: Any, *more: Any) -> np.ndarray:
    d_out = cuda.to_device(np.full(x.shape, np.nan, np.float32))
    mod.k.prepare(grid=grid, block=block)(
        d_out,
        cuda.to_device(x),
        *(a if hasattr(a, "copy_to_host") else cuda.to_device(a) for a in more),
    )
    return np.asarray(d_out.copy_to_host())


def _widths(b: int) -> list[int]:
    return [1, b - 1, b, b + 1, 3 * b + 5]


_CASES = [(b, w) for b in (32, 64, 96) for w in _widths(b)]


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_row_cumsum_matches_numpy(tmp_path: Path, block: int, width: int) -> None:
    x = _x(ROWS, width)
    out = _launch(load_kernel_module(tmp_path, KERNELS["row_cumsum"]), x, ROWS, block)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_row_softmax_matches_numpy(tmp_path: Path, block: int, width: int) -> None:
    x = np.random.default_rng(width).standard_normal((ROWS, width)).astype(np.float32)
    out = _launch(load_kernel_module(tmp_path, KERNELS["row_softmax"]), x, ROWS, block)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_warp_row_cumsum_matches_numpy(tmp_path: Path, block: int, width: int) -> None:
    rows = block // 32  # a warp per row, one block
    x = _x(rows, width)
    out = _launch(load_kernel_module(tmp_path, KERNELS["warp_row_cumsum"]), x, 1, block)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


def test_witness_coordinates_and_chunks(tmp_path: Path) -> None:
    # Block b, thread t, chunk k: row b, column t + k * 32, valid where the column exists.
    x = _x(3, 70)
    out = _launch(load_kernel_module(tmp_path, KERNELS["coordinates"]), x, 3, 32)
    r, c = np.indices(x.shape)
    want = (1000 * r + c).astype(np.float32) + (c // 32).astype(np.float32) / np.float32(1000)
    np.testing.assert_array_equal(out, want)


_PAST_END = source(
    "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
    "def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32],\n"
    "      n: ss.Accumulate[np.uint32]) -> None:\n",
    """
for c in thread.block_row_chunks(out):
    out[c] = ss.block.sum(np.float32(1)) + np.float32(c.chunk)
for c in thread.block_row_chunks(out):
    n.add(0, 1)
""",
)


def test_the_last_chunk_runs_in_every_thread_and_writes_inside_only(tmp_path: Path) -> None:
    # 37 columns, 32 threads: two chunks in every thread (ceil(37 / 32)); the collective
    # counts all 32 threads in both, and the 27 witnesses past the row's end write nothing
    # (the output is exactly its 37 columns, each written once).
    mod = load_kernel_module(tmp_path, _PAST_END)
    n = cuda.to_device(np.zeros(1, np.uint32))
    x = _x(2, 37)
    out = _launch(mod, x, 2, 32, n)
    assert n.copy_to_host()[0] == 2 * 32 * 2  # every thread, every chunk, every block
    np.testing.assert_array_equal(out, np.where(np.arange(37) < 32, 32.0, 33.0)[None].repeat(2, 0))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source_, fragment = REFUSED[case]
    x = _x(4, 37)
    with pytest.raises(ss.SafetyError) as info:
        mod = load_kernel_module(tmp_path, source_)
        extra = (x,) if "y: In2D" in source_ else ()
        arg = x.ravel() if "x: In[" in source_ else x
        d_out = cuda.to_device(np.zeros_like(x))
        mod.k.prepare(grid=4, block=64)(d_out, cuda.to_device(arg), *map(cuda.to_device, extra))
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(TWINS))
def test_rule_twin_accepted_on_the_simulator(tmp_path: Path, case: str) -> None:
    src = TWINS[case]
    x = _x(4, 37)
    mod = load_kernel_module(tmp_path, src)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    arg = x[0].copy() if "x: In[" in src else x
    extra = (x,) if "y: In2D" in src else ()
    block = 64 if "WarpRow" not in src.split("def k")[1] else 128
    mod.k.prepare(grid=4 if block == 64 else 1, block=block)(
        d_out, cuda.to_device(arg), *map(cuda.to_device, extra)
    )
    out = d_out.copy_to_host()
    if case == "scan-in-a-plain-block-row-loop":
        np.testing.assert_array_equal(out, np.cumsum(x, axis=1))
    elif case in ("warp-chunk-writes-a-block-row-output", "block-chunk-walk-of-a-warp-row-output"):
        np.testing.assert_array_equal(out, x)
    elif case == "block-chunk-walk-of-a-1d-input":
        np.testing.assert_array_equal(out, np.repeat(x[0][None], 4, 0))
    else:
        assert not np.isnan(out).all()


def test_a_launch_that_is_not_1d_writes_nothing(tmp_path: Path) -> None:
    # Without a contract the witness checks the launch: a 2D grid or block gives the
    # invalid row, every chunk's witness is invalid (c.valid False) and writes nothing.
    mod = load_kernel_module(tmp_path, KERNELS["row_cumsum_free"])
    x = _x(ROWS, 40)
    assert np.isnan(_launch(mod, x, (ROWS, 2), 32)).all()
    assert np.isnan(_launch(mod, x, ROWS, (32, 2))).all()
    np.testing.assert_array_equal(_launch(mod, x, ROWS, 32), np.cumsum(x, axis=1))


_COVERS = source(
    '@ss.kernel(contract=ss.LaunchContract(domain=1, covers="out"))\n'
    "def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:\n",
    """
carry = np.float32(0)
for c in thread.block_row_chunks(out):
    v = x[c]
    out[c] = ss.block.scan(v) + carry
    carry += ss.block.sum(v)
""",
)


def test_covers_needs_a_block_per_row(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _COVERS)
    x = _x(4, 37)
    np.testing.assert_array_equal(_launch(mod, x, 4, 32), np.cumsum(x, axis=1))  # any width
    with pytest.raises(ss.CoverageError) as info:
        _launch(mod, x, 3, 32)
    assert "the launch has 3 blocks" in str(info.value)
    assert "'out' has 4 rows. Prepare with grid=4 (one block per row)" in str(info.value)


@pytest.mark.parametrize("name", ["row_cumsum", "row_softmax", "warp_row_cumsum"])
def test_sim_check_finds_nothing(tmp_path: Path, name: str) -> None:
    # The replay records every access: each element written by one thread, every
    # collective reached by its whole block (warp) the same number of times, no read out
    # of range (the witnesses past the row's end read and write nothing).
    mod = load_kernel_module(tmp_path, KERNELS[name])
    x = _x(2, 70)
    out = np.zeros_like(x)
    report = ss.sim.check(mod.k, 1 if name.startswith("warp") else 2, 64, out, x)
    assert report.ok, report
