"""Rule: collectives take and return one number per thread; reduce takes a two-value op."""

import operator

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def plus(a: np.float32, b: np.float32) -> np.float32:
    return a + b


def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    ss.block.sync()
    assert_type(ss.block.sum(v), np.float32)
    assert_type(ss.block.max(v), np.float32)
    assert_type(ss.block.min(n), int)
    assert_type(ss.block.reduce(v, plus), np.float32)
    assert_type(ss.block.reduce(n, operator.add), int)
    assert_type(ss.block.scan(v), np.float32)
    assert_type(ss.block.scan(v, inclusive=False), np.float32)
    assert_type(ss.block.broadcast(2.5), float)
    assert_type(ss.warp.sum(v), np.float32)
    assert_type(ss.warp.reduce(n, max), int)
    assert_type(ss.warp.scan(n, inclusive=True), int)
    assert_type(ss.warp.broadcast(v), np.float32)
    out[i] = ss.block.sum(v) + ss.warp.max(v)
