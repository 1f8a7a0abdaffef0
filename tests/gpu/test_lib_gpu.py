"""Library launches on a real device (skipped without one): values against numpy (and CuPy
where installed) at sizes where thousands of blocks look back at once, streams, scratch reuse,
misaligned views."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe.lib import _scan
from simtsafe.lib import _scan_kernels as sk

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

DTYPES = [np.int32, np.uint32, np.float32]


def _data(n: int, dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is np.float32:
        return rng.random(n, dtype=np.float32)
    if dtype is np.int32:
        return rng.integers(-(2**20), 2**20, n, dtype=np.int32)
    return rng.integers(0, 2**20, n, dtype=np.uint32)


def _check(got: np.ndarray, x: np.ndarray) -> None:
    if x.dtype == np.float32:  # tile and warp order: within float32 rounding of the true sums
        want = np.cumsum(x, dtype=np.float64)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, np.cumsum(x, dtype=x.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 31, 4096, 4097, 2**16 + 3, 2**22 + 1, 2**25 - 5])
def test_scan_matches_numpy(dtype: type, n: int) -> None:
    x = _data(n, dtype, seed=n % 97)
    out = cuda.to_device(np.zeros(n, dtype))
    ss.lib.inclusive_scan(out, cuda.to_device(x))
    _check(out.copy_to_host(), x)


def test_float32_runs_differ_at_most_in_rounding() -> None:
    """The look-back adds whatever its predecessors published (a prefix, or aggregates down to
    one): the association of float32 additions, not the value, depends on timing."""
    x = _data(2**24, np.float32, seed=1)
    d_x = cuda.to_device(x)
    outs = []
    for _ in range(3):
        out = cuda.to_device(np.zeros(x.size, np.float32))
        ss.lib.inclusive_scan(out, d_x)
        outs.append(out.copy_to_host())
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], rtol=1e-5)


def test_many_calls_reuse_the_scratch() -> None:
    _scan._SCRATCH.clear()
    x = _data(2**20 + 11, np.int32, seed=2)
    d_x = cuda.to_device(x)
    out = cuda.to_device(np.zeros(x.size, np.int32))
    for _ in range(50):  # a counter or status word not reset would hang or corrupt a later call
        ss.lib.inclusive_scan(out, d_x)
    _check(out.copy_to_host(), x)
    ss.lib.inclusive_scan(out[:1000], d_x[:1000])  # fewer tiles than the scratch holds
    _check(out.copy_to_host()[:1000], x[:1000])


def test_misaligned_views() -> None:
    x = _data(2**20 + 3, np.float32, seed=3)
    d_x = cuda.to_device(x)
    big = cuda.to_device(np.full(x.size, -1, np.float32))  # big[1:-1]: as many as x[2:]
    ss.lib.inclusive_scan(big[1:-1], d_x[2:])
    got = big.copy_to_host()
    _check(got[1:-1], x[2:])
    assert got[0] == -1 and got[-1] == -1


def test_two_streams_at_once() -> None:
    _scan._SCRATCH.clear()
    s1, s2 = cuda.stream(), cuda.stream()
    xs = [_data(2**22 + k, np.int32, seed=k) for k in (1, 2)]
    d_xs = [cuda.to_device(x) for x in xs]
    outs = [cuda.device_array(x.size, np.int32) for x in xs]
    for _ in range(5):
        ss.lib.inclusive_scan(outs[0], d_xs[0], stream=s1)
        ss.lib.inclusive_scan(outs[1], d_xs[1], stream=s2)
    ss.synchronize()
    for out, x in zip(outs, xs, strict=True):
        _check(out.copy_to_host(), x)
    assert len(_scan._SCRATCH._by_stream) == 2


def test_lookback_walks_many_windows() -> None:
    """Only aggregates below tile 5000, a prefix at tile 0: the look-back adds 156 windows."""
    t = 5000
    status = np.zeros(t + 1, np.uint64)
    status[0] = np.uint64(sk.PREFIX << 32 | 7)
    status[1:t] = np.uint64(sk.AGGREGATE << 32 | 3)
    d_status = cuda.to_device(status)
    n = (t + 1) * sk.TILE  # the input reaches tile t (zeros)
    zero = cuda.to_device(np.zeros(n, np.int32))
    ctl = cuda.to_device(np.array([t], np.int32))
    with ss.unsafe(
        "SAFETY: one block of the contract's shape, on purpose fewer than a block per tile: "
        "the counter starts at t, so it takes tile t; the arrays are distinct, status has a "
        "word for every tile"
    ):
        sk.SCAN[np.dtype(np.int32)].unchecked[1, sk.BLOCK, 0, sk.SLOT_BYTES](
            cuda.device_array(n, np.int32), zero, d_status, ctl
        )
    assert d_status.copy_to_host()[t] == np.uint64(sk.PREFIX << 32 | (7 + 3 * (t - 1)))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_persistent_variant(dtype: type) -> None:
    """The benchmark's persistent variant (the pre-8.0 schedule's): a grid of 4 blocks per SM
    takes 2**24 elements' tiles."""
    n = 2**24 + 5
    x = _data(n, dtype, seed=9)
    tiles = -(-n // sk.OLD_TILE)
    kernel = sk._make_scan(np.dtype(dtype), persistent=True)
    blocks = 4 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    out = cuda.device_array(n, dtype)
    status = cuda.to_device(np.zeros(tiles, np.uint64))
    ctl = cuda.to_device(np.zeros(1, np.int32))
    kernel.prepare(grid=blocks, block=sk.OLD_BLOCK, shared_mem=sk.OLD_SLOT_BYTES)(
        out, cuda.to_device(x), status, ctl
    )
    _check(out.copy_to_host(), x)


def test_cupy_arrays_on_cupys_stream() -> None:
    cp = pytest.importorskip("cupy")
    x = cp.arange(2**20, dtype=cp.int32) % 7
    out = cp.empty_like(x)
    cp.cuda.Stream.null.synchronize()  # x was made on the null stream, which `side` skips
    with cp.cuda.Stream(non_blocking=True):
        ss.lib.inclusive_scan(out, x)
        want = cp.cumsum(x, dtype=cp.int32)
        assert bool((out == want).all())


def test_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(2**20, device="cuda", dtype=torch.float32) % 5
    out = torch.empty_like(x)
    ss.lib.inclusive_scan(out, x)
    torch.testing.assert_close(out, torch.cumsum(x.double(), 0).float(), rtol=1e-5, atol=1e-2)
