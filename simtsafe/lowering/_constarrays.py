"""Constant arrays in Tier 1: ``cuda.const.array_like(ARR)`` outside an unsafe region.

The decorator rewrites such a call to ``__ss_const_array(__ss_refN)``, where
``__ss_refN`` is a read-only, C-ordered copy of the module-level numpy array
``ARR`` taken when the kernel is frozen (its first compile): the values the
kernel compiles are those, whatever the host does to ``ARR`` later. Numba
compiles a global array into the module as an ``addrspace(4)`` global
(``CUDATargetContext.make_constant_array``), so reads become ``ld.const``.

The value is a ``ConstArrayType``: a one-member struct around that array,
whose type offers reads by int index only -- no store, slice, iteration,
attribute beyond ``shape``/``size``/``ndim``, nor any function that would take
it as an array (an atomic, a ufunc's ``out``): none of them types. A read is
bounds-checked as a thread-private array's or a shared tile's: an index out of
range (negative ones included: there is no wraparound) reads 0, so no read
leaves the array. The shape is the constant's own (LLVM constants), so the
compares fold where the index is known.

This typing is the friendly message; the compiled form decides
(``simtsafe.verify._constmem``): no store, atomic or writing call in a kernel
simtsafe builds may reach constant memory, by any route.
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import intrinsic, lower_builtin
from numba.cuda.typing.templates import AbstractTemplate, infer_global, signature

from . import _tilebase as tb
from ._construle import READ_ONLY, bad_index
from ._cuda import _reject

__all__ = ["ConstArrayType", "const_array"]


@tb.register_holder
class ConstArrayType(tb.HolderType):
    """A read-only array in constant memory, of the shape its value has."""

    #: ``numba.cuda``'s operations (``cuda.atomic.add``...) type on anything with an
    #: array's ``ndim`` and ``dtype``: refused for this type (``_cuda._typed_by_view``).
    stub_refusal = READ_ONLY
    #: ``w.in_bounds(t)`` compares the witness with the constant's own shape (_cuda).
    in_bounds_by_shape = True

    def __init__(self, arr_type: types.Array) -> None:
        self.arr_type = arr_type
        self.dtype = arr_type.dtype
        self.ndim = arr_type.ndim
        self.shape = self.storage = None  # read from the constant's own shape fields
        super().__init__(name=f"ConstArray[{self.dtype}, {self.ndim}d]")


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if args and isinstance(args[0], ConstArrayType):
            raise _reject(READ_ONLY)
        return None


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if not isinstance(target, ConstArrayType):
            return None
        if not tb.is_int_index(idx, target.ndim):
            raise _reject(bad_index(target.ndim))
        return signature(target.dtype, target, idx)


tb.type_array_like(
    ConstArrayType,
    no_iteration=lambda ty: (
        "a constant array cannot be iterated; loop over range(len(...)) and index it"
    ),
)


def _lower_getitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty, ity = sig.args
    idx = tb.int_indices(context, builder, ity, args[1])
    return tb.holder_load(context, builder, ty, args[0], idx)


for _ity in (types.Integer, types.BaseTuple):
    lower_builtin(operator.getitem, ConstArrayType, _ity)(_lower_getitem)


tb.lower_holder_metadata(ConstArrayType)


@intrinsic
def const_array(typingctx: Any, arr: Any) -> Any:
    """``__ss_const_array(ARR)``: the constant array Numba made of the global ``ARR``.

    Only the decorator writes this call, with a private global holding the
    read-only copy of the user's array; the checks here keep the contract if
    anything else reached it.
    """
    if not isinstance(arr, types.Array) or arr.layout != "C" or arr.ndim < 1:
        raise _reject(
            f"cuda.const.array_like takes a module-level numpy array (C-ordered, at least one "
            f"axis), got {arr}"
        )
    if not isinstance(arr.dtype, types.Integer | types.Float | types.Complex | types.Boolean):
        raise _reject(
            f"a constant array holds numbers (bool, integers, floats, complex); got {arr.dtype}"
        )
    cty = ConstArrayType(arr.copy(readonly=True))

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        holder = cgutils.create_struct_proxy(cty)(context, builder)
        holder.arr = args[0]  # Numba's constant array: an addrspace(4) global, cast to generic
        return holder._getvalue()

    return cty(arr), codegen
