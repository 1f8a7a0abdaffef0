"""Attack round 9 on the decode kernels' contracts: launches the relations accepted that the
model never makes, refused now at the launch (``RequiresViolation``), each next to the
accepted launch it differs from.

None of them was a memory hole (every read of the kernels is a bounds-checked witness, a
``vec.load`` or a shared-tile read; the plain-int reads are guarded): they gave silent
wrong results. The tests named "Failed on f92dfcc" failed there (the launch ran).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from decode import attention as A
from decode import gemv as G
from decode.model import device_array
from numba import cuda

import simtsafe as ss

BF16 = ml_dtypes.bfloat16


def _residual(rows: int, per: int, split: int, w_rows: int | None = None) -> np.ndarray:
    """``gemv_residual`` of ``rows`` outputs viewed as ``(rows // per, per)``; its output."""
    k = 40
    rng = np.random.default_rng(8)
    w = rng.standard_normal((rows if w_rows is None else w_rows, k)).astype(BF16)
    v = rng.standard_normal(k).astype(np.float32)
    y = cuda.to_device(np.full((rows // per, per), np.nan, np.float32))
    res = cuda.to_device(np.zeros((rows // per, per), np.float32))
    launch = G.gemv_residual.prepare(grid=rows // per, block=G.BLOCK, shared_mem=4 * k)
    launch(y, device_array(w), cuda.to_device(v), res, split)
    got = y.copy_to_host().reshape(-1)
    if w_rows is None:
        np.testing.assert_allclose(got, w.astype(np.float64) @ v, rtol=1e-5, atol=1e-4)
    return got


def test_gemv_one_row_a_block_is_refused() -> None:
    """Failed on f92dfcc: ``16 * 1 * split == block.x`` held with ``split = 2 * warps``
    (never a model split): ``pairs = 0``, ``wi % pairs`` divided by zero (a
    ZeroDivisionError on the simulator, 0 on the device, where every warp summed the same
    runs: a wrong output)."""
    split = 2 * G.WARPS
    with pytest.raises(ss.RequiresViolation, match=r"y\.shape\[1\] >= 2"):
        _residual(rows=3, per=1, split=split)


@pytest.mark.parametrize("split", G.SPLITS)
def test_gemv_every_model_split_is_accepted(split: int) -> None:
    per = G.rows_per_block(split)
    _residual(rows=3 * per, per=per, split=split)  # compares with numpy


def test_gemv_weights_short_of_the_outputs_are_refused() -> None:
    """Failed on f92dfcc: rows past ``w``'s end read 0 (``vec.load``), a silent zero."""
    per = G.rows_per_block(1)
    with pytest.raises(ss.RequiresViolation, match=r"w\.shape\[0\] == y\.shape\[0\]"):
        _residual(rows=2 * per, per=per, split=1, w_rows=per)


def test_swiglu_needs_gate_and_up_rows() -> None:
    """Failed on f92dfcc: a ``w`` of only the gate rows read the up rows as 0."""
    per = G.rows_per_block(1)
    n, k = per, 8
    rng = np.random.default_rng(2)
    x = cuda.to_device(rng.standard_normal(k).astype(np.float32))
    nw = cuda.to_device(np.ones(k, np.float32))
    y = cuda.to_device(np.zeros((1, per), np.float32))
    launch = G.gemv_swiglu.prepare(grid=1, block=G.BLOCK, shared_mem=4 * k)
    with pytest.raises(ss.RequiresViolation, match=r"w\.shape\[0\] == 2 \* y\.shape\[0\]"):
        launch(y, device_array(np.ones((n, k), BF16)), x, nw, np.float32(1e-6), 1)
    launch(y, device_array(np.ones((2 * n, k), BF16)), x, nw, np.float32(1e-6), 1)


def _lm_head(blocks_out: int) -> None:
    per, k = G.rows_per_block(1), 8
    rows = 2 * per
    logits = cuda.device_array((2, per), np.float32)
    bval = cuda.device_array(blocks_out, np.float32)
    bidx = cuda.device_array(blocks_out, np.int32)
    w = device_array(np.ones((rows, k), BF16))
    one = cuda.to_device(np.ones(k, np.float32))
    launch = G.lm_head.prepare(grid=2, block=G.BLOCK, shared_mem=4 * k)
    launch(logits, bval, bidx, w, one, one, np.float32(1e-6), 1)


def test_lm_head_needs_one_max_per_block() -> None:
    """Failed on f92dfcc: a ``bval`` longer than the grid left entries unwritten that
    ``kernels.finish`` then reads as maxima (a shorter one dropped blocks' maxima)."""
    with pytest.raises(ss.RequiresViolation, match=r"bval\.size == grid\.x"):
        _lm_head(3)
    _lm_head(2)


def _attention(g0: int, kv_heads: int = 1) -> None:
    hdp, group = 8, 2
    n_pos = 4
    rng = np.random.default_rng(5)
    kc = device_array(rng.standard_normal((n_pos, kv_heads * hdp)).astype(BF16))
    vc = device_array(rng.standard_normal((n_pos, kv_heads * hdp)).astype(BF16))
    q = cuda.to_device(rng.standard_normal(group * kv_heads * hdp).astype(np.float32))
    blocks = kv_heads
    opart = cuda.device_array((blocks, group * hdp), np.float32)
    ml = cuda.device_array((blocks, 2 * group), np.float32)
    pos = cuda.to_device(np.array([2], np.int32))
    launch = A.attention.prepare(grid=blocks, block=A.BLOCK)
    launch(opart, ml, q, kc, vc, pos, kv_heads, group, hdp, hdp, g0, np.float32(0.5))


def test_attention_negative_head_offset_is_refused() -> None:
    """Failed on f92dfcc: ``g0 < group`` held for ``g0 = -1``: the launch read the query
    heads shifted by one (the first from before ``q``'s start, as 0)."""
    with pytest.raises(ss.RequiresViolation, match=r"0 <= g0"):
        _attention(-1)
    _attention(0)


def test_attention_without_kv_heads_is_refused() -> None:
    """Failed on f92dfcc: ``kv_heads = 0`` with an empty cache satisfied every relation
    (each side 0), and ``b % kv_heads`` divided by zero (a ZeroDivisionError on the
    simulator, an unspecified head on the device)."""
    kc = device_array(np.zeros((4, 0), BF16))
    opart = cuda.device_array((1, 16), np.float32)
    ml = cuda.device_array((1, 4), np.float32)
    q = cuda.to_device(np.zeros(0, np.float32))
    pos = cuda.to_device(np.array([2], np.int32))
    launch = A.attention.prepare(grid=1, block=A.BLOCK)
    with pytest.raises(ss.RequiresViolation, match=r"kv_heads >= 1"):
        launch(opart, ml, q, kc, kc, pos, 0, 2, 8, 8, 0, np.float32(0.5))
    _attention(0, kv_heads=2)
