"""Porting round 20 (tests/kernels/port20.py): each ported Tier-1 kernel gives numpy's values on
the simulator (several also replay clean under ``simtsafe.sim.check``); the round's launch-time
false refusal (``covers`` of a tensor-core output tile), the compile worker's refusal of a bf16
widening before a collective, and the simulator's narrow-integer arithmetic (a doc gap) are
pinned with what they give today."""

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


def test_covers_counts_an_mma_tile_as_one_element_a_thread(tmp_path: Path) -> None:
    # FALSE_REFUSALS covers_mma_out_tile, BAD_ERRORS coverage_mma_grid_advice
    mod = _load_src(tmp_path, port20.BMM_COVERS)
    nb = 3
    a = np.ones((nb * 16, 16), np.float16)
    c = to_device(np.full((nb * 16, 16), np.nan, np.float32))
    p = mod.bmm16.prepare(grid=(1, nb), block=32)  # type: ignore[attr-defined]
    with pytest.raises(ss.CoverageError) as info:
        p(c, to_device(a), to_device(a))
    msg = str(info.value)
    assert "the launch owns 3 along axis 0 and 'c' has 48" in msg
    assert "Prepare with grid.y = simtsafe.cover(48, 1) (= 48)" in msg
    assert "thread.tile_1d / tile_2d / tile_2d_strided" in msg and "mma" not in msg
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
