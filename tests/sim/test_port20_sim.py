"""Porting round 20 (tests/kernels/port20.py): each ported Tier-1 kernel gives numpy's values on
the simulator (several also replay clean under ``simtsafe.sim.check``); the round's fixes are
checked where they run: ``covers`` of a tensor-core output tile counts block tiles (the natural
launch accepted, launches that leave an element unowned refused with the grid that covers it),
the compile worker's refusals carry the new messages, the spellings those messages give match
numpy; the simulator's narrow-integer arithmetic (a doc gap, now documented) is pinned."""

from __future__ import annotations

import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, port20
from tests.kernels.porting import to_device, to_host

pytestmark = pytest.mark.sim


def _load_src(tmp_path: Path, src: str) -> object:
    return load_kernel_module(tmp_path, port20.EXTRA_HEADER + src)


@pytest.mark.parametrize("name", sorted(port20.ACCEPTED))
def test_a_ported_kernel_matches_numpy(tmp_path: Path, name: str) -> None:
    mod = port20.load(name, tmp_path)
    assert port20.CHECKS[name](mod, np.random.default_rng(20))
    assert not port20.UNCLEAN


def test_the_warp_vote_bincount_workaround_matches_numpy(tmp_path: Path) -> None:
    # BAD_ERRORS collective_in_grid_stride: the uniform trip count is accepted and correct
    mod = _load_src(tmp_path, port20.WARP_BINCOUNT)
    assert port20._check_bincount(mod, np.random.default_rng(20))  # type: ignore[arg-type]


def test_a_vote_inside_grid_stride_is_refused_with_the_loop_named_on_the_simulator(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS collective_in_grid_stride, fixed: the compile worker's refusal names the loop
    # and the uniform trip count (WARP_BINCOUNT, above, is that fix)
    mod = _load_src(tmp_path, port20.BINCOUNT_GRID_STRIDE)
    with pytest.raises(ss.SafetyError) as info:
        mod.bincount8.prepare(grid=3, block=128)(  # type: ignore[attr-defined]
            to_device(np.zeros(8, np.uint32)), to_device(np.zeros(10, np.int32))
        )
    msg = str(info.value)
    assert "The call is inside `for ... in thread.grid_stride(...)` at line" in msg
    assert "`for _ in range((n + stride - 1) // stride):`" in msg


@pytest.mark.filterwarnings("ignore:simtsafe. the compiled-form checks could not run")
def test_the_source_level_fallback_names_the_grid_stride_loop_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no compile worker (no CUDA target): the source-level finding decides, with the same note
    from simtsafe.lowering import _compileworker

    def unavailable(*args: object, **kwargs: object) -> None:
        raise _compileworker.Unavailable("no CUDA target in this test")

    monkeypatch.setattr(_compileworker, "verdict", unavailable)
    mod = _load_src(tmp_path, port20.BINCOUNT_GRID_STRIDE)
    with pytest.raises(ss.SafetyError) as info:
        mod.bincount8.prepare(grid=3, block=128)  # type: ignore[attr-defined]
    assert info.value.rule == "uniformity"
    assert "The call is inside `for ... in thread.grid_stride(...)` at line" in str(info.value)


def test_a_pixel_stored_as_a_tuple_is_refused_with_the_field_stores_on_the_simulator(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS record_store_tuple, fixed (ACCEPTED downsample_rgba: the field stores)
    mod = _load_src(tmp_path, port20.DOWNSAMPLE_TUPLE)
    img = np.zeros((4, 4), mod.RGBA)  # type: ignore[attr-defined]
    with pytest.raises(ss.SafetyError) as info:
        mod.downsample2x2.prepare(grid=(1, 1), block=(16, 8))(  # type: ignore[attr-defined]
            to_device(np.zeros((2, 2), img.dtype)), to_device(img)
        )
    msg = str(info.value)
    assert "into a DisjointSlice of records (fields r, g, b, a)" in msg
    assert "`out[w].r = ...`, `out[w].g = ...`" in msg


def test_the_bf16_widening_through_float64_matches_numpy(tmp_path: Path) -> None:
    # FALSE_REFUSALS bf16_widen_before_collective: the accepted twin
    import ml_dtypes

    mod = _load_src(tmp_path, port20.BF16_ROW_SUMS_F64)
    m = np.random.default_rng(20).standard_normal((5, 150)).astype(ml_dtypes.bfloat16)
    sums = to_device(np.full(5, np.nan, np.float32))
    mod.bf16_row_sums.prepare(grid=5, block=64)(sums, to_device(m))  # type: ignore[attr-defined]
    assert np.allclose(to_host(sums), m.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)


def test_the_bf16_widening_the_docs_give_runs_on_the_simulator(tmp_path: Path) -> None:
    # FALSE_REFUSALS bf16_widen_before_collective, fixed: the compile worker's verdict accepts
    # it, and the row sums match numpy
    mod = _load_src(tmp_path, port20.BF16_ROW_SUMS)
    m = (np.random.default_rng(20).integers(-8, 8, (5, 70)) / 4).astype(ml_dtypes.bfloat16)
    sums = to_device(np.zeros(5, np.float32))
    mod.bf16_row_sums.prepare(grid=5, block=64)(sums, to_device(m))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(to_host(sums), m.astype(np.float32).sum(1))


def test_float_of_a_bf16_read_is_refused_with_the_widening_on_the_simulator(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS float_of_bf16, fixed: the compile worker's refusal names the fix
    mod = _load_src(tmp_path, port20.FLOAT_OF_BF16)
    x = np.arange(5).astype(ml_dtypes.bfloat16)
    with pytest.raises(ss.SafetyError) as info:
        mod.widen.prepare(grid=1, block=64)(  # type: ignore[attr-defined]
            to_device(np.zeros(5, np.float32)), to_device(x)
        )
    msg = str(info.value)
    assert "Numba cannot type `float(__nv_bfloat16)`: `__nv_bfloat16` is numba-cuda's" in msg
    assert "Widen it first: `np.float32(x[k])` or `np.float64(x[k])`" in msg


def test_the_bf16_widening_the_message_names_matches_numpy(tmp_path: Path) -> None:
    mod = _load_src(tmp_path, port20.FLOAT_OF_BF16.replace("float(x[", "np.float64(x["))
    x = (np.arange(70) / 8 - 3).astype(ml_dtypes.bfloat16)
    y = to_device(np.full(70, np.nan, np.float32))
    mod.widen.prepare(grid=2, block=64)(y, to_device(x))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(to_host(y), x.astype(np.float32))


NUMPY_PROBE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["y.size == a.size"]))
def k(y: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(y):
        x = a[i]
        y[i] = EXPR
"""

#: the spelling a refusal gives (tests/ptx/test_port20_ptx.py) -> numpy's function it replaces
NUMPY_SPELLINGS = {
    "min(max(x, np.float32(-1)), np.float32(1))": lambda x: np.clip(x, -1, 1),
    "min(max(x, -1), 1)": lambda x: np.clip(x, -1, 1),
    "np.float32(round(x))": np.rint,
    "np.float32(round(x * np.float32(4)))": lambda x: np.round(x * np.float32(4)),
    "np.float32(int(x > 0) - int(x < 0))": np.sign,
    "x if x > 0 else np.float32(0)": lambda x: np.where(x > 0, x, 0),
}


@pytest.mark.parametrize("expr", sorted(NUMPY_SPELLINGS))
def test_the_spellings_numpy_refusals_give_match_numpy(tmp_path: Path, expr: str) -> None:
    # BAD_ERRORS numpy_clip_round_allow_list and np_rint_no_spelling: the builtin round() is
    # half to even here as on the GPU (cvt.rni), for finite values (NaN has no int)
    mod = _load_src(tmp_path, NUMPY_PROBE.replace("EXPR", expr))
    x = np.array([2.5, 3.5, -2.5, 0.5, -0.5, 1.5, -1.5, 0.4999, -7.7, 7.2, -3, 0, 1e6 + 0.5],
                 np.float32)  # fmt: skip
    y = to_device(np.full_like(x, np.nan))
    mod.k.prepare(grid=1, block=64)(y, to_device(x))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(to_host(y), NUMPY_SPELLINGS[expr](x).astype(np.float32))


def _bmm(tmp_path: Path, grid: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """BMM_COVERS on 3 matrices with ``grid``: (the host copy of c, numpy's products)."""
    mod = _load_src(tmp_path, port20.BMM_COVERS)
    nb = 3
    rng = np.random.default_rng(20)
    a = rng.standard_normal((nb * 16, 16)).astype(np.float16)
    b = rng.standard_normal((nb * 16, 16)).astype(np.float16)
    c = to_device(np.full((nb * 16, 16), np.nan, np.float32))
    p = mod.bmm16.prepare(grid=grid, block=32)  # type: ignore[attr-defined]
    try:
        p(c, to_device(a), to_device(b))
    finally:
        got = to_host(c)
    a3, b3 = (m.astype(np.float64).reshape(nb, 16, 16) for m in (a, b))
    return got, (a3 @ b3).reshape(nb * 16, 16)


#: the refusal of BMM_COVERS one block short (docs/contracts.md quotes it)
BMM_SHORT = (
    "kernel 'bmm16' must cover every element of 'c' by its launch contract, but the launch owns "
    "32 along axis 0 and 'c' has 48: 'c' is written through ss.mma.out_tile(c, 16, 16, 16, 16), "
    "so block (bx, by) owns the 16 x 16 tile c[16*by : +16, 16*bx : +16] (its first warp all of "
    "it). Prepare with grid.y = simtsafe.cover(48, 16) (= 3) (axis 0 follows y: 16 rows a block)"
)


def test_covers_counts_an_mma_tile_a_block_tile_a_block(tmp_path: Path) -> None:
    # FALSE_REFUSALS covers_mma_out_tile, fixed: the natural launch (a block per matrix)
    got, want = _bmm(tmp_path, (1, 3))
    assert np.allclose(got, want, atol=1e-4)


def test_covers_refuses_the_mma_launch_one_block_short(tmp_path: Path) -> None:
    # BAD_ERRORS coverage_mma_grid_advice, fixed: the advice is the grid of block tiles
    with pytest.raises(ss.CoverageError) as info:
        _bmm(tmp_path, (1, 2))
    exc = info.value
    assert str(exc) == BMM_SHORT
    assert (exc.axis, exc.actual, exc.limit) == (0, 48, 32)
    contracts = (Path(__file__).resolve().parents[2] / "docs" / "contracts.md").read_text()
    assert f"CoverageError: {BMM_SHORT}" in contracts


TC_FILLS = """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 1, 1), covers="c"))
def fill16(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.mma.out_tile(c, 16, 16, 16, 16)
    ss.mma.store(o, 0, 0, ss.mma.zeros())
    ss.mma.store(o, 0, 1, ss.mma.zeros())


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1), covers="c"))
def fill32(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.mma.out_tile(c, 32, 32, 16, 16)
    for mi in range(1):
        for ni in range(2):
            ss.mma.store(o, mi, ni, ss.mma.zeros())


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1), covers="c"))
def fill64(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.wgmma.out_tile(c, 64, 64)
    ss.wgmma.store(o, ss.wgmma.zeros(64))
"""

#: (kernel, c's shape, grid) -> None (accepted: every element written) or the refusal's tail
TC_LAUNCHES = {
    ("fill16", (16, 32), (2, 1)): None,
    # one element a thread would have taken (16, 32) from grid (1, 16) and left c[:, 16:]
    # without an owner (256 elements, NaN after the launch): the launch is refused now
    ("fill16", (16, 32), (1, 16)): "the launch owns 16 along axis 1 and 'c' has 32: 'c' is "
    "written through ss.mma.out_tile(c, 16, 16, 16, 16), so block (bx, by) owns the 16 x 16 "
    "tile c[16*by : +16, 16*bx : +16] (its first warp all of it). Prepare with grid.x = "
    "simtsafe.cover(32, 16) (= 2) (axis 1 follows x: 16 columns a block)",
    # 2 whole warps of the 4 the 32 x 32 tile needs: the first band of 16 rows only
    ("fill32", (16, 64), (2, 1)): None,
    ("fill32", (32, 32), (1, 1)): "the launch owns 16 along axis 0 and 'c' has 32: 'c' is "
    "written through ss.mma.out_tile(c, 32, 32, 16, 16), so block (bx, by) owns the 32 x 32 "
    "tile c[32*by : +32, 32*bx : +32] (each of its first 4 warps a 16 x 16 rectangle), but a "
    "block of 64 threads has 2 whole warps of the 4 the tile needs, so part of every block "
    "tile has no owner. Launch blocks of 128 threads (or more), or make the warp's part of the "
    "tile larger",
    ("fill64", (128, 64), (1, 2)): None,
    ("fill64", (128, 64), (1, 1)): "the launch owns 64 along axis 0 and 'c' has 128: 'c' is "
    "written through ss.wgmma.out_tile(c, 64, 64), so block (bx, by) owns the 64 x 64 tile "
    "c[64*by : +64, 64*bx : +64] (its first warpgroup all of it). Prepare with grid.y = "
    "simtsafe.cover(128, 64) (= 2) (axis 0 follows y: 64 rows a block)",
}


@pytest.mark.parametrize("case", sorted(TC_LAUNCHES), ids=str)
def test_covers_of_a_tensor_core_tile_accepts_exactly_the_launches_that_own_every_element(
    tmp_path: Path, case: tuple[str, tuple[int, int], tuple[int, int]]
) -> None:
    name, shape, grid = case
    kernel = getattr(_load_src(tmp_path, TC_FILLS), name)
    c = to_device(np.full(shape, np.nan, np.float32))
    block = {"fill16": 32, "fill32": 64, "fill64": 128}[name]
    refusal = TC_LAUNCHES[case]
    if refusal is None:
        kernel.prepare(grid=grid, block=block)(c)
        np.testing.assert_array_equal(to_host(c), np.zeros(shape, np.float32))
    else:
        with pytest.raises(ss.CoverageError) as info:
            kernel.prepare(grid=grid, block=block)(c)
        assert str(info.value).endswith(refusal), str(info.value)
        assert np.isnan(to_host(c)).all()  # nothing launched


def test_the_simulator_wraps_narrow_integer_arithmetic(tmp_path: Path) -> None:
    # DOC_GAPS simulator_narrow_int_wraps: -8.0 on the GPU (tests/ptx/test_port20_ptx.py)
    mod = _load_src(tmp_path, port20.LOW_NIBBLE)
    b = np.arange(16, dtype=np.uint8)
    out = to_device(np.full(16, np.nan, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "overflow in scalar subtract"
        mod.low_nibble.prepare(grid=1, block=64)(out, to_device(b))  # type: ignore[attr-defined]
    got = to_host(out)
    assert np.array_equal(got[:8], np.arange(8, dtype=np.float32))
    assert np.array_equal(got[8:], np.arange(248, 256, dtype=np.float32))  # the GPU: -8 .. -1


#: the spellings docs/checker.md ("Values, not bits") gives for the GPU's values -> whether
#: the simulator still wraps (a RuntimeWarning) on the way
NARROW_FIXES = {
    "((int(b) & 15) ^ 8) - 8": False,
    "((np.int64(b) & 15) ^ 8) - 8": False,
    "np.int8(((b & 15) ^ 8) - 8)": True,  # wraps in uint8, then the same bits as int8
}


@pytest.mark.parametrize("widened", sorted(NARROW_FIXES), ids=str)
def test_the_widenings_docs_checker_gives_match_the_gpu(tmp_path: Path, widened: str) -> None:
    # DOC_GAPS simulator_narrow_int_wraps, fixed: -8.0 .. -1.0 for the high half, as on the GPU
    mod = _load_src(tmp_path, port20.LOW_NIBBLE.replace("((b & 15) ^ 8) - 8", widened))
    b = np.arange(16, dtype=np.uint8)
    out = to_device(np.full(16, np.nan, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if NARROW_FIXES[widened] else "error", RuntimeWarning)
        mod.low_nibble.prepare(grid=1, block=64)(out, to_device(b))  # type: ignore[attr-defined]
    want = np.concatenate([np.arange(8), np.arange(-8, 0)]).astype(np.float32)
    np.testing.assert_array_equal(to_host(out), want)
