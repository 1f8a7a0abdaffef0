"""simtsafe.sim.check with NUMBA_ENABLE_CUDASIM=1: same verdicts, and the simulator still works.

The checker runs kernels under its own replay, so it must give the corpus's
verdicts whether or not Numba's simulator is active, accept the simulator's
kernels and device arrays, and leave the simulator's own launches alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from simtsafe import sim
from simtsafe.lowering import _coop_sim
from tests.checker.cases import BY_NAME, Case
from tests.kernels import load_kernel_module

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


_COLLECTIVES = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=48))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    s = np.float32(0)
    for r in range(3):
        v = a[i] + np.float32(r)
        s += ss.block.sum(v) + ss.warp.sum(v) + ss.block.scan(v) + ss.warp.reduce(v, max)
    out[i] = s
"""


def _collectives_expected(a: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    for r in range(3):
        v = (a + r).reshape(-1, 48)  # blocks of 48: warps of 32 and 16 lanes
        warps = [v[:, :32], v[:, 32:]]
        wsum = np.concatenate([np.repeat(w.sum(1, keepdims=True), w.shape[1], 1) for w in warps], 1)
        wmax = np.concatenate([np.repeat(w.max(1, keepdims=True), w.shape[1], 1) for w in warps], 1)
        bsum = np.repeat(v.sum(1, keepdims=True), 48, 1)
        out += (bsum + wsum + np.cumsum(v, 1) + wmax).ravel()
    return out


def test_check_replays_block_and_warp_collectives(tmp_path: Path) -> None:
    # Regression: the collectives' once-per-exchange memo used weakref.finalize on the
    # exchange array, and sim.check's recorded arrays take no weak references (TypeError);
    # their per-thread execution count lived in shared memory and read as uninitialized.
    mod = load_kernel_module(tmp_path, _COLLECTIVES)
    a = np.arange(96, dtype=np.float32) % 7
    report = sim.check(mod.k, 2, 48, np.zeros(96, np.float32), a)
    assert report.ok, str(report)
    np.testing.assert_array_equal(report.outputs["out"], _collectives_expected(a))
    assert not _coop_sim._MEMO  # every exchange's memo is freed by its last thread
    out = cuda.to_device(np.zeros(96, np.float32))
    mod.k.prepare(grid=2, block=48)(out, cuda.to_device(a))  # the Numba simulator: same
    np.testing.assert_array_equal(out.copy_to_host(), _collectives_expected(a))
    assert not _coop_sim._MEMO
