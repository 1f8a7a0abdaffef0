"""Run-time behaviour on the simulator: tail guard, checked witnesses, leaders,
and every launch-time / prepare-time error (with outputs left untouched)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

POISON = np.float32(-7.0)

VECADD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1),
                                      requires=["a.size == out.size", "b.size == out.size"],
                                      covers="out"))
def vecadd(out: DisjointSlice[np.float32], a: In[np.float32], b: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] + b[i]

@ss.kernel
def free(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] * 2

@ss.kernel
def leaders(pw: DisjointSlice[np.float32, PerWarp], pw_count: DisjointSlice[np.int32, PerWarp],
            pb: DisjointSlice[np.float32, PerBlock]) -> None:
    w = thread.warp_leader()
    pw[w] = cuda.blockIdx.x * 1000 + cuda.threadIdx.x
    if w.in_bounds(pw_count):
        with ss.unsafe("SAFETY: counts writes, one atomic per warp leader"):
            cuda.atomic.add(pw_count.unchecked, w.index, 1)
    b = thread.block_leader()
    pb[b] = cuda.blockIdx.x * 1000 + cuda.threadIdx.x
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("launch"), VECADD)


def _poisoned(n):  # type: ignore[no-untyped-def]
    return cuda.to_device(np.full(n, POISON, np.float32))


def _ab(n):  # type: ignore[no-untyped-def]
    return (
        cuda.to_device(np.arange(n, dtype=np.float32)),
        cuda.to_device(np.arange(n, dtype=np.float32) * 10),
    )


# ------------------------------------------------------------------ 14: tail guard


def test_tail_guard_writes_nothing_past_the_view(mod):  # type: ignore[no-untyped-def]
    n, extra = 40, 24  # 64 threads, 40 elements
    big = _poisoned(n + extra)
    a, b = _ab(n)
    mod.vecadd.prepare(grid=2, block=32)(big[:n], a, b)
    host = big.copy_to_host()
    np.testing.assert_array_equal(host[:n], np.arange(n) * 11)
    np.testing.assert_array_equal(host[n:], np.full(extra, POISON))


# ------------------------------------------------------------------ 15: checked witnesses


def test_contractless_index_1d_invalid_on_2d_block(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    a, _ = _ab(32)
    mod.free.prepare(grid=1, block=(16, 2))(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, POISON))


def test_contractless_index_1d_invalid_on_2d_grid(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    a, _ = _ab(32)
    mod.free.prepare(grid=(1, 2), block=16)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, POISON))


def test_contractless_index_1d_valid_on_1d_launch(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    a, _ = _ab(32)
    mod.free.prepare(grid=2, block=16)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32) * 2)


# ------------------------------------------------------------------ 16: leaders


def test_warp_and_block_leaders_block_48(mod):  # type: ignore[no-untyped-def]
    blocks, warps_per_block = 3, 2  # 48 threads = one full warp + one 16-thread warp
    pw = cuda.to_device(np.full(blocks * warps_per_block, POISON, np.float32))
    count = cuda.to_device(np.zeros(blocks * warps_per_block, np.int32))
    pb = cuda.to_device(np.full(blocks, POISON, np.float32))
    mod.leaders.prepare(grid=blocks, block=48)(pw, count, pb)
    np.testing.assert_array_equal(count.copy_to_host(), np.ones(blocks * warps_per_block))
    expected = [blk * 1000 + lane0 for blk in range(blocks) for lane0 in (0, 32)]
    np.testing.assert_array_equal(pw.copy_to_host(), expected)
    np.testing.assert_array_equal(pb.copy_to_host(), [0, 1000, 2000])


# ------------------------------------------------------------------ 17: per-launch errors


def _bad_launch(mod, out, *args, cls, fragment, n=32):  # type: ignore[no-untyped-def]
    launch = mod.vecadd.prepare(grid=ss.cover(n, 32), block=32)
    before = out.copy_to_host()
    with pytest.raises(cls) as info:
        launch(out, *args)
    assert type(info.value) is cls
    assert fragment in str(info.value)
    assert "'vecadd'" in str(info.value)
    np.testing.assert_array_equal(out.copy_to_host(), before)
    return info.value


def test_wrong_dtype(mod):  # type: ignore[no-untyped-def]
    a, b = _ab(32)
    _bad_launch(
        mod,
        _poisoned(32),
        cuda.to_device(np.zeros(32)),
        b,
        cls=ss.ArgumentTypeError,
        fragment="argument 'a'",
    )


def test_wrong_ndim(mod):  # type: ignore[no-untyped-def]
    a, b = _ab(32)
    _bad_launch(
        mod,
        _poisoned(32),
        cuda.to_device(np.zeros((4, 8), np.float32)),
        b,
        cls=ss.ArgumentTypeError,
        fragment="2D float32",
    )


def test_host_array(mod):  # type: ignore[no-untyped-def]
    a, b = _ab(32)
    _bad_launch(
        mod,
        _poisoned(32),
        np.zeros(32, np.float32),
        b,
        cls=ss.ArgumentTypeError,
        fragment="host numpy array",
    )


def test_output_is_an_input(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    _, b = _ab(32)
    exc = _bad_launch(mod, out, out, b, cls=ss.AliasingError, fragment="overlaps the memory")
    assert exc.argument == "out" and exc.other == "a"


def test_output_overlaps_input_slice(mod):  # type: ignore[no-untyped-def]
    buf = _poisoned(48)
    _, b = _ab(32)
    _bad_launch(mod, buf[0:32], buf[16:48], b, cls=ss.AliasingError, fragment="overlaps")
    np.testing.assert_array_equal(buf.copy_to_host(), np.full(48, POISON))


def test_adjacent_slices_do_not_alias(mod):  # type: ignore[no-untyped-def]
    buf = cuda.to_device(np.concatenate([np.full(32, POISON), np.arange(32)]).astype(np.float32))
    _, b = _ab(32)
    mod.vecadd.prepare(grid=1, block=32)(buf[0:32], buf[32:64], b)
    np.testing.assert_array_equal(buf.copy_to_host()[:32], np.arange(32) * 11)


def test_non_contiguous_output(mod):  # type: ignore[no-untyped-def]
    buf = _poisoned(64)
    a, b = _ab(32)
    _bad_launch(mod, buf[::2], a, b, cls=ss.ArgumentTypeError, fragment="C-contiguous")
    np.testing.assert_array_equal(buf.copy_to_host(), np.full(64, POISON))


@pytest.mark.parametrize("count", [2, 4])
def test_wrong_argument_count(mod, count):  # type: ignore[no-untyped-def]
    a, b = _ab(32)
    args = (a, b, b)[: count - 1]
    _bad_launch(mod, _poisoned(32), *args, cls=ss.ArgumentTypeError, fragment="takes 3 arguments")


def test_requires_violated(mod):  # type: ignore[no-untyped-def]
    _, b = _ab(32)
    _bad_launch(
        mod,
        _poisoned(32),
        cuda.to_device(np.zeros(31, np.float32)),
        b,
        cls=ss.RequiresViolation,
        fragment="a.size == out.size",
    )


def test_covers_violated(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(40)
    a, b = _ab(40)
    launch = mod.vecadd.prepare(grid=1, block=32)  # 32 threads for 40 elements
    with pytest.raises(ss.CoverageError) as info:
        launch(out, a, b)
    assert "'out'" in str(info.value) and info.value.limit == 32 and info.value.actual == 40
    assert "one element a witness, a tile's elements" in str(info.value)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(40, POISON))


# ------------------------------------------------------------------ 17: prepare-time errors


@pytest.mark.parametrize(
    ("kernel", "grid", "block", "cls", "fragment"),
    [
        ("vecadd", 1, 64, ss.BlockShapeMismatch, "(32, 1, 1)"),
        ("vecadd", (1, 2), 32, ss.DomainMismatch, "domain"),
        ("free", 1, 2048, ss.DeviceLimitExceeded, "2048"),
        ("free", 0, 32, ss.LaunchDimensionError, "grid"),
        ("vecadd", 1, 0, ss.LaunchDimensionError, "block"),
    ],
    ids=["block-shape", "domain", "device-limit", "zero-grid", "zero-block"],
)
def test_prepare_rejects(mod, kernel, grid, block, cls, fragment):  # type: ignore[no-untyped-def]
    with pytest.raises(cls) as info:
        getattr(mod, kernel).prepare(grid=grid, block=block)
    assert isinstance(info.value, ss.LaunchContractError)
    assert fragment in str(info.value)
    assert repr(kernel) in str(info.value)


def test_unchecked_launch_needs_unsafe(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    a, b = _ab(32)
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        mod.vecadd.unchecked[1, 32]
    assert "kernel.unchecked[...]" in str(info.value)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, POISON))
    with ss.unsafe("SAFETY: 1 x 32 threads match the contract; buffers are distinct, size 32"):
        mod.vecadd.unchecked[1, 32](out, a, b)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32) * 11)


def test_direct_launch_forms_are_type_errors(mod):  # type: ignore[no-untyped-def]
    out = _poisoned(32)
    a, b = _ab(32)
    with pytest.raises(TypeError, match="prepare"):
        mod.vecadd[1, 32]
    with pytest.raises(TypeError, match="prepare"):
        mod.vecadd(out, a, b)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, POISON))
