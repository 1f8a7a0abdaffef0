"""Attack: hashing.find on arrays that are not inputs (an output being written, an Accumulate).

The docs: find "looks k up in a table that no thread inserts into: its keys are an input (In[...])".
_find's typing accepts any types.Array. Run with and without NUMBA_ENABLE_CUDASIM=1:
cd /work/wt-attack2 && PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_find_on_output.py
"""
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

C = ss.LaunchContract

@ss.kernel(contract=C(domain=1, block=(32, 1, 1)))
def find_in_output(out: DisjointSlice[np.uint32], res: DisjointSlice[np.int64],
                   q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        out[w] = q[w]                       # every thread writes its own element of out ...
        f = ss.hashing.find(out, q[w])      # ... and probes all of out while others write it
        res[w] = f.index

@ss.kernel(contract=C(domain=1, block=(32, 1, 1)))
def find_in_accumulate(acc: ss.Accumulate[np.uint32], res: DisjointSlice[np.int64],
                       q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        acc.add(w.index, 1)
        f = ss.hashing.find(acc, q[w])
        res[w] = f.index

for k in (find_in_output, find_in_accumulate):
    name = k.__name__ if hasattr(k, "__name__") else str(k)
    try:
        if ss.SIMULATOR:
            n = 64
            q = cuda.to_device(np.arange(n, dtype=np.uint32))
            a = cuda.to_device(np.full(n, 0xFFFFFFFF, np.uint32))
            r = cuda.to_device(np.zeros(n, np.int64))
            k.prepare(grid=2, block=32)(a, r, q)
            print(name, "SIM: ACCEPTED, ran", r.copy_to_host()[:8])
        else:
            k.ptx(cc=(9, 0))
            print(name, "DEVICE: ACCEPTED (compiled)")
    except Exception as e:
        print(name, "REFUSED:", type(e).__name__, str(e)[:300])
