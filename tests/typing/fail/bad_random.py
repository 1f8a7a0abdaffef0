"""Rule: a draw takes the thread's 1D/2D/3D witness, never a plain int or a leader witness."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, PerBlock, thread


def k(out: DisjointSlice[np.float32, PerBlock], states: ss.random.States) -> None:
    w = thread.block_leader()
    out[w] = ss.random.uniform_float32(states, w)  # type: ignore[arg-type]
    out[w] = ss.random.uniform_float32(states, w.index)  # type: ignore[arg-type]
