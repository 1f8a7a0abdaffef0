"""Arrays updated by atomics are written arrays for the stream ordering ledger.

An ``Accumulate`` (atomic add/min/max), an ``AppendBuffer`` and its
``Counter`` are written by the launch; a launch on another stream that reads
them must be ordered after it (``ordering="strict"`` refuses it instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

SOURCE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def hist(h: ss.Accumulate[np.float32], x: In[np.int32]) -> None:
    for w in thread.grid_stride(x):
        h.add(x[w], 1.0)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n"}))
def keep(out: ss.AppendBuffer[np.float32], n: ss.Counter, x: In[np.int32]) -> None:
    for w in thread.grid_stride(x):
        s = out.claim()
        out[s] = 1.0


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def read_f32(o: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    for w in thread.grid_stride(a):
        o[w] = a[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def read_u64(o: DisjointSlice[np.uint64], a: In[np.uint64]) -> None:
    for w in thread.grid_stride(a):
        o[w] = a[w]
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_kernel_module(tmp_path_factory.mktemp("atomic_ordering"), SOURCE)


@pytest.fixture(autouse=True)
def clean_ledger() -> Iterator[None]:
    ss.synchronize()
    with ss.configure(ordering="auto", cai_sync=True, check_host_reads=False):
        yield
    ss.synchronize()


def _x() -> Any:
    return cuda.to_device(np.arange(8, dtype=np.int32))


def test_a_reader_of_an_accumulator_is_ordered_after_its_updates(mod: Any) -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    h = cuda.to_device(np.zeros(8, np.float32))
    with ss.configure(ordering="strict"):
        mod.hist.prepare(grid=1, block=32, stream=s1)(h, _x())
        with pytest.raises(ss.StreamOrderError) as info:
            mod.read_f32.prepare(grid=1, block=32, stream=s2)(
                cuda.to_device(np.zeros(8, np.float32)), h
            )
    assert info.value.argument == "a" and info.value.other == "h"


@pytest.mark.parametrize("which", ["out", "n"])
def test_a_reader_of_an_append_buffer_or_its_counter_is_ordered_after_it(
    mod: Any, which: str
) -> None:
    s1, s2 = cuda.stream(), cuda.stream()
    out, n = cuda.to_device(np.zeros(8, np.float32)), ss.counter()
    with ss.configure(ordering="strict"):
        mod.keep.prepare(grid=1, block=32, stream=s1)(out, n, _x())
        reader, arr, dtype = (
            (mod.read_f32, out, np.float32) if which == "out" else (mod.read_u64, n, np.uint64)
        )
        with pytest.raises(ss.StreamOrderError) as info:
            reader.prepare(grid=1, block=32, stream=s2)(
                cuda.to_device(np.zeros(arr.size, dtype)), arr
            )
    assert info.value.other == which
