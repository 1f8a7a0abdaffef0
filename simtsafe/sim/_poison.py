"""Undefined values: what kernel code gets from a load of memory no thread wrote.

Memory sanitizers (MemorySanitizer, Valgrind's memcheck) do not report a
load of uninitialized memory: ``zip`` fetches one element past the shorter
sequence and drops it, a loop loads a value it never uses, a tile copy moves
garbage that nobody reads. They report where the garbage is *used*. The
checker does the same: a load of an undefined element returns a ``Poison``
-- the value the load gave plus its ``Origin`` (the buffer, element, thread
and line of the load) -- and the poison follows the value:

* operators and numpy ufuncs on a poison give a poison of the result (the
  origin of its first poisoned operand);
* a store of a poison into shared or local memory makes the destination
  element undefined with the same origin (``_uninit``);
* a **use** reports it and gives the plain value, so the replay goes on as
  before: a condition (``__bool__``: ``if``, ``while``, ``and``/``or``/``not``,
  a conditional expression), an index, loop bound or shift count
  (``__index__``), a conversion the shadow cannot follow (``__int__``,
  ``__float__``, ``__complex__``: ``int()``, ``float()``, numpy and Numba
  casts, ``math`` functions), and what the replay checks itself: a store into
  global memory (a result of the kernel), a predicate, mask or value of a
  barrier, warp collective or simtsafe collective, an operand an atomic
  compares.

Invariant: a ``Poison`` never wraps a ``Poison``; only kernel code running in
a simulated thread of its origin's replay operates on it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from ._memory import Buffer
    from ._report import Location
    from ._threads import SimThread
    from ._uninit import UndefinedMemory

__all__ = ["CONVERTED", "Origin", "Poison", "raw"]

#: How a use by conversion is described.
CONVERTED: Final = (
    "converted to a Python number (int(), float(), a numpy or Numba cast, a math function; "
    "the checker follows undefined values through operators and numpy ufuncs only)"
)


class Origin:
    """Where an undefined value came from: one load of an element no thread wrote.

    Attributes:
        replay: the replay that made the load (it reports the uses).
        buf, key, isz: the buffer, the element's byte offset, the element size.
        thread, site: the loading thread and its (file, line).
        explained: a racing write of the element explains the load (the race
            is the finding; the value is not reported as uninitialized).
    """

    __slots__ = ("buf", "explained", "isz", "key", "replay", "site", "thread")

    def __init__(
        self,
        replay: UndefinedMemory,
        buf: Buffer,
        key: int,
        isz: int,
        thread: SimThread,
        site: Location,
    ) -> None:
        self.replay = replay
        self.buf = buf
        self.key = key
        self.isz = isz
        self.thread = thread
        self.site = site
        self.explained = False

    @property
    def index(self) -> tuple[int, ...]:
        return self.buf.index_of(self.key, self.isz)


#: Attributes of a value that derive from it (the rest is metadata: dtype, shape, ndim...).
_DERIVED: Final = frozenset({"real", "imag"})


def raw(x: Any) -> Any:
    """The plain value of ``x`` (itself unless a poison)."""
    return x.v if type(x) is Poison else x


def _wrap(value: Any, origin: Origin) -> Any:
    """``value`` poisoned with ``origin`` if it is a number (a tuple: each item)."""
    if isinstance(value, tuple):
        return tuple(_wrap(v, origin) for v in value)
    if isinstance(value, np.generic | int | float | complex):
        return Poison(value, origin)
    return value


class Poison:
    """An undefined value and its origin; arithmetic propagates it, a use reports it."""

    __slots__ = ("o", "v")

    def __init__(self, v: Any, o: Origin) -> None:
        self.v = v
        self.o = o

    # ------------------------------------------------------------------ uses

    def _use(self, what: str) -> Any:
        self.o.replay.undefined_use(self.o, what)
        return self.v

    def __bool__(self) -> bool:
        return bool(self._use("used as a condition"))

    def __index__(self) -> int:
        return operator.index(self._use("used as an index (an address, a loop bound or a shift)"))

    def __int__(self) -> int:
        return int(self._use(CONVERTED))

    def __float__(self) -> float:
        return float(self._use(CONVERTED))

    def __complex__(self) -> complex:
        return complex(self._use(CONVERTED))

    # ------------------------------------------------------------------ propagation

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        origin = next(x.o for x in inputs if type(x) is Poison)
        result = getattr(ufunc, method)(*(raw(x) for x in inputs), **kwargs)
        return _wrap(result, origin)

    def __getattr__(self, name: str) -> Any:
        # Attributes of the value: what derives from it (.real, .imag, the results of
        # .item(), .astype(...)) stays undefined; metadata (.dtype, .shape, .ndim) is not.
        if name.startswith("__"):
            raise AttributeError(name)
        if isinstance(self.v, np.void) and self.v.dtype.names and name in self.v.dtype.names:
            return _wrap(self.v[name], self.o)  # `r.x`: numpy's record scalar reads by key
        value = getattr(self.v, name)
        if callable(value):
            origin = self.o

            def method(*args: Any, **kwargs: Any) -> Any:
                return _wrap(value(*(raw(a) for a in args), **kwargs), origin)

            return method
        derived = name in _DERIVED or isinstance(self.v, np.void)  # a record's field
        return _wrap(value, self.o) if derived else value

    def __getitem__(self, key: Any) -> Any:  # a field of an undefined record
        return _wrap(self.v[key], self.o)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.v[key] = raw(value)

    def __round__(self, ndigits: Any = None) -> Any:
        return _wrap(round(self.v, ndigits), self.o)

    def __pow__(self, other: Any, mod: Any = None) -> Any:
        return _wrap(pow(self.v, raw(other), raw(mod)), self.o)

    def __rpow__(self, other: Any) -> Any:
        return _wrap(pow(raw(other), self.v), self.o)

    def __hash__(self) -> int:
        return hash(self.v)

    def __repr__(self) -> str:
        return repr(self.v)

    def __str__(self) -> str:
        return str(self.v)

    def __format__(self, spec: str) -> str:
        return format(self.v, spec)


def _binary(op: Callable[[Any, Any], Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def forward(self: Poison, other: Any) -> Any:
        return _wrap(op(self.v, raw(other)), self.o)

    def reverse(self: Poison, other: Any) -> Any:
        return _wrap(op(raw(other), self.v), self.o)

    return forward, reverse


def _unary(op: Callable[[Any], Any]) -> Callable[..., Any]:
    def apply(self: Poison) -> Any:
        return _wrap(op(self.v), self.o)

    return apply


_BINARY: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "divmod": divmod,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "matmul": operator.matmul,
}
_COMPARE: Final = ("lt", "le", "gt", "ge", "eq", "ne")
_UNARY: Final[dict[str, Callable[[Any], Any]]] = {
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": operator.abs,
    "invert": operator.invert,
    "trunc": math.trunc,
    "floor": math.floor,
    "ceil": math.ceil,
}

for _name, _op in _BINARY.items():
    _forward, _reverse = _binary(_op)
    setattr(Poison, f"__{_name}__", _forward)
    setattr(Poison, f"__r{_name}__", _reverse)
for _name in _COMPARE:
    setattr(Poison, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name, _fn in _UNARY.items():
    setattr(Poison, f"__{_name}__", _unary(_fn))
