"""benchmarks/_gemv_piped.py on the simulator: the GEMV candidates whose weights stream through
a ring of shared tiles match numpy at a k that ends inside a stage and inside a round, with
an input shorter than a row, and ``sim.check`` finds no race (the ring's refills and reads
are barrier-separated)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import ml_dtypes
import numpy as np
import pytest

import simtsafe as ss

pytestmark = pytest.mark.sim

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def piped() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("_gemv_piped")
    finally:
        sys.path.remove(str(BENCHMARKS))


def _weights(rows: int, k: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((rows, k)) * 0.1).astype(ml_dtypes.bfloat16)


def _normed(x: np.ndarray, eps: float) -> np.ndarray:
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64) + eps)


def test_residual_matches_numpy_and_check_is_clean(piped: ModuleType) -> None:
    rows, k, nv = 2 * piped.RB, piped.ROUND + piped.BK + 40, piped.ROUND + 100
    w = _weights(rows, k, 1)
    v = np.random.default_rng(2).standard_normal(nv).astype(np.float32)
    res = np.random.default_rng(3).standard_normal((2, piped.RB)).astype(np.float32)
    kernel = piped.variants(3)["residual"]
    report = ss.sim.check(
        kernel, 2, piped.BLOCK, np.zeros((2, piped.RB), np.float32), w, v, res, shared_mem=4 * nv
    )
    assert report.ok, report
    want = res.ravel() + w.astype(np.float64)[:, :nv] @ v  # columns past v multiply 0
    np.testing.assert_allclose(report.outputs["y"].ravel(), want, rtol=1e-5, atol=1e-5)


def test_normed_and_swiglu_match_numpy(piped: ModuleType) -> None:
    kernels = piped.variants(3)
    k = piped.BK + 72  # one stage and part of a second: the rest of the round reads zeros
    x = np.random.default_rng(4).standard_normal(k).astype(np.float32)
    nw = np.random.default_rng(5).uniform(0.5, 1.5, k).astype(np.float32)
    eps = np.float32(1e-6)
    h = _normed(x, float(eps)) * nw

    w = _weights(piped.RB, k, 6)
    report = ss.sim.check(
        kernels["norm"], 1, piped.BLOCK, np.zeros((1, piped.RB), np.float32), w, x, nw, eps,
        shared_mem=4 * k,
    )  # fmt: skip
    assert report.ok, report
    np.testing.assert_allclose(
        report.outputs["y"].ravel(), w.astype(np.float64) @ h, rtol=1e-4, atol=1e-5
    )

    n = 2 * piped.WARPS  # two blocks of WARPS outputs: gate rows 0..n-1, up rows n..2n-1
    w = _weights(2 * n, k, 7)
    report = ss.sim.check(
        kernels["swiglu"], 2, piped.BLOCK, np.zeros((2, piped.WARPS), np.float32), w, x, nw,
        eps, shared_mem=4 * k,
    )  # fmt: skip
    assert report.ok, report
    g, u = w.astype(np.float64)[:n] @ h, w.astype(np.float64)[n:] @ h
    np.testing.assert_allclose(
        report.outputs["y"].ravel(), g / (1 + np.exp(-g)) * u, rtol=1e-4, atol=1e-5
    )
