"""Helpers inlined at the Numba IR level, nested and called at several sites: what
``lowering._compat``'s linear inlining must compile exactly as numba-cuda's own does
(tests/ptx/test_inlining_speed_ptx.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

SCALE = np.float32(0.5)


@ss.device(inline=True)
def _leaf(a: Any, j: int, acc: Any) -> None:
    for e in range(4):  # a loop in the callee: its blocks and variables are copied
        acc[e] += a[(j + e) % a.size] * SCALE


@ss.device(inline=True)
def _pair(a: Any, j: int, acc: Any) -> None:
    _leaf(a, j, acc)
    _leaf(a, j + 4, acc)


@ss.device(inline=True)
def _quad(a: Any, j: int, acc: Any) -> None:
    _pair(a, j, acc)
    _pair(a, j + 8, acc)


@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=128))
def nested(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    acc = cuda.local.array(4, np.float32)
    for e in range(4):
        acc[e] = np.float32(0.0)
    _quad(a, 0, acc)
    _quad(a, 16, acc)
    _pair(a, 32, acc)
    out[i] = (acc[0] + acc[1]) + (acc[2] + acc[3])


@cuda.jit(device=True, inline=True)
def _raw_leaf(a: Any, j: int, acc: Any) -> None:
    for e in range(4):
        acc[e] += a[(j + e) % a.size] * SCALE


@cuda.jit(device=True, inline=True)
def _raw_pair(a: Any, j: int, acc: Any) -> None:
    _raw_leaf(a, j, acc)
    _raw_leaf(a, j + 4, acc)


@cuda.jit
def nested_raw(out: Any, a: Any) -> None:
    i = cuda.grid(1)
    acc = cuda.local.array(4, np.float32)
    for e in range(4):
        acc[e] = np.float32(0.0)
    _raw_pair(a, 0, acc)
    _raw_pair(a, 8, acc)
    _raw_pair(a, 16, acc)
    if i < out.size:
        out[i] = (acc[0] + acc[1]) + (acc[2] + acc[3])
