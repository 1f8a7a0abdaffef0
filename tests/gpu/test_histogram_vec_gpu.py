"""examples/histogram_vec.py on a real device (skipped without one): uniform, skewed and constant
bytes at sizes with every kind of tail, views on and off the 16-byte grid, against numpy's
bincount."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
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


@pytest.mark.parametrize("shift", [1, 2, 3, 4, 5])
def test_a_view_off_the_16_byte_grid_is_refused_before_the_launch(shift: int) -> None:
    """The words are read in 16-byte runs: a view starting off a 16-byte boundary is refused at
    launch, naming the kernel, the input, the pointer and the fix; off a 4-byte boundary, the
    uint32 view is misaligned for any load and every launch's alignment check (attack round
    21) refuses it first. The counts stay untouched."""
    data = _data("uniform", 2**20 + 9).astype(np.uint8)
    ex = example("histogram_vec")
    counts = cuda.to_device(np.zeros(ex.NBINS, np.uint32))
    d_view = cuda.to_device(data)[shift:]
    launch = ex.histogram_vec.prepare(grid=ex.grid_blocks(), block=ex.BLOCK)
    with pytest.raises(ss.ArgumentTypeError) as err:
        launch(counts, ex.as_words(d_view), d_view)
    msg = str(err.value)
    if shift % 4:  # not even on a word: every launch's alignment check refuses it first
        assert "kernel 'histogram_vec': argument 'words' (uint32) has its data pointer" in msg
        assert "not a multiple of 4 bytes" in msg and "copy it" in msg, msg
    else:
        assert "kernel 'histogram_vec' reads input 'words' in 16-byte runs" in msg, msg
        assert "is not a multiple of 16" in msg and "copy it" in msg, msg
    assert not counts.copy_to_host().any()


def test_a_view_on_the_16_byte_grid_is_counted() -> None:
    """The accepted twin: a view starting 16 bytes in."""
    data = _data("uniform", 2**20 + 9).astype(np.uint8)
    got = _hist(cuda.to_device(data)[16:])
    np.testing.assert_array_equal(got, np.bincount(data[16:], minlength=256))
