"""numpy ufuncs on scalars in kernels: which ones, with what result dtype, computed how.

numba-cuda 0.30.4 types every numpy ufunc in a CUDA kernel but lowers only
some (``np.exp``, ``np.sqrt``, ``np.abs``, ``np.add``... fail with a bare
``KeyError: <ufunc 'exp'>``), and a ufunc given an array tries to allocate one.
So the kernel decorator rewrites each ufunc call ``np.f(x, ...)`` into a
private ``__ss_ufunc_f(x, ...)`` whose meaning is decided here, once, for
both targets:

* the arguments must be scalars (an array, a view or a witness is refused:
  apply the ufunc to one element, ``np.exp(a[i])``);
* the result dtype is numpy's own (``ufunc.resolve_dtypes``) for the
  arguments' dtypes, Python scalars taken as Numba types them (``float`` is
  float64, ``int`` int64): ``np.exp(np.float32)`` is float32,
  ``np.exp(int32)`` float64, ``np.floor(int8)`` int8;
* the value is computed by the ufunc's ``math``/``cmath``/``operator``
  equivalent in numpy's loop type (``np.exp`` of a float32 is
  ``math.exp`` of a float32: libdevice ``expf``), float16 loops in float32 and
  rounded back (as numpy's float16 loops do), or by numba-cuda's own lowering
  of the loop (comparisons, logical and bitwise ufuncs, ``maximum``...).

What has no such implementation is refused with the ufunc, the argument
types and a fix -- at decoration for a ufunc simtsafe does not compile at
all (``np.floor_divide``: write ``a // b``), at typing (GPU) or when the
line runs (simulator) for argument types it does not compile (``np.power``
of two ints). ``_ufuncs_cuda`` lowers a :class:`UfuncPlan`; the simulator
twin (:func:`sim_builtins`) computes with numpy itself, after the same
decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .._errors import SafetyError

__all__ = [
    "SCALAR_UFUNCS",
    "UfuncPlan",
    "builtin_name",
    "plan",
    "numpy_function_refusal",
    "sim_builtins",
    "unsupported_ufunc",
]


@dataclass(frozen=True)
class _Equivalent:
    """How a ufunc is computed per loop kind (None: refused for that kind).

    Values: ``"math.<f>"`` / ``"cmath.<f>"`` / ``"operator.<f>"`` / ``"abs"``
    (that function, through Numba's lowering of it), ``"native"``
    (numba-cuda's own ufunc loop), ``"identity"`` (the argument), ``"false"`` /
    ``"true"`` (a constant).
    """

    real: str | None
    complex: str | None
    integer: str | None
    hint: str = ""  # the fix, for a refused kind


def _math(name: str, cmath_name: str | None = None) -> _Equivalent:
    return _Equivalent(
        f"math.{name}",
        f"cmath.{cmath_name}" if cmath_name else None,
        None,
        "convert to a float type first" if cmath_name is None else "",
    )


_NATIVE = _Equivalent("native", "native", "native")
_OPERATOR = {
    name: _Equivalent(f"operator.{op}", f"operator.{op}", f"operator.{op}")
    for name, op in (
        ("add", "add"),
        ("subtract", "sub"),
        ("multiply", "mul"),
        ("negative", "neg"),
        ("positive", "pos"),
    )
}

#: numpy ufunc name -> its implementation on scalars. Keys are ``ufunc.__name__``
#: (``np.abs`` is ``absolute``, ``np.true_divide`` is ``divide``).
SCALAR_UFUNCS: dict[str, _Equivalent] = {
    # math equivalents, lowered exactly as math.<f> of the loop's float type
    **{
        name: _math(m, c)
        for name, m, c in (
            ("exp", "exp", "exp"),
            ("exp2", "exp2", None),
            ("expm1", "expm1", None),
            ("log", "log", "log"),
            ("log2", "log2", None),
            ("log10", "log10", "log10"),
            ("log1p", "log1p", None),
            ("sqrt", "sqrt", "sqrt"),
            ("sin", "sin", "sin"),
            ("cos", "cos", "cos"),
            ("tan", "tan", "tan"),
            ("arcsin", "asin", "asin"),
            ("arccos", "acos", "acos"),
            ("arctan", "atan", "atan"),
            ("sinh", "sinh", "sinh"),
            ("cosh", "cosh", "cosh"),
            ("tanh", "tanh", "tanh"),
            ("arcsinh", "asinh", "asinh"),
            ("arccosh", "acosh", "acosh"),
            ("arctanh", "atanh", "atanh"),
            ("fabs", "fabs", None),
            ("arctan2", "atan2", None),
            ("hypot", "hypot", None),
            ("copysign", "copysign", None),
            ("nextafter", "nextafter", None),
        )
    },
    # numpy 2 keeps ints as ints here: the value is the argument
    "floor": _Equivalent("math.floor", None, "identity"),
    "ceil": _Equivalent("math.ceil", None, "identity"),
    "trunc": _Equivalent("math.trunc", None, "identity"),
    "fmod": _Equivalent(
        "math.fmod", None, None, "convert to a float type (np.float32(a)), or use `a % b`"
    ),
    "power": _Equivalent(
        "math.pow", None, None, "convert to a float type (np.float32(a)), or use `a ** b`"
    ),
    "absolute": _Equivalent("math.fabs", "abs", "abs"),
    "isnan": _Equivalent("math.isnan", "cmath.isnan", "false"),
    "isinf": _Equivalent("math.isinf", "cmath.isinf", "false"),
    "isfinite": _Equivalent("math.isfinite", "cmath.isfinite", "true"),
    **_OPERATOR,
    # numba-cuda 0.30.4 lowers these loops itself (its CUDA ufunc table)
    **{
        name: _NATIVE
        for name in (
            "deg2rad",
            "radians",
            "rad2deg",
            "degrees",
            "greater",
            "greater_equal",
            "less",
            "less_equal",
            "not_equal",
            "equal",
            "logical_and",
            "logical_or",
            "logical_xor",
            "logical_not",
            "maximum",
            "minimum",
            "fmax",
            "fmin",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "invert",
            "left_shift",
            "right_shift",
            "divide",
        )
    },
    "conjugate": _Equivalent("native", "native", "identity"),
}

#: Fixes for ufuncs simtsafe does not compile at all.
_REFUSED_HINTS = {
    "floor_divide": "write `a // b`",
    "remainder": "write `a % b`",
    "divmod": "write `a // b` and `a % b`",
    "square": "write `x * x`",
    "reciprocal": "write `1 / x` (or `np.float32(1) / x`)",
    # (x > 0) - (x < 0) is a bool subtraction, which numpy (the simulator) refuses
    "sign": "write `int(x > 0) - int(x < 0)` (an int; 0 for NaN, where np.sign gives NaN)",
    # round(x) lowers to llrint (cvt.rni: half to even) on the GPU, Python's round on the
    # simulator (half to even); both give an int, and NaN/inf have none
    "rint": "write the builtin `round(x)`: half to even, as np.rint, for a finite x in int64 "
    "range; it is an int (`np.float32(round(x))` for a float)",
    "cbrt": "write `math.copysign(math.pow(abs(x), 1.0 / 3.0), x)`",
    "modf": "write `math.trunc(x)` and `x - math.trunc(x)`",
    "frexp": "compute the exponent with math.log2 and math.floor",
    "logaddexp": "write `math.log(math.exp(a) + math.exp(b))` (or a stable form)",
}


#: numpy functions that are not ufuncs (they take arrays) -> the scalar spelling that compiles
#: on both targets, with the same values (tests/ptx/test_port20_ptx.py, tests/sim/...).
_ARRAY_FUNCTION_HINTS = {
    "clip": "for np.clip(x, lo, hi) write `min(max(x, lo), hi)` (np.clip's value for every x "
    "but NaN)",
    "round": "for np.round(x) write the builtin `round(x)`: half to even, as np.round, for a "
    "finite x in int64 range; it is an int (`np.float32(round(x))` for a float)",
    "where": "for np.where(c, a, b) of scalars write `a if c else b`",
    **dict.fromkeys(
        ("max", "amax", "min", "amin"),
        "it reduces an array: of two scalars write the builtin `max(a, b)` / `min(a, b)` (or "
        "np.maximum / np.minimum); over many elements, a loop or ss.block.max / ss.warp.max",
    ),
    **dict.fromkeys(
        ("sum", "prod", "mean"),
        "it reduces an array: accumulate in a loop, then ss.block.sum / ss.warp.sum across threads",
    ),
}
_ARRAY_FUNCTION_HINTS["around"] = _ARRAY_FUNCTION_HINTS["round"].replace("np.round", "np.around")


def numpy_function_refusal(obj: object) -> str | None:
    """Why kernels cannot call ``obj``, a numpy function that is not a ufunc (None: not one).

    ``np.clip``, ``np.round``, ``np.where``... dispatch on arrays; kernels compute an element at
    a time, so the reason names the scalar spelling where there is one.
    """
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if (
        isinstance(obj, type | np.ufunc)
        or not callable(obj)
        or not isinstance(name, str)
        or not (module == "numpy" or module.startswith("numpy."))
    ):
        return None
    hint = _ARRAY_FUNCTION_HINTS.get(name) if getattr(np, name, None) is obj else None
    return (
        "is a numpy function over arrays, not a ufunc, which kernels cannot call: they compute "
        "an element at a time, with numpy ufuncs on scalars (np.exp(x), np.minimum(a, b)), "
        "math functions and operators; " + (hint or "write it with those")
    )


def builtin_name(ufunc: np.ufunc) -> str:
    """The private name the kernel rewrite calls instead of ``ufunc``."""
    return f"__ss_ufunc_{ufunc.__name__}"


def unsupported_ufunc(ufunc: np.ufunc) -> str | None:
    """Why kernels cannot call ``ufunc`` at all (None when they can, on some types)."""
    name = ufunc.__name__
    if name in SCALAR_UFUNCS and ufunc.nout == 1 and ufunc.signature is None:
        return None
    hint = _REFUSED_HINTS.get(name, "write it with operators or math functions")
    if ufunc.signature is not None:
        why = f"is a generalized ufunc over arrays ({ufunc.signature}), which kernels cannot call"
    elif ufunc.nout != 1:
        why = f"returns {ufunc.nout} values; ufuncs with several outputs do not compile in kernels"
    else:
        why = "does not compile in kernels (numba-cuda 0.30.4 cannot lower it on the GPU)"
    return f"np.{name} {why}; {hint}"


@dataclass(frozen=True)
class UfuncPlan:
    """How one ufunc call is computed for its argument dtypes.

    Attributes:
        name: the ufunc's name.
        how: the implementation (see :class:`_Equivalent`).
        loop: numpy's loop input dtypes for the arguments (what they are cast to).
        out: numpy's result dtype.
    """

    name: str
    how: str
    loop: tuple[np.dtype[Any], ...]
    out: np.dtype[Any]

    @property
    def compute(self) -> tuple[np.dtype[Any], ...]:
        """The loop's dtypes as computed: float16 in float32 (numpy's float16 loops do too)."""
        return tuple(_widen(d) for d in self.loop)

    @property
    def compute_out(self) -> np.dtype[Any]:
        return _widen(self.out)

    @property
    def loop_signature(self) -> str:
        """numpy's loop name for the computed dtypes (``"ff->f"``), as numba-cuda keys it."""
        return "".join(d.char for d in self.compute) + "->" + self.compute_out.char


def _widen(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _names(dtypes: tuple[np.dtype[Any], ...]) -> str:
    return ", ".join(d.name for d in dtypes)


@cache
def plan(name: str, dtypes: tuple[np.dtype[Any], ...]) -> UfuncPlan | str:
    """The plan for ``np.<name>`` on scalars of ``dtypes``, or why it does not compile.

    A refusal is the message (without the kernel and line, which the caller adds).
    """
    ufunc = getattr(np, name)
    eq = SCALAR_UFUNCS[name]
    try:
        resolved = ufunc.resolve_dtypes((*dtypes, None))
    except TypeError:
        return (
            f"numpy has no np.{name} for ({_names(dtypes)}): it is not defined for these "
            "types; convert the arguments (e.g. np.float32(x))"
        )
    loop, out = tuple(resolved[: ufunc.nin]), resolved[-1]
    kinds = {d.kind for d in loop}
    if not kinds <= set("biufc"):
        return f"np.{name} of ({_names(dtypes)}) does not compile in kernels"
    how = eq.complex if "c" in kinds else eq.real if "f" in kinds else eq.integer
    if how is None:
        kind = "complex" if "c" in kinds else "float" if "f" in kinds else "integer"
        fix = eq.hint or "convert the arguments to a type it supports"
        computed = f", which numpy computes as ({_names(loop)})" if loop != dtypes else ""
        return (
            f"np.{name} of {kind} values ({_names(dtypes)}{computed}) has no GPU "
            f"implementation in simtsafe; {fix}"
        )
    return UfuncPlan(name, how, loop, out)


def refusal_for_arguments(name: str, described: str) -> str:
    """The message for a ufunc given something other than scalars."""
    return (
        f"np.{name} takes scalars in kernels, got {described}: apply it to one element at a "
        f"time (np.{name}(a[i])); a ufunc of a whole array would allocate an array on the device"
    )


# --------------------------------------------------------------------------- simulator twin


def _sim_dtype(value: Any) -> np.dtype[Any] | None:
    """The dtype Numba would type a simulator value as (None: not a scalar)."""
    if isinstance(value, np.generic):
        return value.dtype if value.dtype.kind in "biufc" else None
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    return None


#: Simulator values that are not scalars, as the messages call them.
_SIM_KINDS = {
    "SimInput": "an input array (In[...])",
    "SimDisjointSlice": "an output (DisjointSlice)",
    "SimWitness": "a witness (ThreadIndex)",
    "SimRowChunk": "a witness (ThreadIndex)",
    "ndarray": "an array",
}


def _sim_ufunc(name: str) -> Callable[..., Any]:
    ufunc = getattr(np, name)

    def call(*args: Any) -> Any:
        dtypes = []
        for a in args:
            dt = _sim_dtype(a)
            if dt is None:
                raise SafetyError(
                    "simtsafe: "
                    + refusal_for_arguments(
                        name, _SIM_KINDS.get(type(a).__name__, f"a {type(a).__name__}")
                    ),
                    rule="typing",
                )
            dtypes.append(dt)
        p = plan(name, tuple(dtypes))
        if isinstance(p, str):
            raise SafetyError("simtsafe: " + p, rule="typing")
        # As typed on the GPU: Python scalars as Numba's types, then numpy's own loop.
        # The GPU computes silently (inf/nan, no warning); so does this twin.
        with np.errstate(all="ignore"):
            result = ufunc(*(dt.type(a) for a, dt in zip(args, dtypes, strict=True)))
        return p.out.type(result)

    call.__name__ = f"ufunc_{name}"
    return call


@cache
def _sim_table() -> tuple[tuple[str, Callable[..., Any]], ...]:
    return tuple((f"__ss_ufunc_{name}", _sim_ufunc(name)) for name in SCALAR_UFUNCS)


def sim_builtins() -> dict[str, Any]:
    """``__ss_ufunc_<name>`` for every supported ufunc: the simulator's implementations."""
    return dict(_sim_table())
