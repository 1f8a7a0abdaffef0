"""Attack round 6 on the simulator: Columns and vec.store.

Each test failed on commit 65b3103 (tests/kernels/attacks6.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks6 import BF16_DOUBLE_ROUNDING, COLUMN_IN_BOUNDS_OF_AN_INPUT

pytestmark = pytest.mark.sim

#: 1 + 2**-8 + 2**-30: to float32 it is 1 + 2**-8 exactly (the 2**-30 is lost), a tie
#: between the bf16 neighbours 1 and 1 + 2**-7 that rounds to even: 1.0. Rounded once,
#: straight from float64, it is above the tie: 1 + 2**-7 = 1.0078125.
TIE_AFTER_FLOAT32 = 1 + 2**-8 + 2**-30


def test_column_witness_in_bounds_of_a_short_input(tmp_path: Path) -> None:
    """Finding 1 on the simulator: the compile worker's verdict is the device's crash, so
    the kernel that the simulator's own in_bounds runs correctly is refused here too."""
    mod = load_kernel_module(tmp_path, COLUMN_IN_BOUNDS_OF_AN_INPUT)
    rows, cols, nx, pos = 3, 40, 29, 1  # the input is shorter than a row
    x = np.arange(nx, dtype=np.float32)
    d_out = cuda.to_device(np.zeros((rows, cols), np.float32))
    try:
        mod.k.prepare(grid=2, block=32)(
            d_out, cuda.to_device(x), cuda.to_device(np.array([pos], np.int32))
        )
    except ss.SafetyError as exc:
        pytest.fail(f"refused: {exc}")
    expected = np.zeros((rows, cols), np.float32)
    expected[pos, :nx] = x + 1
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


def test_bf16_tile_element_store_rounds_as_the_device_does(tmp_path: Path) -> None:
    """Finding 2 (simulator/device disagreement): an output tile's ``t[k] = v`` of a
    float64 into bf16 goes float64 -> float32 -> bf16 on the device (two roundings, as the
    docs and the witness store say); the simulator's SimOutTile assigns the float64
    straight into the ml_dtypes array (one rounding) and stores another value."""
    mod = load_kernel_module(tmp_path, BF16_DOUBLE_ROUNDING)
    outs = [cuda.to_device(np.zeros(2, ss.bfloat16)) for _ in range(2)]
    wit = cuda.to_device(np.zeros(1, ss.bfloat16))
    a = cuda.to_device(np.array([TIE_AFTER_FLOAT32], np.float64))
    mod.k.prepare(grid=1, block=1)(outs[0], outs[1], wit, a)
    tile, vec = (o.copy_to_host().astype(np.float32) for o in outs)
    witness = wit.copy_to_host().astype(np.float32)
    device = np.float32(np.float32(TIE_AFTER_FLOAT32).astype(ss.bfloat16))
    assert device == 1.0
    assert witness[0] == device  # the witness store converts as the device does
    assert vec[0] == vec[1] == device  # so does vec.store
    assert tile[0] == tile[1] == device, (
        f"tile element store gave {tile.tolist()} on the simulator; the device stores "
        f"{device} (float64 -> float32 -> bf16), as the witness store {witness[0]} and "
        f"vec.store {vec.tolist()} of the same value do"
    )
