"""Rule: an accumulator is a tuple of 4 float32; a fragment is not one, and fragments come
from shared tiles only."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D


def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16]) -> None:
    ta = ss.shared.tile((16, 16), ss.bfloat16, pad=8)
    ss.block.sync()
    fa = ss.mma.load_a(ta, (0, 0))
    o = ss.mma.out_tile(out, 16, 8, 16, 8)
    ss.mma.store(o, 0, 0, fa)  # type: ignore[arg-type]
    ss.mma.load_a(a, (0, 0))  # type: ignore[arg-type]
