"""Rule: a row space's output is written only through its own row walk's witness."""

import numpy as np

from simtsafe import BlockRow, DisjointSlice, DisjointSlice2D, In, In2D, WarpRow, thread


def k(
    ob: DisjointSlice[np.float32, BlockRow],
    ow: DisjointSlice[np.float32, WarpRow],
    o2: DisjointSlice2D[np.float32],
    x: In2D[np.float32],
    a: In[np.float32],
) -> None:
    for w in thread.block_row(x):
        ow[w] = x[w]  # type: ignore[index]
        o2[w] = x[w]  # type: ignore[index]
    for v in thread.warp_row(x):
        ob[v] = x[v]  # type: ignore[index]
    ob[thread.index_2d()] = x[0, 0]  # type: ignore[index]
    for _u in thread.warp_row(ob):  # type: ignore[arg-type]
        pass
    for _t in thread.block_row(a):  # type: ignore[arg-type]
        pass
    for c in thread.warp_row_chunks(x):
        ob[c] = x[c]  # type: ignore[index]
    for _d in thread.block_row_chunks(a):  # type: ignore[arg-type]
        pass
    for _e in thread.block_row_chunks(ow):  # type: ignore[arg-type]
        pass
    for w in thread.block_row(x):
        _ = w.valid  # type: ignore[attr-defined]
