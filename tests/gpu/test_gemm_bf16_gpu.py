"""examples/gemm_bf16.py on the GPU: the Tier-1 tensor-core GEMM and its raw twin against
numpy (float64 over the bf16 values), at sizes with edges in every direction."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, types

import simtsafe

pytestmark = pytest.mark.skipif(
    simtsafe.SIMULATOR or not cuda.is_available(), reason="needs a CUDA GPU"
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))


@pytest.mark.parametrize(
    ("m", "k", "n"), [(128, 32, 128), (128, 128, 256), (1000, 700, 900), (257, 33, 131)]
)
def test_tier1_and_raw_match_numpy(m: int, k: int, n: int) -> None:
    import gemm_bf16 as g

    a, b = g.inputs(m, k, n, seed=m + k + n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    d_a, d_b = g.to_device_bf16(a), g.to_device_bf16(b)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    g.gemm_bf16.prepare(grid=g.grid_for(m, n), block=g.BLOCK)(d_c, d_a, d_b)
    np.testing.assert_allclose(d_c.copy_to_host(), want, rtol=1e-4, atol=1e-3)
    r_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    raw_a = cuda.to_device(a.view(np.uint16))
    raw_b = cuda.to_device(b.view(np.uint16))
    u16 = types.uint16[:, ::1]
    g.raw_launcher(m, n, (types.float32[:, ::1], u16, u16))(r_c, raw_a, raw_b)
    np.testing.assert_allclose(r_c.copy_to_host(), want, rtol=1e-4, atol=1e-3)


def test_fragment_layouts_on_the_device(tmp_path: Path) -> None:
    # The simulator's twin and the device agree exactly where no sum rounds: a one-hot A.
    import gemm_bf16 as g
    import ml_dtypes

    from tests.kernels import load_kernel_module
    from tests.kernels.mma_rules import ACCEPTED

    mod = load_kernel_module(tmp_path, ACCEPTED)
    a = np.zeros((32, 16), ml_dtypes.bfloat16)
    perm = np.random.default_rng(2).permutation(16)
    for i in range(32):
        a[i, perm[i % 16]] = 1
    b = (np.arange(16 * 16).reshape(16, 16) % 251).astype(ml_dtypes.bfloat16)
    out = cuda.to_device(np.full((32, 16), -1, np.float32))
    mod.k.prepare(grid=(1, 1), block=64)(out, g.to_device_bf16(a), g.to_device_bf16(b))
    np.testing.assert_array_equal(out.copy_to_host(), a.astype(np.float32) @ b.astype(np.float32))
