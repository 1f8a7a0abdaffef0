"""bf16/fp16 kernels on a real GPU: bit-exact against ml_dtypes' round-to-nearest-even.

Numba device arrays of ml_dtypes.bfloat16, PyTorch bfloat16 tensors (read
natively: PyTorch's __cuda_array_interface__ calls them float16) and, where
CuPy has bfloat16 (14+), CuPy arrays.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.bf16_kernels import SOURCE, bf16_of, rounding_cases

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

BF16 = ml_dtypes.bfloat16


def to_device_bf16(x):  # type: ignore[no-untyped-def]
    """A Numba device array of bf16: numba-cuda copies through the buffer protocol, which
    refuses ml_dtypes' dtype ('cannot include dtype 'E' in a buffer'), so the bits travel
    as uint16 and the device array is viewed as bf16."""
    return cuda.to_device(np.asarray(x, BF16).view(np.uint16)).view(BF16)


def bits_of(d):  # type: ignore[no-untyped-def]
    """The uint16 bits of a bf16 device array, copied to the host."""
    return d.view(np.uint16).copy_to_host()


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("bf16"), SOURCE)


def test_numba_arrays_round_and_widen_bit_exact(mod):  # type: ignore[no-untyped-def]
    a = rounding_cases()
    out = to_device_bf16(np.zeros(a.size, BF16))
    mod.narrow.prepare(grid=ss.cover(a.size, 32), block=32)(out, cuda.to_device(a))
    np.testing.assert_array_equal(bits_of(out), bf16_of(a))
    x = bits_of(out).view(BF16)
    wide = cuda.to_device(np.zeros(a.size, np.float32))
    mod.widen.prepare(grid=ss.cover(a.size, 32), block=32)(wide, to_device_bf16(x))
    want = x.view(np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(wide.copy_to_host().view(np.uint32), want)


def test_numba_axpy_and_float16(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    n = 1000
    x, y = rng.standard_normal(n).astype(BF16), rng.standard_normal(n).astype(BF16)
    alpha = np.float32(0.731)
    out = to_device_bf16(np.zeros(n, BF16))
    launch = mod.axpy.prepare(grid=ss.cover(n, 32), block=32)
    launch(out, to_device_bf16(x), to_device_bf16(y), alpha)
    want = bf16_of(alpha * x.astype(np.float32) + y.astype(np.float32))
    np.testing.assert_array_equal(bits_of(out), want)
    h = np.linspace(-3, 3, n).astype(np.float16)
    hout = cuda.to_device(np.zeros(n, np.float16))
    mod.half.prepare(grid=ss.cover(n, 32), block=32)(hout, cuda.to_device(h))
    np.testing.assert_array_equal(
        hout.copy_to_host(), (h.astype(np.float32) * 0.5).astype(np.float16)
    )


def test_pytorch_bfloat16_tensors(mod):  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    n = 777
    xs = rng.standard_normal(n).astype(np.float32)
    ys = rng.standard_normal(n).astype(np.float32)
    x = torch.from_numpy(xs).to("cuda").bfloat16()
    y = torch.from_numpy(ys).to("cuda").bfloat16()
    out = torch.zeros(n, dtype=torch.bfloat16, device="cuda")
    alpha = np.float32(1.5)
    mod.axpy.prepare(grid=ss.cover(n, 32), block=32)(out, x, y, alpha)
    xb = xs.astype(BF16).astype(np.float32)
    yb = ys.astype(BF16).astype(np.float32)
    got = out.view(torch.int16).cpu().numpy().view(np.uint16)
    np.testing.assert_array_equal(got, bf16_of(alpha * xb + yb))
    half = torch.zeros(n, dtype=torch.float16, device="cuda")
    with pytest.raises(ss.ArgumentTypeError) as e:
        mod.axpy.prepare(grid=ss.cover(n, 32), block=32)(half, x, y, alpha)
    assert "argument 'out' is declared DisjointSlice (1D bfloat16), got a 1D float16" in str(
        e.value
    )
    with pytest.raises(ss.ArgumentTypeError) as e:
        mod.widen.prepare(grid=ss.cover(n, 32), block=32)(
            torch.zeros(n, dtype=torch.float32, device="cuda"), x.view(torch.int16)
        )
    assert "argument 'x' is declared In (1D bfloat16), got a 1D int16" in str(e.value)


def test_cupy_bfloat16_arrays(mod):  # type: ignore[no-untyped-def]
    cp = pytest.importorskip("cupy")
    try:
        x = cp.asarray(bf16_of(rounding_cases()).view(BF16))
    except Exception as exc:  # CuPy before 14 has no bfloat16
        pytest.skip(f"CuPy {cp.__version__} has no bfloat16: {exc}")
    out = cp.zeros(x.size, np.float32)
    mod.widen.prepare(grid=ss.cover(x.size, 32), block=32)(out, x)
    want = cp.asnumpy(x).view(np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(cp.asnumpy(out).view(np.uint32), want)
