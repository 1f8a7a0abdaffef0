"""Chunked row walks on a real GPU: the row cumsum, row softmax and warp-per-row cumsum of
tests/kernels/row_chunk_rules.py against numpy at widths around the block (1, B - 1, B,
B + 1, 3B + 5) and a long row; the witnesses' row, column and chunk are the simulator's;
a launch that is not 1D writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.row_chunk_rules import KERNELS

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

_CASES = [(b, w) for b in (32, 64, 96) for w in (1, b - 1, b, b + 1, 3 * b + 5)] + [(256, 100_003)]


def _launch(mod: Any, x: np.ndarray, grid: Any, block: Any) -> np.ndarray:
    d_out = cuda.to_device(np.full(x.shape, np.nan, np.float32))
    mod.k.prepare(grid=grid, block=block)(d_out, cuda.to_device(x))
    return np.asarray(d_out.copy_to_host())


def _ints(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(cols).integers(-3, 4, (rows, cols)).astype(np.float32)


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_row_cumsum(tmp_path: Path, block: int, width: int) -> None:
    x = _ints(5, width)
    out = _launch(load_kernel_module(tmp_path, KERNELS["row_cumsum"]), x, 5, block)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_row_softmax(tmp_path: Path, block: int, width: int) -> None:
    x = np.random.default_rng(width).standard_normal((5, width)).astype(np.float32)
    out = _launch(load_kernel_module(tmp_path, KERNELS["row_softmax"]), x, 5, block)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("block", "width"), _CASES)
def test_warp_row_cumsum(tmp_path: Path, block: int, width: int) -> None:
    x = _ints(2 * (block // 32), width)
    out = _launch(load_kernel_module(tmp_path, KERNELS["warp_row_cumsum"]), x, 2, block)
    np.testing.assert_array_equal(out, np.cumsum(x, axis=1))


def test_witness_coordinates_and_chunks(tmp_path: Path) -> None:
    x = _ints(3, 70)
    out = _launch(load_kernel_module(tmp_path, KERNELS["coordinates"]), x, 3, 32)
    r, c = np.indices(x.shape)
    want = (1000 * r + c).astype(np.float32) + (c // 32).astype(np.float32) / np.float32(1000)
    np.testing.assert_array_equal(out, want)


def test_a_launch_that_is_not_1d_writes_nothing(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, KERNELS["row_cumsum_free"])
    x = _ints(2, 40)
    assert np.isnan(_launch(mod, x, (2, 2), 32)).all()
    assert np.isnan(_launch(mod, x, 2, (32, 2))).all()
    np.testing.assert_array_equal(_launch(mod, x, 2, 32), np.cumsum(x, axis=1))
