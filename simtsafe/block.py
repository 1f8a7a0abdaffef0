"""Block-level cooperation in Tier 1: the barrier and collectives of the whole block.

Every thread of the block must reach each of these, so the kernel decorator
allows them only under *block-uniform* control flow: not under an ``if``,
``while`` or ``for`` whose condition or trip count depends on the thread
(``threadIdx``, lane ids, witnesses, loaded data), and not after a return,
``break`` or ``continue`` that does (docs/safety.md, "Block cooperation").
The results of ``sum``/``max``/``min``/``reduce``/``broadcast`` are the same
in every thread of the block, so the analysis treats them as block-uniform.

Threads are numbered linearly (``x + blockDim.x * (y + blockDim.y * z)``);
"thread 0" is the one with linear number 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np

from ._collective import host_call, kernel_api

__all__ = ["broadcast", "max", "min", "reduce", "scan", "sum", "sync"]

N = TypeVar("N", bound=int | float | np.number[Any])
#: A reduction's tuple state: 1 to 8 numbers (the count is checked when the kernel compiles).
S = TypeVar("S", bound=tuple[int | float | np.number[Any] | np.bool_, ...])


@kernel_api("block.sync")
def sync() -> None:
    """Barrier: every thread of the block waits here; memory written before it by any
    thread of the block is visible to all after it (``__syncthreads``)."""
    host_call("block.sync")


@kernel_api("block.sum")
def sum(v: N) -> N:  # noqa: A001 - the collective's name
    """The sum of ``v`` over the block's threads, returned to every thread."""
    host_call("block.sum")


@kernel_api("block.max")
def max(v: N) -> N:  # noqa: A001
    """The maximum of ``v`` over the block's threads, returned to every thread."""
    host_call("block.max")


@kernel_api("block.min")
def min(v: N) -> N:  # noqa: A001
    """The minimum of ``v`` over the block's threads, returned to every thread."""
    host_call("block.min")


@overload
def reduce(v: N, op: Callable[[N, N], N]) -> N: ...
@overload
def reduce(v: S, op: Callable[[S, S], S]) -> S: ...
@kernel_api("block.reduce")
def reduce(v: N | S, op: Callable[[N, N], N] | Callable[[S, S], S]) -> N | S:
    """``op``-reduction of ``v`` over the block, returned to every thread.

    ``v`` is a number with ``op`` associative and commutative
    (``operator.add``/``mul``/``and_``/``or_``/``xor``, ``max``, ``min`` or a
    ``@simtsafe.device`` function of two values), or a *state*: a tuple of 1 to 8
    numbers (``(n, mean, m2)``, ``(value, index)``) with ``op`` a
    ``@simtsafe.device`` function of two states returning one (each field converted
    to the state's field type). Every thread gets the same bits (docs/cooperation.md).
    """
    host_call("block.reduce")


@kernel_api("block.scan")
def scan(v: N, inclusive: bool = True) -> N:
    """Prefix sum over the block in linear thread order: thread t gets v_0 + ... + v_t
    (inclusive) or v_0 + ... + v_{t-1} (exclusive; 0 for thread 0). Not uniform."""
    host_call("block.scan")


@kernel_api("block.broadcast")
def broadcast(v: N) -> N:
    """Thread 0's ``v``, returned to every thread of the block."""
    host_call("block.broadcast")
