"""``BoundLaunch``: a prepared launch with its arguments checked once and held.

``prepared.bind(*args)`` checks the arguments as a call would (raising the same errors,
launching nothing) and returns a ``BoundLaunch``; calling it launches exactly those
arguments. What their identity settles is not checked again: a Numba device array's
metadata cannot change, the bound object holds every argument (none is freed or replaced),
and scalars are values. What it does not settle runs on every call, as for
``prepared(*args)``: the current device, the stream ordering (the ledger, producer
streams) and, for CuPy arrays and PyTorch tensors (whose metadata can change in place),
every argument check. The saving is the memo's lookup and match, a cost that grows with the
number of arguments (``benchmarks/launch_latency.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

if TYPE_CHECKING:
    from ._launch import _Memo
    from ._prepare import PreparedLaunch

__all__ = ["BoundLaunch"]


@final
class BoundLaunch:
    """A ``PreparedLaunch`` and its arguments, checked when bound: ``bound()`` launches them.

    Made by ``prepared.bind(*args)``. Inside ``with simtsafe.graph():`` a call is recorded,
    as ``prepared(*args)`` is.
    """

    __slots__ = ("_args", "_memo", "_prepared")

    _prepared: PreparedLaunch
    _args: tuple[Any, ...]
    _memo: _Memo | None

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("BoundLaunch is made by prepared.bind(*args)")

    @classmethod
    def _mint(cls, prepared: PreparedLaunch, args: tuple[Any, ...]) -> BoundLaunch:
        self = object.__new__(cls)
        object.__setattr__(self, "_prepared", prepared)
        object.__setattr__(self, "_args", args)
        object.__setattr__(self, "_memo", None)
        return self

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("BoundLaunch is immutable; bind the arguments anew")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("BoundLaunch is immutable")

    @property
    def prepared(self) -> PreparedLaunch:
        """The launch configuration."""
        return self._prepared

    @property
    def args(self) -> tuple[Any, ...]:
        """The bound arguments."""
        return self._args

    def __call__(self) -> None:
        """Launch the bound arguments (nothing is enqueued if a check fails)."""
        memo = self._memo
        if memo is not None:
            self._prepared._plan.launch_bound(self._args, memo)
            return
        self._prepared(*self._args)
        # From the launch that memoized these arguments on (a Numba set's second launch):
        # its entry, held here so that later calls need neither key nor match.
        object.__setattr__(self, "_memo", self._prepared._plan.memo_for(self._args))

    def __repr__(self) -> str:
        return f"BoundLaunch({self._prepared!r}, {len(self._args)} arguments)"
