"""Casts of the 16-bit floats (float16, bfloat16) that numba-cuda gets wrong or lacks.

To an integer, a float16 truncates toward zero, as Python's ``int()`` and numpy's cast do.

numba-cuda lowers ``int(h)``, ``np.int32(h)``, ``np.uint8(h)`` of a ``float16`` with
``cvt.rni`` (round to nearest even, saturating), where the same cast of a ``float32`` is
``cvt.rzi`` and Python, numpy and simtsafe's simulator truncate: ``int(np.float16(1.7))``
was 2 on the GPU and 1 everywhere else (attack round 30). This registers the cast again,
after numba-cuda's, with ``cvt.rzi`` (truncation; still saturating out of range, as every
float-to-int ``cvt`` of PTX does, where numpy's overflow is undefined).

To ``bool`` (``bool(h)``, ``if h:``, ``not h``, ``h and g``: every truth test of Numba is this
cast), a float16 or bfloat16 is true unless it is a zero of either sign, as in Python and numpy
(a NaN is true). numba-cuda has no such cast for its bfloat16 (a raw "No definition for
lowering") and lowers float16's with a float compare on its ``i16`` bits, which NVVM refuses
(``ERROR_INVALID_IR``); both are an integer test of the bits without the sign here.
"""

from __future__ import annotations

from typing import Any

import numba.cuda._internal.cuda_fp16  # noqa: F401  (numba-cuda's cast first: this one replaces it)
from llvmlite import ir
from numba.cuda import types
from numba.cuda.core.imputils import lower_builtin, lower_cast

__all__: list[str] = []

#: The PTX register of each integer width (``h`` holds 8 and 16 bits).
_CONSTRAINT = {8: "h", 16: "h", 32: "r", 64: "l"}


@lower_cast(types.float16, types.Integer)  # type: ignore[untyped-decorator]
def _float16_to_integer(
    context: Any, builder: ir.IRBuilder, fromty: Any, toty: Any, val: Any
) -> Any:
    """``cvt.rzi`` where numba-cuda has ``cvt.rni``; the rest as numba-cuda lowers it."""
    bits = toty.bitwidth
    signed = "s" if toty.signed else "u"
    fnty = ir.FunctionType(context.get_value_type(toty), [ir.IntType(16)])
    asm = ir.InlineAsm(fnty, f"cvt.rzi.{signed}{bits}.f16 $0, $1;", f"={_CONSTRAINT[bits]},h")
    return builder.call(asm, [val])


#: The bits of a 16-bit float other than its sign (exponent and mantissa, both formats).
_MAGNITUDE = ir.Constant(ir.IntType(16), 0x7FFF)


def _truth(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    """``bool`` of a float16 or bfloat16 (an ``i16``): any magnitude bit set (NaN included)."""
    magnitude = builder.and_(args[0], _MAGNITUDE)
    return builder.icmp_unsigned("!=", magnitude, ir.Constant(ir.IntType(16), 0))


for _half in (types.float16, types.bfloat16):
    lower_builtin(bool, _half)(_truth)
