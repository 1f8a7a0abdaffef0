"""Every kernel and helper ever made, in creation order: what ``simtsafe check`` walks.

Module attributes miss kernels held in lists or dicts, as class attributes,
under a rebound name, or made by a factory called at import. So the gate does
not look at module attributes: ``Kernel.__init__`` and
``DeviceFunction.__init__`` register each object here, and the gate takes what
was created while it imported the modules it was given.

Each entry holds a weak reference (the registry never keeps a kernel alive)
and the name of the module whose top-level code was running when the object
was made: the module being imported, which for a factory kernel is the module
that called the factory, not the one that defines it.

Invariant: entries are in creation order and their sequence numbers increase;
``created_since(mark())`` sees exactly the objects made after the mark.
"""

from __future__ import annotations

import bisect
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = ["Created", "created_since", "mark", "register"]


@dataclass(frozen=True)
class Created:
    """One live kernel or helper and where it was made."""

    obj: Any  # a Kernel or DeviceFunction (a strong reference, held by the caller)
    module: str | None  # the module whose top-level code made it (None: none was running)
    seq: int


@dataclass(frozen=True)
class _Entry:
    seq: int
    ref: weakref.ReferenceType[Any]
    module: str | None


_LOCK = threading.Lock()
_ENTRIES: list[_Entry] = []
_next_seq = 0
#: Dead entries are dropped when the list has grown this much since the last sweep.
_SWEEP_EVERY = 1024
_since_sweep = 0


def _running_module() -> str | None:
    """``__name__`` of the innermost module-level code on the stack (the module being imported)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            name = frame.f_globals.get("__name__")
            return name if isinstance(name, str) else None
        frame = frame.f_back  # type: ignore[assignment]
    return None


def register(obj: Any) -> None:
    """Record a newly made kernel or helper (called once, at the end of its ``__init__``)."""
    global _next_seq, _since_sweep
    module = _running_module()
    with _LOCK:
        _ENTRIES.append(_Entry(_next_seq, weakref.ref(obj), module))
        _next_seq += 1
        _since_sweep += 1
        if _since_sweep >= _SWEEP_EVERY:
            _ENTRIES[:] = [e for e in _ENTRIES if e.ref() is not None]
            _since_sweep = 0


def mark() -> int:
    """A position in creation order: ``created_since(mark())`` is what comes after now."""
    with _LOCK:
        return _next_seq


def created_since(position: int) -> list[Created]:
    """The objects made at or after ``position`` that are still alive, in creation order."""
    with _LOCK:
        start = bisect.bisect_left(_ENTRIES, position, key=lambda e: e.seq)
        entries = _ENTRIES[start:]
    found: list[Created] = []
    for entry in entries:
        obj = entry.ref()
        if obj is not None:
            found.append(Created(obj, entry.module, entry.seq))
    return found
