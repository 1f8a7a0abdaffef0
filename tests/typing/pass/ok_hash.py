"""Rule: hash table values are written only through the witness of an insert; keys are not
read or written by plain access; lookups read inputs through a Found witness."""

from typing import Any

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import (
    DisjointSlice,
    Found,
    HashTable,
    HashValues,
    In,
    Inserted,
    ThreadIndex,
    thread,
)


def insert(
    keys: HashTable[np.uint32], vals: HashValues[np.float32], q: In[np.uint32], x: In[np.float32]
) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        assert_type(s, ThreadIndex[Inserted])
        vals[s] = x[w]
        vals[s] = 2.0
        assert_type(vals[s], np.float32)
        assert_type(s.in_bounds(vals), bool)
        assert_type(s.index, int)
        assert_type(keys.insert_or_find(q[w]), int)
    assert_type(keys.size, int)
    assert_type(len(vals), int)


def look(out: DisjointSlice[np.float32], keys: In[np.uint32], vals: In[np.float32]) -> None:
    w = thread.index_1d()
    f = ss.hashing.find(keys, keys[w])
    assert_type(f, ThreadIndex[Found])
    out[w] = vals[f]
    assert_type(f.index, int)


def host(keys: Any, failed: Any) -> None:
    assert_type(ss.inserted(keys, failed), int)
    r = ss.insert_result(keys, failed)
    assert_type(r, ss.InsertResult)
    assert_type(r.occupied + r.failed, int)
    assert_type(ss.hash_lookup(np.zeros(4, np.uint32), 3), int)
    ss.empty_keys(1024, np.uint64)
