"""Attack round 10 on whole-tile fills, on the simulator: each refusal of
tests/kernels/attacks10.py at decoration; each twin clean under ``sim.check`` and equal to
numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.attacks10 import ACCEPTED, COMPILED_ONLY, REFUSED, SIM_ARGS

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_attack_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def _expected(case: str, a: np.ndarray) -> np.ndarray:
    """What ``out`` holds after each twin (thread x of 64)."""
    x = np.arange(64)
    if case == "assert-then-a-barrier":  # the transposed fill last: t[c, r] = a[r, c]
        return a[x % 16, x // 16]
    if case == "transposed-barrier-async":  # the asynchronous fill last
        return a[x // 16, x % 16]
    if case == "transposed-twice":  # t[c, r] = a[r, c], both fills from (0, 0)
        return a[(x + 1) % 8, x // 8]
    if case == "wait-group-by-keyword":
        return a[(x + 1) % 64]
    return a[64 + (x + 1) % 64]  # the second fill, from element 64


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_twin_is_clean_and_right(tmp_path: Path, case: str) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    a = np.arange(256, dtype=np.float32)
    if SIM_ARGS[case] == "2d":
        a = a.reshape(16, 16)
    report = ss.sim.check(mod.k, 1, 64, np.zeros(64, np.float32), a, np.int64(0))
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], _expected(case, a))


@pytest.mark.parametrize("case", sorted(COMPILED_ONLY))
def test_compiled_only_cases_race_on_the_simulator(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the phase analysis off, the replay finds what the compiled form refuses: the
    cases are real races, not conservative refusals."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    mod = load_kernel_module(tmp_path, COMPILED_ONLY[case][0])
    a = np.arange(256, dtype=np.float32)
    if "transposed" in case:
        a = a.reshape(16, 16)
    if "async-again" in case or "loop" in case:
        # the thread's own copies of one element, both in flight: the replay stops there
        with pytest.raises(ss.SafetyError, match="may still be in flight") as info:
            ss.sim.check(mod.k, 1, 64, np.zeros(64, np.float32), a, np.int64(0))
        assert info.value.rule == "tile-phase"
        return
    report = ss.sim.check(mod.k, 1, 64, np.zeros(64, np.float32), a, np.int64(0))
    assert not report.ok, report
    assert "race on shared" in str(report), report
