"""Ownership won by atomics on a real GPU: the warp-aggregated claim under any divergence.

The simulator claims one slot per call (a lock), so only a GPU runs the
aggregated lowering (``activemask``, one ``atom.add`` per group, two
``shfl.sync.idx``). Each test stores, for every claim, a value that names
the thread and the claim, and checks that every value is there exactly once
(or counted as dropped), at sizes and capacities the simulator cannot reach.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import load_kernel_module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

_CLAIMS = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, reps: In[np.int32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(reps):
        r = reps[w]
        tag = np.int64(w.index) * 64
        if r % 2 == 0:  # two groups of lanes claim at different times
            s = out.claim()
            out[s] = tag
        else:
            s = out.claim()
            out[s] = tag
        j = 1
        while j < r:  # lanes leave this loop at different iterations
            if (j + r) % 3 == 0:
                s = out.claim()
                out[s] = tag + j
            else:
                s = out.claim()
                out[s] = tag + j
            j += 1
"""


def _expected(reps: np.ndarray) -> np.ndarray:
    tags = [np.int64(i) * 64 + np.arange(max(r, 1), dtype=np.int64) for i, r in enumerate(reps)]
    return np.sort(np.concatenate(tags))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_divergent_claims_get_distinct_slots(tmp_path: Path, seed: int) -> None:
    k = load_kernel_module(tmp_path, _CLAIMS).k
    rng = np.random.default_rng(seed)
    reps = rng.integers(0, 40, 100_003).astype(np.int32)
    want = _expected(reps)
    for cap in (want.size, want.size - 1, want.size // 3):
        d_out = cuda.to_device(np.full(cap, -1, np.int64))
        d_n = ss.counter()
        k.prepare(grid=ss.cover(reps.size, 128), block=128)(d_out, d_n, cuda.to_device(reps))
        r = ss.append_result(d_out, d_n)
        assert (r.claimed, r.stored) == (want.size, min(cap, want.size))
        got = np.sort(d_out.copy_to_host())
        assert np.unique(got).size == got.size  # no slot given twice
        assert np.isin(got, want).all()
        if cap == want.size:
            np.testing.assert_array_equal(got, want)


def test_the_compaction_example_at_full_size() -> None:
    assert example("compact").run(n=10_000_019, blocks=264)


def test_claims_across_many_blocks_and_launches(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, _CLAIMS).k
    reps = np.ones(1_000_000, np.int32)
    d_out = cuda.to_device(np.full(3_000_000, -1, np.int64))
    d_n = ss.counter()
    launch = k.prepare(grid=ss.cover(reps.size, 128), block=128)
    for _ in range(3):  # a queue over launches: the counter is not reset
        launch(d_out, d_n, cuda.to_device(reps))
    assert ss.appended(d_out, d_n) == 3_000_000
    got = d_out.copy_to_host()
    counts = np.bincount(got // 64, minlength=reps.size)
    assert (counts == 3).all()
