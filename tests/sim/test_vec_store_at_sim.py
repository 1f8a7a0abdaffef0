"""``vec.store_at`` on the simulator: the same refusals and values as on the GPU; a partial run
at the end writes nothing past the array; ``sim.check`` sees its stores (a race between two
writers of one run is reported, the twin with one writer per run is clean)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.vec_store_at_rules import ACCEPTED, BLOCK, RACY, REFUSED, SIZE, run_source

pytestmark = pytest.mark.sim


def _a() -> np.ndarray:
    return np.arange(1, SIZE + 1, dtype=np.float32)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    dtype = np.complex64 if "complex" in case else np.float32
    shape = (4, SIZE) if "2d" in case else (SIZE,)
    with pytest.raises(ss.SafetyError) as info:
        mod = load_kernel_module(tmp_path, source)
        grid, block = ((1, 1), (BLOCK, 4)) if "2d" in case else (1, BLOCK)
        mod.k.prepare(grid=grid, block=block)(
            cuda.to_device(np.zeros(shape, dtype)), cuda.to_device(_a())
        )
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_copies(tmp_path: Path, case: str) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    out = cuda.to_device(np.zeros(SIZE, np.float32))
    mod.k.prepare(grid=3, block=BLOCK)(out, cuda.to_device(_a()))
    np.testing.assert_array_equal(out.copy_to_host(), _a())


@pytest.mark.parametrize(("dt", "n"), [("np.float32", 4), ("np.int32", 2), ("np.int16", 8)])
def test_partial_last_run_stops_at_the_end(tmp_path: Path, dt: str, n: int) -> None:
    dtype = np.dtype(dt.split(".")[1])
    mod = load_kernel_module(tmp_path, run_source(dt, n))
    a = np.arange(1, SIZE + 1).astype(dtype)
    big = np.full(SIZE + 16, 7, dtype)  # the output is a view: nothing past it is written
    d_big = cuda.to_device(big)
    mod.k.prepare(grid=3, block=BLOCK)(d_big[:SIZE], cuda.to_device(a))
    got = d_big.copy_to_host()
    np.testing.assert_array_equal(got[:SIZE], a)
    np.testing.assert_array_equal(got[SIZE:], big[SIZE:])


def test_check_finds_no_race_with_one_writer_per_run(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED["a-run-of-four"])
    report = ss.sim.check(mod.k, 1, BLOCK, np.zeros(SIZE, np.float32), _a())
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], _a())


def test_check_reports_two_writers_of_a_run(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RACY)
    report = ss.sim.check(mod.k, 1, BLOCK, np.zeros(SIZE, np.float32), _a())
    races = report.of_kind("race")
    assert races and races[0].array == "out", report
    assert all(loc[1] == line_of(tmp_path, "# BAD") for loc in races[0].locations)
