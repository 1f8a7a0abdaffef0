"""Attack: key types and edge capacities, simulator twin vs compiled form.

cd /work/wt-attack2 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_keys_sim_vs_device.py
cd /work/wt-attack2 && PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_keys_sim_vs_device.py   # typing only
"""
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import In, thread

C = ss.LaunchContract
T = {"keys": {"values": ["vals"], "failed": "nf"}}

@ss.kernel(contract=C(domain=1, block=(32, 1, 1), tables=T))
def u64_key_in_i64_table(keys: ss.HashTable[np.int64], vals: ss.HashValues[np.int64], nf: ss.Counter,
                         q: In[np.uint64]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])          # uint64 key, int64 table: device typing refuses
        vals[s] = np.int64(1)

@ss.kernel(contract=C(domain=1, block=(32, 1, 1), tables=T))
def i32_key_in_u64_table(keys: ss.HashTable[np.uint64], vals: ss.HashValues[np.int64], nf: ss.Counter,
                         q: In[np.int32]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])          # int32 key (non-negative values), uint64 table
        vals[s] = np.int64(1)

@ss.kernel(contract=C(domain=1, block=(32, 1, 1), tables=T))
def f_key(keys: ss.HashTable[np.int64], vals: ss.HashValues[np.int64], nf: ss.Counter,
          q: In[np.float64]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = np.int64(1)

@ss.kernel(contract=C(domain=1, block=(32, 1, 1), tables=T))
def plain(keys: ss.HashTable[np.int32], vals: ss.HashValues[np.int64], nf: ss.Counter,
          q: In[np.int32]) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = np.int64(w.index)

def run_sim(k, keys, q, vals_dtype=np.int64):
    cap = keys.size
    vals = cuda.to_device(np.full(cap, -7, vals_dtype))
    nf = ss.counter()
    k.prepare(grid=1, block=32)(keys, vals, nf, cuda.to_device(q))
    return keys.copy_to_host(), vals.copy_to_host(), int(nf.copy_to_host()[0])

cases = [
    ("u64 key into int64 table", u64_key_in_i64_table, lambda: ss.empty_keys(8, np.int64), np.arange(4, dtype=np.uint64)),
    ("int32 key into uint64 table", i32_key_in_u64_table, lambda: ss.empty_keys(8, np.uint64), np.arange(4, dtype=np.int32)),
    ("float key", f_key, lambda: ss.empty_keys(8, np.int64), np.arange(4, dtype=np.float64)),
    ("cap 1, 3 keys + EMPTY", plain, lambda: ss.empty_keys(1, np.int32), np.array([5, 5, 6, -1], np.int32)),
    ("cap 0", plain, lambda: ss.empty_keys(0, np.int32) if True else None, np.array([5, 6], np.int32)),
    ("cap 3 (non pow2), 5 distinct", plain, lambda: ss.empty_keys(3, np.int32), np.array([1, 2, 3, 4, 5], np.int32)),
]
for name, k, mk, q in cases:
    try:
        if ss.SIMULATOR:
            print(name, "SIM:", run_sim(k, mk(), q))
        else:
            k.ptx(cc=(9, 0))
            print(name, "DEVICE: compiles")
    except Exception as e:
        print(name, "REFUSED:", type(e).__name__, str(e)[:250].replace("\n", " "))
