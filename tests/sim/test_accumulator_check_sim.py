"""``sim.check`` sees accumulator updates as the atomics they are on the GPU: threads adding to
one counter do not race (before, the simulator twin's read and write were recorded as plain
accesses and every Tier-1 histogram showed races)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

SOURCE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(total: ss.Accumulate[np.int32], per_bin: ss.Accumulate[np.int32], x: In[np.int32]) -> None:
    h = ss.shared.accumulator(4, np.int32)
    w = thread.index_1d()
    v = x[w] if w.in_bounds(x) else np.int32(0)
    h.add(v % 4, 1)          # every thread of the block on four shared counters
    total.add(0, v)          # every thread of the grid on one global counter
    ss.block.sync()
    t = cuda.threadIdx.x
    if t < 4:
        per_bin.add(t, h[t])
"""


def test_shared_and_global_accumulators_do_not_race(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, SOURCE)
    x = np.arange(128, dtype=np.int32)
    report = ss.sim.check(mod.k, 2, 64, np.zeros(1, np.int32), np.zeros(4, np.int32), x)
    assert report.ok, report
    assert report.outputs["total"][0] == x.sum()
    np.testing.assert_array_equal(report.outputs["per_bin"], np.bincount(x % 4, minlength=4))


def test_the_histogram_example_is_clean() -> None:
    ex = example("histogram")
    data = (np.arange(1003) % 7).astype(np.uint8)
    words = data[: 4 * (data.size // 4)].view(np.uint32)
    report = ss.sim.check(ex.histogram, 1, ex.BLOCK, np.zeros(256, np.uint32), words, data)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["counts"], np.bincount(data, minlength=256))
