"""``vec.load`` of a shared tile on a real GPU: the simulator's values (tests/sim)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.vec_tile_rules import ACCEPTED
from tests.sim.test_vec_tile_sim import expected

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def test_runs_of_the_tile_and_zeros_past_its_rows(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED)
    out = cuda.to_device(np.full(64, -1, np.float32))
    mod.k.prepare(grid=1, block=64)(out, cuda.to_device(np.arange(1, 513, dtype=np.float32)))
    np.testing.assert_array_equal(out.copy_to_host(), expected())
