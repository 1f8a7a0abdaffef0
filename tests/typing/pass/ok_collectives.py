"""Rule: collectives take and return one number per thread; reduce takes a two-value op, and
reduces a tuple state with an op of two states."""

import operator

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def plus(a: np.float32, b: np.float32) -> np.float32:
    return a + b


W = tuple[np.float32, np.float32, np.float32]
P = tuple[np.float32, int]


def welford(a: W, b: W) -> W:
    return a


def argmax(a: P, b: P) -> P:
    return a if a[0] >= b[0] else b


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
    assert_type(ss.block.reduce((v, v, v), welford), W)
    assert_type(ss.warp.reduce((v, n), argmax), P)
    out[i] = ss.block.sum(v) + ss.warp.max(v)
