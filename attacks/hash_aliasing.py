"""Attack: the same memory as a HashTable and as an In (find after insert), or as its HashValues.

cd /work/wt-attack2 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_aliasing.py
"""
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

C = ss.LaunchContract
T = {"keys": {"values": ["vals"], "failed": "nf"}}

@ss.kernel(contract=C(domain=1, block=(32, 1, 1), tables=T))
def find_after_insert(keys: ss.HashTable[np.int32], vals: ss.HashValues[np.int32], nf: ss.Counter,
                      kin: In[np.int32], q: In[np.int32], res: DisjointSlice[np.int64]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = np.int32(-1)                 # writes EMPTY into ... the keys if vals aliases them
        f = ss.hashing.find(kin, q[w])
        res[w] = f.index

def attempt(name, keys, vals, kin, n=8):
    q = cuda.to_device(np.arange(n, dtype=np.int32))
    res = cuda.to_device(np.zeros(n, np.int64))
    try:
        find_after_insert.prepare(grid=1, block=32)(keys, vals, ss.counter(), kin, q, res)
        print(name, "ACCEPTED", keys.copy_to_host(), res.copy_to_host())
    except Exception as e:
        print(name, "REFUSED:", type(e).__name__, str(e)[:200].replace("\n", " "))

k = ss.empty_keys(16, np.int32)
attempt("keys as In too", k, cuda.device_array(16, np.int32), k)
k = ss.empty_keys(16, np.int32)
attempt("vals = keys", k, k, cuda.to_device(np.full(16, -1, np.int32)))
big = cuda.to_device(np.full(32, -1, np.int32))
attempt("vals overlaps keys (offset view)", big[0:16], big[8:24], cuda.to_device(np.full(16, -1, np.int32)))
k = ss.empty_keys(16, np.int32)
attempt("twin: separate arrays", k, cuda.device_array(16, np.int32), cuda.to_device(np.full(16, -1, np.int32)))
