"""The simulator's block scheduler (lowering/_simsched): Numba's semantics, without the busy loop.

The barrier opens when every live thread of the block waits at it (threads that returned
are not waited for); an exception in one thread aborts the others and comes out of the
launch with the simulator's ``tid=[...] ctaid=[...]`` prefix, with no thread left waiting.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss

pytestmark = pytest.mark.skipif(not ss.SIMULATOR, reason="the simulator's scheduler")


def test_the_scheduler_is_installed() -> None:
    from numba.cuda.simulator import kernel

    assert kernel.BlockManager._ss_scheduler is True


def test_a_barrier_waits_only_for_the_live_threads() -> None:
    @cuda.jit
    def rotate(out, live):  # type: ignore[no-untyped-def]
        t = cuda.threadIdx.x
        if t >= live:
            return  # these threads never reach the barriers
        s = cuda.shared.array(64, np.int32)
        s[t] = t * 10
        cuda.syncthreads()
        v = s[(t + 1) % live]
        cuda.syncthreads()
        s[t] = v + 1
        cuda.syncthreads()
        out[t] = s[(t + 1) % live]

    out = np.full(64, -1, np.int32)
    rotate[2, 64](out, 40)
    t = np.arange(40)
    np.testing.assert_array_equal(out[:40], ((t + 2) % 40) * 10 + 1)
    assert (out[40:] == -1).all()


def test_an_exception_aborts_the_block_and_names_the_thread() -> None:
    @cuda.jit
    def boom(out):  # type: ignore[no-untyped-def]
        t = cuda.threadIdx.x
        if t == 5:
            raise ValueError("thread five")
        cuda.syncthreads()  # the others wait here until the exception aborts them
        out[t] = t

    before = threading.active_count()
    with pytest.raises(ValueError, match=r"tid=\[5, 0, 0\] ctaid=\[0, 0, 0\]: thread five"):
        boom[1, 32](np.zeros(32, np.int32))
    for t in threading.enumerate():  # the aborted threads end (their barrier raised)
        if type(t).__name__ == "BlockThread":
            t.join(timeout=10)
    assert threading.active_count() <= before


def test_warp_collectives_of_many_warps_complete() -> None:
    """256 threads, 8 warps, 32 rounds of a warp sum each (the pattern that waited for the
    poller at every exchange): every warp's sums are right."""

    @ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
    def sums(out: ss.DisjointSlice[np.int32], x: ss.In[np.int32]) -> None:
        i = ss.thread.index_1d()
        acc = 0
        for k in range(32):
            acc += ss.warp.sum(x[i] * k)
        out[i] = acc

    x = np.arange(256, dtype=np.int32)
    d_out = cuda.to_device(np.zeros(256, np.int32))
    sums.prepare(grid=1, block=256)(d_out, cuda.to_device(x))
    out = d_out.copy_to_host()
    warp_totals = x.reshape(8, 32).sum(axis=1)
    want = np.repeat(warp_totals * sum(range(32)), 32)
    np.testing.assert_array_equal(out, want)
