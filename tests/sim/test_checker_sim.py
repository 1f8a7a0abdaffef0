"""simtsafe.sim.check with NUMBA_ENABLE_CUDASIM=1: same verdicts, and the simulator still works.

The checker runs kernels under its own replay, so it must give the corpus's
verdicts whether or not Numba's simulator is active, accept the simulator's
kernels and device arrays, and leave the simulator's own launches alone.
"""

from __future__ import annotations

import pytest
from numba import cuda

from simtsafe import sim
from tests.checker.cases import BY_NAME, Case

SAMPLE = [
    "reduce_nobarrier",
    "warp_partial",
    "last_block",
    "grid_sync_divergent",
    "hist_shared_uninit",
    "halo_oob",
    "ss_reduce",
    "ss_transpose",
]


@pytest.mark.parametrize("case", [BY_NAME[n] for n in SAMPLE], ids=lambda c: c.name)
def test_corpus_verdicts_on_the_simulator(case: Case) -> None:
    bug = sim.check(case.bug, case.grid, case.block, *case.args())
    assert case.kind in {f.kind for f in bug.findings}, str(bug)
    assert {line for f in bug.findings for line in f.lines} & case.bug_lines()
    ok = sim.check(case.ok, case.grid, case.block, *case.args())
    assert ok.ok, str(ok)


def test_device_arrays_are_copied_not_modified() -> None:
    case = BY_NAME["reduce_nobarrier"]
    out, x = case.args()
    d_out, d_x = cuda.to_device(out), cuda.to_device(x)
    report = sim.check(case.ok, case.grid, case.block, d_out, d_x)
    assert report.ok
    assert not d_out.copy_to_host().any()
    assert list(report.outputs["out"]) == list(x.reshape(2, 64).sum(axis=1))


def test_prepared_launch_gives_grid_and_block() -> None:
    case = BY_NAME["ss_reduce"]
    prepared = case.bug.prepare(grid=case.grid, block=case.block)
    report = sim.check(prepared, *case.args())
    assert report.grid == (2, 1, 1) and report.block == (64, 1, 1)
    assert {f.kind for f in report.findings} == {"race"}


def test_the_simulator_still_launches_after_a_check() -> None:
    case = BY_NAME["ss_reduce"]
    sim.check(case.ok, case.grid, case.block, *case.args())
    out, x = case.args()
    d_out = cuda.to_device(out)
    case.ok.prepare(grid=case.grid, block=case.block)(d_out, cuda.to_device(x))
    assert list(d_out.copy_to_host()) == list(x.reshape(2, 64).sum(axis=1))
