"""The Columns space on a real GPU: the accepted twins of tests/kernels/column_rules.py give
their results; a device-side row out of range writes nothing; a bf16 cache appended at a
position read on the device, step after step, as a decode loop does (one prepared launch,
the position advanced by a second kernel, no host value in between)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.column_rules import (
    ACCEPTED,
    BLOCK,
    COLS,
    GRID,
    POS,
    RECORD,
    ROWS,
    record_expected,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    x = rng.standard_normal(COLS).astype(np.float32)
    return x, rng.standard_normal((ROWS, COLS)).astype(np.float32)


def _launch(mod: Any, pos: int) -> np.ndarray:
    x, x2 = _inputs()
    d_out = cuda.to_device(np.zeros((ROWS, COLS), np.float32))
    d_pos = cuda.to_device(np.array([pos], np.int32))
    mod.k.prepare(grid=GRID, block=BLOCK)(d_out, cuda.to_device(x), d_pos, cuda.to_device(x2))
    return d_out.copy_to_host()


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_gives_its_result(tmp_path: Path, case: str) -> None:
    source, expected = ACCEPTED[case]
    np.testing.assert_array_equal(
        _launch(load_kernel_module(tmp_path, source), POS), expected(*_inputs())
    )


@pytest.mark.parametrize("pos", [-1, ROWS, 2**31 - 1])
def test_a_device_side_row_out_of_range_writes_nothing(tmp_path: Path, pos: int) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED["written-at-a-device-side-row"][0])
    assert not _launch(mod, pos).any()


def test_a_record_field_of_the_own_element(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, RECORD)
    out = cuda.to_device(np.zeros((ROWS, COLS), mod.REC))
    mod.k.prepare(grid=GRID, block=BLOCK)(out, cuda.to_device(np.array([POS], np.int32)))
    np.testing.assert_array_equal(out.copy_to_host(), record_expected(mod.REC))


_DECODE = """
from simtsafe import Columns, PerBlock


@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="cache"))
def append(cache: DisjointSlice[ss.bfloat16, Columns], kv: In[np.float32], pos: In[np.int32]) -> None:
    w = thread.column()
    cache[pos[0], w] = kv[w] + np.float32(pos[0])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def advance(pos: DisjointSlice[np.int32, PerBlock]) -> None:
    w = thread.block_leader()
    pos[w] = pos[w] + 1
"""


def test_bf16_cache_appended_at_a_device_side_position(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _DECODE)
    steps, width = 40, 1_000
    kv = np.random.default_rng(3).standard_normal(width).astype(np.float32)
    bits = np.zeros((64, width), np.uint16)
    cache = cuda.to_device(bits).view(ml_dtypes.bfloat16)
    d_kv, pos = cuda.to_device(kv), cuda.to_device(np.zeros(1, np.int32))
    append = mod.append.prepare(grid=8, block=128)
    advance = mod.advance.prepare(grid=1, block=32)
    for _ in range(steps):
        append(cache, d_kv, pos)
        advance(pos)
    got = cache.copy_to_host().view(ml_dtypes.bfloat16).astype(np.float32)
    expected = np.zeros((64, width), np.float32)
    expected[:steps] = (kv[None, :] + np.arange(steps, dtype=np.float32)[:, None]).astype(
        ml_dtypes.bfloat16
    )
    np.testing.assert_array_equal(got, expected)
    assert pos.copy_to_host()[0] == steps
