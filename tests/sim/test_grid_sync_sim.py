"""Cooperative launches with a grid sync on the simulator, as on the GPU.

A kernel whose contract says ``cooperative=True`` runs with every block at
once (simtsafe/lowering/_grid_sim.py), so ``cuda.cg.this_grid().sync()``
waits for the whole grid and a second phase sees what other blocks wrote
before it. (Numba's own simulator runs blocks one after another: the
second phase of block 0 would read other blocks' elements before they are
written.) The refusals are the GPU path's: a grid sync without
``cooperative=True``, a grid that cannot be co-resident.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

pytestmark = pytest.mark.sim

TWO_PHASE = """
B = 32

@ss.kernel(contract=ss.LaunchContract(domain=1, block=(B, 1, 1), cooperative=True))
def two_phase(
    out: DisjointSlice[np.float32],
    partial: DisjointSlice[np.float32, PerBlock],
    a: In[np.float32],
) -> None:
    i = thread.index_1d()
    leader = thread.block_leader()
    with ss.unsafe(
        "SAFETY: every thread reaches both barriers and the grid sync (no early return); "
        "tile[tid] is written by thread tid before the barrier; partial is read after the "
        "grid sync, which orders it after every block's write; i < out.size is checked"
    ):
        tile = cuda.shared.array(B, np.float32)
        tid = cuda.threadIdx.x
        tile[tid] = a[i] if i.in_bounds(a) else np.float32(0)
        cuda.syncthreads()
        if tid == 0:
            s = np.float32(0)
            for k in range(B):
                s += tile[k]
            partial[leader] = s
        cuda.cg.this_grid().sync()
        # Phase 2 reads every block's partial sum, written by other blocks before the sync.
        total = np.float32(0)
        for b in range(partial.size):
            total += partial.unchecked[b]
        if i.in_bounds(out):
            out[i] = a[i] / total + np.float32(tile[(tid + 1) % B] * 0)
"""

UNDECLARED = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def undeclared(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: every thread reaches grid.sync(); nothing is read across it"):
        cuda.cg.this_grid().sync()
    out[i] = 1.0
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return load_kernel_module(tmp_path_factory.mktemp("grid"), TWO_PHASE + UNDECLARED)


def test_second_phase_reads_what_other_blocks_wrote_before_the_grid_sync(mod: ModuleType) -> None:
    blocks, n = 4, 4 * 32 - 5  # a partial last block
    a = np.arange(1, n + 1, dtype=np.float32)
    out = cuda.to_device(np.full(n, -1, np.float32))
    partial = cuda.to_device(np.zeros(blocks, np.float32))
    mod.two_phase.prepare(grid=blocks, block=32)(out, partial, cuda.to_device(a))
    np.testing.assert_array_equal(
        partial.copy_to_host(), np.pad(a, (0, blocks * 32 - n)).reshape(blocks, 32).sum(axis=1)
    )
    np.testing.assert_allclose(out.copy_to_host(), a / a.sum(), rtol=1e-6)


def test_cooperative_launch_leaves_no_threads_behind(mod: ModuleType) -> None:
    before = threading.active_count()
    n = 64
    out = cuda.to_device(np.zeros(n, np.float32))
    mod.two_phase.prepare(grid=2, block=32)(
        out, cuda.to_device(np.zeros(2, np.float32)), cuda.to_device(np.ones(n, np.float32))
    )
    assert threading.active_count() == before
    np.testing.assert_array_equal(out.copy_to_host(), np.full(n, 1 / n, np.float32))


def test_grid_sync_without_cooperative_contract_is_refused(mod: ModuleType) -> None:
    with pytest.raises(ss.CooperativeLaunchError) as info:
        mod.undeclared.prepare(grid=2, block=32)
    assert str(info.value) == (
        "kernel 'undeclared' synchronizes the whole grid (simtsafe.grid.sync() or "
        "cuda.cg.this_grid().sync()), which needs a cooperative launch whose blocks are all resident at once; declare "
        "cooperative=True in its launch contract so prepare checks residency and launches it "
        "cooperatively"
    )
    assert info.value.kernel == "undeclared"


def test_grid_sync_in_a_helper_without_cooperative_contract_is_refused(tmp_path: Path) -> None:
    helper = load_kernel_module(
        tmp_path,
        """
@ss.device
def sync_all() -> None:
    with ss.unsafe("SAFETY: every thread of the kernel calls this helper once"):
        cuda.cg.this_grid().sync()

@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def via_helper(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    sync_all()
    out[i] = 1.0
""",
    )
    with pytest.raises(ss.CooperativeLaunchError, match="'via_helper' synchronizes the whole"):
        helper.via_helper.prepare(grid=2, block=32)


def test_cooperative_grid_that_is_not_co_resident_is_refused(mod: ModuleType) -> None:
    with pytest.raises(ss.CooperativeLaunchError) as info:
        mod.two_phase.prepare(grid=33, block=32)
    assert str(info.value) == (
        "kernel 'two_phase': a cooperative grid must be co-resident, but 33 blocks of (32, 1, 1) "
        "exceed the 32 that fit on CUDA simulator at once. Launch at most 32 blocks (with a "
        "grid-stride loop)."
    )
    assert (info.value.actual, info.value.limit) == (33, 32)
    mod.two_phase.prepare(grid=32, block=32)  # the largest co-resident grid is accepted


def test_divergent_grid_sync_is_reported_not_hung(tmp_path: Path) -> None:
    bad = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), cooperative=True))
def early_exit(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: (wrong) block 1 has nothing to do after the sync"):
        if cuda.blockIdx.x == 1:
            return
        cuda.cg.this_grid().sync()  # BAD
    out[i] = 1.0
""",
    )
    out = cuda.to_device(np.zeros(64, np.float32))
    with pytest.raises(ss.SafetyError) as info:
        bad.early_exit.prepare(grid=2, block=32)(out)
    text = str(info.value)
    assert "kernel 'early_exit': 32 thread(s) exited (the first: block (1, 0, 0)" in text
    assert "while the other 32 wait at the grid sync" in text
    assert "on the GPU this launch hangs" in text
    assert info.value.rule == "grid-sync"
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_graph_refuses_a_cooperative_launch(mod: ModuleType) -> None:
    out = cuda.to_device(np.full(64, -7, np.float32))
    launch = mod.two_phase.prepare(grid=2, block=32)
    with pytest.raises(ss.GraphError, match="'two_phase' is cooperative by its launch contract"):
        with ss.graph():
            launch(
                out,
                cuda.to_device(np.zeros(2, np.float32)),
                cuda.to_device(np.ones(64, np.float32)),
            )
    np.testing.assert_array_equal(out.copy_to_host(), -7)  # nothing ran
