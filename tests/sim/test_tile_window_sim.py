"""Shared tiles in a ``tile_shared`` window on the simulator: the kernel's results, the
launch's dynamic shared memory (the window), the refusal of a window too small, and
``mma.load_b2`` against numpy."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.tile_window import BIG, BIG_N, TOO_SMALL, WINDOW, WINDOW_BYTES

pytestmark = pytest.mark.sim


def _gemm(mod: object, m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m * k * n)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    out = cuda.to_device(np.full((m, n), np.nan, np.float32))
    launch = mod.k.prepare(grid=((n + 15) // 16, (m + 31) // 32), block=64)  # type: ignore[attr-defined]
    launch(out, cuda.to_device(a), cuda.to_device(b))
    return out.copy_to_host(), a.astype(np.float64) @ b.astype(np.float64)


def test_window_tiles_and_load_b2_match_numpy(tmp_path: Path) -> None:
    # Odd shapes: edges in every direction (M, N, K not multiples of the tiles or K step).
    got, want = _gemm(load_kernel_module(tmp_path, WINDOW), 37, 45, 23)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_the_launch_carries_the_window(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, WINDOW)
    launch = mod.k.prepare(grid=(1, 1), block=64)
    assert launch.shared_mem == 0  # the caller asked for none
    assert launch._plan.shared_mem == WINDOW_BYTES  # every launch gets the tiles' window


def test_a_window_too_small_for_the_tiles_is_refused(tmp_path: Path) -> None:
    err = assert_refused(tmp_path, TOO_SMALL, "as tile_shared", lambda m: _gemm(m, 32, 16, 16))
    msg = str(err)
    assert f"{WINDOW_BYTES - 16} B its contract declares" in msg, msg
    assert "Raise tile_shared" in msg, msg


def test_tiles_over_48_kib_run(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, BIG)
    a = np.arange(BIG_N, dtype=np.float32)
    out = cuda.to_device(np.zeros(256, np.float32))
    mod.big.prepare(grid=1, block=256)(out, cuda.to_device(a))
    j = np.arange(256)
    np.testing.assert_array_equal(out.copy_to_host(), a[255 - j] + 2 * a[j])


def test_the_window_is_checked_against_the_simulated_device(tmp_path: Path) -> None:
    # The simulator stands in for an sm_90 device: 227 KiB of opt-in shared memory per block,
    # the most tile_shared may declare (the contract refuses more).
    from simtsafe.host._limits import SIMULATOR_LIMITS

    assert SIMULATOR_LIMITS.max_shared_optin == 227 * 1024
    assert ss.LaunchContract(tile_shared=227 * 1024).tile_shared == 227 * 1024


#: A window of exactly one tile's bytes (128 int32: 512 B). The kernel is loaded twice, from
#: two module files: the two kernels' code objects compare equal (code equality ignores the
#: file), yet each kernel's window holds its own tile only.
_ONE_TILE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, tile_shared=512))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    t = ss.shared.tile(128, np.float32)
    t[thread.local_index()] = a[cuda.threadIdx.x]
    ss.block.sync()
    out[i] = t[127 - cuda.threadIdx.x]
"""


def test_two_modules_with_one_kernel_body_have_a_window_each(tmp_path: Path) -> None:
    a = np.arange(128, dtype=np.float32)
    kernels = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        kernels.append(load_kernel_module(tmp_path / name, _ONE_TILE).k)
    first, second = kernels
    assert first.py_func.__code__ == second.py_func.__code__  # what used to share one window
    for kernel in (first, second, first):
        out = cuda.to_device(np.zeros(128, np.float32))
        kernel.prepare(grid=1, block=128)(out, cuda.to_device(a))
        np.testing.assert_array_equal(out.copy_to_host(), a[::-1])
    for kernel in (second, first):
        report = ss.sim.check(kernel, 1, 128, np.zeros(128, np.float32), a)
        assert report.ok, report
