"""simtsafe.vec.load on a real device (skipped without one): both paths, every element type.

Aligned whole runs take the vector load; the partial run at the end takes
the guarded element path; runs past the end and before the start read 0.
(A misaligned input is refused at launch, tests/sim/test_vec_sim.py, unless the contract
declares ``vec_alignment="any"``: then its runs take the element path, checked here.) Runs of 1- and 2-byte elements
are read as 32-bit words and unpacked on the device: their values are checked
here, against numpy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.vec_cases import (
    LOAD_RUNS_SOURCE,
    RUNS_SOURCE,
    gemv_reference,
    gemv_source,
    runs_reference,
)
from tests.sim.test_vec_sim import run_load_runs

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

CASES = [
    ("float32", 4),
    ("float32", 2),
    ("float64", 2),
    ("float16", 8),
    ("float16", 4),
    ("float16", 2),
    ("int8", 8),
    ("uint8", 4),
    ("int16", 4),
    ("int32", 4),
    ("uint64", 2),
]


@pytest.mark.parametrize(("dt", "n"), CASES)
@pytest.mark.parametrize("shift", [0, 3, -2])
def test_runs_on_device(tmp_path: Path, dt: str, n: int, shift: int) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt=dt, n=n))
    a = (np.arange(40 * n + 7) % 101 + 1).astype(dt)  # a partial tail: the element path
    d_a = cuda.to_device(a)
    nthreads = 48
    out = cuda.to_device(np.zeros((nthreads, n), dt))
    mod.runs.prepare(grid=1, block=(n, nthreads))(out, d_a, np.int64(shift))
    np.testing.assert_array_equal(out.copy_to_host(), runs_reference(a, n, nthreads, shift))


@pytest.mark.parametrize(("dt", "n"), [("float32", 4), ("float16", 8), ("float64", 2)])
@pytest.mark.parametrize("k", [4096, 1000])
def test_gemv_on_device(tmp_path: Path, dt: str, n: int, k: int) -> None:
    mod = load_kernel_module(tmp_path, gemv_source(dt, n))
    rng = np.random.default_rng(1)
    rows = 300
    w = rng.standard_normal((rows, k)).astype(dt)
    x = rng.standard_normal(k).astype(dt)
    y = cuda.to_device(np.zeros(rows, np.dtype(dt)))
    mod.gemv.prepare(grid=(rows * 32 + 255) // 256, block=256)(
        y, cuda.to_device(w), cuda.to_device(x)
    )
    tol = 2e-2 if dt == "float16" else 1e-3
    np.testing.assert_allclose(
        y.copy_to_host().astype(np.float32), gemv_reference(w, x), rtol=tol, atol=tol * 10
    )


@pytest.mark.parametrize(("dt", "n"), [("float32", 4), ("float16", 8), ("int16", 8)])
@pytest.mark.parametrize(("k", "offset"), [(130, 0), (1000, 1), (37, 3)])
def test_gemv_with_misaligned_inputs_on_device(
    tmp_path: Path, dt: str, n: int, k: int, offset: int
) -> None:
    """vec_alignment="any": a ragged row pitch and a pointer ``offset`` elements in run on
    the element path (a vector load there would trap), with numpy's values."""
    source = gemv_source(dt, n).replace(
        "@ss.kernel\n", '@ss.kernel(contract=ss.LaunchContract(vec_alignment="any"))\n'
    )
    mod = load_kernel_module(tmp_path, source)
    rng = np.random.default_rng(2)
    rows = 70
    w = rng.integers(-3, 4, (rows, k)).astype(dt)
    x = rng.integers(-3, 4, k + offset).astype(dt)
    y = cuda.to_device(np.zeros(rows, np.dtype(dt)))
    mod.gemv.prepare(grid=(rows * 32 + 255) // 256, block=256)(
        y, cuda.to_device(w), cuda.to_device(x)[offset:]
    )
    got = y.copy_to_host().astype(np.float32)
    np.testing.assert_array_equal(got, gemv_reference(w, x[offset:]))  # small ints: exact


@pytest.mark.parametrize(
    ("dt", "n"), [("float32", 4), ("float64", 2), ("int16", 8), ("float16", 4), ("bfloat16", 8)]
)
@pytest.mark.parametrize("offset", [0, 1])
def test_vec_store_copies_runs_and_stops_at_the_end(
    tmp_path: Path, dt: str, n: int, offset: int
) -> None:
    # offset 1: the output view starts one element in, so every tile is misaligned and
    # takes the element path; offset 0: whole tiles take the vector store.
    import ml_dtypes

    from tests.kernels.vec_store_rules import copy_source

    dtype = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt)
    size = 1_003
    mod = load_kernel_module(
        tmp_path, copy_source(f"ss.{dt}" if dt == "bfloat16" else f"np.{dt}", n)
    )
    a = (np.arange(size) % 251).astype(dtype)
    big = np.full(size + 32, 7, dtype)
    bits = big.view(np.uint16) if dt == "bfloat16" else big
    d_big = cuda.to_device(bits)
    if dt == "bfloat16":
        d_big = d_big.view(dtype)
        d_a = cuda.to_device(a.view(np.uint16)).view(dtype)
    else:
        d_a = cuda.to_device(a)
    view = d_big[offset : offset + size]
    mod.k.prepare(grid=-(-size // (n * 128)), block=128)(view, d_a)
    got = d_big.copy_to_host()
    got = got.view(dtype) if dt == "bfloat16" else got
    np.testing.assert_array_equal(got[offset : offset + size], a)
    np.testing.assert_array_equal(got[:offset], big[:offset])
    np.testing.assert_array_equal(got[offset + size :], big[offset + size :])


@pytest.mark.parametrize(("n", "cols"), [(4, 24), (4, 20), (2, 14)])
@pytest.mark.parametrize(("shift", "step"), [(0, 1), (-1, 2), (2, -1)])
def test_load_runs_on_device(tmp_path: Path, n: int, cols: int, shift: int, step: int) -> None:
    got, want = run_load_runs(
        load_kernel_module(tmp_path, LOAD_RUNS_SOURCE.format(n=n)), n, cols, shift, step
    )
    np.testing.assert_array_equal(got, want)
