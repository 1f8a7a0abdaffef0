"""Attack round 6 on a GPU: the device value behind finding 2 (bf16 tile store rounding).

Run on a GPU machine: ``PYTHONPATH=$PWD python -m pytest tests/kernels/attacks6.py/test_round6_gpu.py -q``.
Expected to PASS on the GPU (the device rounds twice, like the witness store); it pins
the value the simulator test (test_round6_sim.py) must match.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

    # numba-cuda's to_device refuses ml_dtypes' bf16 in the buffer protocol: copy the bits.
    def bf16_zeros(n: int) -> Any:
        return cuda.to_device(np.zeros(n, np.uint16)).view(ss.bfloat16)

    def as_f32(d: Any) -> np.ndarray:
        return d.view(np.uint16).copy_to_host().view(ss.bfloat16).astype(np.float32)

    outs = [bf16_zeros(2) for _ in range(2)]
    wit = bf16_zeros(1)
    a = cuda.to_device(np.array([TIE_AFTER_FLOAT32], np.float64))  # type: ignore[attr-defined]
    mod.k.prepare(grid=1, block=1)(outs[0], outs[1], wit, a)
    tile, vec = (as_f32(o) for o in outs)
    assert as_f32(wit)[0] == 1.0
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
