"""Block-cooperation examples and their raw twins on a real GPU, at sizes the simulator cannot run.

Edges: lengths and shapes that are not multiples of the tiles, a scan with
three levels of tile totals, a histogram whose input is only a tail, the
two-pass reduction bitwise reproducible. The Tier-1 examples are skipped
until the block-cooperation lowering is in the tree (tests/coop_examples.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example, skip_if_not_lowered

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _sms() -> int:
    return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


# ------------------------------------------------------------------ raw twins


@pytest.mark.parametrize("n", [1, 255, 1_000_003, (1 << 24) + 7])
def test_raw_reduce_sum(n: int) -> None:
    assert example("coop_raw").check_reduce_sum(n, 8 * _sms())


@pytest.mark.parametrize("n", [1, 2_304, 2_305, 5_308_417, 6_000_011])
def test_raw_scan(n: int) -> None:
    raw = example("coop_raw")
    assert raw.check_scan(n)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (31, 65), (1_025, 2_049), (4_096, 4_096)])
def test_raw_transpose(rows: int, cols: int) -> None:
    assert example("coop_raw").check_transpose(rows, cols)


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (128, 8, 128), (257, 129, 383), (1_024,) * 3])
def test_raw_sgemm(m: int, k: int, n: int) -> None:
    assert example("coop_raw").check_sgemm(m, k, n)


@pytest.mark.parametrize("n", [3, 4, 1_000_003, (1 << 24) + 3])
def test_raw_histogram(n: int) -> None:
    assert example("coop_raw").check_histogram(n, 2 * _sms())


def test_raw_histogram_of_one_repeated_byte() -> None:
    raw = example("coop_raw")
    data = np.full((1 << 22) + 1, 7, np.uint8)  # every atomic hits one bin
    d_data = cuda.to_device(data)
    counts = cuda.to_device(np.zeros(raw.NBINS, np.uint32))
    raw.histogram_raw[2 * _sms(), raw.HIST_BLOCK](counts, raw.as_words(d_data), d_data)
    expected = np.zeros(raw.NBINS, np.uint32)
    expected[7] = data.size
    np.testing.assert_array_equal(counts.copy_to_host(), expected)


# ------------------------------------------------------------------ Tier-1 examples


@pytest.mark.parametrize("n", [1, 255, (1 << 24) + 7])
def test_reduce_sum(n: int) -> None:
    skip_if_not_lowered("reduce_sum")
    assert example("reduce_sum").run(n)


def test_reduce_sum_two_passes_are_bitwise_reproducible() -> None:
    skip_if_not_lowered("reduce_sum")
    ex = example("reduce_sum")
    x = cuda.to_device(np.random.default_rng(5).standard_normal(1 << 24).astype(np.float32))
    partial = cuda.device_array(ex.first_pass_blocks(), np.float32)
    results = []
    for _ in range(3):
        result = cuda.to_device(np.full(1, np.nan, np.float32))
        ex.make_reduce_sum(x, partial, result)()
        results.append(result.copy_to_host()[0])
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("n", [1, 2_304, 2_305, 5_308_417, 6_000_011])
def test_scan(n: int) -> None:
    skip_if_not_lowered("scan")
    assert example("scan").run(n)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (31, 65), (1_025, 2_049), (4_096, 4_096)])
def test_transpose(rows: int, cols: int) -> None:
    skip_if_not_lowered("transpose")
    assert example("transpose").run(rows, cols)


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (128, 8, 128), (257, 129, 383), (1_024,) * 3])
def test_sgemm(m: int, k: int, n: int) -> None:
    skip_if_not_lowered("sgemm")
    assert example("sgemm").run(m, k, n)


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(1, 1, 1), (128, 8, 128), (128, 16, 128), (257, 129, 383), (300, 200, 250), (1_024,) * 3],
)
def test_sgemm_async(m: int, k: int, n: int) -> None:
    """cp.async fills (b's rows of n floats: a multiple of 16 bytes or not), zeros past k."""
    assert example("sgemm_async").run(m, k, n)


@pytest.mark.parametrize("n", [3, 4, 1_000_003, (1 << 24) + 3])
def test_histogram(n: int) -> None:
    skip_if_not_lowered("histogram")
    assert example("histogram").run(n, 2 * _sms())
