"""Shared tiles, output tiles and thread-private arrays on a CUDA device (skipped without one).

The same kernels as tests/sim and tests/ptx (tests/kernels/tiles.py), at
sizes where edge tiles, partial blocks and several blocks all occur, checked
against numpy and against their raw twins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import tiles as k

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _f32(shape: Any, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _launch(kernel: Any, grid: Any, block: Any, *args: Any, shared_mem: int = 0) -> list[Any]:
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel.prepare(grid=grid, block=block, shared_mem=shared_mem)(*dev)
    return [d.copy_to_host() for d in dev if hasattr(d, "copy_to_host")]


def test_reverse_in_block_matches_raw() -> None:
    n = 1000 * k.BLOCK_1D - 3
    a = _f32(n)
    grid = ss.cover(n, k.BLOCK_1D)
    (safe, _) = _launch(k.reverse_in_block, grid, k.BLOCK_1D, np.full(n, np.nan, np.float32), a)
    raw = cuda.to_device(np.full(n, np.nan, np.float32))
    k.reverse_in_block_raw[grid, k.BLOCK_1D](raw, cuda.to_device(a))
    np.testing.assert_array_equal(safe, raw.copy_to_host())


def test_block_stride_1d() -> None:
    n = 50 * 3 * k.BLOCK_1D - 7
    a = _f32(n, 1)
    grid = ss.cover(n, 3 * k.BLOCK_1D)
    (out, _) = _launch(k.block_stride_1d, grid, k.BLOCK_1D, np.full(n, np.nan, np.float32), a)
    flat = np.full(grid * 3 * k.BLOCK_1D, -1, np.float32)
    flat[:n] = a
    tiles = np.concatenate([flat.reshape(grid, -1), np.zeros((grid, 1), np.float32)], axis=1)
    np.testing.assert_array_equal(out, tiles[:, 1:].reshape(-1)[:n])


@pytest.mark.parametrize("block, shared", [(64, 256), (256, 1024), (256, 2048)])
def test_dynamic_tile(block: int, shared: int) -> None:
    n = 40 * block
    a = _f32(n, 2)
    (out, _) = _launch(k.dynamic_reverse, 40, block, np.zeros(n, np.float32), a, shared_mem=shared)
    extent = shared // 4  # every thread fills extent / block elements with its own value
    tid = np.arange(block)
    owner = (extent - 1 - tid) % block
    expected = a.reshape(40, block)[:, owner].reshape(-1)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("shape", [(1000, 777), (32, 32), (4096, 1), (1, 4100), (2048, 2048)])
def test_transpose(shape: tuple[int, int]) -> None:
    a = _f32(shape, 3)
    out = np.full(shape[::-1], np.nan, np.float32)
    grid = (ss.cover(shape[0], k.TILE), ss.cover(shape[1], k.TILE))
    (got, _) = _launch(k.transpose, grid, (k.TILE, k.ROWS), out, a)
    np.testing.assert_array_equal(got, a.T)
    (got, _) = _launch(k.transpose_one_each, grid, (k.TILE, k.TILE), out, a)
    np.testing.assert_array_equal(got, a.T)


@pytest.mark.parametrize("block", [(4, 2, 1), (3, 3, 1), (2, 2, 2), (16, 1, 1), (8, 4, 4)])
def test_block_stride_2d_any_block(block: tuple[int, int, int]) -> None:
    (out,) = _launch(k.block_stride_2d_any_block, 6, block, np.full(6, -1, np.int64))
    np.testing.assert_array_equal(out, np.zeros(6, np.int64))


def test_tile_1d_edges() -> None:
    n = 1000 * 64 * k.TN + 6
    a = _f32(n, 4)
    (got, _) = _launch(
        k.scale_tile_1d, ss.cover(ss.cover(n, k.TN), 64), 64, np.full(n, np.nan, np.float32), a
    )
    np.testing.assert_array_equal(got, a * 2)


@pytest.mark.parametrize("shape", [(1000, 999), (64, 256), (1, 1)])
def test_tile_2d_edges(shape: tuple[int, int]) -> None:
    grid = (ss.cover(ss.cover(shape[1], k.TN), 8), ss.cover(ss.cover(shape[0], k.TM), 4))
    (got,) = _launch(k.fill_tile_2d, grid, (8, 4), np.full(shape, -1, np.int32))
    rows, cols = np.indices(shape)
    np.testing.assert_array_equal(got, rows * 10000 + cols)


@pytest.mark.parametrize("shape", [(1000, 999), (64, 256)])
def test_tile_2d_strided_owners(shape: tuple[int, int]) -> None:
    grid = (ss.cover(shape[1], k.TN * 8), ss.cover(shape[0], k.TM * 4))
    (got,) = _launch(k.fill_tile_2d_strided, grid, (8, 4), np.full(shape, -1, np.int32))
    rows, cols = np.indices(shape)
    np.testing.assert_array_equal(got, (cols % (k.TN * 8)) % 8 + 8 * ((rows % (k.TM * 4)) % 4) + 1)


def test_tile_2d_strided_invalid_in_a_3d_block() -> None:
    (got,) = _launch(k.fill_tile_2d_strided_unproven, 1, (2, 2, 2), np.zeros((8, 8), np.int32))
    assert not got.any()


@pytest.mark.parametrize("shape", [(16 * 8 * 3, 8 * 8 * 5), (1000, 333)])
def test_store_tile_full_and_edge(shape: tuple[int, int]) -> None:
    grid = (ss.cover(shape[1], 8 * 16), ss.cover(shape[0], 8 * 8))
    (got,) = _launch(
        k.store_tile_full, grid, (16, 8), np.full(shape, np.nan, np.float32), np.float32(0.5)
    )
    rows, cols = np.indices(shape)
    r = (rows % 64) // 8
    c = (cols % 128) // 16
    np.testing.assert_array_equal(got, (0.5 + r * 8 + c).astype(np.float32))


def test_local_arrays_match_raw() -> None:
    n = 100_000
    a = cuda.to_device(_f32(n, 5))
    for safe, raw in ((k.local_sum_safe, k.local_sum_raw), (k.local_2d_safe, k.local_2d_raw)):
        out_safe = cuda.device_array(n, np.float32)
        out_raw = cuda.device_array(n, np.float32)
        safe[ss.cover(n, 128), 128](out_safe, a)
        raw[ss.cover(n, 128), 128](out_raw, a)
        np.testing.assert_array_equal(out_safe.copy_to_host(), out_raw.copy_to_host())


def test_local_array_filled_in_one_helper_is_read_in_another() -> None:
    threads = 300 * 32
    n = threads * k.HELPER_STEPS * k.HELPER_FRAG
    a, b = _f32(n, 3), _f32(n, 4)
    expected = k.local_through_helpers_expected(a, b, threads)
    out = np.full(threads * k.HELPER_TILE, np.nan, np.float32)
    (safe, _, _) = _launch(k.local_through_helpers, 300, 32, out, a, b)
    np.testing.assert_allclose(safe, expected, rtol=1e-5, atol=1e-5)
    raw = cuda.to_device(out)
    k.local_through_helpers_raw[300, 32](raw, cuda.to_device(a), cuda.to_device(b))
    np.testing.assert_allclose(raw.copy_to_host(), expected, rtol=1e-5, atol=1e-5)


def test_local_array_out_of_range_touches_nothing() -> None:
    idx = np.array([0, 3, 4, -1, 2**40, -(2**62), 1, 2, 5, -4] * 100, np.int64)
    out = cuda.device_array(len(idx), np.int64)
    k.local_out_of_range[ss.cover(len(idx), 64), 64](out, cuda.to_device(idx))
    guards = 4 * 7 * 2
    expected = [(99 + 99 * 1000 + guards) if 0 <= j < 4 else guards for j in idx.tolist()]
    np.testing.assert_array_equal(out.copy_to_host(), expected)


@pytest.mark.parametrize("m, n, kdim", [(1024, 1024, 512), (1000, 777, 333), (128, 128, 8)])
def test_tier1_sgemm(m: int, n: int, kdim: int) -> None:
    a = _f32((m, kdim), 6)
    b = _f32((kdim, n), 7)
    grid = (ss.cover(n, k.GM), ss.cover(m, k.GM))
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    safe = cuda.to_device(np.full((m, n), np.nan, np.float32))
    raw = cuda.to_device(np.full((m, n), np.nan, np.float32))
    k.sgemm_tier1[grid, (k.GB, k.GB)](safe, d_a, d_b)
    k.sgemm_raw[grid, (k.GB, k.GB)](raw, d_a, d_b)
    np.testing.assert_array_equal(safe.copy_to_host(), raw.copy_to_host())
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(safe.copy_to_host(), expected, rtol=1e-3, atol=1e-3)
