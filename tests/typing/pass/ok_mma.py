"""Rule: simtsafe.mma loads A/B fragments from shared tiles, multiplies them into a tuple of
4 float32, and stores that through the warp's output tile."""

from typing import assert_type

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread


def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16]) -> None:
    ta = ss.shared.tile((16, 16), ss.bfloat16, pad=8)
    tb = ss.shared.tile((16, 8), ss.bfloat16, pad=8)
    for w in thread.block_stride(ta):
        ta[w] = a[w.row, w.col]
    for w in thread.block_stride(tb):
        tb[w] = a[w.row, w.col]
    ss.block.sync()
    fa = ss.mma.load_a(ta, (0, 0))
    fb = ss.mma.load_b(tb, (0, 0))
    acc = ss.mma.mma(fa, fb, ss.mma.zeros())
    assert_type(acc[0], np.float32)
    o = ss.mma.out_tile(out, 16, 8, 16, 8)
    ss.mma.store(o, 0, 0, acc)
