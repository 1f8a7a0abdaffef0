"""Rule: a thread draws through its own 1D, 2D or 3D witness from a 1D states array."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, DisjointSlice2D, DisjointSlice3D, thread


def k1(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = ss.random.uniform_float32(states, w)


def k2(out: DisjointSlice2D[np.float64], states: ss.random.States) -> None:
    w = thread.index_2d()
    out[w] = ss.random.normal_float64(states, w)


def k3(out: DisjointSlice3D[np.float32], states: ss.random.States) -> None:
    w = thread.index_3d()
    out[w] = ss.random.normal_float32(states, w)
