"""bfloat16 <-> float32 conversion in LLVM IR: the one place the lowering converts bf16.

numba-cuda types a ``ml_dtypes.bfloat16`` array element as its ``__nv_bfloat16``
scalar (an ``i16`` in LLVM, arithmetic through C++ calls). simtsafe's views do not
hand that scalar to kernels: a witness read of a bf16 array gives an exact
``float32`` (the bits shifted left by 16) and a witness store converts any real
value to ``float32``, then rounds it to nearest even into bf16 (a NaN stays a
quiet NaN). Both are plain integer IR (no calls), so they inline and cost a
shift, or an add and a shift, per element.

Other lowering code (vector loads, tiles) calls :func:`bf16_to_f32` and
:func:`f32_to_bf16`; :func:`is_bf16` says whether a Numba element type is bf16;
:func:`stored_element` is what every store of a typed value into an element does.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

_I16 = ir.IntType(16)
_I32 = ir.IntType(32)
_F32 = ir.FloatType()


def is_bf16(dtype: Any) -> bool:
    """Is the Numba element type ``dtype`` numba-cuda's bfloat16 (``__nv_bfloat16``)?"""
    return type(dtype).__name__ == "Bfloat16" and getattr(dtype, "bitwidth", 0) == 16


def stored_element(context: Any, builder: ir.IRBuilder, dtype: Any, vty: Any, value: Any) -> Any:
    """A value of Numba type ``vty`` as an element of ``dtype`` is stored: bf16 via float32,
    rounded to nearest even; any other type by Numba's cast."""
    from numba.cuda import types  # the conversions themselves need no Numba

    if is_bf16(dtype) and is_bf16(vty):
        return value  # the same 16 bits (no round trip through numba-cuda's C++ conversion)
    if is_bf16(dtype):
        return f32_to_bf16(builder, context.cast(builder, value, vty, types.float32))
    return context.cast(builder, value, vty, dtype)


def bf16_to_f32(builder: ir.IRBuilder, bits: ir.Value) -> ir.Value:
    """The exact ``float`` of the bf16 whose 16 bits are the ``i16`` ``bits``."""
    wide = builder.shl(builder.zext(bits, _I32), ir.Constant(_I32, 16))
    return builder.bitcast(wide, _F32)


def f32_to_bf16(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """The ``i16`` bits of ``value`` (a ``float``) rounded to nearest even bf16; NaN stays NaN.

    Round to nearest even: add ``0x7FFF`` plus the lowest kept bit, then drop the
    low 16 bits (the carry may round up into the exponent, up to infinity, as
    IEEE rounding does). A NaN would round to infinity, so it becomes the
    canonical quiet NaN of its sign (``0x7FC0``/``0xFFC0``), as ml_dtypes' cast gives.
    """
    bits = builder.bitcast(value, _I32)
    lsb = builder.and_(builder.lshr(bits, ir.Constant(_I32, 16)), ir.Constant(_I32, 1))
    rounded = builder.add(bits, builder.add(ir.Constant(_I32, 0x7FFF), lsb))
    nan = builder.fcmp_unordered("uno", value, value)
    sign = builder.and_(bits, ir.Constant(_I32, 0x80000000))
    quiet = builder.or_(sign, ir.Constant(_I32, 0x7FC00000))
    chosen = builder.select(nan, quiet, rounded)
    return builder.trunc(builder.lshr(chosen, ir.Constant(_I32, 16)), _I16)
