"""Attack 1: is the inline-asm peek (no sideeffect, no memory clobber) CSE'd / hoisted by NVVM?

Kernels with two probes of the same slot in one thread, and a loop of inserts of a loop-invariant
key; print the PTX around the peeks: count ld.global.u32 / atom.cas per kernel.
Run: cd /work/wt-attack2 && PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_ptx_cse.py
"""
import re
import sys

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

C = ss.LaunchContract
T = {"keys": {"values": ["vals"], "failed": "nf"}}

@ss.kernel(contract=C(domain=1, block=(128, 1, 1), tables=T))
def twice(keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.float32], nf: ss.Counter,
          q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        s1 = keys.insert(q[w])
        vals[s1] = np.float32(1)
        s2 = keys.insert(q[w])      # same key, same thread: must not insert again
        vals[s2] = np.float32(2)

@ss.kernel(contract=C(domain=1, block=(128, 1, 1), tables=T))
def spin(keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.float32], nf: ss.Counter,
         q: In[np.uint32], n: np.int32) -> None:
    k = q[0]
    for i in range(n):             # a loop-invariant key: the first peek is loop-invariant
        s = keys.insert(k)
        vals[s] = np.float32(i)

@ss.kernel(contract=C(domain=1, block=(128, 1, 1), tables={"keys": {"failed": "nf"}}))
def spin_iof(keys: ss.HashTable[np.uint32], nf: ss.Counter, out: DisjointSlice[np.int64],
             q: In[np.uint32]) -> None:
    # spin until insert_or_find returns >= 0 : loops the same probe
    for w in thread.grid_stride(q):
        s = keys.insert_or_find(q[w])
        s2 = keys.insert_or_find(q[w])
        out[w] = s * 100000 + s2

for k in (twice, spin, spin_iof):
    ptx = k.ptx(cc=(9, 0))
    body = ptx.split(".entry", 1)[1]
    lds = re.findall(r"ld\.global\.u32[^\n]*", body)
    cas = re.findall(r"atom\.global\.cas[^\n]*", body)
    print(k.__name__ if hasattr(k, "__name__") else k, "peeks:", len(lds), "cas:", len(cas))
    if "-v" in sys.argv:
        print(body)
