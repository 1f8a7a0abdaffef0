"""The contract's ``max_threads`` bounds the thread-index reads (``!range``, round 33):
a branch the bound decides folds, on the code NVVM compiles and on the analysed copy alike.

Under ``max_threads=64`` (no exact block) ``cuda.threadIdx.x // 32`` is 0 or 1 in every
launch ``prepare`` accepts (``TooManyThreads`` refuses more), so ``if cuda.threadIdx.x // 32
> 2: return`` leaves no thread and ``ss.block.sync()`` after it is reached by all. Before,
the read had no range without an exact block (``lowering._blockgeo.bound_sreg``), and the
warp-uniform branch before a block barrier was refused: the class of 24 kernels the
uniformity differential's compiled form refused that never diverged (``threadIdx.x // 32``
against a constant no warp of a 64-thread block reaches). The twins: a bound that lets the
branch go both ways (``max_threads=128``, ``// 32 > 0``) stays refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.ptx

CC = (9, 0)

_KERNEL = """
@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=MAX))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    x = 1
    if COND:
        return
    ss.block.sync()
    out[i] = np.float32(x)
"""


def _kernel(most: int, cond: str) -> str:
    return _KERNEL.replace("MAX", str(most)).replace("COND", cond)


#: decided by max_threads: no thread leaves
ACCEPTED = {
    "warp-above-2-of-64": _kernel(64, "cuda.threadIdx.x // 32 > 2"),
    "warp-equals-3-of-64": _kernel(64, "cuda.threadIdx.x // 32 == 3"),
    "tid-at-least-64": _kernel(64, "cuda.threadIdx.x >= 64"),
    "block-dim-above-64": _kernel(64, "cuda.blockDim.x > 64"),
    "warp-above-3-of-128": _kernel(128, "cuda.threadIdx.x // 32 > 3"),
}

#: the bound does not decide the branch: some warp leaves, the barrier after it is refused
REFUSED = {
    "warp-above-2-of-128": _kernel(128, "cuda.threadIdx.x // 32 > 2"),
    "warp-above-0-of-64": _kernel(64, "cuda.threadIdx.x // 32 > 0"),
    "tid-at-least-63": _kernel(64, "cuda.threadIdx.x >= 63"),
    "block-dim-above-32": _kernel(64, "cuda.blockDim.x > 32 and cuda.threadIdx.x > 31"),
}


_INDEXED = """
@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=MAX))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    x = (3, 5, 7)[(cuda.threadIdx.x // 32) % MOD]
    ss.block.sync()
    out[i] = np.float32(x)
"""


def test_the_analysis_reads_the_range_llvm_folds_with(tmp_path: Path) -> None:
    # LLVM drops the `% 3` (the warp is 0 or 1 under max_threads=64) and switches on
    # `lshr i32 %tid, 5`: the position is bounded only by the read's `!range [0, 64)`
    # (lowering._irform keeps it as Instr.bounds, verify/_ranges reads it)
    k = load_kernel_module(tmp_path, _INDEXED.replace("MAX", "64").replace("MOD", "3")).k
    assert ss.check_kernel(k) == []


def test_a_position_past_the_tuple_for_a_warp_the_bound_allows_is_refused(tmp_path: Path) -> None:
    src = _INDEXED.replace("MAX", "128").replace("MOD", "4")  # warp 3: (3, 5, 7)[3]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, src).k.ptx(cc=CC)
    assert "the tuple index at line" in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_a_branch_max_threads_decides_is_folded(tmp_path: Path, name: str) -> None:
    k = load_kernel_module(tmp_path, ACCEPTED[name]).k
    assert ss.check_kernel(k) == []
    ptx = k.ptx(cc=CC)
    assert "bar.sync" in ptx and ".maxntid" in ptx


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_branch_max_threads_leaves_open_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, REFUSED[name]).k.ptx(cc=CC)
    assert "`block.sync` needs every thread of the block to reach it" in str(info.value)


def test_the_simulator_replays_the_prologue(tmp_path: Path) -> None:
    # the bound's prologue call is a no-op there: the kernel replays with no finding
    k = load_kernel_module(tmp_path, ACCEPTED["warp-above-2-of-64"]).k
    zeros = np.zeros(64, np.float32)
    assert ss.sim.check(k, 1, 64, zeros, zeros, 3).ok
