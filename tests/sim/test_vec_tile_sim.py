"""``vec.load`` of a shared tile on the simulator: the same values as the device, 0 for a run
past a row's logical end (the padding is never read), the same refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.vec_tile_rules import ACCEPTED, ACCEPTED_RUNS, REFUSED, SHIFT

pytestmark = pytest.mark.sim


def _run(mod: Any) -> np.ndarray:
    a = np.arange(1, 513, dtype=np.float32)
    out = cuda.to_device(np.full(64, -1, np.float32))
    mod.k.prepare(grid=1, block=64)(out, cuda.to_device(a))
    return out.copy_to_host()


def expected() -> np.ndarray:
    t = np.pad(np.arange(1, 513, dtype=np.float32).reshape(8, 64), ((0, 0), (0, 8)))
    return np.array(
        [t[i % 8, 4 * (i // 8 + SHIFT) : 4 * (i // 8 + SHIFT) + 4].sum() for i in range(64)],
        np.float32,
    )


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], _run)


@pytest.mark.parametrize("source", [ACCEPTED, ACCEPTED_RUNS], ids=["load", "load_runs"])
def test_runs_of_the_tile_and_zeros_past_its_rows(tmp_path: Path, source: str) -> None:
    got = _run(load_kernel_module(tmp_path, source))
    np.testing.assert_array_equal(got, expected())
    assert not got[48:].any()  # runs 16, 17: past the 64 logical columns (the padding)
