"""``shared.fill_async`` / ``fill_transposed`` on a real GPU (cp.async needs sm_80+): the
simulator's values (tests/sim/test_async_fill_sim.py), zeros past the input's edges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.async_fill_rules import DOUBLE_BUFFER, DYNAMIC, ONE_STAGE, TRANSPOSED
from tests.sim.test_async_fill_sim import _run2, _window, dynamic_source, run_dynamic

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (1, 3), (5, 9), (-2, -1), (0, 8)])
def test_one_stage_copies_the_window_and_zeros_outside(tmp_path: Path, r0: int, c0: int) -> None:
    got = _run2(load_kernel_module(tmp_path, ONE_STAGE), 64, r0, c0)
    np.testing.assert_array_equal(got, _window(r0, c0, 4, 16).ravel())


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


@pytest.mark.parametrize(("length", "start"), [(37, 0), (37, 3), (64, 8), (10, 140), (130, 1)])
def test_dynamic_tile_copies_its_launch_length(tmp_path: Path, length: int, start: int) -> None:
    got, want = run_dynamic(load_kernel_module(tmp_path, DYNAMIC), length, np.int64(start))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("dtype", "shared_mem", "start"),
    [("int8", 5, 0), ("int8", 37, 3), ("float16", 7, 1), ("float16", 10, 140), ("float64", 12, 2)],
)
def test_dynamic_tile_of_small_or_large_elements(
    tmp_path: Path, dtype: str, shared_mem: int, start: int
) -> None:
    mod = load_kernel_module(tmp_path, dynamic_source(dtype))
    got, want = run_dynamic(mod, 0, np.int64(start), getattr(np, dtype), shared_mem)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("start", [2**64 - 4, 2**63, 2**62])
def test_dynamic_tile_from_a_huge_unsigned_start_is_zero(tmp_path: Path, start: int) -> None:
    mod = load_kernel_module(tmp_path, dynamic_source("float32", "np.uint64"))
    got, want = run_dynamic(mod, 16, np.uint64(start))
    np.testing.assert_array_equal(got, want)
