"""examples/histogram_vec.py on the simulator: every byte counted once at the run, word and byte
edges, all bytes in one bin; ``sim.check`` finds nothing (its updates are atomics)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.coop_examples import example

pytestmark = pytest.mark.sim


def _hist(data: np.ndarray, blocks: int = 1) -> np.ndarray:
    ex = example("histogram_vec")
    d = cuda.to_device(data)
    counts = cuda.to_device(np.zeros(ex.NBINS, np.uint32))
    ex.histogram_vec.prepare(grid=blocks, block=ex.BLOCK)(counts, ex.as_words(d), d)
    return counts.copy_to_host()


@pytest.mark.parametrize("n", [1, 3, 4, 5, 15, 16, 17, 35, 2 * 256 * 16 + 7])
def test_every_byte_counted_once(n: int) -> None:
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    np.testing.assert_array_equal(_hist(data), np.bincount(data, minlength=256))


def test_all_bytes_in_one_bin() -> None:
    data = np.full(5000, 255, np.uint8)
    got = _hist(data, blocks=2)
    assert got[255] == 5000 and got.sum() == 5000


def test_check_finds_nothing() -> None:
    ex = example("histogram_vec")
    data = np.where(np.arange(1003) % 5 == 0, 9, np.arange(1003) % 256).astype(np.uint8)
    words = data[: 4 * (data.size // 4)].view(np.uint32)
    report = ss.sim.check(ex.histogram_vec, 1, ex.BLOCK, np.zeros(256, np.uint32), words, data)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["counts"], np.bincount(data, minlength=256))


def test_one_main_loop_step_tail_runs_and_the_last_bytes() -> None:
    """The example on one block: its main loop (four runs per step) once, the tail loop (300
    runs: the main loop's bound is not met again), the last word and 3 bytes."""
    n = 4 * 256 * 16 + 16 * 300 + 7
    data = np.random.default_rng(3).integers(0, 256, n, dtype=np.uint8)
    np.testing.assert_array_equal(_hist(data), np.bincount(data, minlength=256))


def _primitives() -> ModuleType:
    """benchmarks/primitives.py, imported from its folder."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import primitives

    return primitives


def _skewed(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.9, 200, rng.integers(0, 256, n)).astype(np.uint8)


@pytest.mark.parametrize("name", ["histogram_vec_2runs", "histogram_flat"])
@pytest.mark.parametrize(
    "n, kind",
    [
        (4 * 256 * 16 + 16 * 300 + 7, "uniform"),  # main loop once, tail runs, a word, 3 bytes
        (4 * 256 * 16 + 16 * 300 + 7, "skewed"),
        (2 * 256 * 16 + 16 * 17 + 5, "uniform"),  # one main-loop step
        (1, "uniform"),
        (15, "skewed"),
        (35, "uniform"),
    ],
)
def test_candidates_match_numpy(name: str, n: int, kind: str) -> None:
    """benchmarks/primitives.py's histogram candidates on one block (two runs per step, in the
    2D and in a flat accumulator): the main loop, the tail loop, the last words and bytes;
    uniform and skewed data, sizes not a multiple of 16."""
    kernel = getattr(_primitives(), name)
    ex = example("histogram_vec")
    data = (
        np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
        if kind == "uniform"
        else _skewed(n, n)
    )
    d_data = cuda.to_device(data)
    counts = cuda.to_device(np.zeros(256, np.uint32))
    kernel.prepare(grid=1, block=256)(counts, ex.as_words(d_data), d_data)
    np.testing.assert_array_equal(counts.copy_to_host(), np.bincount(data, minlength=256))
