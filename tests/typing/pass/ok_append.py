"""Rule: an append buffer is written and read only at a slot claimed from it; its counter is not
touched by kernel code; the host reads what was stored and dropped."""

from typing import Any

import numpy as np
from numba import cuda
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import AppendBuffer, Appended, Counter, In, ThreadIndex, thread


def k(out: AppendBuffer[np.float32], count: Counter, x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        if x[w] > 0:
            s = out.claim()
            assert_type(s, ThreadIndex[Appended])
            out[s] = x[w]
            out[s] = 1.5
            assert_type(out[s], np.float32)
            assert_type(s.index, int)
            assert_type(s.in_bounds(out), bool)
            assert_type(x[s.index], np.float32)
    assert_type(out.size, int)
    assert_type(len(out), int)


def block(out: AppendBuffer[np.float32], count: Counter, x: In[np.float32], t: float) -> None:
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    v = x[i] if i < x.size else np.float32(0)
    s = out.block_claim(v > t)
    assert_type(s, ThreadIndex[Appended])
    out[s] = v
    s2 = out.block_claim(True)
    out[s2] = np.float32(2)


def host(items: Any, counter: Any) -> None:
    assert_type(ss.appended(items, counter), int)
    r = ss.append_result(items, counter)
    assert_type(r, ss.AppendResult)
    assert_type(r.stored + r.dropped, int)
    c = ss.counter()
    assert_type(c, Any)
