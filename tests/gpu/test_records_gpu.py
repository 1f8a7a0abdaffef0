"""Record outputs and inputs on a real GPU: field stores land, tail threads write nothing.

A kernel that reads one record and writes another, both through witnesses,
is the shape CUDA 13.0's NVVM emptied (every store gone) while the scratch
record of out-of-range threads was visible to it; the launch must give the
fields numpy gives, with the tail of a grid wider than the array untouched.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module

# Attack round 18: record reads by index out of a tile, local array or output tile are 0
# out of range (they had lost their bounds test), the element in range.
from tests.sim.test_attacks18_sim import (  # noqa: F401
    test_a_record_read_by_index_is_its_element_or_zero,
    test_a_record_tile_filled_through_witnesses_holds_the_records,
    test_an_output_tile_record_read_is_the_threads_own_or_zero,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

ROOT = Path(__file__).resolve().parents[2]
#: The kernel of the diagnostic script that found it (it also prints the NVVM version).
SOURCE = (ROOT / "scripts" / "diag_record_store.py").read_text()


def test_record_fields_read_and_written_through_witnesses(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, SOURCE)
    n = 70  # three blocks of 32: 26 threads hold no element
    a = np.zeros(n, mod.Rec)
    a["x"] = np.arange(n, dtype=np.float32)
    a["n"] = np.arange(n) + 100
    out = np.zeros(n + 1, mod.Rec)
    out[n] = (-1.0, -1)  # past the output view handed to the kernel: never written
    d_out = cuda.to_device(out)
    mod.k.prepare(grid=3, block=32)(d_out[:n], cuda.to_device(a))
    got = d_out.copy_to_host()
    np.testing.assert_array_equal(got["x"][:n], a["x"] * 2)
    np.testing.assert_array_equal(got["n"][:n], a["n"])
    assert tuple(got[n]) == (-1.0, -1)
