"""Rule: hash table values are written only through the witness of an insert; keys are not
read or written by plain access; lookups read inputs through a Found witness."""

import numpy as np

import simtsafe as ss
from simtsafe import DisjointSlice, HashTable, HashValues, In, thread


def insert(
    keys: HashTable[np.uint32],
    vals: HashValues[np.float32],
    o: DisjointSlice[np.float32],
    q: In[np.uint32],
) -> None:
    w = thread.index_1d()
    vals[w] = 1.0  # type: ignore[index]
    vals[keys.insert_or_find(q[w])] = 1.0  # type: ignore[call-overload]
    s = keys.insert(q[w])
    o[s] = 1.0  # type: ignore[index]
    keys[0]  # type: ignore[index]
    keys[0] = 1  # type: ignore[index]
    keys.insert(1.5)  # type: ignore[arg-type]
    keys.find(3)  # type: ignore[attr-defined]
    f = ss.hashing.find(q, q[w])
    o[f] = 1.0  # type: ignore[index]
