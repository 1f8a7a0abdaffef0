"""Block claims on a real GPU: one fetch-add per block and round, nothing lost at any capacity.

The simulator exchanges every thread's ``keep`` in Python; only a GPU runs the
lowering (ballot per warp, the shared exchange with its two alternating copies,
two barriers, thread 0's atomic). Every stored value names its element, so the
tests check that each selected element is there exactly once or counted as
dropped, over seeded inputs, several block shapes (a partial last warp
included), a helper (one exchange copy, a trailing barrier) and capacities at
and below the need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

_KERNEL = """
@ss.device
def push(buf, v, keep):
    s = buf.block_claim(keep)
    buf[s] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=({block}, 1, 1), appends={{"out": "n"}}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, x: In[np.int64], t: np.int64) -> None:
    size = x.size
    stride = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    for _ in range((size + stride - 1) // stride):
        v = x[i] if i < size else t
        keep = i < size and v > t
        if {helper}:
            push(out, v, keep)
        else:
            s = out.block_claim(keep)
            out[s] = v
        i += stride
"""


def _kernel(tmp_path: Path, block: int, helper: bool) -> Any:
    return load_kernel_module(tmp_path, _KERNEL.format(block=block, helper=helper)).k


@pytest.mark.parametrize(("block", "helper"), [(256, False), (100, False), (96, True)])
def test_every_selected_element_once_or_counted(tmp_path: Path, block: int, helper: bool) -> None:
    k = _kernel(tmp_path, block, helper)
    rng = np.random.default_rng(block)
    for n, grid in ((1_000_003, 132 * 8), (77_777, 5)):
        x = rng.permutation(n).astype(np.int64)  # distinct: a value names its element
        t = int(rng.integers(0, n))
        want = np.sort(x[x > t])
        d_x = cuda.to_device(x)
        for cap in (want.size, want.size - 1, want.size // 3, 0):
            d_out = cuda.to_device(np.full(cap, -1, np.int64))
            d_n = ss.counter()
            k.prepare(grid=grid, block=block)(d_out, d_n, d_x, np.int64(t))
            r = ss.append_result(d_out, d_n)
            assert (r.claimed, r.stored) == (want.size, min(cap, want.size))
            got = np.sort(d_out.copy_to_host())
            assert np.unique(got).size == got.size  # no slot given twice
            assert np.isin(got, want).all()  # only selected elements, none skipped over
            if cap == want.size:
                np.testing.assert_array_equal(got, want)


def test_block_and_warp_claims_share_a_counter(tmp_path: Path) -> None:
    src = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int64], n: ss.Counter, x: In[np.int64]) -> None:
    size = x.size
    stride = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    for _ in range((size + stride - 1) // stride):
        v = x[i] if i < size else np.int64(0)
        s = out.block_claim(i < size and v % 2 == 0)
        out[s] = v
        if i < size and v % 2 == 1:
            t = out.claim()
            out[t] = v
        i += stride
"""
    k = load_kernel_module(tmp_path, src).k
    x = np.arange(2_000_000, dtype=np.int64)
    d_out = cuda.to_device(np.full(x.size, -1, np.int64))
    d_n = ss.counter()
    k.prepare(grid=300, block=128)(d_out, d_n, cuda.to_device(x))
    assert ss.appended(d_out, d_n) == x.size
    np.testing.assert_array_equal(np.sort(d_out.copy_to_host()), x)


def test_the_example_and_its_raw_twin_agree_at_full_size() -> None:
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    compact = importlib.import_module("compact")
    assert compact.run(n=2**24 + 7, blocks=132 * 8)
