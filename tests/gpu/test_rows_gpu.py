"""Row spaces on a real GPU: softmax, RMSNorm and LayerNorm (block and warp per row) vs numpy.

Widths that are not a multiple of the block (4099), a single long row, and
rows narrower than the block; the raw twins (tests/ptx/raw_rows.py) give the
same results.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example
from tests.ptx.raw_rows import softmax_raw

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

SHAPES = [(4_096, 4_099), (1, 4_096), (37, 1_000), (5, 3)]


@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_softmax(rows: int, cols: int) -> None:
    assert example("softmax").run(rows=rows, cols=cols)


@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_rmsnorm(rows: int, cols: int) -> None:
    assert example("rmsnorm").run(rows=rows, cols=cols)


@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_layernorm(rows: int, cols: int) -> None:
    assert example("layernorm").run(rows=rows, cols=cols)


def test_raw_softmax_twin_agrees() -> None:
    ex = example("softmax")
    x = np.random.default_rng(3).standard_normal((64, 4_099)).astype(np.float32)
    d_x, d_out = cuda.to_device(x), cuda.to_device(np.zeros_like(x))
    cuda.jit(softmax_raw)[64, ex.BLOCK](d_out, d_x)
    np.testing.assert_allclose(d_out.copy_to_host(), ex.reference(x), rtol=1e-4, atol=1e-7)


def test_blocks_past_the_last_row_walk_nothing(tmp_path: Path) -> None:
    from tests.kernels import load_kernel_module
    from tests.sim.test_rows_sim import _COUNT

    mod = load_kernel_module(tmp_path, _COUNT)
    x = np.zeros((4, 37), np.float32)
    n = cuda.to_device(np.zeros(1, np.uint32))
    mod.k.prepare(grid=6, block=64)(n, cuda.to_device(x))
    assert n.copy_to_host()[0] == 4 * 37
