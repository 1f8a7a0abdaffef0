"""Rule: record outputs and inputs type-check as np.void views, indexed by witnesses."""

from typing import TYPE_CHECKING, TypeAlias, assert_type

import numpy as np

from simtsafe import DisjointSlice, In, thread

Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)
if TYPE_CHECKING:
    RecT: TypeAlias = np.void  # the record, as type checkers see it
else:
    RecT = Rec


def scale(out: DisjointSlice[RecT], a: In[RecT], s: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    assert_type(a[w], np.void)
    out[w] = a[w]  # a whole record
    s[w] = a[w]["x"] * 2  # a field read by name
