"""Constant arrays in Tier 1 on the simulator (tests/kernels/constmem_cases.py): values match
numpy (a read out of range is 0), ``simtsafe.sim.check`` replays them clean, the values are
the array's at the first compile, and every refused route is refused here with the message
the GPU compile gives. The value tests run on a GPU too (tests/gpu/test_constmem_gpu.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe.lowering import _tiles_sim
from simtsafe.lowering._construle import READ_ONLY, bad_index
from tests.kernels import constmem_cases as cases
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim


def _indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices, some out of range on each side (-1, 3 / -1, 4)."""
    rng = np.random.default_rng(7)
    return rng.integers(-1, 4, n).astype(np.int32), rng.integers(-1, 5, n).astype(np.int32)


def _lut_or_zero(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    inside = (r >= 0) & (r < 3) & (c >= 0) & (c < 4)
    return np.where(inside, cases.LUT[np.clip(r, 0, 2), np.clip(c, 0, 3)], 0).astype(np.float32)


def test_the_blur_filter_in_constant_memory_matches_numpy(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, cases.BLUR)
    x = np.random.default_rng(3).standard_normal(150).astype(np.float32)
    out = cuda.to_device(np.full(150, np.nan, np.float32))
    m.blur1d.prepare(grid=3, block=64)(out, cuda.to_device(x))
    want = np.convolve(x, cases.FILT, mode="same")
    np.testing.assert_allclose(out.copy_to_host(), want, rtol=1e-5, atol=1e-6)


def test_a_2d_lookup_table_reads_its_element_or_zero_out_of_range(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, cases.LUT2D)
    r, c = _indices(100)
    out = cuda.to_device(np.full(100, np.nan, np.float32))
    m.lut2d.prepare(grid=2, block=64)(out, cuda.to_device(r), cuda.to_device(c))
    got = out.copy_to_host()
    np.testing.assert_array_equal(got, _lut_or_zero(r, c))
    assert ((r < 0) | (r > 2) | (c < 0) | (c > 3)).any()  # the zeros were exercised


def test_a_table_read_in_a_helper_and_made_in_one(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, cases.HELPER)
    r, c = _indices(100)
    out = cuda.to_device(np.full(100, np.nan, np.float32))
    m.lut_helper.prepare(grid=2, block=64)(out, cuda.to_device(r), cuda.to_device(c))
    bias = np.where((r >= 0) & (r < 3), np.array([10, 20, 30])[np.clip(r, 0, 2)], 0)
    np.testing.assert_array_equal(out.copy_to_host(), _lut_or_zero(r, c) + bias)


@pytest.mark.parametrize("name", ["uniform", "uniform_beside_unsafe"])
@pytest.mark.parametrize("k", [0, 3])
def test_a_constant_read_at_a_uniform_index_steers_a_collective(
    tmp_path: Path, k: int, name: str
) -> None:
    # t[1, 0] = 4.0 > 0: every block sums; t[1, 3] = 8.5 > 0 too; k = 3 past no end
    m = load_kernel_module(tmp_path, cases.ACCEPTED[name])
    x = np.arange(128, dtype=np.float32)
    out = cuda.to_device(np.full(128, np.nan, np.float32))
    m.steer.prepare(grid=2, block=64)(out, cuda.to_device(x), np.int64(k))
    want = np.repeat([x[:64].sum(), x[64:].sum()], 64).astype(np.float32)
    np.testing.assert_array_equal(out.copy_to_host(), want)


def test_an_out_of_range_uniform_index_reads_zero_and_skips_the_collective(
    tmp_path: Path,
) -> None:
    m = load_kernel_module(tmp_path, cases.UNIFORM)
    x = np.arange(128, dtype=np.float32)
    out = cuda.to_device(np.full(128, np.nan, np.float32))
    m.steer.prepare(grid=2, block=64)(out, cuda.to_device(x), np.int64(4))  # t[1, 4]: 0
    np.testing.assert_array_equal(out.copy_to_host(), x)


def test_the_values_are_the_arrays_at_the_first_compile(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, cases.LUT2D)
    r, c = _indices(64)
    out = cuda.to_device(np.zeros(64, np.float32))
    launch = m.lut2d.prepare(grid=1, block=64)
    m.LUT[:] = 1000  # after the compile: the kernel keeps its copy
    launch(out, cuda.to_device(r), cuda.to_device(c))
    np.testing.assert_array_equal(out.copy_to_host(), _lut_or_zero(r, c))


@pytest.mark.parametrize("name", ["blur", "lut2d", "helper"])
def test_sim_check_replays_a_constant_array_kernel_clean(tmp_path: Path, name: str) -> None:
    m = load_kernel_module(tmp_path, cases.ACCEPTED[name])
    (kernel,) = (v for v in vars(m).values() if isinstance(v, ss.Kernel))
    if name == "blur":
        args = (cuda.to_device(np.zeros(100, np.float32)), cuda.to_device(np.ones(100, np.float32)))
    else:
        r, c = _indices(100)
        out = cuda.to_device(np.zeros(100, np.float32))
        args = (out, cuda.to_device(r), cuda.to_device(c))
    report = ss.sim.check(kernel, 2, 64, *args)
    assert report.ok, report.findings


@pytest.mark.parametrize("name", sorted(cases.REFUSED))
def test_a_route_to_write_or_misuse_a_constant_array_is_refused(tmp_path: Path, name: str) -> None:
    source, where, message = cases.REFUSED[name]
    if where == "decoration":
        with pytest.raises(ss.SafetyError, match=message) as info:
            load_kernel_module(tmp_path, source)
    else:
        m = load_kernel_module(tmp_path, source)  # decorates: refused at the first compile
        second = np.float32 if name == "divergent_steer" else np.int32
        args = (cuda.to_device(np.zeros(64, np.float32)), cuda.to_device(np.zeros(64, second)))
        with pytest.raises(ss.SafetyError, match=message) as info:
            m.bad.prepare(grid=1, block=64)(*args)
    assert "kernel 'bad'" in str(info.value)


def test_the_simulators_constant_array_refuses_what_the_typing_refuses() -> None:
    # the rules the simulator applies itself where no CUDA target can type the kernel
    make = _tiles_sim.builtins(proven_domain=1)["__ss_const_array"]
    lut = cases.LUT.copy()
    lut.setflags(write=False)
    t = make(lut)
    assert t[2, 3] == cases.LUT[2, 3] and t[3, 0] == 0 and t[-1, 0] == 0 and t.shape == (3, 4)
    with pytest.raises(ss.SafetyError, match=re.escape(READ_ONLY)):
        t[0, 0] = 1.0
    with pytest.raises(ss.SafetyError, match=re.escape(bad_index(2))):
        t[1:]
    with pytest.raises(ss.SafetyError, match="cannot be iterated"):
        iter(t)
    with pytest.raises(ss.SafetyError, match="an array of records"):
        make(np.zeros(2, [("x", np.float32)]))
