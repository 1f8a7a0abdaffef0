"""Attack round 33 (tests/kernels/attacks33.py) on the simulator: host-side aliasing. An input
or a second output overlapping an output by any view (offset, one element, negative stride,
stride 2, bytes seen as another dtype, a reshape) is refused with ``AliasingError`` before
anything runs -- on a first launch, on a prepared launch's memoized fast path and on a graph's
``rebind``; the disjoint views launch and compute what numpy says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

_COPY = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.in_bounds(x):
        out[i] = x[i] + np.float32(1)
"""
_TWO = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], o2: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = np.float32(1)
    o2[i] = np.float32(2)
"""
_BYTES = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.uint8], x: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = np.uint8(3)
"""


def _kernel(tmp_path: Path, src: str) -> Any:
    return load_kernel_module(tmp_path, src).k


def _base() -> Any:
    return cuda.to_device(np.arange(128, dtype=np.float32))


_OVERLAPS = {
    "offset-view": lambda b: (b[0:64], b[32:96]),
    "one-element": lambda b: (b[0:64], b[63:127]),
    "negative-stride": lambda b: (b[0:64], b[64:0:-1]),
    "stride-2": lambda b: (b[0:64], b[1:128:2]),
    "reshape-of-the-output": lambda b: (b[0:64], b[0:64].reshape(64)),
}


@pytest.mark.parametrize("name", sorted(_OVERLAPS))
def test_an_input_overlapping_the_output_is_refused(tmp_path: Path, name: str) -> None:
    base = _base()
    before = base.copy_to_host()
    with pytest.raises(ss.AliasingError, match="overlaps the memory of argument 'x'"):
        _kernel(tmp_path, _COPY).prepare(grid=2, block=32)(*_OVERLAPS[name](base))
    np.testing.assert_array_equal(base.copy_to_host(), before)  # nothing ran


@pytest.mark.parametrize("pair", [(0, 64, 32, 96), (0, 64, 0, 64)], ids=["overlap", "same"])
def test_two_outputs_overlapping_are_refused(tmp_path: Path, pair: tuple[int, ...]) -> None:
    base = _base()
    a, b, c, d = pair
    with pytest.raises(ss.AliasingError, match="output 'out' overlaps"):
        _kernel(tmp_path, _TWO).prepare(grid=2, block=32)(base[a:b], base[c:d])


def test_input_bytes_seen_as_the_output_are_refused(tmp_path: Path) -> None:
    raw = cuda.to_device(np.zeros(256, np.uint8))
    k = _kernel(tmp_path, _BYTES)
    with pytest.raises(ss.AliasingError):
        k.prepare(grid=2, block=32)(raw[0:130], raw[128:256].view(np.float32))
    k.prepare(grid=4, block=32)(raw[0:128], raw[128:256].view(np.float32))  # disjoint: runs
    got = raw.copy_to_host()
    assert (got[:128] == 3).all() and (got[128:] == 0).all()


def test_disjoint_views_launch_and_compute(tmp_path: Path) -> None:
    base = _base()
    _kernel(tmp_path, _COPY).prepare(grid=2, block=32)(base[0:64], base[127:63:-1])
    want = np.arange(128, dtype=np.float32)
    want[:64] = want[127:63:-1] + 1
    np.testing.assert_array_equal(base.copy_to_host(), want)


def test_memoized_and_graph_launches_recheck_aliasing(tmp_path: Path) -> None:
    k = _kernel(tmp_path, _COPY)
    p = k.prepare(grid=2, block=32)
    a1 = cuda.to_device(np.zeros(64, np.float32))
    a2 = cuda.to_device(np.zeros(64, np.float32))
    p(a1, a2)
    p(a1, a2)  # memoized
    with pytest.raises(ss.AliasingError):
        p(a1, a1)
    base = _base()
    with pytest.raises(ss.AliasingError):
        p(base[0:64], base[32:96])
    with ss.graph() as g:
        p(a1, a2)
    with pytest.raises(ss.AliasingError):
        g.rebind(a2, a1)
    g.rebind(a2, base[0:64])  # disjoint from a1: fine
    with pytest.raises(ss.AliasingError):
        g.rebind(a1, base[32:96])  # now overlapping the rebound input
