"""Rule: collectives take and return one number per thread; reduce takes a two-value op, and
reduces a tuple state with an op of two states."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


def negate(a: np.float32) -> np.float32:
    return -a


def first(a: tuple[np.float32, np.float32], b: tuple[np.float32, np.float32]) -> np.float32:
    return a[0]


def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    ss.block.sum("x")  # type: ignore[type-var]
    ss.warp.max(a)  # type: ignore[type-var]
    ss.block.reduce(v, negate)  # type: ignore[arg-type]
    ss.warp.scan(v, inclusive="no")  # type: ignore[arg-type]
    ss.block.sync(v)  # type: ignore[call-arg]
    ss.block.sum(i)  # type: ignore[type-var]
    ss.block.sum((v, v))  # type: ignore[type-var]
    ss.warp.reduce((v, v), first)  # type: ignore[arg-type]
    ss.block.reduce((v, a), first)  # type: ignore[type-var, arg-type]
    out[i] = ss.block.sum(v)
