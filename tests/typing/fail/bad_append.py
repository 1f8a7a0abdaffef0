"""Rule: an append buffer is written and read only at a slot claimed from it; its counter is not
touched by kernel code; the host reads what was stored and dropped."""

import numpy as np

from simtsafe import AppendBuffer, Counter, DisjointSlice, In, thread


def k(
    out: AppendBuffer[np.float32], count: Counter, o: DisjointSlice[np.float32], x: In[np.float32]
) -> None:
    i = thread.index_1d()
    out[i] = 1.0  # type: ignore[index]
    out[3] = 1.0  # type: ignore[call-overload]
    s = out.claim()
    o[s] = 1.0  # type: ignore[index]
    j = s + 1  # type: ignore[operator]
    y = out[i]  # type: ignore[index]
    c = count[0]  # type: ignore[index]
    count[0] = 1  # type: ignore[index]
    n = count.size  # type: ignore[attr-defined]
    t = x.claim()  # type: ignore[attr-defined]
    out[s] = "one"  # type: ignore[call-overload]
    b = out.block_claim(1.5)  # type: ignore[arg-type]
    o[out.block_claim(True)] = 1.0  # type: ignore[index]
    out.block_claim()  # type: ignore[call-arg]
