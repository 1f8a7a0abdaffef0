"""2D shared accumulators on the simulator: values of add/min/max at pairs (out of range:
skipped; reads out of range: 0), shape/size/len, each refusal with its message, and
``sim.check`` seeing the updates as atomics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.accumulator2d_rules import (
    ACCEPTED,
    COLS,
    FLOAT_INTO_INT,
    FLOAT_INTO_INT_EXPECTED,
    REFUSED,
    ROWS,
    expected,
)

pytestmark = pytest.mark.sim


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    idx = np.empty(256, np.int64)
    idx[0::2] = rng.integers(-1, ROWS + 1, 128)  # rows -1 .. ROWS: some out of range
    idx[1::2] = rng.integers(-1, COLS + 1, 128)
    return idx, rng.standard_normal(128).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_updates_and_reads_match_numpy(tmp_path: Path, seed: int) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED).k
    idx, val = _inputs(seed)
    out = cuda.to_device(np.zeros(128, np.float32))
    k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    np.testing.assert_array_equal(out.copy_to_host(), expected(idx, val))


def test_check_sees_atomics_and_reads_after_the_barrier(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED).k
    idx, val = _inputs(7)
    report = ss.sim.check(k, 1, 128, np.zeros(128, np.float32), idx, val)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], expected(idx, val))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        k = load_kernel_module(tmp_path, source).k
        out = cuda.to_device(np.zeros(128, np.float32))
        idx, val = _inputs(0)
        k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    assert fragment in str(info.value), str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD"), str(info.value)


def float_into_int(k: object) -> np.ndarray:
    """Run FLOAT_INTO_INT's kernel ``k``; its first five outputs."""
    val = np.zeros(128, np.float32)
    val[:5] = [np.nan, 1e10, -1.0, 3e9, -2.7]
    out = cuda.to_device(np.zeros(128, np.float32))
    idx = cuda.to_device(np.zeros(256, np.int64))
    k.prepare(grid=1, block=128)(out, idx, cuda.to_device(val))  # type: ignore[attr-defined]
    return out.copy_to_host()[:5]


def test_float_values_convert_as_the_gpu_converts(tmp_path: Path) -> None:
    """Toward zero, saturating, NaN to 0 (cvt.rzi); numpy's astype gave the integer minimum
    for NaN and 1e10 (attack round 22)."""
    k = load_kernel_module(tmp_path, FLOAT_INTO_INT).k
    np.testing.assert_array_equal(float_into_int(k), FLOAT_INTO_INT_EXPECTED)


@pytest.fixture
def source_rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No compile worker: the simulator's own checks decide (the GPU's verdict is absent)."""
    from simtsafe.lowering import _compileworker

    def unavailable(*args: object, **kwargs: object) -> None:
        raise _compileworker.Unavailable("no CUDA target in this test")

    monkeypatch.setattr(_compileworker, "verdict", unavailable)


@pytest.mark.filterwarnings("ignore:simtsafe. the compiled-form checks could not run")
@pytest.mark.parametrize("runner", ["launch", "sim.check"])
def test_static_shared_memory_is_added_up_by_the_simulator(
    tmp_path: Path, source_rules_only: None, runner: str
) -> None:
    """Two 32 KiB accumulators: the simulator's runtimes (Numba's and sim.check's) add up a
    block's shared arrays as the compiled form does (attack round 22); two of 16 KiB run."""
    source, _ = REFUSED["two-past-static-shared-memory"]
    idx, val = _inputs(0)
    for n, (shape, refused) in enumerate((("(4, 2048)", True), ("(4, 1024)", False))):
        (tmp_path / str(n)).mkdir()
        k = load_kernel_module(tmp_path / str(n), source.replace("(4, 2048)", shape)).k
        out = np.zeros(128, np.float32)

        def run(k: object = k, out: np.ndarray = out) -> None:
            if runner == "launch":
                k.prepare(grid=1, block=128)(  # type: ignore[attr-defined]
                    cuda.to_device(out), cuda.to_device(idx), cuda.to_device(val)
                )
            else:
                assert ss.sim.check(k, 1, 128, out, idx, val).ok

        if refused:
            with pytest.raises(ss.SafetyError, match="the block's shared objects take 65536 bytes"):
                run()
        else:
            run()


@pytest.mark.filterwarnings("ignore:simtsafe. the compiled-form checks could not run")
@pytest.mark.parametrize(
    "case",
    [
        "update-at-one-int",
        "update-at-a-triple",
        "update-at-a-float-pair",
        "read-at-one-int",
        "1d-updated-at-a-pair",
        "empty-axis",
        "three-axes",
        "past-static-shared-memory",
    ],
)
def test_simulator_refuses_in_the_compiled_forms_words(
    tmp_path: Path, source_rules_only: None, case: str
) -> None:
    """Without the compile worker the simulator's own twin decides, when the line runs: the
    same refusal, in the same words."""
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        k = load_kernel_module(tmp_path, source).k
        idx, val = _inputs(0)
        out = cuda.to_device(np.zeros(128, np.float32))
        k.prepare(grid=1, block=128)(out, cuda.to_device(idx), cuda.to_device(val))
    assert fragment in str(info.value), str(info.value)
