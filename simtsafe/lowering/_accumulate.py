"""Numba types and lowering of accumulators: ``Accumulate[T]`` and ``shared.accumulator``.

An accumulator is updated only by atomics (``acc.add(i, v)``, ``acc.min(i,
v)``, ``acc.max(i, v)``), which never race, so any thread may update any
element. Each update is one unsigned bounds check (``i < size``: negative
and too-large indices both fail it, and the update is skipped) and one
CUDA atomic (``atom.add/min/max``; float min/max and float64 add where the
hardware lacks them go through numba-cuda's own compare-and-swap helpers).

* ``AccumulateType(arr)`` -- a kernel's ``Accumulate[T]`` parameter: a
  one-member struct around the 1D array (the ABI and the loads are the raw
  array's). No read, no write, no other attribute than ``size``, ``shape``
  and ``len(acc)``: every other use is a typing error starting
  ``simtsafe:``.
* ``SharedAccumulatorType(dtype, n)`` -- ``simtsafe.shared.accumulator(n,
  dtype)``: a static shared array of ``n`` elements, zero-filled by the whole
  block (each thread clears its share, then one barrier) when the call runs.
  Besides the atomics it offers bounds-checked reads ``acc[i]`` (any int) and
  ``acc[w]`` (a ``Local1D`` witness); out of range, a read gives 0.

Safety: ``shared.accumulator`` contains a barrier, so every thread of the
block must reach it (the decorator's uniformity analysis proves this), and
reads are meaningful only after a barrier that follows the updates (the
decorator's phase analysis).
"""

from __future__ import annotations

import operator
from itertools import count
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.core import errors
from numba.cuda.extending import intrinsic, lower_builtin, lower_getattr, models, register_model
from numba.cuda.np.arrayobj import make_array
from numba.cuda.typing.templates import (
    AbstractTemplate,
    AttributeTemplate,
    bound_function,
    infer_getattr,
    infer_global,
    signature,
)

from ._blockgeo import BlockGeometry
from ._provenance import fill_writes, site, tile_symbol

__all__ = ["AccumulateType", "SharedAccumulatorType", "builtins"]

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_names = count()

_ATOMIC_TYPES = (
    types.int32,
    types.int64,
    types.uint32,
    types.uint64,
    types.float32,
    types.float64,
)

_WHAT_ACC_OFFERS = (
    "an Accumulate offers only the atomic updates acc.add(i, v), acc.min(i, v), acc.max(i, v), "
    "and acc.size, acc.shape, len(acc)"
)
_WHAT_SHARED_OFFERS = (
    "a shared accumulator offers the atomic updates acc.add(i, v), acc.min(i, v), "
    "acc.max(i, v), reads acc[i] / acc[w] (after a barrier), and acc.size, acc.shape, len(acc)"
)


def _reject(message: str) -> errors.TypingError:
    return errors.TypingError("simtsafe: " + message)


# --------------------------------------------------------------------------- types


class AccumulateType(types.Type):
    """Numba type of an ``Accumulate[T]`` parameter: the array, updated atomically only."""

    def __init__(self, arr_type: types.Array) -> None:
        self.arr_type = arr_type
        self.dtype = arr_type.dtype
        super().__init__(name=f"Accumulate[{arr_type}]")


class SharedAccumulatorType(types.Type):
    """Numba type of a block's shared accumulator of ``n`` elements of ``dtype``."""

    def __init__(self, dtype: Any, n: int) -> None:
        self.dtype = dtype
        self.n = n
        super().__init__(name=f"SharedAccumulator[{dtype} x {n}]")


@register_model(AccumulateType)
class _AccumulateModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: AccumulateType) -> None:
        super().__init__(dmm, fe_type, [("arr", fe_type.arr_type)])


@register_model(SharedAccumulatorType)
class _SharedAccumulatorModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: SharedAccumulatorType) -> None:
        super().__init__(dmm, fe_type, [("data", types.CPointer(fe_type.dtype))])


_ACCUMULATORS = (AccumulateType, SharedAccumulatorType)


def _check_element_type(dtype: Any, where: str) -> None:
    if dtype not in _ATOMIC_TYPES:
        raise _reject(
            f"{where} needs an element type with CUDA atomics (int32, int64, uint32, uint64, "
            f"float32, float64); got {dtype}"
        )


def _is_local1d(idx: Any) -> bool:
    return getattr(idx, "space", None) == "Local1D" and hasattr(idx, "rank")


# --------------------------------------------------------------------------- typing


class _AccumulatorMethods(AttributeTemplate):
    """``add``/``min``/``max``, ``size``/``shape``; any other attribute is refused."""

    offers = _WHAT_ACC_OFFERS

    def _update(self, acc: Any, args: tuple[Any, ...], kws: Any, name: str) -> Any:
        if kws or len(args) != 2:
            raise _reject(f"acc.{name}(i, v) takes an index and a value")
        idx, val = args
        if not isinstance(idx, types.Integer):
            raise _reject(f"acc.{name}(i, v): the index must be an int; got {idx}")
        if self.context.can_convert(val, acc.dtype) is None:
            raise _reject(
                f"acc.{name}(i, v): cannot convert a {val} to the element type {acc.dtype}"
            )
        return signature(types.none, types.intp, acc.dtype)

    @bound_function("Accumulator.add")
    def resolve_add(self, acc: Any, args: tuple[Any, ...], kws: Any) -> Any:
        return self._update(acc, args, kws, "add")

    @bound_function("Accumulator.min")
    def resolve_min(self, acc: Any, args: tuple[Any, ...], kws: Any) -> Any:
        return self._update(acc, args, kws, "min")

    @bound_function("Accumulator.max")
    def resolve_max(self, acc: Any, args: tuple[Any, ...], kws: Any) -> Any:
        return self._update(acc, args, kws, "max")

    def resolve_size(self, acc: Any) -> Any:
        return types.intp

    def resolve_shape(self, acc: Any) -> Any:
        return types.UniTuple(types.intp, 1)

    def generic_resolve(self, acc: Any, attr: str) -> Any:
        raise _reject(f"{acc} has no .{attr}: {self.offers}")


@infer_getattr
class _AccumulateAttrs(_AccumulatorMethods):
    key = AccumulateType


@infer_getattr
class _SharedAccumulatorAttrs(_AccumulatorMethods):
    key = SharedAccumulatorType
    offers = _WHAT_SHARED_OFFERS


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if isinstance(target, AccumulateType):
            raise _reject(
                f"an Accumulate is not read during the launch (another thread may be updating "
                f"it); {_WHAT_ACC_OFFERS}. Read the result after the launch, or accumulate in "
                "simtsafe.shared.accumulator(...) and read that after simtsafe.block.sync()"
            )
        if isinstance(target, SharedAccumulatorType):
            if isinstance(idx, types.Integer) or _is_local1d(idx):
                return signature(target.dtype, target, idx)
            raise _reject(
                f"a shared accumulator is read with an int or a thread.local_index() witness; "
                f"got {idx}"
            )
        return None


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target = args[0]
        if isinstance(target, _ACCUMULATORS):
            raise _reject(
                "an accumulator is not written with `acc[i] = v` (two threads could write the "
                "same element); use acc.add(i, v), acc.min(i, v) or acc.max(i, v)"
            )
        return None


@infer_global(len)
class _Len(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if len(args) == 1 and isinstance(args[0], _ACCUMULATORS):
            return signature(types.intp, args[0])
        return None


# --------------------------------------------------------------------------- lowering


def _global_parts(context: Any, builder: ir.IRBuilder, ty: AccumulateType, val: Any) -> Any:
    arr = cgutils.create_struct_proxy(ty)(context, builder, value=val).arr
    return make_array(ty.arr_type)(context, builder, arr)


def _size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> ir.Value:
    if isinstance(ty, SharedAccumulatorType):
        return context.get_constant(types.intp, ty.n)
    return cgutils.unpack_tuple(builder, _global_parts(context, builder, ty, val).shape, 1)[0]


def _element_pointer(context: Any, builder: ir.IRBuilder, ty: Any, val: Any, i: Any) -> Any:
    """Pointer to element ``i`` (the caller has checked ``i < size``)."""
    if isinstance(ty, SharedAccumulatorType):
        data = cgutils.create_struct_proxy(ty)(context, builder, value=val).data
        return builder.gep(data, [i], inbounds=True)
    ary = _global_parts(context, builder, ty, val)
    shapes = cgutils.unpack_tuple(builder, ary.shape, 1)
    strides = cgutils.unpack_tuple(builder, ary.strides, 1)
    return cgutils.get_item_pointer2(
        context, builder, ary.data, shapes, strides, ty.arr_type.layout, [i], wraparound=False
    )


def _in_range(context: Any, builder: ir.IRBuilder, ty: Any, val: Any, i: Any) -> ir.Value:
    # Unsigned: a negative index is a huge one, out of range like any too-large index.
    return builder.icmp_unsigned("<", i, _size(context, builder, ty, val))


def _atomic(builder: ir.IRBuilder, name: str, dtype: Any, ptr: ir.Value, value: ir.Value) -> None:
    module = builder.module
    if isinstance(dtype, types.Float):
        generic = builder.addrspacecast(ptr, ir.PointerType(ptr.type.pointee))
        bits = dtype.bitwidth
        declare = getattr(nvvmutils, f"declare_atomic_{name}_float{bits}")
        builder.call(declare(module), (generic, value))
        return
    op = {"add": "add", "max": "max", "min": "min"}[name]
    if name != "add" and not dtype.signed:
        op = "u" + op
    builder.atomic_rmw(op, ptr, value, "monotonic")


def _lower_update(name: str) -> None:
    for acc_type in _ACCUMULATORS:

        @lower_builtin(f"Accumulator.{name}", acc_type, types.Integer, types.Any)
        def lower(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            ty = sig.args[0]
            acc, i, v = args
            ity, vty = sig.args[-2:]
            i = context.cast(builder, i, ity, types.intp)
            v = context.cast(builder, v, vty, ty.dtype)
            with builder.if_then(_in_range(context, builder, ty, acc, i), likely=True):
                _atomic(builder, name, ty.dtype, _element_pointer(context, builder, ty, acc, i), v)
            return context.get_dummy_value()


for _name in ("add", "min", "max"):
    _lower_update(_name)


@lower_builtin(operator.getitem, SharedAccumulatorType, types.Any)
def _lower_shared_read(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty, idx_ty = sig.args
    acc, idx = args
    if isinstance(idx_ty, types.Integer):
        i = context.cast(builder, idx, idx_ty, types.intp)
    else:  # a Local1D witness: its one member is the linear thread index
        i = builder.extract_value(idx, 0)
    out = cgutils.alloca_once_value(builder, context.get_constant_null(ty.dtype))
    with builder.if_then(_in_range(context, builder, ty, acc, i), likely=True):
        ptr = _element_pointer(context, builder, ty, acc, i)
        builder.store(builder.load(ptr), out)
    return builder.load(out)


@lower_builtin(len, AccumulateType)
@lower_builtin(len, SharedAccumulatorType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    return _size(context, builder, sig.args[0], args[0])


def _lower_size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return _size(context, builder, ty, val)


def _lower_shape(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.pack_array(builder, [_size(context, builder, ty, val)])


for _ty in _ACCUMULATORS:
    lower_getattr(_ty, "size")(_lower_size)
    lower_getattr(_ty, "shape")(_lower_shape)


# --------------------------------------------------------------------------- intrinsics


@intrinsic
def _view_acc(typingctx: Any, arr: Any) -> Any:
    """An ``Accumulate`` parameter's prologue: wrap the plain 1D array."""
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        raise _reject(f"an Accumulate parameter is a 1D device array; got {arr}")
    _check_element_type(arr.dtype, "Accumulate[T]")
    rt = AccumulateType(arr)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        view = cgutils.create_struct_proxy(rt)(context, builder)
        view.arr = args[0]
        return view._getvalue()

    return rt(arr), codegen


def _dtype_of(d: Any) -> Any:
    if isinstance(d, types.NumberClass):
        return d.instance_type
    if isinstance(d, types.DType):
        return d.dtype
    return None


def _shared_accumulator_typer(typingctx: Any, n: Any, dtype: Any) -> Any:
    size = getattr(n, "literal_value", None)
    if not isinstance(size, int) or isinstance(size, bool):
        if isinstance(n, types.Integer):
            return None  # Numba retries with the literal type when there is one
        raise _reject(f"shared.accumulator(n, dtype): n must be an int; got {n}")
    if size < 1:
        raise _reject(f"shared.accumulator(n, dtype): n must be at least 1; got {size}")
    elem = _dtype_of(dtype)
    if elem is None:
        raise _reject(
            f"shared.accumulator(n, dtype): dtype must be a numpy scalar type such as "
            f"np.uint32; got {dtype}"
        )
    _check_element_type(elem, "shared.accumulator(n, dtype)")
    rt = SharedAccumulatorType(elem, size)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        lty = context.get_data_type(elem)
        aty = ir.ArrayType(lty, size)
        gv = cgutils.add_global_variable(
            builder.module, aty, f"{tile_symbol('__ss_acc')}_{next(_names)}", addrspace=3
        )
        gv.linkage = "internal"
        gv.initializer = ir.Constant(aty, ir.Undefined)
        gv.align = 16
        data = builder.gep(gv, [ir.Constant(_I32, 0), ir.Constant(_I32, 0)], inbounds=True)
        with site("shared.accumulator", "block"):
            _zero_fill(builder, data, lty, size)
        acc = cgutils.create_struct_proxy(rt)(context, builder)
        # A generic pointer (the data model has no address space); NVVM infers
        # shared again from the global it comes from: ld/st/atom.shared in PTX.
        acc.data = builder.addrspacecast(data, ir.PointerType(lty))
        return acc._getvalue()

    return rt(n, dtype), codegen


def _zero_fill(builder: ir.IRBuilder, data: ir.Value, lty: ir.Type, size: int) -> None:
    """Every thread clears elements ``tid, tid + T, ...``; then one barrier."""
    geo = BlockGeometry(builder)
    with (
        fill_writes("zero"),  # element j to thread j mod T (verify._tilephases)
        cgutils.for_range_slice(builder, geo.ltid, ir.Constant(_I32, size), geo.nthreads) as (
            j,
            _,
        ),
    ):
        builder.store(ir.Constant(lty, None), builder.gep(data, [j], inbounds=True))
    barrier = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), ()), "llvm.nvvm.barrier0"
    )
    builder.call(barrier, ())


_SHARED_ACCUMULATOR = intrinsic(_shared_accumulator_typer)


def builtins() -> dict[str, Any]:
    """``__ss_view_acc`` and ``__ss_shared_accumulator``."""
    return {"__ss_view_acc": _view_acc, "__ss_shared_accumulator": _SHARED_ACCUMULATOR}
