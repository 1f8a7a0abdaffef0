"""Attack round 13 (tests/kernels/attacks13.py): a tile filled from a view that starts at an
element offset (its data pointer not aligned for a run), with origins before, at and after
its start, holds ``a[c0 + j]`` inside the input and 0 outside. On the simulator here; on a
GPU through tests/gpu/test_async_fill_gpu.py, which collects this test too -- there the
round found the first elements zero-filled (a run starting before the row copied with
ignore-src), before the whole-runs test also required the row's start aligned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.attacks13 import ROW_START

pytestmark = pytest.mark.sim

BASE = np.arange(1, 41, dtype=np.float32)


@pytest.mark.parametrize("name", sorted(ROW_START))
@pytest.mark.parametrize("shift", [1, 2, 3, 4])
@pytest.mark.parametrize("origin", [-4, -3, -2, -1, 0, 1, 3, 14])
def test_a_view_from_an_element_offset_fills_its_first_elements(
    tmp_path: Path, name: str, shift: int, origin: int
) -> None:
    body, rank = ROW_START[name]
    threads = 4 if rank == 1 else 8  # the kernel's block: one 16-byte run per thread
    cols = 15
    host = BASE[shift : shift + cols]
    base = cuda.to_device(BASE if rank == 1 else BASE.reshape(2, 20))
    view = base[shift : shift + cols] if rank == 1 else base[0:1, shift : shift + cols]
    out = cuda.to_device(np.full(threads, np.nan, np.float32))
    load_kernel_module(tmp_path, body).k.prepare(grid=1, block=threads)(out, view, np.int64(origin))
    want = [host[origin + j] if 0 <= origin + j < cols else 0 for j in range(threads)]
    np.testing.assert_array_equal(out.copy_to_host(), np.array(want, np.float32))
