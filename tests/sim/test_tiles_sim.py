"""Shared tiles, block-local witnesses, output tiles and local arrays on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels import tiles as k
from tests.kernels.tile_rules import ACCEPTED, COMPILE_TIME_ONLY, REFUSED

pytestmark = pytest.mark.sim


def _f32(shape: Any, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run(kernel: Any, grid: Any, block: Any, *args: Any, shared_mem: int = 0) -> list[np.ndarray]:
    """Launch through prepare with device copies; the arrays afterwards, on the host."""
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel.prepare(grid=grid, block=block, shared_mem=shared_mem)(*dev)
    return [d.copy_to_host() for d in dev if hasattr(d, "copy_to_host")]


# ----------------------------------------------------------------------------- shared tiles


def test_1d_tile_reverses_each_block() -> None:
    n = 3 * k.BLOCK_1D - 5
    a = _f32(n)
    (out, _) = _run(k.reverse_in_block, 3, k.BLOCK_1D, np.full(n, np.nan, np.float32), a)
    padded = np.zeros(3 * k.BLOCK_1D, np.float32)
    padded[:n] = a
    np.testing.assert_array_equal(out, padded.reshape(3, -1)[:, ::-1].reshape(-1)[:n])


def test_1d_block_stride_covers_a_tile_larger_than_the_block() -> None:
    n = 2 * 3 * k.BLOCK_1D - 7
    a = _f32(n, 1)
    (out, _) = _run(k.block_stride_1d, 2, k.BLOCK_1D, np.full(n, np.nan, np.float32), a)
    tiles = np.full((2, 3 * k.BLOCK_1D + 1), -1, np.float32)
    flat = np.full(2 * 3 * k.BLOCK_1D, -1, np.float32)
    flat[:n] = a
    tiles[:, :-1] = flat.reshape(2, -1)
    tiles[:, -1] = 0  # the read one past the tile's end gives 0
    expected = tiles[:, 1:].reshape(-1)[:n]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("block", [64, 96])
def test_dynamic_tile_is_sized_by_the_launch(block: int) -> None:
    n = 2 * block
    a = _f32(n, 2)
    (out, _) = _run(k.dynamic_reverse, 2, block, np.zeros(n, np.float32), a, shared_mem=block * 4)
    np.testing.assert_array_equal(out, a.reshape(2, -1)[:, ::-1].reshape(-1))


def test_dynamic_tile_extent_follows_shared_mem() -> None:
    # Twice the memory: the tile has 2 * block elements, threads fill all of them
    # (block_stride) and read from the far end, which is their own value again.
    block = 32
    a = _f32(block, 3)
    (out, _) = _run(k.dynamic_reverse, 1, block, np.zeros(block, np.float32), a, shared_mem=256)
    np.testing.assert_array_equal(out, a[::-1])


@pytest.mark.parametrize("shape", [(70, 45), (32, 32), (1, 100), (33, 1)])
def test_padded_transpose(shape: tuple[int, int]) -> None:
    a = _f32(shape, 4)
    out = np.full(shape[::-1], np.nan, np.float32)
    grid = (ss.cover(out.shape[1], k.TILE), ss.cover(out.shape[0], k.TILE))
    (got, _) = _run(k.transpose, grid, (k.TILE, k.ROWS), out, a)
    np.testing.assert_array_equal(got, a.T)


def test_transpose_one_element_per_thread() -> None:
    a = _f32((40, 50), 5)
    out = np.full((50, 40), np.nan, np.float32)
    grid = (ss.cover(40, k.TILE), ss.cover(50, k.TILE))
    (got, _) = _run(k.transpose_one_each, grid, (k.TILE, k.TILE), out, a)
    np.testing.assert_array_equal(got, a.T)


@pytest.mark.parametrize("block", [(4, 2, 1), (3, 3, 1), (2, 2, 2), (16, 1, 1), (1, 1, 1)])
def test_2d_block_stride_visits_every_element_once(block: tuple[int, int, int]) -> None:
    (out,) = _run(k.block_stride_2d_any_block, 2, block, np.full(2, -1, np.int64))
    np.testing.assert_array_equal(out, [0, 0])


# ----------------------------------------------------------------------------- output tiles


def test_tile_1d_with_a_clipped_edge_tile() -> None:
    n = 64 * k.TN + 6  # two threads of the second block own part of a tile
    a = _f32(n, 6)
    out = np.full(n, np.nan, np.float32)
    (got, _) = _run(k.scale_tile_1d, 2, 64, out, a)
    np.testing.assert_array_equal(got, a * 2)


@pytest.mark.parametrize("shape", [(16, 64), (13, 29), (1, 1)])
def test_tile_2d_edges(shape: tuple[int, int]) -> None:
    out = np.full(shape, -1, np.int32)
    grid = (ss.cover(ss.cover(shape[1], k.TN), 8), ss.cover(ss.cover(shape[0], k.TM), 4))
    (got,) = _run(k.fill_tile_2d, grid, (8, 4), out)
    rows, cols = np.indices(shape)
    np.testing.assert_array_equal(got, rows * 10000 + cols)


@pytest.mark.parametrize("shape", [(16, 64), (11, 37)])
def test_tile_2d_strided_owners(shape: tuple[int, int]) -> None:
    out = np.full(shape, -1, np.int32)
    bx, by = 8, 4
    grid = (ss.cover(shape[1], k.TN * bx), ss.cover(shape[0], k.TM * by))
    (got,) = _run(k.fill_tile_2d_strided, grid, (bx, by), out)
    rows, cols = np.indices(shape)
    ty = (rows % (k.TM * by)) % by
    tx = (cols % (k.TN * bx)) % bx
    np.testing.assert_array_equal(got, tx + bx * ty + 1)


def test_tile_2d_strided_writes_nothing_in_a_3d_block_without_a_proof() -> None:
    out = np.zeros((8, 8), np.int32)
    (got,) = _run(k.fill_tile_2d_strided_unproven, 1, (2, 2, 2), out)
    assert not got.any()
    (got,) = _run(k.fill_tile_2d_strided_unproven, 1, (2, 2, 1), out)
    assert got[: k.TM * 2, : k.TN * 2].all()


# ----------------------------------------------------------------------------- local arrays


def _raw(kernel: Any, n: int, *args: np.ndarray) -> np.ndarray:
    out = np.zeros(n, args[0].dtype if args else np.float32)
    kernel[ss.cover(n, 32), 32](out, *args)
    return out


def test_local_arrays_match_raw() -> None:
    a = _f32(50, 7)
    for safe, raw in ((k.local_sum_safe, k.local_sum_raw), (k.local_2d_safe, k.local_2d_raw)):
        out_safe = np.zeros(50, np.float32)
        out_raw = np.zeros(50, np.float32)
        safe[2, 32](out_safe, a)
        raw[2, 32](out_raw, a)
        np.testing.assert_array_equal(out_safe, out_raw)


def test_local_array_out_of_range_touches_nothing() -> None:
    idx = np.array([0, 3, 4, -1, 2**40, -(2**62), 1], np.int64)
    out = np.zeros(len(idx), np.int64)
    k.local_out_of_range[1, 32](out, idx)
    guards = 4 * 7 * 2
    expected = [(99 + 99 * 1000 + guards) if 0 <= j < 4 else guards for j in idx.tolist()]
    np.testing.assert_array_equal(out, expected)


def test_local_array_dynamic_index() -> None:
    idx = np.array([0, 7, 8, -1, 3], np.int64)
    out = np.full(len(idx), np.nan, np.float32)
    k.local_dynamic_index_safe[1, 32](out, idx)
    np.testing.assert_array_equal(out, [0, 7, 0, 0, 3])


def test_local_array_filled_in_one_helper_is_read_in_another() -> None:
    threads = 2 * 32
    n = threads * k.HELPER_STEPS * k.HELPER_FRAG
    a, b = _f32(n, 3), _f32(n, 4)
    expected = k.local_through_helpers_expected(a, b, threads)
    (out, _, _) = _run(
        k.local_through_helpers, 2, 32, np.full(threads * k.HELPER_TILE, np.nan, np.float32), a, b
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    raw = np.full(threads * k.HELPER_TILE, np.nan, np.float32)
    k.local_through_helpers_raw[2, 32](raw, a, b)
    np.testing.assert_allclose(raw, expected, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- refusals


def _launch_rule_kernel(mod: Any, source: str) -> list[np.ndarray]:
    if "out2:" in source:
        return _run(mod.k, (1, 1), (8, 8), np.zeros((8, 8), np.float32))
    return _run(mod.k, 1, 32, np.zeros(64, np.float32))


@pytest.mark.parametrize("case", sorted(REFUSED.keys() - COMPILE_TIME_ONLY))
def test_rule_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as exc:
        mod = load_kernel_module(tmp_path, source)  # the tile tracking may refuse it first
        _launch_rule_kernel(mod, source)
    assert fragment in str(exc.value)
    assert exc.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(COMPILE_TIME_ONLY))
def test_compile_time_rules_refused_on_the_simulator_too(tmp_path: Path, case: str) -> None:
    # Rules decided while Numba types the kernel (len(out) is no literal): the first
    # simulator compile asks the compile worker for the CUDA target's verdict.
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as exc:
        _launch_rule_kernel(load_kernel_module(tmp_path, source), source)
    assert fragment in str(exc.value)
    assert exc.value.lineno == line_of(tmp_path, "# BAD")


_ACCEPTED_RESULT = {
    "tile-fill-witness-read-ints": np.r_[np.full(32, 31), np.zeros(32)],
    "tile-2d-witness-and-pair": np.indices((8, 8))[1] * 8 + np.indices((8, 8))[0],
    "out-tile-local-indices": np.tile([1, 3], 32),
    "out-tile-attributes-and-len": np.full(64, 192),
    "out-tile-one-call-site-in-a-loop": np.tile([1, 2], 32),
    "out-tile-helper-gets-values": np.tile([2, 0], 32),
    "out-tile-2d-strided-and-shape": np.full((8, 8), 8),
    "out-tile-largest": np.r_[1, np.zeros(63)],  # thread 0 owns [0, 65536); the rest: none
    "out-tile-2d-largest": np.eye(1, 64).reshape(8, 8),  # thread (0, 0) owns [0:256, 0:256]
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_accepted_on_the_simulator(tmp_path: Path, case: str) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    (out,) = _launch_rule_kernel(mod, ACCEPTED[case])
    np.testing.assert_array_equal(out, _ACCEPTED_RESULT[case])


def test_two_tiles_on_one_line_refused(tmp_path: Path) -> None:
    # The simulator keys tiles by source line; the decorator already refuses tiles not
    # bound to a plain name where they are made, so two on one line never reach it.
    with pytest.raises(ss.SafetyError, match="bind a shared tile or accumulator to a plain name"):
        load_kernel_module(
            tmp_path,
            """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
        def two(out: DisjointSlice[np.float32]) -> None:
            a, b = ss.shared.tile(32, np.float32), ss.shared.tile(32, np.float32)
            w = thread.local_index()
            a[w] = np.float32(1.0)
            b[w] = np.float32(2.0)
            out[thread.index_1d()] = a[w] + b[w]
        """,
        )


def test_tier1_sgemm_schedule_matches_numpy() -> None:
    m, n, kdim = 100, 40, 11  # one partial block tile, a partial k step
    a = _f32((m, kdim), 8)
    b = _f32((kdim, n), 9)
    out = np.full((m, n), np.nan, np.float32)
    grid = (ss.cover(n, k.GM), ss.cover(m, k.GM))
    k.sgemm_tier1[grid, (k.GB, k.GB)](out, a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
