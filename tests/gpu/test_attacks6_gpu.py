"""Attack round 6 on a GPU: the device value behind finding 2 (bf16 tile store rounding).

Run on a GPU machine: ``PYTHONPATH=$PWD python -m pytest tests/kernels/attacks6.py/test_round6_gpu.py -q``.
Expected to PASS on the GPU (the device rounds twice, like the witness store); it pins
the value the simulator test (test_round6_sim.py) must match.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks6 import BF16_DOUBLE_ROUNDING, COLUMN_IN_BOUNDS_OF_AN_INPUT

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

TIE_AFTER_FLOAT32 = 1 + 2**-8 + 2**-30


def _cuda() -> object:
    from numba import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    return cuda


def test_bf16_tile_store_value_on_the_device(tmp_path: Path) -> None:
    cuda = _cuda()
    mod = load_kernel_module(tmp_path, BF16_DOUBLE_ROUNDING)
    outs = [cuda.to_device(np.zeros(2, ss.bfloat16)) for _ in range(2)]  # type: ignore[attr-defined]
    wit = cuda.to_device(np.zeros(1, ss.bfloat16))  # type: ignore[attr-defined]
    a = cuda.to_device(np.array([TIE_AFTER_FLOAT32], np.float64))  # type: ignore[attr-defined]
    mod.k.prepare(grid=1, block=1)(outs[0], outs[1], wit, a)
    tile, vec = (o.copy_to_host().astype(np.float32) for o in outs)
    assert wit.copy_to_host().astype(np.float32)[0] == 1.0
    assert vec.tolist() == [1.0, 1.0]
    assert tile.tolist() == [1.0, 1.0]


def test_column_in_bounds_of_a_short_input_on_the_device(tmp_path: Path) -> None:
    """Fails until finding 1 is fixed (the kernel does not compile)."""
    cuda = _cuda()
    mod = load_kernel_module(tmp_path, COLUMN_IN_BOUNDS_OF_AN_INPUT)
    rows, cols, nx, pos = 3, 40, 29, 1
    x = np.arange(nx, dtype=np.float32)
    d_out = cuda.to_device(np.zeros((rows, cols), np.float32))  # type: ignore[attr-defined]
    mod.k.prepare(grid=2, block=32)(
        d_out,
        cuda.to_device(x),  # type: ignore[attr-defined]
        cuda.to_device(np.array([pos], np.int32)),  # type: ignore[attr-defined]
    )
    expected = np.zeros((rows, cols), np.float32)
    expected[pos, :nx] = x + 1
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)
