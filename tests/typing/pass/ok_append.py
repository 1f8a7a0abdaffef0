"""Rule: an append buffer is written and read only at a slot claimed from it; its counter is not
touched by kernel code; the host reads what was stored and dropped."""

from typing import Any

import numpy as np
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


def host(items: Any, counter: Any) -> None:
    assert_type(ss.appended(items, counter), int)
    r = ss.append_result(items, counter)
    assert_type(r, ss.AppendResult)
    assert_type(r.stored + r.dropped, int)
    c = ss.counter()
    assert_type(c, Any)
