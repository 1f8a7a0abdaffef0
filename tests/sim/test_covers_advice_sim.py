"""CoverageError's advice is the grid that covers the output (porting round 17: a PerBlock
output launched short was told ``simtsafe.cover(n, block)`` blocks -- 1 block for 6 rows,
refused again). For each kind of ``covers`` output the message names the grid, and a
launch with the grid it names is accepted and writes every element."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.sim.test_covers_tiles_sim import TILE_1D, TILE_2D

pytestmark = pytest.mark.sim

PER_BLOCK = """
from simtsafe import PerBlock


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))
def k(out: DisjointSlice[np.float32, PerBlock]) -> None:
    s = ss.block.sum(np.float32(1))
    out[thread.block_leader()] = s
"""

PER_WARP = """
from simtsafe import PerWarp


@ss.kernel(contract=ss.LaunchContract(domain=1, block=96, covers="out"))
def k(out: DisjointSlice[np.float32, PerWarp]) -> None:
    s = ss.warp.sum(np.float32(1))
    out[thread.warp_leader()] = s
"""

ONE_D = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))
def k(out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        out[w] = np.float32(1)
"""

#: name -> (body, output shape, the short launch's grid and block, the advice, the grid
#: following it)
CASES = {
    "per-block": (
        PER_BLOCK,
        (6,),
        (4, 64),
        r"Prepare with 6 blocks \(one element a block: grid=6\)",
        6,
    ),
    "per-warp": (
        PER_WARP,
        (7,),
        (1, 96),
        r"grid=simtsafe\.cover\(7, 3\) \(= 3\) blocks of 96 threads",
        3,
    ),
    "index-1d": (ONE_D, (200,), (1, 64), r"grid=simtsafe\.cover\(200, 64\) \(= 4\) blocks", 4),
    "tile-1d": (
        TILE_1D,
        (300,),
        (1, 32),
        r"grid=simtsafe\.cover\(300, 128\) \(= 3\) blocks of 32 threads \(4 elements a thread\)",
        3,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_advised_grid_covers_the_output(tmp_path: Path, name: str) -> None:
    body, shape, (grid, block), advice, advised = CASES[name]
    k = load_kernel_module(tmp_path, body).k
    out = cuda.to_device(np.zeros(shape, np.float32))
    extra = (cuda.to_device(np.arange(shape[0], dtype=np.float32)),) if name == "tile-1d" else ()
    with pytest.raises(ss.CoverageError, match=advice):
        k.prepare(grid=grid, block=block)(out, *extra)
    k.prepare(grid=advised, block=block)(out, *extra)
    want = extra[0].copy_to_host() if extra else None
    got = out.copy_to_host()
    assert np.array_equal(got, want) if want is not None else got.all(), got


def test_a_2d_output_names_the_grid_axis_short(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, TILE_2D).k
    out = cuda.to_device(np.zeros((17, 72), np.float32))  # rows: 2 a tile, 4 threads along y
    with pytest.raises(ss.CoverageError) as info:
        k.prepare(grid=(3, 2), block=(8, 4, 1))(out)
    text = str(info.value)
    assert "grid.y = simtsafe.cover(17, 8) (= 3)" in text, text
    m = re.search(r"grid\.y = simtsafe\.cover\(17, 8\) \(= (\d+)\)", text)
    assert m is not None
    k.prepare(grid=(3, int(m.group(1))), block=(8, 4, 1))(out)
    assert out.copy_to_host().all()
