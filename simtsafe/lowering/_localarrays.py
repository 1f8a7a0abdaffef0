"""Thread-private arrays in Tier 1: ``cuda.local.array`` outside an unsafe region.

The decorator rewrites such a call to ``__ss_local_array(shape, dtype)``,
which makes Numba's own local array (an ``alloca``: registers when every
index is known at compile time, local memory otherwise) and wraps it in a
``LocalArrayType``. Each thread has its own, so any thread may read and
write any element; what the wrapper adds is the bounds check: an index out
of range (negative ones included: there is no wraparound) writes nothing and
reads 0, so no access ever reaches another variable's memory. With static
loops over ``range(N)`` the compares fold and the PTX is the raw array's.
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.cudadrv import nvvm
from numba.cuda.cudaimpl import _generic_array
from numba.cuda.extending import lower_builtin, lower_getattr

from . import _tilebase as tb
from ._cuda import _const, _reject
from ._irform import PRIVATE_ARRAY

__all__ = ["LocalArrayType", "local_array"]


@tb.register_holder
class LocalArrayType(tb.HolderType):
    """A thread-private array of a static shape."""

    shape: tuple[int, ...]

    def __init__(self, dtype: Any, shape: tuple[int, ...]) -> None:
        self.dtype = dtype
        self.shape = self.storage = shape
        self.ndim = len(shape)
        self.arr_type = types.Array(dtype, self.ndim, "C")
        super().__init__(name=f"LocalArray[{dtype}, {'x'.join(str(n) for n in shape)}]")


tb.type_int_indexed(
    LocalArrayType,
    bad_write=lambda ty, idx: (
        f"a thread-private array ({ty}) is indexed with {tb.ints_phrase(ty.ndim)}, got {idx}"
    ),
    bad_read=lambda ty, idx: (
        f"a thread-private array ({ty}) is indexed with {tb.ints_phrase(ty.ndim)}, got {idx}; "
        "it has no slices"
    ),
)
tb.type_array_like(
    LocalArrayType,
    no_iteration=lambda ty: (
        f"a thread-private array ({ty}) cannot be iterated; loop over range(len(a)) and index it"
    ),
)


def _lower_getitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty, ity = sig.args
    idx = tb.int_indices(context, builder, ity, args[1])
    return tb.holder_load(context, builder, ty, args[0], idx)


def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty, ity, vty = sig.args
    val = context.cast(builder, args[2], vty, ty.dtype)
    tb.holder_store(
        context, builder, ty, args[0], tb.int_indices(context, builder, ity, args[1]), val
    )
    return context.get_dummy_value()


for _ity in (types.Integer, types.BaseTuple):
    lower_builtin(operator.getitem, LocalArrayType, _ity)(_lower_getitem)
    lower_builtin(operator.setitem, LocalArrayType, _ity, types.Any)(_lower_setitem)


@lower_builtin(len, LocalArrayType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    return _const(sig.args[0].shape[0])


@lower_getattr(LocalArrayType, "shape")
def _lower_shape(context: Any, builder: ir.IRBuilder, ty: LocalArrayType, val: Any) -> Any:
    return context.make_tuple(
        builder, types.UniTuple(types.intp, ty.ndim), [_const(n) for n in ty.shape]
    )


@lower_getattr(LocalArrayType, "size")
def _lower_size(context: Any, builder: ir.IRBuilder, ty: LocalArrayType, val: Any) -> Any:
    size = 1
    for n in ty.shape:
        size *= n
    return _const(size)


@lower_getattr(LocalArrayType, "ndim")
def _lower_ndim(context: Any, builder: ir.IRBuilder, ty: LocalArrayType, val: Any) -> Any:
    return _const(ty.ndim)


def _local_array(typingctx: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
    """``cuda.local.array(shape, dtype)`` outside an unsafe region: thread-private storage."""
    static = tb.static_shape(shape)
    if static is None or any(n < 1 for n in static):
        raise _reject(
            f"cuda.local.array(shape, dtype) needs a static positive shape: an int or a tuple "
            f"of ints known when the kernel compiles (literals or module constants), got {shape}"
        )
    align = getattr(alignment, "literal_value", None)
    omitted = alignment is None or isinstance(alignment, types.NoneType | types.Omitted)
    if not (omitted or isinstance(align, int)):
        raise _reject(f"cuda.local.array(): alignment must be a constant int, got {alignment}")
    lty = LocalArrayType(tb.dtype_of(dtype, "cuda.local.array"), static)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        arr = cgutils.create_struct_proxy(lty)(context, builder)
        arr.arr = _generic_array(
            context,
            builder,
            shape=static,
            dtype=lty.dtype,
            symbol_name=PRIVATE_ARRAY,
            addrspace=nvvm.ADDRSPACE_LOCAL,
            alignment=align,
        )
        return arr._getvalue()

    return lty(shape, dtype, types.Omitted(None) if alignment is None else alignment), codegen


local_array = tb.literal_intrinsic(_local_array)
