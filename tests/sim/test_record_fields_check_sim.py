"""``simtsafe.sim.check`` replays field stores on the thread's own output record (its replay
memory gives a record as a copy; the view hands out a reference to the element's bytes, as
the device does): the kernel form, a nested field, a helper's field store, and reference
semantics -- the values numpy gives, and no finding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

_SOURCE = """
from simtsafe import ThreadIndex

INNER = np.dtype([("a", np.float32), ("b", np.int16)])
REC = np.dtype([("x", np.float32), ("y", np.int32), ("inner", INNER)])


@ss.device
def put_y(o: DisjointSlice[REC], w: ThreadIndex[Index1D], v: np.int32) -> None:
    o[w].y = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], seen: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        r = out[w]  # a reference: reads the element as it is when read
        out[w].x = a[w] * 2
        put_y(out, w, np.int32(w.index) + 1)
        out[w].inner.a = a[w] + 0.5
        out[w].inner.b = 3
        seen[w] = r.x + r.inner.a
"""


def test_field_stores_replayed(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _SOURCE)
    n = 40
    a = np.arange(n, dtype=np.float32)
    report = ss.sim.check(mod.k, 2, 32, np.zeros(n, mod.REC), np.zeros(n, np.float32), a)
    assert report.ok, report
    out = report.outputs["out"]
    np.testing.assert_array_equal(out["x"], a * 2)
    np.testing.assert_array_equal(out["y"], np.arange(n) + 1)
    np.testing.assert_array_equal(out["inner"]["a"], a + 0.5)
    np.testing.assert_array_equal(out["inner"]["b"], np.full(n, 3))
    np.testing.assert_array_equal(report.outputs["seen"], a * 2 + a + 0.5)
