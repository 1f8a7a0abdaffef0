"""Grid cooperation in Tier 1: the barrier of the whole launch, and reads across it.

``simtsafe.grid.sync()`` waits until every thread of the launch has reached
it; memory written before it by any thread is visible to all after it. The
launch must be cooperative (``LaunchContract(cooperative=True)``: ``prepare``
checks that every block is resident at once) and every thread must reach each
sync: the compiled-form check allows it only under *grid-uniform* control
flow -- a branch or loop steered by the block index, a block collective's
result, the thread's index or loaded data that threads may see differently
is refused.

``simtsafe.grid.read(out, i)`` reads ANY element of an output -- one another
thread wrote -- in a *grid phase* (the code between two grid syncs) in which
no thread writes that output: the compiled-form check refuses a read that
may run in the same phase as a write of the same output. Out of range it
reads 0. (docs/cooperation.md, "Grid barrier".)
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api
from ._views import DisjointSlice

__all__ = ["read", "sync"]

T = TypeVar("T", bound=np.generic)


@kernel_api("grid.sync")
def sync() -> None:
    """Barrier of the whole cooperative launch (``this_grid().sync()``)."""
    host_call("grid.sync")


@overload
def read(out: DisjointSlice[T, Any], i: int) -> T: ...
@overload
def read(out: DisjointSlice[T, Any], i: tuple[int, ...]) -> T: ...
@kernel_api("grid.read")
def read(out: Any, i: int | tuple[int, ...]) -> Any:
    """Element ``i`` of the output ``out`` (a tuple of ints for a 2D/3D output), written by
    any thread in an earlier grid phase; 0 out of range. Refused in a phase that may write
    ``out`` (no ``grid.sync()`` between them on some path)."""
    host_call("grid.read")
