"""numpy ufuncs on scalars, lowered for the CUDA target (the plan comes from ``_ufuncs``).

Each supported ufunc gets one private intrinsic, ``__ss_ufunc_<name>``, that
the kernel rewrite calls instead of the ufunc. Its typing takes only
scalars, asks ``_ufuncs.plan`` for numpy's loop and result dtype, and refuses
(``simtsafe: ...``, lifted to the user's line) what has no implementation;
its lowering casts the arguments to the loop type, computes with the
equivalent Numba already lowers (libdevice through numba-cuda's math
lowering, cmath/operator/abs through Numba's typing of them, or numba-cuda's
own ufunc loop), and casts the result to numpy's dtype.
"""

from __future__ import annotations

import cmath
import math
import operator
from functools import cache
from typing import Any

import numpy as np
from numba.cuda import types
from numba.cuda.core import errors
from numba.cuda.core.imputils import force_error_model
from numba.cuda.extending import intrinsic
from numba.cuda.np.numpy_support import as_dtype, from_dtype
from numba.cuda.typing.templates import signature

from . import _ufuncs

__all__ = ["builtins"]

_MODULES = {"math": math, "cmath": cmath, "operator": operator}


def _equivalent(how: str) -> Any:
    if how == "abs":
        return abs
    module, _, attr = how.partition(".")
    return getattr(_MODULES[module], attr)


def _libdevice_impl(how: str, nin: int, ty: Any) -> Any:
    """numba-cuda's lowering of ``math.<f>`` for one float type (float -> float)."""
    from numba.cuda import mathimpl

    fn = _equivalent(how)
    if nin == 1:
        return mathimpl.get_unary_impl_for_fn_and_ty(fn, ty)
    return mathimpl.get_binary_impl_for_fn_and_ty(fn, ty)


def _uses_libdevice(how: str, out: Any) -> bool:
    """math.<f> of floats giving floats: lowered directly to libdevice (math.floor would be int)."""
    return how.startswith("math.") and isinstance(out, types.Float)


def _type_call(name: str, typingctx: Any, args: tuple[Any, ...]) -> tuple[Any, Any]:
    """(signature, codegen) of ``np.<name>(*args)``, or a TypingError with the fix."""
    for a in args:
        if not isinstance(types.unliteral(a), types.Number | types.Boolean):
            raise errors.TypingError(
                "simtsafe: " + _ufuncs.refusal_for_arguments(name, f"a value of type {a}")
            )
    argtys = tuple(types.unliteral(a) for a in args)
    p = _ufuncs.plan(name, tuple(as_dtype(t) for t in argtys))
    if isinstance(p, str):
        raise errors.TypingError("simtsafe: " + p)
    compute = tuple(from_dtype(d) for d in p.compute)
    compute_out = from_dtype(p.compute_out)
    inner: Any = None  # the equivalent's signature, resolved by Numba's typing
    fnty: Any = None
    if p.how == "native":
        from numba.cuda import ufuncs as cuda_ufuncs

        if cuda_ufuncs.get_ufunc_info(getattr(np, name)).get(p.loop_signature) is None:
            raise errors.TypingError(
                f"simtsafe: np.{name} of ({', '.join(str(t) for t in argtys)}) has no GPU "
                f"implementation (numba-cuda lowers no {p.loop_signature} loop); convert the "
                "arguments to another type"
            )
    elif p.how not in ("identity", "false", "true") and not _uses_libdevice(p.how, compute_out):
        fnty = typingctx.resolve_value_type(_equivalent(p.how))
        inner = typingctx.resolve_function_type(fnty, compute, {})
        if inner is None:
            raise errors.TypingError(
                f"simtsafe: np.{name} of ({', '.join(str(t) for t in argtys)}) has no GPU "
                f"implementation ({p.how} is not lowered for {compute}); convert the arguments "
                "to another type"
            )
    sig = signature(from_dtype(p.out), *argtys)

    def codegen(context: Any, builder: Any, sig: Any, llargs: Any) -> Any:
        vals = [
            context.cast(builder, v, t, c)
            for v, t, c in zip(llargs, sig.args, compute, strict=True)
        ]
        if p.how == "identity":
            res, res_ty = vals[0], compute[0]
        elif p.how in ("false", "true"):
            res, res_ty = context.get_constant(types.boolean, p.how == "true"), types.boolean
        elif p.how == "native":
            from numba.cuda import ufuncs as cuda_ufuncs

            impl = cuda_ufuncs.get_ufunc_info(getattr(np, name))[p.loop_signature]
            with force_error_model(context, "numpy"):
                res = impl(context, builder, signature(compute_out, *compute), vals)
            res_ty = compute_out
        elif inner is None:  # libdevice float -> float
            impl = _libdevice_impl(p.how, len(compute), compute[0])
            res = impl(context, builder, signature(compute_out, *compute), vals)
            res_ty = compute_out
        else:  # the equivalent as Numba types it: its argument types may be wider (bool + bool)
            wide = [
                context.cast(builder, v, c, a)
                for v, c, a in zip(vals, compute, inner.args, strict=True)
            ]
            res = context.get_function(fnty, inner)(builder, wide)
            res_ty = inner.return_type
        return context.cast(builder, res, res_ty, sig.return_type)

    return sig, codegen


def _intrinsic(name: str, nin: int) -> Any:
    if nin == 1:

        def unary(typingctx: Any, x: Any) -> Any:
            return _type_call(name, typingctx, (x,))

        unary.__name__ = f"ufunc_{name}"
        return intrinsic(unary)

    def binary(typingctx: Any, x: Any, y: Any) -> Any:
        return _type_call(name, typingctx, (x, y))

    binary.__name__ = f"ufunc_{name}"
    return intrinsic(binary)


@cache
def _table() -> tuple[tuple[str, Any], ...]:
    return tuple(
        (f"__ss_ufunc_{name}", _intrinsic(name, getattr(np, name).nin))
        for name in _ufuncs.SCALAR_UFUNCS
    )


def builtins() -> dict[str, Any]:
    """``__ss_ufunc_<name>`` for every supported ufunc: the CUDA intrinsics."""
    return dict(_table())
