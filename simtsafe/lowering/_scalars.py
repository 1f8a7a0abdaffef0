"""The one table of scalar kernel parameters: which dtypes, what values, how they are packed.

Annotation parsing (``simtsafe.decoration._params``) refuses a scalar dtype
not in this table at decoration; the launch (``simtsafe.host._launch``)
checks values against it and packs them exactly as numba-cuda's kernel ABI
takes them (float16 as its 16 bits, a complex as two floats).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SCALARS", "ScalarKind", "scalar_kind"]


@dataclass(frozen=True)
class ScalarKind:
    """How one scalar dtype is accepted and packed.

    Attributes:
        dtype: the numpy dtype.
        accepts: what Python/numpy values may be passed ("bool", "int",
            "real" = int or float, "complex" = int, float or complex).
        pack: value -> the kernel parameters (ctypes values) for it.
    """

    dtype: np.dtype[Any]
    accepts: str
    pack: Callable[[Any], tuple[Any, ...]]

    def admits(self, value: Any) -> bool:
        """Is ``value`` of an acceptable Python/numpy kind (bools only for bool)?"""
        if isinstance(value, bool | np.bool_):
            return self.accepts == "bool"
        if self.accepts == "bool":
            return False
        if isinstance(value, int | np.integer):
            return True
        if isinstance(value, float | np.floating):
            return self.accepts in ("real", "complex")
        if isinstance(value, complex | np.complexfloating):
            return self.accepts == "complex"
        return False

    def other_precision(self, value: Any) -> str | None:
        """Why a numpy scalar of another dtype is not this parameter's value (None: it is).

        A numpy scalar says which type it is: it is taken as the annotated type
        only when numpy casts it there safely (``float32`` into ``float64``,
        ``int16`` into ``int32``), or when both are integers (its value is then
        range-checked, as a Python int's). ``np.float64(0.1)`` into a float32
        parameter would silently round; ``np.int64(3)`` into a float32 one
        changes kind. Python scalars have no precision of their own and convert
        as Numba converts them.
        """
        if not isinstance(value, np.generic) or value.dtype == self.dtype:
            return None
        if np.can_cast(value.dtype, self.dtype, "safe"):
            return None
        if value.dtype.kind in "iu" and self.dtype.kind in "iu":
            return None
        if value.dtype.kind == "f" and self.dtype.kind == "f":
            return f"a numpy {value.dtype} scalar would be rounded to {self.dtype}"
        return f"a numpy {value.dtype} scalar is not a {self.dtype}"

    def out_of_range(self, value: Any) -> str | None:
        """Why ``value`` does not fit this dtype (None when it does)."""
        kind = self.dtype.kind
        if kind in "iu":
            info = np.iinfo(self.dtype)
            if not info.min <= int(value) <= info.max:
                return f"does not fit {self.dtype} [{info.min}, {info.max}]"
            return None
        if kind in "fc":
            parts = (value.real, value.imag) if kind == "c" else (value,)
            limit = float(np.finfo(self.dtype).max)
            for part in parts:
                x = float(part)
                if math.isfinite(x) and abs(x) > limit:
                    return (
                        f"overflows {self.dtype} (largest finite value {limit:.6g}); it would "
                        "become infinity"
                    )
        return None


def _one(ctype: Any) -> Callable[[Any], tuple[Any, ...]]:
    return lambda v: (ctype(v),)


def _pack_half(v: Any) -> tuple[Any, ...]:
    return (ctypes.c_uint16(int(np.float16(v).view(np.uint16))),)


def _pack_complex(ctype: Any) -> Callable[[Any], tuple[Any, ...]]:
    def pack(v: Any) -> tuple[Any, ...]:
        c = complex(v)
        return (ctype(c.real), ctype(c.imag))

    return pack


SCALARS: dict[str, ScalarKind] = {
    "bool": ScalarKind(np.dtype(np.bool_), "bool", lambda v: (ctypes.c_bool(bool(v)),)),
    **{
        name: ScalarKind(np.dtype(name), "int", _one(getattr(ctypes, f"c_{name}")))
        for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    },
    "float16": ScalarKind(np.dtype(np.float16), "real", _pack_half),
    "float32": ScalarKind(np.dtype(np.float32), "real", _one(ctypes.c_float)),
    "float64": ScalarKind(np.dtype(np.float64), "real", _one(ctypes.c_double)),
    "complex64": ScalarKind(np.dtype(np.complex64), "complex", _pack_complex(ctypes.c_float)),
    "complex128": ScalarKind(np.dtype(np.complex128), "complex", _pack_complex(ctypes.c_double)),
}


def scalar_kind(dtype: np.dtype[Any]) -> ScalarKind | None:
    """The table entry for ``dtype``, or None when it cannot be a scalar parameter."""
    return SCALARS.get(dtype.name) if dtype.names is None else None
