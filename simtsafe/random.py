"""Random numbers in Tier 1: numba-cuda's xoroshiro128+ generator, one state per thread.

The states array (``numba.cuda.random.create_xoroshiro128p_states(n, seed)``)
is a kernel *output*, ``states: DisjointSlice[xoroshiro128p_dtype]``, because
drawing a number advances the state: a thread draws only through its own
witness, so no two threads advance the same state. A 2D or 3D kernel draws
with its ``index_2d()``/``index_3d()`` witness from the state of its linear
thread number (``row * X + col``; ``(z * Y + y) * X + x`` with ``X``, ``Y``
the launch's thread extents): one state per launched thread. Out of range (a
witness past the states), nothing is drawn and the result is 0.

```python
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def noise(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = ss.random.uniform_float32(states, w)
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._collective import host_call, kernel_api
from ._spaces import Index1D, Index2D, Index3D
from ._views import DisjointSlice, ThreadIndex

__all__ = ["States", "normal_float32", "normal_float64", "uniform_float32", "uniform_float64"]

#: The witnesses a draw takes: the thread's element of a 1D, 2D or 3D launch.
_Own = ThreadIndex[Index1D] | ThreadIndex[Index2D] | ThreadIndex[Index3D]

if TYPE_CHECKING:
    #: The annotation of a states parameter (for type checkers: a DisjointSlice of records).
    States = DisjointSlice[np.void, Index1D]
else:
    import warnings

    with warnings.catch_warnings():
        # On the simulator numba.cuda.random decorates its host helpers with
        # jit(nopython=False) on purpose; Numba's deprecation notice about that is not ours.
        warnings.filterwarnings(
            "ignore", "The keyword argument 'nopython=False'", category=DeprecationWarning
        )
        from numba.cuda.random import xoroshiro128p_dtype

    States = DisjointSlice[xoroshiro128p_dtype]
    """The annotation of a states parameter: ``DisjointSlice[xoroshiro128p_dtype]``, one
    xoroshiro128+ state per thread (``numba.cuda.random.create_xoroshiro128p_states``)."""


@kernel_api("random.uniform_float32")
def uniform_float32(states: DisjointSlice[Any, Index1D], w: _Own) -> np.float32:
    """A float32 uniform on [0, 1) from this thread's state ``states[w]``."""
    host_call("random.uniform_float32")


@kernel_api("random.uniform_float64")
def uniform_float64(states: DisjointSlice[Any, Index1D], w: _Own) -> np.float64:
    """A float64 uniform on [0, 1) from this thread's state ``states[w]``."""
    host_call("random.uniform_float64")


@kernel_api("random.normal_float32")
def normal_float32(states: DisjointSlice[Any, Index1D], w: _Own) -> np.float32:
    """A float32 standard normal from this thread's state ``states[w]``."""
    host_call("random.normal_float32")


@kernel_api("random.normal_float64")
def normal_float64(states: DisjointSlice[Any, Index1D], w: _Own) -> np.float64:
    """A float64 standard normal from this thread's state ``states[w]``."""
    host_call("random.normal_float64")
