"""Attack round 32 (tests/kernels/attacks32.py) on the simulator: ``covers`` of tensor-core
output tiles (host/_tilecover.py, 0cd9b54) accepts only launches that leave no element of the
covered output without an owner -- every launch accepted here writes every element of a
NaN-filled output, every launch that would leave one is refused with its message and launches
nothing; the routes to a second owner are refused at decoration; the sizes counted are the
frozen ones. The helper status joins (``verify/_feasible._Joins``): the accepted helper kernels
replay clean under ``ss.sim.check`` with lanes on both sides of the branch."""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.host._tilecover import tensor_core_capacity
from tests.kernels import load_kernel_module
from tests.kernels.attacks32 import (
    ACCEPTED,
    COVERS_FALSE_REFUSALS,
    COVERS_LAUNCHES,
    COVERS_NO_SIZES,
    COVERS_ROUTES,
    FOLD_SIM,
    mma_fill,
    wgmma_fill,
)
from tests.kernels.porting import to_device, to_host

pytestmark = pytest.mark.sim

_TMP: list[Path] = []


@cache
def _kernel(tile: tuple[Any, ...]) -> Any:
    src = mma_fill(*tile[1:]) if tile[0] == "mma" else wgmma_fill(*tile[1:])
    return load_kernel_module(_TMP[0], src).k


@pytest.fixture(autouse=True)
def _scratch(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not _TMP:
        _TMP.append(tmp_path_factory.mktemp("a32"))


def _launch(
    kernel: Any, grid: tuple[int, ...], block: tuple[int, ...], shape: tuple[int, int]
) -> tuple[np.ndarray, ss.CoverageError | None]:
    """(the host copy of a NaN-filled ``c`` after the launch, the CoverageError or None)."""
    c = to_device(np.full(shape, np.nan, np.float32))
    try:
        kernel.prepare(grid=grid, block=block)(c)
    except ss.CoverageError as exc:
        return to_host(c), exc
    return to_host(c), None


@pytest.mark.parametrize("case", sorted(COVERS_LAUNCHES, key=str), ids=str)
def test_covers_of_a_tensor_core_tile_on_odd_blocks(case: Any) -> None:
    tile, block, grid, shape = case
    got, exc = _launch(_kernel(tile), grid, block, shape)
    fragment = COVERS_LAUNCHES[case]
    if fragment is None:
        assert exc is None, str(exc)
        np.testing.assert_array_equal(got, np.zeros(shape, np.float32))
    else:
        assert exc is not None and fragment in str(exc), str(exc)
        assert np.isnan(got).all()  # nothing launched


#: (tile, block) pairs replayed at the exact capacity and one row / one column past it
_SWEEP = [
    (("mma", 16, 16, 16, 16), (16, 2, 1)),
    (("mma", 32, 32, 16, 16), (64, 1, 1)),
    (("mma", 32, 32, 16, 16), (8, 4, 3)),
    (("mma", 64, 32, 16, 32), (96, 1, 1)),
    (("mma", 32, 32, 32, 8), (32, 2, 1)),
    (("wgmma", 128, 64), (64, 2, 1)),
    (("wgmma", 192, 128), (400, 1, 1)),
]


@pytest.mark.parametrize(("tile", "block"), _SWEEP, ids=str)
def test_the_capacity_is_owned_on_the_simulator_and_no_more(
    tile: tuple[Any, ...], block: tuple[int, int, int]
) -> None:
    """``tensor_core_capacity`` replayed on the simulator: a launch at exactly the capacity
    writes every element; one row or one column more is refused."""
    kernel = _kernel(tile)
    ctor = "mma.out_tile" if tile[0] == "mma" else "wgmma.out_tile"
    if block[2] != 1:  # a 2D contract: fold z into y
        block = (block[0], block[1] * block[2], 1)
    for grid in ((1, 1, 1), (2, 3, 1)):
        rows, cols = tensor_core_capacity(ctor, tile[1:], grid, block)
        if rows and cols:
            got, exc = _launch(kernel, grid, block, (rows, cols))
            assert exc is None, str(exc)
            assert not np.isnan(got).any(), (tile, block, grid)
        for shape in ((rows + 1, max(cols, 1)), (max(rows, 1), cols + 1)):
            got, exc = _launch(kernel, grid, block, shape)
            assert exc is not None, (tile, block, grid, shape)


@pytest.mark.parametrize("name", sorted(COVERS_ROUTES))
def test_a_second_owner_of_a_covered_output_is_refused(tmp_path: Path, name: str) -> None:
    source, fragment = COVERS_ROUTES[name]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source)
    assert fragment in str(info.value), str(info.value)


def test_a_tile_of_an_input_or_splatted_sizes_do_not_compile(tmp_path: Path) -> None:
    head = (
        '@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1), covers="c"))\n'
        "def k(c: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:\n"
    )
    for body, fragment in (
        ("    o = ss.mma.out_tile(a, 32, 32, 16, 16)\n", "takes a DisjointSlice2D output"),
        ("    o = ss.mma.out_tile(c, *SIZES)\n", "BM must be a compile-time int"),
    ):
        (d := tmp_path / str(len(fragment))).mkdir()
        k = load_kernel_module(d, "SIZES = (32, 32, 16, 16)\n" + head + body).k
        c, a = (to_device(np.zeros((64, 64), np.float32)) for _ in range(2))
        with pytest.raises(ss.SafetyError) as info:
            k.prepare(grid=(2, 2), block=(128, 1, 1))(c, a)
        assert fragment in str(info.value), str(info.value)


def test_a_size_rebound_before_the_first_compile_counts_as_rebound(tmp_path: Path) -> None:
    """The sizes ``covers`` counts are the frozen scope's: 32 at decoration, 16 at the freeze
    (what Numba compiles) gives 16 x 16 block tiles, and a (64, 64) output needs grid (4, 4)."""
    mod = load_kernel_module(
        tmp_path,
        "BM = 32\n\n\n" + mma_fill(32, 32, 16, 16).replace("32, 32, 16, 16", "BM, BM, 16, 16"),
    )
    setattr(mod, "BM", 16)  # noqa: B010 (a module attribute mypy does not see)
    got, exc = _launch(mod.k, (2, 2, 1), (128, 1, 1), (64, 64))
    assert exc is not None and "ss.mma.out_tile(c, 16, 16, 16, 16)" in str(exc), str(exc)
    got, exc = _launch(mod.k, (4, 4, 1), (128, 1, 1), (64, 64))
    assert exc is None and not np.isnan(got).any()


@pytest.mark.parametrize("name", sorted(COVERS_FALSE_REFUSALS))
def test_covers_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """A local size or a product compiles (the typing takes literals) and would own every
    element of (64, 64) with grid (2, 2); covers counts nothing of it."""
    k = load_kernel_module(tmp_path, COVERS_FALSE_REFUSALS[name]).k
    got, exc = _launch(k, (2, 2, 1), (128, 1, 1), (64, 64))
    assert exc is not None and COVERS_NO_SIZES in str(exc), str(exc)
    assert np.isnan(got).all()


# --------------------------------------------------------------------------- helper joins


def _reference(name: str, a: np.ndarray, n: int) -> np.ndarray:
    """Each warp's sum of what its lanes below ``n`` add, as Python."""
    per_lane = np.zeros(a.size // 4)
    for i in range(per_lane.size):
        t = tuple(float(v) for v in a[4 * i : 4 * i + 4])
        if i % 32 >= n:
            continue
        if name == "mask-3":
            per_lane[i] = t[i & 3]
        elif name == "negative-offset-4":
            per_lane[i] = t[(i & 7) - 4]
        elif name == "caller-range-4":
            per_lane[i] = sum(t)
        elif name == "helper-while-masked":
            per_lane[i] = sum(t[q & 3] for q in range(i & 7))
    sums: np.ndarray = per_lane.reshape(-1, 32).sum(axis=1)
    return sums


@pytest.mark.parametrize("name", FOLD_SIM)
def test_accepted_helper_kernels_replay_clean(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED[name]).k
    a = np.arange(4 * 64, dtype=np.float32) / 8
    for n in (0, 5, 32):
        y = np.full(2, np.nan, np.float32)
        report = ss.sim.check(k, 1, 64, y, a, np.int64(n), np.int64(0))
        assert report.ok, report
        y = to_device(np.full(2, np.nan, np.float32))
        k.prepare(grid=1, block=64)(y, to_device(a), np.int64(n), np.int64(0))
        np.testing.assert_allclose(to_host(y), _reference(name, a, n), rtol=1e-5)


def test_the_sweep_cases_cover_every_kind_of_capacity() -> None:
    """The sweep visits whole tiles, bands, corners and empty capacities."""
    kinds = set()
    for (tile, block), grid in itertools.product(_SWEEP, ((1, 1, 1), (2, 3, 1))):
        ctor = "mma.out_tile" if tile[0] == "mma" else "wgmma.out_tile"
        b = (block[0], block[1] * block[2], 1)
        rows, cols = tensor_core_capacity(ctor, tuple(int(v) for v in tile[1:]), grid, b)
        whole = (rows, cols) == (grid[1] * tile[1], grid[0] * tile[2])
        kinds.add("whole" if whole else "band" if cols == grid[0] * tile[2] else "corner")
    assert kinds >= {"whole", "band", "corner"}, kinds
