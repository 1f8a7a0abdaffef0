"""Attack round 25's first false refusal (tests/kernels/attacks25.py) on the real target: a
warp-per-row early exit under a `domain=1` contract with no exact block. `prepare` refuses any
block that is not 1D, so the warp's row (`blockIdx.x * ceil(ntid.x / 32) + tid.x // 32`) is
the same in every lane; the compiled-form analysis now knows the block is `(bx, 1, 1)`. The
rejected twin: a 2D contract (domain=2) with no exact block, where a warp may span two values
of `tid.y`, stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks25 import FALSE_REFUSALS

pytestmark = pytest.mark.ptx

CC = (9, 0)

_TID_Y = """
@ss.kernel(contract=ss.LaunchContract(domain=DOMAIN))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    if cuda.threadIdx.y // 1 > 0:
        return
    s = ss.warp.sum(np.float32(1))
    w = thread.index_1d()
    if w.in_bounds(out):
        out[w] = s
"""


def test_warp_row_early_exit_under_domain_1_accepted(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, FALSE_REFUSALS["warp-row-early-exit-domain1"]).k.ptx(cc=CC)
    assert "shfl.sync" in ptx


def test_tid_y_exit_warp_uniform_only_in_a_1d_block(tmp_path: Path) -> None:
    """tid.y is 0 in every thread of a 1D block; in a 2D block of unknown width a warp may
    hold two rows, so an exit on tid.y before a warp collective is refused."""
    one = tmp_path / "one"
    one.mkdir()
    assert "shfl.sync" in load_kernel_module(one, _TID_Y.replace("DOMAIN", "1")).k.ptx(cc=CC)
    two = tmp_path / "two"
    two.mkdir()
    source = _TID_Y.replace("DOMAIN", "2").replace("thread.index_1d()", "thread.index_2d()")
    source = source.replace("DisjointSlice[np.float32]", "DisjointSlice2D[np.float32]")
    with pytest.raises(ss.SafetyError, match="needs every thread of the warp"):
        load_kernel_module(two, source).k.ptx(cc=CC)
