"""``covers`` of an output written through an output tile counts the tile's elements a thread
(porting round 15 found a tile_1d output refused with a grid that owns every element): a
launch whose threads' tiles reach every element is accepted, one a thread short refused
with the counted capacity; 1D and 2D tiles, a size that is a module constant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

TILE_1D = """
RUN = 4


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, covers="out"))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    t = thread.tile_1d(out, RUN)
    g = thread.index_1d().index
    for j in range(RUN):
        t[j] = x[g * RUN + j] if g * RUN + j < x.size else np.float32(0)
"""

TILE_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1), covers="out"))
def k(out: DisjointSlice2D[np.float32]) -> None:
    t = thread.tile_2d(out, 2, 3)
    for r in range(2):
        for c in range(3):
            t[r, c] = np.float32(1)
"""


def test_a_tile_1d_output_is_covered_by_its_threads_tiles(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, TILE_1D).k
    n = 4 * 64 - 3  # 64 threads of tiles of 4
    x = cuda.to_device(np.arange(n, dtype=np.float32))
    out = cuda.to_device(np.zeros(n, np.float32))
    k.prepare(grid=2, block=32)(out, x)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(n))
    with pytest.raises(ss.CoverageError, match="owns 256 along axis 0") as info:
        k.prepare(grid=2, block=32)(cuda.to_device(np.zeros(n + 8, np.float32)), x)
    assert info.value.limit == 256 and info.value.actual == n + 8


def test_a_tile_2d_output_is_covered_by_rows_and_columns_of_tiles(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, TILE_2D).k
    out = cuda.to_device(np.zeros((2 * 4 * 2, 3 * 8 * 3), np.float32))  # grid (3, 2): 16 x 72
    k.prepare(grid=(3, 2), block=(8, 4, 1))(out)
    assert out.copy_to_host().all()
    with pytest.raises(ss.CoverageError, match="owns 16 along axis 0"):
        k.prepare(grid=(3, 2), block=(8, 4, 1))(cuda.to_device(np.zeros((17, 72), np.float32)))


def test_the_ported_vector_kernel_with_covers_launches(tmp_path: Path) -> None:
    from tests.kernels import port15

    case = port15.FALSE_REFUSALS["covers_counts_threads_not_tile"]
    k = load_kernel_module(tmp_path, port15.EXTRA_HEADER + str(case["source"])).scale_vec
    n = 203
    x = cuda.to_device(np.arange(n, dtype=np.float32))
    out = cuda.to_device(np.zeros(n, np.float32))
    k.prepare(grid=1, block=64)(out, x, np.float32(2))  # 64 tiles of 4 reach 256 >= 203
    np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(n, dtype=np.float32))


def test_a_tile_with_its_size_by_keyword_is_covered_alike(tmp_path: Path) -> None:
    body = TILE_1D.replace("thread.tile_1d(out, RUN)", "thread.tile_1d(out, n=RUN)")
    k = load_kernel_module(tmp_path, body).k
    x = cuda.to_device(np.arange(256, dtype=np.float32))
    out = cuda.to_device(np.zeros(256, np.float32))
    k.prepare(grid=2, block=32)(out, x)  # 64 threads, tiles of 4
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(256))
    with pytest.raises(ss.CoverageError, match="owns 256 along axis 0"):
        k.prepare(grid=2, block=32)(cuda.to_device(np.zeros(257, np.float32)), x)
