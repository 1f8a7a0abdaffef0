"""``simtsafe.sim.check`` as an API: the report, strict mode, limits, arguments, isolation."""

from __future__ import annotations

import json
import threading

import numba.cuda
import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe import sim
from simtsafe.lowering import _simrt

from . import corpus_raw as R
from . import corpus_ss as S
from . import semantics_kernels as K


def _reduce_args() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(2, np.float32), np.arange(128, dtype=np.float32)


def test_arguments_are_copied_and_outputs_returned() -> None:
    out, x = _reduce_args()
    report = sim.check(R.reduce_nobarrier_ok, 2, 64, out, x)
    assert report.ok
    assert not out.any()  # the caller's array is untouched
    assert list(report.outputs["out"]) == [x[:64].sum(), x[64:].sum()]
    assert report.stats["threads"] == 128 and report.stats["blocks"] == 2
    assert report.stats["barriers"] == 2 * 7 and report.stats["accesses"] > 0


def test_finding_fields_text_and_json() -> None:
    report = sim.check(R.reduce_nobarrier_bug, 2, 64, *_reduce_args())
    [f] = report.findings
    assert f.kind == "race" and f.array == "shared" and len(f.index or ()) == 1
    assert set(f.accesses) <= {"read", "write"} and f.count > 1
    assert all(path.endswith("corpus_raw.py") for path, _ in f.locations)
    assert isinstance(f.threads[0], sim.ThreadRef) and f.threads[0].block == (0, 0, 0)
    assert f.threads[0] != f.threads[1]
    text = str(report)
    assert "race on shared[" in text and "tile[tid] += tile[tid + s]  # BUG" in text
    assert "by block (0, 0, 0) thread (" in text and "1 finding(s) (1 race)" in text
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["complete"] is True
    assert data["findings"][0]["kind"] == "race"
    assert data["findings"][0]["threads"][0] == {
        "block": [0, 0, 0],
        "thread": list(f.threads[0].thread),
    }
    assert data["findings"][0]["locations"][0]["line"] == f.locations[0][1]


def test_same_inputs_same_report() -> None:
    def run() -> dict[str, object]:
        data = json.loads(
            sim.check(
                R.scan_bug, 2, 64, np.zeros(128, np.float32), np.ones(128, np.float32)
            ).to_json()
        )
        data["stats"].pop("time_s")
        return data

    assert run() == run()


def test_strict_mode_raises_with_the_report() -> None:
    with pytest.raises(ss.KernelCheckError) as info:
        sim.check(R.reduce_nobarrier_bug, 2, 64, *_reduce_args(), strict=True)
    err = info.value
    assert isinstance(err, ss.SafetyError) and err.rule == "sim-check"
    assert err.report.findings[0].kind == "race" and "race on shared[" in str(err)
    assert err.lineno == err.report.findings[0].locations[1][1]
    assert sim.check(R.reduce_nobarrier_ok, 2, 64, *_reduce_args(), strict=True).ok


def test_assert_clean() -> None:
    with pytest.raises(AssertionError, match=r"race on shared\["):
        sim.assert_clean(R.reduce_nobarrier_bug, 2, 64, *_reduce_args())
    assert sim.assert_clean(R.reduce_nobarrier_ok, 2, 64, *_reduce_args()).ok


def test_step_limit_stops_a_spinning_kernel() -> None:
    report = sim.check(K.spin, 1, 1, np.zeros(1, np.int32), max_steps=1000)
    assert not report.complete and not report.ok
    assert report.stopped is not None and "max_steps" in report.stopped
    assert "INCOMPLETE" in str(report)


def test_time_limit_stops_a_kernel_without_memory_accesses() -> None:
    report = sim.check(K.busy, 1, 2, timeout=0.2)
    assert not report.complete
    assert report.stopped is not None and "time limit" in report.stopped


def test_kernel_exception_names_the_thread() -> None:
    with pytest.raises(ZeroDivisionError) as info:
        sim.check(K.divide, 1, 4, np.zeros(4, np.int32), np.array([1, 1, 0, 1], np.int32))
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "block (0, 0, 0) thread (2, 0, 0)" in notes and "'divide'" in notes


def test_grid_and_block_as_keywords() -> None:
    report = sim.check(R.reduce_nobarrier_ok, *_reduce_args(), grid=2, block=(64,))
    assert report.ok and report.block == (64, 1, 1)


def test_contract_is_checked_before_the_replay() -> None:
    with pytest.raises(ss.BlockShapeMismatch):
        sim.check(S.ss_reduce_ok, 4, 32, np.zeros(4, np.float32), np.ones(128, np.float32))


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((np.zeros(2, np.float32),), "takes 2 argument(s)"),
        (([0.0, 1.0], np.zeros(2, np.float32)), "got list"),
    ],
)
def test_bad_arguments(args: tuple[object, ...], fragment: str) -> None:
    with pytest.raises(TypeError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        sim.check(R.reduce_nobarrier_ok, 2, 64, *args)


def test_simtsafe_argument_dtype_is_checked() -> None:
    with pytest.raises(
        TypeError, match=r"parameter 'x' is In \(1D float32\), got a 1D float64 array"
    ):
        sim.check(S.ss_reduce_ok, 2, 64, np.zeros(2, np.float32), np.ones(128))


@pytest.mark.parametrize("bad", [0, (1, 2, 3, 4), 1.5])
def test_bad_launch_shape(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="grid"):
        sim.check(R.reduce_nobarrier_ok, bad, 64, *_reduce_args())


def test_not_a_kernel() -> None:
    with pytest.raises(TypeError, match="takes a @simtsafe.kernel"):
        sim.check(object(), 1, 1)
    with pytest.raises(TypeError, match="device helper"):
        sim.check(K.ss_bump, 1, 1)


def test_closures_are_replayed() -> None:
    scale = np.float32(3)

    @cuda.jit
    def scaled(out, x):
        i = cuda.grid(1)
        out[i] = x[i] * scale

    report = sim.check(scaled, 1, 4, np.zeros(4, np.float32), np.arange(4, dtype=np.float32))
    assert report.ok and list(report.outputs["out"]) == [0, 3, 6, 9]


def test_plain_python_function_is_a_kernel_too() -> None:
    def kernel(out):
        out[numba.cuda.threadIdx.x] = 1

    report = sim.check(kernel, 1, 4, np.zeros(4, np.int32))
    assert report.ok and list(report.outputs["out"]) == [1, 1, 1, 1]


def test_the_rest_of_the_process_is_untouched() -> None:
    stack = threading.stack_size()
    before = dict(R.reduce_nobarrier_ok.py_func.__globals__)
    sim.check(R.reduce_nobarrier_bug, 2, 64, *_reduce_args())
    assert R.cuda is numba.cuda and R.reduce_nobarrier_ok.py_func.__globals__ == before
    assert threading.stack_size() == stack
    # the main thread still sees Numba's simulator as its runtime (none is installed)
    assert type(_simrt.current()).__name__ == "_NumbaSimulatorRuntime"
    assert threading.active_count() < 8  # the replay's threads are gone


def test_each_kind_has_a_message() -> None:
    from .cases import BY_NAME

    fragments = {
        "race": "are not ordered",
        "barrier_divergence": "must reach",
        "warp_mask": "mask",
        "out_of_bounds": "is out of bounds",
        "uninitialized": "no thread wrote it",
    }
    for name in ("reduce_nobarrier", "early_return", "shfl_in_branch", "halo_oob", "halo_uninit"):
        case = BY_NAME[name]
        report = sim.check(case.bug, case.grid, case.block, *case.args())
        f = next(f for f in report.findings if f.kind == case.kind)
        assert fragments[case.kind] in f.message, f.message


def test_race_between_blocks_says_so() -> None:
    report = sim.check(
        R.neighbor_write_bug, 2, 64, np.zeros(128, np.float32), np.ones(128, np.float32)
    )
    [f] = report.findings
    assert "different blocks" in f.message
    assert f.threads[0].block != f.threads[1].block
    assert f.accesses == ("write", "write") and f.index == (64,)


def test_tuple_of_scalars_is_passed_by_value() -> None:
    def kernel(out, pair):
        out[numba.cuda.threadIdx.x] = pair[0] + pair[1]

    report = sim.check(kernel, 1, 2, np.zeros(2, np.int32), (3, 4))
    assert report.ok and list(report.outputs["out"]) == [7, 7]
