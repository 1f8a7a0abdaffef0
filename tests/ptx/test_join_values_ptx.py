"""Sync dependence counts only the branches that choose between different values.

A phi's value depends on which way a thread went at a branch only where the edges
into the phi that the branch leads to carry two different values. Python 3.12 compiles
``return a + b if c else a - b`` as two ``return`` (3.11: one): after inlining, the
helper's status code is a phi whose two edges behind the thread-dependent ``c`` both
carry 0, and whose error edge (a uniform division by zero) carries the error. The port
``fft256`` was refused on the GPU's Python 3.12 for that (tests/gpu/test_port21_gpu.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels import assert_ptx_accepted, line_of, ptx_refusal

pytestmark = pytest.mark.ptx

CC = (9, 0)

# the helper raises ZeroDivisionError (complex by a zero float) before two returns that
# a thread-dependent branch picks between: the status after the call is 0 on both
KERNEL = """
@ss.device
def pick(v, i, d):
    w = v / d
    if i % 2 == 0:  # PICK
        return w + v
    return w - v


@ss.device
def pick_late(v, i, d):
    if i % 2 == 0:  # LATE
        return v / d
    return v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))
def k(out: DisjointSlice[np.complex64], x: In[np.complex64], d: np.float32) -> None:
    a = ss.shared.tile(64, np.complex64)
    t = thread.local_index()
    v = np.complex64(t.index)
    for s in range(3):
        a[t] = HELPER(v, t.index, DIVISOR)
        ss.block.sync()  # SYNC
        v = a[63 - t.index]
        ss.block.sync()
    for i in thread.grid_stride(out):
        out[i] = v + x[i]
"""


def _source(divisor: str, helper: str = "pick") -> str:
    return KERNEL.replace("DIVISOR", divisor).replace("HELPER", helper)


def test_two_returns_with_the_same_status_behind_a_thread_branch_are_accepted(
    tmp_path: Path,
) -> None:
    assert_ptx_accepted(tmp_path, _source("d"))


def test_a_thread_dependent_division_by_zero_is_still_refused(tmp_path: Path) -> None:
    # the error edge now depends on the thread: a thread that raises leaves the loop
    message = ptx_refusal(tmp_path, _source("np.float32(t.index)"))
    assert "`block.sync` needs every thread of the block to reach it" in message
    assert "in helper complex_div" in message
    assert f"line {line_of(tmp_path, '# SYNC')}" in message


def test_a_division_on_one_side_of_a_thread_branch_is_refused(tmp_path: Path) -> None:
    # the status phi: the error behind `i % 2 == 0` and 0 on both sides, so that branch
    # chooses between two values (where d == 0, even threads leave, odd ones wait)
    message = ptx_refusal(tmp_path, _source("d", helper="pick_late"))
    assert "`block.sync` needs every thread of the block to reach it" in message
    assert f"(in helper pick_late, line {line_of(tmp_path, '# LATE')})" in message
