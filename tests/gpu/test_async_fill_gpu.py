"""``shared.fill_async`` / ``fill_transposed`` on a real GPU (cp.async needs sm_80+): the
simulator's values (tests/sim/test_async_fill_sim.py), zeros past the input's edges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.async_fill_rules import DOUBLE_BUFFER, ONE_STAGE, STEPPED, TRANSPOSED

# The simulator's dynamic-tile cases, collected here too: run on the device (this module's
# marks), against the same expected values.
from tests.sim.test_async_fill_sim import (  # noqa: F401
    _records,
    _run2,
    _window,
    test_a_pair_of_fills_copies_both_tiles,
    test_a_tile_of_records_holds_numpys_records,
    test_dynamic_tile_copies_its_launch_length,
    test_dynamic_tile_from_a_huge_unsigned_start_is_zero,
    test_dynamic_tile_of_small_or_large_elements,
)

# Attack round 13: views from an element offset, origins around their start.
from tests.sim.test_attacks13_sim import (  # noqa: F401
    test_a_view_from_an_element_offset_fills_its_first_elements,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (1, 3), (5, 9), (-2, -1), (0, 8)])
def test_one_stage_copies_the_window_and_zeros_outside(tmp_path: Path, r0: int, c0: int) -> None:
    got = _run2(load_kernel_module(tmp_path, ONE_STAGE), 64, r0, c0)
    np.testing.assert_array_equal(got, _window(r0, c0, 4, 16).ravel())


# Rows of 24 float32 (96 bytes, a multiple of 16): every run one cp.async, zero-filled where
# its row or first column lies outside (one row or column past the edge, a negative origin,
# a tile wholly outside: at or past an end, wholly before a start, an origin past 2**62); a
# misaligned column takes the per-run path, the copies predicated off. Same values all.
WIDE = np.arange(1, 7 * 24 + 1, dtype=np.float32).reshape(7, 24)


@pytest.mark.parametrize(
    ("r0", "c0"),
    [(0, 0), (3, 8), (0, 4), (4, 8), (3, 12), (-1, 0), (0, -4), (2, 2), (-3, -15)]
    + [(7, 0), (0, 24), (-4, 3), (2, -16), (50, -50), (2**62, 0), (0, -(2**62)), (6, 23)],
)
def test_whole_tile_and_per_run_paths_copy_the_same(tmp_path: Path, r0: int, c0: int) -> None:
    out = cuda.to_device(np.full(64, -1, np.float32))
    load_kernel_module(tmp_path, ONE_STAGE).k.prepare(grid=1, block=64)(
        out, cuda.to_device(WIDE), np.int64(r0), np.int64(c0)
    )
    want = np.zeros((4, 16), np.float32)
    for i in range(4):
        for j in range(16):
            if 0 <= r0 + i < WIDE.shape[0] and 0 <= c0 + j < WIDE.shape[1]:
                want[i, j] = WIDE[r0 + i, c0 + j]
    np.testing.assert_array_equal(out.copy_to_host(), want.ravel())


@pytest.mark.parametrize("rows", sorted(STEPPED))
@pytest.mark.parametrize(
    ("r0", "c0"),
    [(0, 0), (8, 12), (100, 4), (1, 2), (160, 4), (0, 80), (-1, 0), (-9, 4), (-200, 0), (-3, -4)],
)
def test_stepped_runs_copy_every_row(tmp_path: Path, rows: int, r0: int, c0: int) -> None:
    # 4 or 8 runs a thread at a constant distance, each one copy zero-filled where its row or
    # column lies outside: wholly inside ((0, 0), (8, 12)); past the input's last row (100,
    # 4); rows before the first (-1, 0), (-9, 4): a thread's first run outside, its later
    # ones inside (attack round 12); wholly outside (160, 4), (0, 80), (-200, 0); and the
    # per-run path of a misaligned source (1, 2).
    a = np.random.default_rng(rows).integers(-50, 50, (160, 80)).astype(np.float32)
    out = cuda.to_device(np.full(256, np.nan, np.float32))
    load_kernel_module(tmp_path, STEPPED[rows]).k.prepare(grid=1, block=256)(
        out, cuda.to_device(a), np.int64(r0), np.int64(c0)
    )
    tile = np.zeros((rows, 64), np.float32)
    for i in range(rows):
        for j in range(64):
            if 0 <= r0 + i < a.shape[0] and 0 <= c0 + j < a.shape[1]:
                tile[i, j] = a[r0 + i, c0 + j]
    want = [tile[t // 64 :: 4, t % 64].sum() for t in range(256)]
    np.testing.assert_array_equal(out.copy_to_host(), np.array(want, np.float32))


def test_double_buffer_sums_every_stage(tmp_path: Path) -> None:
    n = 10
    a = np.random.default_rng(7).integers(0, 50, 64 * n).astype(np.float32)
    out = cuda.to_device(np.zeros(64, np.float32))
    load_kernel_module(tmp_path, DOUBLE_BUFFER).k.prepare(grid=1, block=64)(
        out, cuda.to_device(a), np.int64(n)
    )
    t = np.arange(64)
    want = sum(a[64 * s + (t + s) % 64] for s in range(n))
    np.testing.assert_array_equal(out.copy_to_host(), want)


@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (2, 13), (-3, 5), (0, 4)])
def test_transposed_fill(tmp_path: Path, r0: int, c0: int) -> None:
    got = _run2(load_kernel_module(tmp_path, TRANSPOSED), 128, r0, c0)
    np.testing.assert_array_equal(got, _window(r0, c0, 16, 8).T.ravel())
