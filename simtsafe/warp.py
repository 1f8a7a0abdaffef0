"""Warp-level collectives in Tier 1: the same operations as ``simtsafe.block``, per warp.

A warp is 32 consecutive threads of the block in linear numbering (the last
warp of a block whose size is not a multiple of 32 is partial; its lanes are
the threads present). Every lane of the warp must reach each call, so the
decorator allows them only under *warp-uniform* control flow (block-uniform
conditions, or conditions that are the same for all lanes of a warp, such as
the warp number). Results of ``sum``/``max``/``min``/``reduce``/``broadcast``
are the same in every lane of the warp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api

__all__ = ["broadcast", "max", "min", "reduce", "scan", "sum"]

N = TypeVar("N", bound=int | float | np.number[Any])
#: A reduction's tuple state: 1 to 8 numbers (the count is checked when the kernel compiles).
S = TypeVar("S", bound=tuple[int | float | np.number[Any] | np.bool_, ...])


@kernel_api("warp.sum")
def sum(v: N) -> N:  # noqa: A001
    """The sum of ``v`` over the warp's lanes, returned to every lane."""
    host_call("warp.sum")


@kernel_api("warp.max")
def max(v: N) -> N:  # noqa: A001
    """The maximum of ``v`` over the warp's lanes, returned to every lane."""
    host_call("warp.max")


@kernel_api("warp.min")
def min(v: N) -> N:  # noqa: A001
    """The minimum of ``v`` over the warp's lanes, returned to every lane."""
    host_call("warp.min")


@overload
def reduce(v: N, op: Callable[[N, N], N]) -> N: ...
@overload
def reduce(v: S, op: Callable[[S, S], S]) -> S: ...
@kernel_api("warp.reduce")
def reduce(v: N | S, op: Callable[[N, N], N] | Callable[[S, S], S]) -> N | S:
    """``op``-reduction over the warp of a number or a tuple state (see
    ``simtsafe.block.reduce``), to every lane."""
    host_call("warp.reduce")


@kernel_api("warp.scan")
def scan(v: N, inclusive: bool = True) -> N:
    """Prefix sum over the warp's lanes in lane order (exclusive: 0 for lane 0)."""
    host_call("warp.scan")


@kernel_api("warp.broadcast")
def broadcast(v: N) -> N:
    """Lane 0's ``v``, returned to every lane of the warp."""
    host_call("warp.broadcast")
