"""Rule: a record output is written through a witness; a record is not a float."""

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from simtsafe import DisjointSlice, In, thread

Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)
if TYPE_CHECKING:
    RecT: TypeAlias = np.void
else:
    RecT = Rec


def scale(out: DisjointSlice[RecT], a: In[RecT], s: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    out[0] = a[w]  # type: ignore[index]
    s[w] = a[w]  # type: ignore[call-overload]
    a[w] = out[w]  # type: ignore[index]
