"""bf16 and fp16 element types on the simulator: reads widen, stores round to nearest even."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.bf16_kernels import SOURCE, bf16_of, rounding_cases

BF16 = ml_dtypes.bfloat16


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("bf16"), SOURCE)


def test_stores_round_to_nearest_even_like_ml_dtypes(mod):  # type: ignore[no-untyped-def]
    a = rounding_cases()
    out = cuda.to_device(np.zeros(a.size, BF16))
    mod.narrow.prepare(grid=ss.cover(a.size, 32), block=32)(out, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), bf16_of(a))


def test_reads_give_exact_float32(mod):  # type: ignore[no-untyped-def]
    x = bf16_of(rounding_cases()).view(BF16)
    out = cuda.to_device(np.zeros(x.size, np.float32))
    mod.widen.prepare(grid=ss.cover(x.size, 32), block=32)(out, cuda.to_device(x))
    got = out.copy_to_host()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), x.view(np.uint16).astype(np.uint32) << 16)


def test_axpy_accumulates_in_float32_then_rounds(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(70).astype(BF16)
    y = rng.standard_normal(70).astype(BF16)
    alpha = np.float32(1.37)
    out = cuda.to_device(np.zeros(70, BF16))
    launch = mod.axpy.prepare(grid=ss.cover(70, 32), block=32)
    launch(out, cuda.to_device(x), cuda.to_device(y), alpha)
    want = bf16_of(alpha * x.astype(np.float32) + y.astype(np.float32))
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), want)


def test_read_back_through_output_witness(mod):  # type: ignore[no-untyped-def]
    x = np.arange(40, dtype=np.float32).astype(BF16)
    out = cuda.to_device(x.copy())
    mod.bump.prepare(grid=2, block=32)(out)
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(40) + 1).astype(BF16))


def test_float16_reads_widen_with_np_float32(mod):  # type: ignore[no-untyped-def]
    x = np.linspace(-3, 3, 50).astype(np.float16)
    out = cuda.to_device(np.zeros(50, np.float16))
    mod.half.prepare(grid=2, block=32)(out, cuda.to_device(x))
    np.testing.assert_array_equal(
        out.copy_to_host(), (x.astype(np.float32) * 0.5).astype(np.float16)
    )


@pytest.mark.parametrize("dtype", [np.float16, np.uint16, np.int16, np.float32])
def test_bf16_input_refuses_other_dtypes_even_after_a_memoized_launch(mod, dtype):  # type: ignore[no-untyped-def]
    out = cuda.to_device(np.zeros(8, np.float32))
    launch = mod.widen.prepare(grid=1, block=32)
    good = cuda.to_device(np.ones(8, BF16))
    launch(out, good)
    launch(out, good)  # the memoized fast path
    bad = cuda.to_device(np.ones(8, dtype))
    with pytest.raises(ss.ArgumentTypeError) as e:
        launch(out, bad)
    name = np.dtype(dtype).name
    assert str(e.value) == (
        f"kernel 'widen': argument 'x' is declared In (1D bfloat16), got a 1D {name} "
        "array of shape (8,). Pass a 1D bfloat16 device array (convert with .astype / reshape "
        "before copying to the device)"
    )


def test_float16_output_refuses_a_bf16_array(mod):  # type: ignore[no-untyped-def]
    launch = mod.half.prepare(grid=1, block=32)
    x = cuda.to_device(np.ones(8, np.float16))
    launch(cuda.to_device(np.zeros(8, np.float16)), x)
    with pytest.raises(ss.ArgumentTypeError) as e:
        launch(cuda.to_device(np.zeros(8, BF16)), x)
    assert "argument 'out' is declared DisjointSlice (1D float16), got a 1D bfloat16" in str(
        e.value
    )


def test_fp32_accumulation_of_bf16_and_fp16_data(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    n = 128
    x = rng.standard_normal(n).astype(BF16)
    h = rng.standard_normal(n).astype(np.float16)
    out = cuda.to_device(np.zeros(n, np.float32))
    mod.block_total.prepare(grid=2, block=64)(out, cuda.to_device(x), cuda.to_device(h))
    v = x.astype(np.float32) + h.astype(np.float32)
    got = out.copy_to_host()
    for b in range(2):
        block = v[b * 64 : (b + 1) * 64]
        for t in range(64):
            warp = block[(t // 32) * 32 : (t // 32 + 1) * 32]
            np.testing.assert_allclose(got[b * 64 + t], block.sum() + warp.sum(), rtol=1e-5)


def test_rows_of_a_2d_bf16_input_summed_in_float32(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(6)
    x = rng.standard_normal((40, 9)).astype(BF16)
    out = cuda.to_device(np.zeros(40, BF16))
    mod.rowsum.prepare(grid=2, block=32)(out, cuda.to_device(x))
    acc = np.zeros(40, np.float32)
    for j in range(9):
        acc += x[:, j].astype(np.float32)
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), bf16_of(acc))


def test_sim_check_replays_a_bf16_kernel(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(8)
    x = rng.standard_normal(64).astype(BF16)
    y = rng.standard_normal(64).astype(BF16)
    out = np.zeros(64, BF16)
    report = ss.sim.check(mod.axpy, 2, 32, out, x, y, np.float32(3))
    assert report.ok and report.complete
    assert report.stats["accesses"] >= 3 * 64
    want = bf16_of(np.float32(3) * x.astype(np.float32) + y.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(report.outputs["out"]).view(np.uint16), want)


def test_2d_witness_reads_in_a_helper_and_of_the_own_output_element(mod):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(9)
    x = rng.standard_normal((10, 13)).astype(BF16)
    o = rng.standard_normal((10, 13)).astype(BF16)
    out = cuda.to_device(o.copy())
    mod.scale2d.prepare(grid=(2, 3), block=(8, 4, 1))(out, cuda.to_device(x))
    want = bf16_of(x.astype(np.float32) * np.float32(0.5) + o.astype(np.float32))
    np.testing.assert_array_equal(out.copy_to_host().view(np.uint16), want)
