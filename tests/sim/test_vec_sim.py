"""simtsafe.vec.load on the simulator: values, edge runs, zeros outside, refusals, sim.check."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe import sim
from tests.kernels import load_kernel_module
from tests.kernels.vec_cases import (
    LOAD_RUNS_REFUSED,
    LOAD_RUNS_SOURCE,
    RUNS_SOURCE,
    gemv_reference,
    gemv_source,
    load_runs_reference,
    runs_reference,
)


@pytest.mark.parametrize(
    ("dt", "n"), [("float32", 4), ("float16", 8), ("int32", 2), ("float64", 2)]
)
@pytest.mark.parametrize("shift", [0, 2, -1])
def test_runs_values_and_zeros_outside(tmp_path: Path, dt: str, n: int, shift: int) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt=dt, n=n))
    a = (np.arange(3 * n + 1) + 1).astype(dt)  # 3 whole runs and a partial tail
    nthreads = 6
    out = np.full((nthreads, n), 99, dt)
    d_out = cuda.to_device(out)
    mod.runs.prepare(grid=1, block=(n, nthreads))(d_out, cuda.to_device(a), np.int64(shift))
    np.testing.assert_array_equal(d_out.copy_to_host(), runs_reference(a, n, nthreads, shift))


def test_gemv_matches_numpy(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, gemv_source("float32", 4))
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 68)).astype(np.float32)  # rows of 272 bytes: 16-byte aligned
    x = rng.standard_normal(68).astype(np.float32)
    y = cuda.to_device(np.zeros(4, np.float32))  # 4 warps, row 3 past the end reads zeros
    mod.gemv.prepare(grid=1, block=128)(y, cuda.to_device(w), cuda.to_device(x))
    got = y.copy_to_host()
    np.testing.assert_allclose(got[:3], gemv_reference(w, x), rtol=1e-5, atol=1e-5)
    assert got[3] == 0


def test_check_records_each_element_read(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt="float32", n=4))
    a = np.arange(10, dtype=np.float32)
    report = sim.check(mod.runs, 1, (4, 3), np.zeros((3, 4), np.float32), a, np.int64(0))
    assert report.ok, str(report)
    np.testing.assert_array_equal(report.outputs["out"], runs_reference(a, 4, 3, 0))
    assert report.stats["accesses"] >= 3 * 4 * 4  # every thread reads its run element by element


@pytest.mark.parametrize(
    ("dt", "n", "message"),
    [
        ("float32", 8, "vec.load's run must be 4, 8 or 16 bytes; 8 elements of 4 bytes are 32"),
        ("float32", 3, "vec.load's run length n must be a compile-time int in (2, 4, 8); got 3"),
        ("float32", "shift", "got a value known only at run time"),
        ("float64", 4, "are 32. Use n = 2 (16 bytes)\n"),
    ],
)
def test_refused_run_sizes(tmp_path: Path, dt: str, n: int | str, message: str) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt=dt, n=n))
    out = cuda.to_device(np.zeros((2, 4), dt))
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        mod.runs.prepare(grid=1, block=(4, 2))(out, cuda.to_device(np.zeros(16, dt)), np.int64(4))


def test_launch_refuses_a_misaligned_run_input(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt="float32", n=4))
    base = cuda.to_device(np.arange(64, dtype=np.float32))
    out = cuda.to_device(np.zeros((3, 4), np.float32))
    launch = mod.runs.prepare(grid=1, block=(4, 3))
    with pytest.raises(ss.ArgumentTypeError) as info:
        launch(out, base[1:], np.int64(0))
    message = str(info.value)
    assert "kernel 'runs' reads input 'a' in 16-byte runs (simtsafe.vec.load)" in message
    assert "its data pointer 0x" in message and "is not a multiple of 16" in message
    assert "copy it, or pad the rows; or declare vec_alignment='any'" in message
    launch(out, base[4:], np.int64(0))  # the aligned twin: 16 bytes in
    np.testing.assert_array_equal(
        out.copy_to_host(), np.arange(4, 16, dtype=np.float32).reshape(3, 4)
    )


def test_launch_refuses_a_misaligned_row_pitch(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, gemv_source("float32", 4))
    x = cuda.to_device(np.ones(70, np.float32))
    y = cuda.to_device(np.zeros(2, np.float32))
    launch = mod.gemv.prepare(grid=1, block=64)
    with pytest.raises(
        ss.ArgumentTypeError, match=r"reads input 'w' in 16-byte runs .* row pitch 0x118 "
    ):
        launch(y, cuda.to_device(np.ones((2, 70), np.float32)), x)  # rows of 280 bytes
    launch(y, cuda.to_device(np.ones((2, 72), np.float32)), cuda.to_device(np.ones(72, np.float32)))
    np.testing.assert_array_equal(y.copy_to_host(), [72, 72])


def test_vec_alignment_any_runs_misaligned_inputs_on_the_element_path(tmp_path: Path) -> None:
    """The contract's opt-in: the launches refused above run, and read the same values."""
    source = gemv_source("float32", 4).replace(
        "@ss.kernel\n", '@ss.kernel(contract=ss.LaunchContract(vec_alignment="any"))\n'
    )
    mod = load_kernel_module(tmp_path, source)
    assert mod.gemv.contract.vec_alignment == "any"
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 70)).astype(np.float32)  # rows of 280 bytes: a ragged pitch
    x = rng.standard_normal(71).astype(np.float32)
    y = cuda.to_device(np.zeros(2, np.float32))
    d_x = cuda.to_device(x)
    mod.gemv.prepare(grid=1, block=64)(y, cuda.to_device(w), d_x[1:])  # a pointer 4 bytes in
    np.testing.assert_allclose(y.copy_to_host(), gemv_reference(w, x[1:]), rtol=1e-5)

    runs = load_kernel_module(
        tmp_path,
        RUNS_SOURCE.format(dt="float32", n=4).replace(
            "@ss.kernel\n",
            '@ss.kernel(contract=ss.LaunchContract(domain=2, vec_alignment="any"))\n',
        ),
    ).runs
    base = np.arange(64, dtype=np.float32)
    out = cuda.to_device(np.zeros((3, 4), np.float32))
    runs.prepare(grid=1, block=(4, 3))(out, cuda.to_device(base)[1:], np.int64(0))
    np.testing.assert_array_equal(out.copy_to_host(), runs_reference(base[1:], 4, 3, 0))


def test_vec_alignment_takes_only_its_two_values() -> None:
    with pytest.raises(ValueError, match="vec_alignment"):
        ss.LaunchContract(vec_alignment="sometimes")  # type: ignore[arg-type]


def test_misaligned_after_memoized_aligned_launches_is_refused(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt="float16", n=8))
    base = cuda.to_device(np.arange(64, dtype=np.float16))
    out = cuda.to_device(np.zeros((2, 8), np.float16))
    launch = mod.runs.prepare(grid=1, block=(8, 2))
    for _ in range(3):  # the generated checker and the memo of checked argument sets
        launch(out, base[8:], np.int64(0))
    with pytest.raises(ss.ArgumentTypeError, match=r"'a' in 16-byte runs .* data pointer 0x"):
        launch(out, base[4:], np.int64(0))  # 8 bytes in: aligned to 8, not 16


def test_bf16_runs_read_as_float32(tmp_path: Path) -> None:
    from tests.ptx.test_vec_ptx import BF16_RUNS

    mod = load_kernel_module(tmp_path, BF16_RUNS)
    a = (np.arange(3 * 8 + 1) * 0.37 - 2).astype(ss.bfloat16)  # 3 whole runs and a tail
    nthreads = 6
    d_out = cuda.to_device(np.full((nthreads, 8), 99, np.float32))
    mod.runs.prepare(grid=1, block=(8, nthreads))(d_out, cuda.to_device(a), np.int64(0))
    want = runs_reference(a.astype(np.float32), 8, nthreads, 0)
    np.testing.assert_array_equal(d_out.copy_to_host(), want)


def run_load_runs(mod: Any, n: int, cols: int, shift: int, step: int) -> tuple[Any, Any]:
    """LOAD_RUNS_SOURCE on a 3 x ``cols`` input of values 1..97, 6 runs a row: what it
    wrote, and the reference."""
    a = (np.arange(3 * cols) % 97 + 1).astype(np.float32).reshape(3, cols)
    nthreads = 6
    d_out = cuda.to_device(np.full((nthreads, n), -1, np.float32))
    mod.runs3.prepare(grid=1, block=(n, nthreads))(
        d_out, cuda.to_device(a), np.int64(shift), np.int64(step)
    )
    return d_out.copy_to_host(), load_runs_reference(a, n, nthreads, shift, step)


# Rows of whole runs (the launch refuses a row pitch that is no multiple of the run), runs
# before the row and past it: each run as vec.load would read it.
@pytest.mark.parametrize(("n", "cols"), [(4, 24), (4, 20), (2, 14)])
@pytest.mark.parametrize(("shift", "step"), [(0, 0), (0, 1), (-1, 2), (2, -1)])
def test_load_runs_reads_each_run_as_vec_load(
    tmp_path: Path, n: int, cols: int, shift: int, step: int
) -> None:
    got, want = run_load_runs(
        load_kernel_module(tmp_path, LOAD_RUNS_SOURCE.format(n=n)), n, cols, shift, step
    )
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", sorted(LOAD_RUNS_REFUSED))
def test_load_runs_refusals(tmp_path: Path, case: str) -> None:
    source, message = LOAD_RUNS_REFUSED[case]
    mod = load_kernel_module(tmp_path, source)
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        run_load_runs(mod, 4, 24, 0, 1)
