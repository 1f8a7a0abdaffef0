"""Lookups in a read-only hash table in Tier 1: ``hashing.find(keys, key)``.

A table built by ``HashTable.insert`` (docs/atomics.md) is read in a later
launch with its keys and values as inputs (``In[...]``). ``find`` probes
``keys`` as the inserts did -- from slot ``hash(key) % capacity``, one slot
at a time, until the key, an empty slot (``EMPTY``, the all-ones key) or
``capacity`` probes -- and returns a witness of the key's slot:
``vals[f]`` reads its value (bounds-checked: 0 when the key is absent, since
the witness is then invalid), ``f.in_bounds(vals)`` says whether it was
found, ``f.index`` is the slot. The witness reads inputs only; it writes
nothing.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from ._collective import host_call, kernel_api
from ._spaces import Found
from ._views import In, ThreadIndex

__all__ = ["find"]

K = TypeVar("K", bound=np.integer[Any])


@kernel_api("hashing.find")
def find(keys: In[K], key: K | int) -> ThreadIndex[Found]:
    """The slot of ``key`` in the read-only table ``keys`` (an invalid witness if absent)."""
    host_call("hashing.find")
