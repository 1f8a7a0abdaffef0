"""examples/sum_vec.py on a real device (skipped without one): float32 sums bit-identical run to
run, int32 sums exact, odd sizes and misaligned views (the element path) right."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from tests.coop_examples import example

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("n", [1, 3, 4, 1_000_003, 2**26 + 5])
def test_float32_sum_is_deterministic(n: int) -> None:
    ex = example("sum_vec")
    x = np.random.default_rng(n % 13).standard_normal(n).astype(np.float32)
    total = cuda.to_device(np.full(1, np.nan, np.float32))
    launch = ex.make_sum(cuda.to_device(x), total)
    got = []
    for _ in range(5):
        launch()
        got.append(total.copy_to_host()[0])
    assert len({float(g) for g in got}) == 1, got  # the same bits every run
    want = x.astype(np.float64).sum()
    assert abs(got[0] - want) <= 1e-5 * np.abs(x.astype(np.float64)).sum() + 1e-6


@pytest.mark.parametrize("n", [1, 7, 2**24 + 3])
def test_int32_sum_is_exact(n: int) -> None:
    ex = example("sum_vec")
    x = np.random.default_rng(n).integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
    total = cuda.to_device(np.zeros(1, np.int64))
    ex.make_sum(cuda.to_device(x), total)()
    assert int(total.copy_to_host()[0]) == int(x.astype(np.int64).sum())


def test_misaligned_view() -> None:
    ex = example("sum_vec")
    x = np.arange(1_000_001, dtype=np.float32) % 3
    total = cuda.to_device(np.zeros(1, np.float32))
    ex.make_sum(cuda.to_device(x)[1:], total)()
    assert total.copy_to_host()[0] == x[1:].astype(np.float64).sum()
