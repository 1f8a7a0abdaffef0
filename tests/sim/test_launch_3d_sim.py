"""3D launches on the simulator: index_3d witnesses, domain=3 contracts, covers per axis."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

POISON = np.float32(-7.0)

SOURCE = """
@ss.kernel(contract=ss.LaunchContract(
    domain=3, block=(8, 2, 2),
    requires=["a.shape[0] == out.shape[0]", "a.shape[1] == out.shape[1]",
              "a.shape[2] == out.shape[2]"],
    covers="out"))
def scale3(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
    w = thread.index_3d()
    out[w] = a[w] * 2

@ss.kernel
def coords(out: DisjointSlice3D[np.float32]) -> None:
    w = thread.index_3d()  # no contract: valid in every launch shape
    out[w] = w.z * 10000 + w.y * 100 + w.x

@ss.kernel(contract=ss.LaunchContract(domain=3, max_threads=64, covers="a"))
def covers_input(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
    w = thread.index_3d()
    out[w] = a[w]
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("launch3d"), SOURCE)


def _coords(shape):  # type: ignore[no-untyped-def]
    z, y, x = np.indices(shape)
    return (z * 10000 + y * 100 + x).astype(np.float32)


def test_domain_3_launch_matches_numpy(mod):  # type: ignore[no-untyped-def]
    shape = (3, 5, 11)  # z, y, x: 2 x 3 x 2 blocks of (8, 2, 2) threads cover it
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = cuda.to_device(np.full(shape, POISON))
    mod.scale3.prepare(grid=(2, 3, 2), block=(8, 2, 2))(out, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host(), a * 2)


@pytest.mark.parametrize(
    ("grid", "block"),
    [
        ((1, 1, 1), (4, 4, 4)),
        ((2, 3, 1), (2, 2, 3)),
        ((4, 1, 1), (1, 5, 3)),
        ((1, 5, 3), (4, 1, 1)),
    ],
    ids=["one-block", "mixed", "x-grid", "yz-grid"],
)
def test_index_3d_owns_one_element_per_thread_in_any_shape(mod, grid, block):  # type: ignore[no-untyped-def]
    shape = (3, 5, 4)
    out = cuda.to_device(np.full(shape, POISON))
    mod.coords.prepare(grid=grid, block=block)(out)
    host = out.copy_to_host()
    cover = tuple(g * b for g, b in zip(reversed(grid), reversed(block), strict=True))
    expected = np.full(shape, POISON)
    zs, ys, xs = (min(c, n) for c, n in zip(cover, shape, strict=True))
    expected[:zs, :ys, :xs] = _coords(shape)[:zs, :ys, :xs]
    np.testing.assert_array_equal(host, expected)


@pytest.mark.parametrize(
    ("grid", "axis", "actual", "limit"),
    [((2, 3, 1), 0, 3, 2), ((2, 2, 2), 1, 5, 4), ((1, 3, 2), 2, 11, 8)],
    ids=["z-short", "y-short", "x-short"],
)
def test_covers_is_checked_per_axis(mod, grid, axis, actual, limit):  # type: ignore[no-untyped-def]
    shape = (3, 5, 11)
    out = cuda.to_device(np.full(shape, POISON))
    launch = mod.scale3.prepare(grid=grid, block=(8, 2, 2))
    with pytest.raises(ss.CoverageError) as info:
        launch(out, cuda.to_device(np.ones(shape, np.float32)))
    exc = info.value
    assert (exc.axis, exc.actual, exc.limit) == (axis, actual, limit)
    assert f"along axis {axis}" in str(exc)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(shape, POISON))


def test_covers_of_a_3d_input_is_per_axis(mod):  # type: ignore[no-untyped-def]
    shape = (2, 3, 4)
    a = cuda.to_device(np.arange(24, dtype=np.float32).reshape(shape))
    out = cuda.to_device(np.full(shape, POISON))
    # 4 * 1 * 2 = 8 threads per block, 3 blocks: 24 threads, as many as elements,
    # but only 1 thread along y for 3 rows: not covered.
    with pytest.raises(ss.CoverageError) as info:
        mod.covers_input.prepare(grid=(1, 1, 3), block=(4, 1, 2))(out, a)
    assert (info.value.axis, info.value.actual, info.value.limit) == (1, 3, 1)
    mod.covers_input.prepare(grid=(1, 1, 1), block=(4, 3, 2))(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), a.copy_to_host())


def test_domain_2_contract_refuses_a_z_axis(tmp_path):  # type: ignore[no-untyped-def]
    two = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=2))
        def k(out: DisjointSlice2D[np.float32]) -> None:
            w = thread.index_2d()
            out[w] = 1.0
        """,
    )
    with pytest.raises(ss.DomainMismatch, match="declare domain=3"):
        two.k.prepare(grid=(1, 1, 2), block=(4, 4))
