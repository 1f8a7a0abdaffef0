"""examples/histogram_vec.py on a real device (skipped without one): uniform, skewed and constant
bytes at sizes with every kind of tail, misaligned views, against numpy's bincount."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _hist(d_data: object, blocks: int = 0) -> np.ndarray:
    ex = example("histogram_vec")
    counts = cuda.to_device(np.zeros(ex.NBINS, np.uint32))
    launch = ex.histogram_vec.prepare(grid=blocks or ex.grid_blocks(), block=ex.BLOCK)
    launch(counts, ex.as_words(d_data), d_data)
    return counts.copy_to_host()


def _data(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n % 101)
    if kind == "uniform":
        return rng.integers(0, 256, n, dtype=np.uint8)
    if kind == "skewed":  # 95% of the bytes in 3 bins
        return np.where(rng.random(n) < 0.95, rng.choice([0, 7, 200], n), rng.integers(0, 256, n))
    return np.full(n, 42, np.uint8)


@pytest.mark.parametrize("kind", ["uniform", "skewed", "constant"])
@pytest.mark.parametrize("n", [1, 17, 4099, 2**20 + 13, 2**27 + 5])
def test_matches_bincount(kind: str, n: int) -> None:
    data = _data(kind, n).astype(np.uint8)
    got = _hist(cuda.to_device(data))
    np.testing.assert_array_equal(got, np.bincount(data, minlength=256))


@pytest.mark.parametrize("shift", [1, 2, 3, 5])
def test_misaligned_views(shift: int) -> None:
    data = _data("uniform", 2**20 + 9).astype(np.uint8)
    got = _hist(cuda.to_device(data)[shift:])
    np.testing.assert_array_equal(got, np.bincount(data[shift:], minlength=256))
