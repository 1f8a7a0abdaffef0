"""Attack: a hash table's failure counter that wraps hides failed inserts from the host.

Append counters are marked with their top bit when a claim finds them at or past 2**63
(attack round 7), so the host refuses a wrapped count. The hash failure counter only adds 1:
a counter that starts at 2**64 - 1 (a raw device array filled with all ones, like the keys)
reads 0 after one failed insert, and simtsafe.inserted reports success.

cd /work/wt-attack2 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/hash_counter_wrap.py
"""
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), tables={"keys": {"failed": "nf"}}))
def build(keys: ss.HashTable[np.uint32], nf: ss.Counter, q: In[np.uint32]) -> None:
    for w in thread.grid_stride(q):
        keys.insert(q[w])

for start in (0, 2**64 - 1):
    keys = ss.empty_keys(1, np.uint32)                         # one slot
    nf = cuda.to_device(np.array([start], np.uint64))          # not reset
    build.prepare(grid=1, block=32)(keys, nf, cuda.to_device(np.array([3, 4], np.uint32)))
    try:
        print(f"counter start {start:#x}: inserted() ->", ss.inserted(keys, nf),
              "(counter now", int(nf.copy_to_host()[0]), ") -- a failed insert NOT reported")
    except ss.CapacityExceeded as e:
        print(f"counter start {start:#x}: CapacityExceeded:", str(e)[:120])
