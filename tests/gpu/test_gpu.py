"""Real launches on a CUDA device (skipped without one)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss

from .gpu_kernels import fill_checked, scale, shared_copy

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _poisoned(n: int, dtype: type = np.float32) -> object:
    return cuda.to_device(np.full(n, -7, dtype=dtype))


def test_prepared_launch_matches_numpy() -> None:
    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    out = _poisoned(1000)
    scale.prepare(grid=ss.cover(1000, 128), block=128)(out, cuda.to_device(a), np.float32(3))
    np.testing.assert_array_equal(out.copy_to_host(), a * np.float32(3))


def test_reqntid_makes_the_driver_refuse_another_block() -> None:
    a = cuda.to_device(np.ones(256, np.float32))
    out = _poisoned(256)
    with ss.unsafe("SAFETY: testing that the driver itself refuses a block other than .reqntid"):
        with pytest.raises(Exception) as info:
            scale.unchecked[4, 64](out, a, np.float32(2))
            cuda.synchronize()
    assert "INVALID_VALUE" in str(info.value) or "invalid" in str(info.value).lower()
    assert (out.copy_to_host() == -7).all()
    with ss.unsafe("SAFETY: the contract's block (128) with a grid covering the arrays"):
        scale.unchecked[2, 128](out, a, np.float32(2))
    assert (out.copy_to_host() == 2).all()


def test_prepare_refuses_the_wrong_block_before_the_driver() -> None:
    with pytest.raises(ss.BlockShapeMismatch, match=r"requires block \(128, 1, 1\)"):
        scale.prepare(grid=4, block=64)


def test_device_limits_are_checked_before_launch() -> None:
    with pytest.raises(ss.DeviceLimitExceeded, match="block x = 1025 exceeds"):
        fill_checked.prepare(grid=1, block=1025)
    with pytest.raises(ss.DeviceLimitExceeded, match="grid y = 65536"):
        fill_checked.prepare(grid=(1, 65536), block=32)


def test_checked_witness_writes_nothing_in_a_2d_launch() -> None:
    out = _poisoned(64, np.int32)
    fill_checked.prepare(grid=(2, 2), block=(16, 1))(out, np.int32(5))
    assert (out.copy_to_host() == -7).all()
    fill_checked.prepare(grid=2, block=32)(out, np.int32(5))
    assert (out.copy_to_host() == 5).all()


def test_aliasing_views_of_one_buffer_are_refused() -> None:
    buf = cuda.to_device(np.zeros(2000, np.float32))
    before = buf.copy_to_host()
    launch = scale.prepare(grid=8, block=128)
    with pytest.raises(ss.AliasingError, match="'out' overlaps"):
        launch(buf[500:1500], buf[0:1000], np.float32(1))
    np.testing.assert_array_equal(buf.copy_to_host(), before)
    launch(buf[1000:2000], buf[0:1000], np.float32(1))  # disjoint halves: fine


def test_non_contiguous_input_compiles_an_A_layout_specialization() -> None:
    a = np.arange(2000, dtype=np.float32)
    d = cuda.to_device(a)
    out = _poisoned(1000)
    scale.prepare(grid=8, block=128)(out, d[::2], np.float32(1))
    np.testing.assert_array_equal(out.copy_to_host(), a[::2])


def test_cupy_and_torch_arrays_go_through_the_cuda_array_interface() -> None:
    cp = pytest.importorskip("cupy")
    a = cp.arange(512, dtype=cp.float32)
    out = cp.full(512, -7, dtype=cp.float32)
    scale.prepare(grid=4, block=128)(out, a, np.float32(2))
    np.testing.assert_array_equal(cp.asnumpy(out), np.arange(512, dtype=np.float32) * 2)
    with pytest.raises(ss.ArgumentTypeError, match="float64"):
        scale.prepare(grid=4, block=128)(out, cp.arange(512, dtype=cp.float64), np.float32(2))


def test_dynamic_shared_memory_above_48k_opts_in() -> None:
    n = 1024
    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = _poisoned(n)
    launch = shared_copy.prepare(grid=1, block=1024, shared_mem=100 * 1024)
    launch(out, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host(), a)
    with pytest.raises(ss.SharedMemoryError, match="opt-in limit"):
        shared_copy.prepare(grid=1, block=1024, shared_mem=240 * 1024)


def test_repeated_launches_with_new_arguments_are_checked_again() -> None:
    launch = scale.prepare(grid=8, block=128)
    a = cuda.to_device(np.ones(1000, np.float32))
    out = _poisoned(1000)
    for _ in range(3):  # the same objects again: the memoized fast path
        launch(out, a, np.float32(2))
    assert (out.copy_to_host() == 2).all()
    short = cuda.to_device(np.ones(999, np.float32))
    with pytest.raises(ss.RequiresViolation, match="a.size == out.size"):
        launch(out, short, np.float32(3))
    with pytest.raises(ss.AliasingError):
        launch(out, out, np.float32(3))
    with pytest.raises(ss.ArgumentTypeError, match="argument 'k'"):
        launch(out, a, "3")
    with pytest.raises(ss.ArgumentTypeError, match="takes 3 arguments"):
        launch(out, a)
    assert (out.copy_to_host() == 2).all()
    launch(out, a, np.float32(4))  # a changed scalar: checked path again
    assert (out.copy_to_host() == 4).all()


def test_cluster_launch_runs_and_grid_must_divide() -> None:
    from .gpu_kernels import clustered_fill

    out = _poisoned(256, np.int32)
    clustered_fill.prepare(grid=4, block=64)(out)
    assert (out.copy_to_host() == 3).all()
    with pytest.raises(
        ss.ClusterError, match="grid x = 5 is not a multiple of the cluster's x = 2"
    ):
        clustered_fill.prepare(grid=5, block=64)


def test_cooperative_launch_checks_residency_and_runs() -> None:
    from .gpu_kernels import coop_reverse, coop_undeclared

    n = 128 * 8
    a = np.arange(n, dtype=np.float32)
    out, tmp = _poisoned(n), _poisoned(n)
    coop_reverse.prepare(grid=8, block=128)(out, tmp, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host(), (a * 2)[::-1])
    with pytest.raises(ss.CooperativeLaunchError, match="must be co-resident"):
        coop_reverse.prepare(grid=1_000_000, block=128)
    with pytest.raises(ss.CooperativeLaunchError, match="declare cooperative=True"):
        coop_undeclared.prepare(grid=2, block=128)


def test_3d_witnesses_own_one_element_each() -> None:
    from .gpu_kernels import coords3d, copy3d_free

    shape = (9, 13, 70)  # z, y, x
    out = cuda.to_device(np.full(shape, -7, np.int32))
    grid = (ss.cover(70, 8), ss.cover(13, 4), ss.cover(9, 4))
    coords3d.prepare(grid=grid, block=(8, 4, 4))(out)
    z, y, x = np.indices(shape)
    np.testing.assert_array_equal(out.copy_to_host(), z * 10000 + y * 100 + x)
    with pytest.raises(ss.CoverageError, match="along axis 0"):
        coords3d.prepare(grid=(grid[0], grid[1], 2), block=(8, 4, 4))(out)
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    dst = cuda.to_device(np.full(shape, -7, np.float32))
    for g, b in (((1, 13, 9), (128, 1, 1)), ((3, 1, 5), (32, 16, 2)), (grid, (8, 4, 4))):
        dst.copy_to_device(np.full(shape, -7, np.float32))
        copy3d_free.prepare(grid=g, block=b)(dst, cuda.to_device(a))
        np.testing.assert_array_equal(dst.copy_to_host(), a)


def test_requires_over_launch_dimensions() -> None:
    from .gpu_kernels import twice_covering

    with pytest.raises(ss.RequiresViolation, match=r"block.x >= 64 is 32 >= 64"):
        twice_covering.prepare(grid=16, block=32)
    launch = twice_covering.prepare(grid=4, block=128)
    a = cuda.to_device(np.arange(513, dtype=np.float32))
    out = _poisoned(513)
    with pytest.raises(ss.RequiresViolation, match=r"512 >= 513"):
        launch(out, a)
    assert (out.copy_to_host() == -7).all()
    head, a_head = out[:512], a[:512]
    for _ in range(3):  # checked, then remembered: the same objects again
        launch(head, a_head)
    expected = np.arange(512, dtype=np.float32) * 2
    np.testing.assert_array_equal(out.copy_to_host()[:512], expected)
    assert out.copy_to_host()[512] == -7


def test_pytorch_tensors_go_through_the_cuda_array_interface() -> None:
    torch = pytest.importorskip("torch")
    a = torch.arange(512, dtype=torch.float32, device="cuda")
    out = torch.full((512,), -7.0, dtype=torch.float32, device="cuda")
    launch = scale.prepare(grid=4, block=128)
    launch(out, a, np.float32(3))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(512, dtype=np.float32) * 3)
    with pytest.raises(ss.AliasingError):
        launch(out, out, np.float32(3))
    with pytest.raises(ss.ArgumentTypeError, match="must be C-contiguous"):
        launch(torch.zeros(1024, device="cuda")[::2], a, np.float32(3))
