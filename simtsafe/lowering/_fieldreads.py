"""A helper's ``v.name`` read where ``name`` is also an array attribute (``s.mean``, ``s.sum``).

A ``@simtsafe.device`` helper's parameters need no annotation, so when it is declared the
rewrite cannot tell the field ``mean`` of a record it was given from the array method
``mean`` of an array (which kernels may not use: array methods and attributes can alias or
write their array). The rewrite gives such a read on as ``__ss_field(v, "mean")`` and the
type Numba infers for ``v`` decides: a record with that field reads it, as ``v.mean`` would;
anything else -- an array, a view, a tuple, a record without the field -- is refused at the
user's line. So no array attribute becomes reachable by the name of a field.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.cuda import types
from numba.cuda.extending import _intrinsic

from .._spaces import field_read_refusal
from ._cuda import _reject

__all__ = ["field_read"]


def _field_read(typingctx: Any, rec: Any, name: Any) -> Any:
    """``__ss_field(v, "name")``: the field ``name`` of the record ``v``."""
    if not isinstance(name, types.StringLiteral):
        return None
    attr = str(name.literal_value)
    if not isinstance(rec, types.Record) or attr not in rec.fields:
        raise _reject(field_read_refusal(attr, f"a value of type {rec}"))
    fty = rec.typeof(attr)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        impl = context.get_getattr(sig.args[0], attr)
        return impl(context, builder, sig.args[0], args[0], attr)

    return fty(rec, name), codegen


#: a literal name is what the typer needs (Numba retries with literal types first)
field_read = _intrinsic(target="cuda", prefer_literal=True)(_field_read)
