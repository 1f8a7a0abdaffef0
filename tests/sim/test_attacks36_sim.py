"""Attack round 36 (tests/kernels/attacks36.py) on the simulator: sim.check's collectives
that some threads skip.

FINDING 1 (fixed): two block collectives on one line taken by different threads were one
exchange and one barrier (no finding). FINDING 2 (pinned): lanes at two different warp
collectives are released together as one ``syncwarp`` (no ``warp_mask``).

Held: 8 skipped collectives reported with their kind, 3 correct kernels without a finding,
an undefined argument reported as ``uninitialized``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lowering import _coop_sim
from tests.kernels import load_kernel_module
from tests.kernels.attacks36 import (
    CORRECT,
    SKIPPED_REPORTED,
    TERNARY_SUM_MAX,
    TERNARY_SUM_SUM,
    UNDEFINED_ARGUMENT,
    WARP_ORDERS,
    WARP_ORDERS_SYNCWARP,
    WARP_TERNARY,
    WARP_TWO_SITES,
)
from tests.kernels.race_differential import launch_args

pytestmark = pytest.mark.sim


def _replay(tmp_path: Path, source: str) -> ss.sim.CheckReport:
    kernel = load_kernel_module(tmp_path, source).k
    return ss.sim.check(kernel, 1, 64, *launch_args(1, 64, 1))


@pytest.mark.parametrize("source", [TERNARY_SUM_MAX, TERNARY_SUM_SUM], ids=["sum-max", "sum-sum"])
def test_two_collectives_on_one_line_are_two_barriers(tmp_path: Path, source: str) -> None:
    # FINDING 1: warp 0 takes one call, warp 1 the other; they were one exchange
    (found,) = _replay(tmp_path, source).findings
    assert found.kind == "barrier_divergence", found
    assert "wait at different barriers" in found.message, found
    assert "thread (0, 0, 0) at line 11 and" in found.message, found
    assert "thread (32, 0, 0) at line 11;" in found.message, found


def test_a_uniform_choice_of_two_collectives_on_one_line_is_clean(tmp_path: Path) -> None:
    # FINDING 1's twin: every thread takes the same call
    report = _replay(tmp_path, CORRECT["uniform-ternary"])
    assert report.ok, report


@pytest.mark.parametrize("source", [WARP_TWO_SITES, WARP_TERNARY], ids=["two-lines", "ternary"])
def test_lanes_at_two_warp_collectives_are_a_warp_mask(tmp_path: Path, source: str) -> None:
    # FINDING 2: they met as one syncwarp, each reading its own exchange (no finding)
    (found,) = _replay(tmp_path, source).findings
    assert found.kind == "warp_mask", found
    assert "lanes 0 and 1 of warp 0 meet at different warp collectives: warp.sum" in found.message
    assert "and warp.max with mask 0xffffffff" in found.message, found


def test_lanes_at_one_warp_collective_meet(tmp_path: Path) -> None:
    # FINDING 2's twin: one call, the lanes taking it under a uniform choice
    report = _replay(tmp_path, WARP_TERNARY.replace("cuda.threadIdx.x % 2 == 0", "n > 0"))
    assert report.ok, report


def test_a_warp_collective_orders_no_memory(tmp_path: Path) -> None:
    # FINDING 4: the replay met the lanes at a syncwarp, which orders their accesses
    (found,) = _replay(tmp_path, WARP_ORDERS).findings
    assert found.kind == "race", found
    assert found.message.startswith("the write of shared[1] (the shared array declared at line"), (
        found
    )
    assert "lanes of one warp are ordered only by syncwarp or a block barrier" in found.message
    # the twin: a syncwarp orders them
    assert _replay(tmp_path, WARP_ORDERS_SYNCWARP).ok


@pytest.mark.parametrize("name", sorted(SKIPPED_REPORTED))
def test_a_skipped_collective_is_reported(tmp_path: Path, name: str) -> None:
    source, kind, words = SKIPPED_REPORTED[name]
    report = _replay(tmp_path, source)
    assert report.findings, report
    assert {f.kind for f in report.findings} == {kind}, report
    assert any(words in f.message for f in report.findings), report


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_kernel_has_no_finding(tmp_path: Path, name: str) -> None:
    report = _replay(tmp_path, CORRECT[name])
    assert report.ok, report


def test_an_undefined_collective_argument_is_uninitialized(tmp_path: Path) -> None:
    report = _replay(tmp_path, UNDEFINED_ARGUMENT)
    assert report.findings, report
    assert {f.kind for f in report.findings} == {"uninitialized"}, report
    assert any("passed to block.sum" in f.message for f in report.findings), report


@pytest.mark.parametrize("name", sorted(SKIPPED_REPORTED) + sorted(CORRECT))
def test_a_replay_leaves_no_collective_memo(tmp_path: Path, name: str) -> None:
    # FINDING 3: the memo of an exchange some threads skipped was kept for the life of the
    # process (with its exchange array): its parties counted the whole block (warp). The
    # correct kernels are the twins (every thread arrives, as before).
    before = set(_coop_sim._MEMO)
    source = SKIPPED_REPORTED[name][0] if name in SKIPPED_REPORTED else CORRECT[name]
    _replay(tmp_path, source)
    assert set(_coop_sim._MEMO) <= before, _coop_sim._MEMO


@pytest.mark.filterwarnings("ignore:simtsafe. the compiled-form checks could not run")
def test_a_collective_that_raises_leaves_no_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FINDING 6: on Numba's simulator the first thread whose collective raises (a complex
    # value) aborts the launch; the others never came back to the memo, which stayed for the
    # rest of the process (a later test asserting `not _MEMO` failed in a full run)
    from numba import cuda

    from simtsafe.lowering import _compileworker
    from tests.kernels import port21

    def unavailable(*args: object, **kwargs: object) -> None:
        raise _compileworker.Unavailable("no CUDA target in this test")

    monkeypatch.setattr(_compileworker, "verdict", unavailable)
    before = set(_coop_sim._MEMO)
    mod = load_kernel_module(tmp_path, port21.EXTRA_HEADER + port21.ROW_DC)
    with pytest.raises(ss.SafetyError, match="got complex64. A complex value goes as its two"):
        mod.row_dc.prepare(grid=2, block=64)(
            cuda.to_device(np.zeros(2, np.complex64)),
            cuda.to_device(np.ones((2, 10), np.complex64)),
        )
    assert set(_coop_sim._MEMO) <= before, _coop_sim._MEMO
