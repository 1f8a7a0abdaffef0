"""What an append buffer's counter says after the launch: items stored, items dropped.

An ``AppendBuffer`` claim adds one to the buffer's ``Counter`` whether or not
a slot was left, so after the launch the counter holds every claim: the first
``min(counter, capacity)`` slots hold items, and ``counter - capacity`` claims
(when positive) found no slot and wrote nothing. Nothing is dropped silently:

* ``appended(items, counter)`` -> the item count; raises ``CapacityExceeded``
  when any claim was dropped.
* ``append_result(items, counter)`` -> ``AppendResult(stored, dropped,
  claimed)``, never raises on drops.
* ``counter(value=0)`` -> a fresh counter (a one-element ``uint64`` device array).

The counter is read with ``to_host`` (after every launch that writes it has
finished). A counter that is not reset keeps counting: the next launch
appends after the items already there (a queue that grows over launches).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._errors import ArgumentTypeError, CapacityExceeded
from ._handles import _facts as array_facts_of
from ._handles import to_host

__all__ = ["AppendResult", "append_result", "appended", "counter"]


class AppendResult(NamedTuple):
    """What an append buffer holds after a launch.

    Attributes:
        stored: items stored: ``items[:stored]`` hold them, in no particular order.
        dropped: claims past the capacity; nothing was written for them.
        claimed: every claim since the counter was reset (``stored + dropped``).
    """

    stored: int
    dropped: int
    claimed: int


def _capacity(items: Any) -> int:
    facts = array_facts_of(items)
    if facts is None or len(facts.shape) != 1:
        raise ArgumentTypeError(
            "simtsafe.appended(items, counter): items must be the 1D device array passed as the "
            f"AppendBuffer, got {type(items).__name__}"
            + (f" of shape {facts.shape}" if facts is not None else ""),
            actual=type(items).__name__,
        )
    return int(facts.shape[0])


def _claimed(counter: Any) -> int:
    facts = array_facts_of(counter)
    if facts is None or facts.typestr != np.dtype(np.uint64).str or facts.shape != (1,):
        got = type(counter).__name__ if facts is None else f"{facts.typestr} {facts.shape}"
        raise ArgumentTypeError(
            "simtsafe.appended(items, counter): counter must be the one-element uint64 device "
            f"array passed as the Counter, got {got}. Make one with simtsafe.counter()",
            actual=got,
        )
    return int(to_host(counter)[0])


def append_result(items: Any, counter: Any) -> AppendResult:
    """How many items an append buffer holds and how many claims were dropped.

    Waits for the launches that write ``counter`` (``simtsafe.to_host``), then
    reads it.

    Args:
        items: the device array passed as the ``AppendBuffer``.
        counter: the device array passed as its ``Counter``.

    Raises:
        ArgumentTypeError: ``items`` is not a 1D device array, or ``counter`` is
            not a one-element ``uint64`` device array.
    """
    capacity = _capacity(items)
    claimed = _claimed(counter)
    stored = min(claimed, capacity)
    return AppendResult(stored=stored, dropped=claimed - stored, claimed=claimed)


def appended(items: Any, counter: Any) -> int:
    """The number of items an append buffer holds after its launches: ``items[:n]``.

    Raises:
        CapacityExceeded: a claim found no slot (the buffer was too small);
            ``dropped`` says how many items were lost, ``actual`` how many
            slots were claimed, ``limit`` the capacity.
        ArgumentTypeError: as ``append_result``.
    """
    r = append_result(items, counter)
    if r.dropped:
        capacity = r.stored
        raise CapacityExceeded(
            f"the append buffer holds {capacity} items, but {r.claimed} slots were claimed: "
            f"{r.dropped} items were dropped (nothing was written for them). Launch again with "
            f"a buffer of at least {r.claimed} elements (and the counter reset to 0), or, to "
            "keep the first items, read them with simtsafe.append_result(items, counter)",
            actual=r.claimed,
            limit=capacity,
            dropped=r.dropped,
        )
    return r.stored


def counter(value: int = 0) -> Any:
    """A fresh append-buffer counter: a one-element ``uint64`` device array holding ``value``."""
    from numba import cuda

    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"simtsafe.counter(value): value must be an int >= 0, got {value!r}")
    return cuda.to_device(np.array([value], np.uint64))
