"""float16 -> integer casts truncate toward zero, as Python's ``int()`` and numpy's cast do.

numba-cuda lowers ``int(h)``, ``np.int32(h)``, ``np.uint8(h)`` of a ``float16`` with
``cvt.rni`` (round to nearest even, saturating), where the same cast of a ``float32`` is
``cvt.rzi`` and Python, numpy and simtsafe's simulator truncate: ``int(np.float16(1.7))``
was 2 on the GPU and 1 everywhere else (attack round 30). This registers the cast again,
after numba-cuda's, with ``cvt.rzi`` (truncation; still saturating out of range, as every
float-to-int ``cvt`` of PTX does, where numpy's overflow is undefined).
"""

from __future__ import annotations

from typing import Any

import numba.cuda._internal.cuda_fp16  # noqa: F401  (numba-cuda's cast first: this one replaces it)
from llvmlite import ir
from numba.cuda import types
from numba.cuda.core.imputils import lower_cast

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
