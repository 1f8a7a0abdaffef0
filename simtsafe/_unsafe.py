"""``simtsafe.unsafe("SAFETY: ...")``: the marked region for Tier-2 code.

In kernels the region is lexical: the kernel decorator checks that gated
operations (shared memory, barriers, warp intrinsics, atomics, ``unchecked``
writes) sit inside one, records the reason, and strips the ``with`` before
Numba sees the function. On the host the same object is a context manager
that sets a thread-local flag, which raw launches (``kernel.unchecked``)
require.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import final

__all__ = ["check_reason", "in_unsafe_region", "unsafe"]

_state = threading.local()


def check_reason(reason: object) -> str:
    """Validate an unsafe reason: a non-empty string that states why the code is sound.

    Raises:
        TypeError: if ``reason`` is not a string (``unsafe(None)`` included).
        ValueError: if ``reason`` has no text after ``SAFETY:``.
    """
    if not isinstance(reason, str):
        raise TypeError(
            f"simtsafe.unsafe() needs a string reason, got {type(reason).__name__}; "
            'write simtsafe.unsafe("SAFETY: why this is sound")'
        )
    text = reason.strip()
    if text.upper().startswith("SAFETY:"):
        text = text[len("SAFETY:") :].strip()
    if not text:
        raise ValueError(
            "simtsafe.unsafe() needs a reason that a reviewer can check, e.g. "
            'simtsafe.unsafe("SAFETY: each thread writes only out[perm[i]] and perm is a '
            'permutation"); got an empty one'
        )
    return reason


@final
class unsafe:  # noqa: N801 - reads as a keyword at the call site
    """Mark a region whose soundness the author argues in ``reason``.

    Args:
        reason: why the code in the region is sound; conventionally starts
            with ``"SAFETY:"``. Must be non-empty.
    """

    __slots__ = ("reason",)
    __simtsafe_builtin__ = "unsafe"

    def __init__(self, reason: str) -> None:
        self.reason = check_reason(reason)

    def __enter__(self) -> unsafe:
        _state.depth = getattr(_state, "depth", 0) + 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _state.depth -= 1

    def __repr__(self) -> str:
        return f"unsafe({self.reason!r})"


def in_unsafe_region() -> bool:
    """Is the calling host thread inside ``with simtsafe.unsafe(...)``?"""
    return getattr(_state, "depth", 0) > 0
