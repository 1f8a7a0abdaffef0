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
  ``shared.accumulator((R, C), dtype)`` is the 2D form (row-major, ``n = R *
  C``), indexed ``acc.add((i, j), v)`` and ``acc[i, j]``: each axis checked
  (``i < R``, ``j < C``, unsigned). Its element address is formed as the
  column's address plus the row's byte offset, the offset's product written as
  one ``mul.wide.u32`` that LLVM cannot fold into the index's own arithmetic: a
  per-lane copy of the bins (``acc.add((b, lane), 1)``) then costs one multiply-add
  from a per-lane base instead of LLVM's shift-mask-or of a flat ``b * C + lane``.

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
from numba.cuda.extending import (
    _intrinsic,
    intrinsic,
    lower_builtin,
    lower_getattr,
    models,
    register_model,
)
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
from ._cooprule import FLAT_HINT, STATIC_SHAPE, accumulator_too_big
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
    """Numba type of a block's shared accumulator of ``n`` elements of ``dtype`` (1D), or of
    ``shape = (R, C)`` (2D, row-major: ``n = R * C``)."""

    def __init__(self, dtype: Any, n: int, shape: tuple[int, ...] | None = None) -> None:
        self.dtype = dtype
        self.n = n
        self.shape = shape or (n,)
        extents = " x ".join(map(str, self.shape))
        super().__init__(name=f"SharedAccumulator[{dtype} x {extents}]")

    @property
    def ndim(self) -> int:
        return len(self.shape)


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


def _int_pair(idx: Any) -> bool:
    return (
        isinstance(idx, types.BaseTuple)
        and len(idx) == 2
        and all(isinstance(t, types.Integer) for t in idx)
    )


# --------------------------------------------------------------------------- typing


class _AccumulatorMethods(AttributeTemplate):
    """``add``/``min``/``max``, ``size``/``shape``; any other attribute is refused."""

    offers = _WHAT_ACC_OFFERS

    def _update(self, acc: Any, args: tuple[Any, ...], kws: Any, name: str) -> Any:
        two_d = getattr(acc, "ndim", 1) == 2
        form = f"acc.{name}((i, j), v)" if two_d else f"acc.{name}(i, v)"
        if kws or len(args) != 2:
            raise _reject(f"{form} takes an index and a value")
        idx, val = args
        if two_d:
            if not _int_pair(idx):
                raise _reject(
                    f"{form}: a 2D accumulator {acc.shape} is updated at a pair of ints "
                    f"(i, j); got {idx}"
                )
        elif not isinstance(idx, types.Integer):
            raise _reject(f"{form}: the index must be an int; got {idx}{FLAT_HINT}")
        if self.context.can_convert(val, acc.dtype) is None:
            raise _reject(f"{form}: cannot convert a {val} to the element type {acc.dtype}")
        index = types.UniTuple(types.intp, 2) if two_d else types.intp
        return signature(types.none, index, acc.dtype)

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
        return types.UniTuple(types.intp, getattr(acc, "ndim", 1))

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
            if target.ndim == 2:
                if _int_pair(idx):
                    return signature(target.dtype, target, idx)
                raise _reject(
                    f"a 2D shared accumulator {target.shape} is read at a pair of ints acc[i, j]; "
                    f"got {idx}"
                )
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


def _pair(context: Any, builder: ir.IRBuilder, idx_ty: Any, idx: Any) -> tuple[Any, Any]:
    """The two ints of a 2D index, as intp."""
    items = cgutils.unpack_tuple(builder, idx, 2)
    return (
        context.cast(builder, items[0], idx_ty[0], types.intp),
        context.cast(builder, items[1], idx_ty[1], types.intp),
    )


def _pair_in_range(builder: ir.IRBuilder, ty: SharedAccumulatorType, i: Any, j: Any) -> Any:
    rows, cols = ty.shape
    return builder.and_(
        builder.icmp_unsigned("<", i, ir.Constant(i.type, rows)),
        builder.icmp_unsigned("<", j, ir.Constant(j.type, cols)),
    )


def _pair_pointer(
    context: Any, builder: ir.IRBuilder, ty: SharedAccumulatorType, val: Any, i: Any, j: Any
) -> Any:
    """Pointer to element ``(i, j)`` of a 2D shared accumulator (the caller has checked ``i <
    R`` and ``j < C``): column ``j``'s address in row 0, plus ``i`` times the row's bytes.

    The product is one ``mul.wide.u32`` in inline assembly (``i < R`` fits 32 bits): opaque
    to LLVM, which would otherwise fold the multiply into the index's own shifts and masks
    and merge the two parts, so that a per-lane base (``j`` the lane, loop-invariant) could
    not be kept: ``(b, lane)`` then costs one multiply-add a byte. The asm has no side
    effect and names no memory: the address stays a getelementptr of the accumulator's
    pointer, so the compiled-form checks follow it as before."""
    data = cgutils.create_struct_proxy(ty)(context, builder, value=val).data
    column = builder.gep(data, [j], inbounds=True)
    row_bytes = ty.shape[1] * context.get_abi_sizeof(context.get_data_type(ty.dtype))
    multiply = ir.InlineAsm(
        ir.FunctionType(_I64, [_I32]), f"mul.wide.u32 $0, $1, {row_bytes};", "=l,r"
    )
    offset = builder.call(multiply, [builder.trunc(i, _I32)])
    byte = ir.IntType(8).as_pointer()
    moved = builder.gep(builder.bitcast(column, byte), [offset], inbounds=True)
    return builder.bitcast(moved, column.type)


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

    @lower_builtin(f"Accumulator.{name}", SharedAccumulatorType, types.BaseTuple, types.Any)
    def lower_pair(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        ty, ity, vty = sig.args
        acc, idx, v = args
        i, j = _pair(context, builder, ity, idx)
        v = context.cast(builder, v, vty, ty.dtype)
        with builder.if_then(_pair_in_range(builder, ty, i, j), likely=True):
            _atomic(builder, name, ty.dtype, _pair_pointer(context, builder, ty, acc, i, j), v)
        return context.get_dummy_value()


for _name in ("add", "min", "max"):
    _lower_update(_name)


@lower_builtin(operator.getitem, SharedAccumulatorType, types.Any)
def _lower_shared_read(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty, idx_ty = sig.args
    acc, idx = args
    out = cgutils.alloca_once_value(builder, context.get_constant_null(ty.dtype))
    if isinstance(idx_ty, types.BaseTuple):  # (i, j) of a 2D accumulator
        i, j = _pair(context, builder, idx_ty, idx)
        with builder.if_then(_pair_in_range(builder, ty, i, j), likely=True):
            builder.store(builder.load(_pair_pointer(context, builder, ty, acc, i, j)), out)
        return builder.load(out)
    if isinstance(idx_ty, types.Integer):
        i = context.cast(builder, idx, idx_ty, types.intp)
    else:  # a Local1D witness: its one member is the linear thread index
        i = builder.extract_value(idx, 0)
    with builder.if_then(_in_range(context, builder, ty, acc, i), likely=True):
        ptr = _element_pointer(context, builder, ty, acc, i)
        builder.store(builder.load(ptr), out)
    return builder.load(out)


@lower_builtin(len, AccumulateType)
@lower_builtin(len, SharedAccumulatorType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty = sig.args[0]
    if isinstance(ty, SharedAccumulatorType):  # the first extent, as numpy's len
        return context.get_constant(types.intp, ty.shape[0])
    return _size(context, builder, ty, args[0])


def _lower_size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return _size(context, builder, ty, val)


def _lower_shape(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    if isinstance(ty, SharedAccumulatorType):
        return cgutils.pack_array(builder, [context.get_constant(types.intp, n) for n in ty.shape])
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


def _accumulator_shape(n: Any) -> tuple[int, ...]:
    """``(n,)`` or ``(R, C)`` from the literal ``n`` or pair, else a refusal. The typer prefers
    literal types, so a non-literal int here has no literal to retry with."""
    from ._tilebase import static_shape  # _tilebase imports _cuda, which imports this module

    if isinstance(n, types.BaseTuple):
        shape = static_shape(n)
        if shape is None or len(shape) != 2 or min(shape) < 1:
            raise _reject(
                f"shared.accumulator(shape, dtype): a 2D accumulator's shape is a pair of "
                f"positive ints {STATIC_SHAPE}, such as (256, 32); got {n}"
            )
        return shape
    size = getattr(n, "literal_value", None)
    if not isinstance(size, int) or isinstance(size, bool):
        if isinstance(n, types.Integer):
            raise _reject(f"shared.accumulator(n, dtype): n must be an int {STATIC_SHAPE}; got {n}")
        raise _reject(f"shared.accumulator(n, dtype): n must be an int; got {n}")
    if size < 1:
        raise _reject(f"shared.accumulator(n, dtype): n must be at least 1; got {size}")
    return (size,)


def _shared_accumulator_typer(typingctx: Any, n: Any, dtype: Any) -> Any:
    shape = _accumulator_shape(n)
    size = shape[0] * (shape[1] if len(shape) == 2 else 1)
    elem = _dtype_of(dtype)
    if elem is None:
        raise _reject(
            f"shared.accumulator(n, dtype): dtype must be a numpy scalar type such as "
            f"np.uint32; got {dtype}"
        )
    _check_element_type(elem, "shared.accumulator(n, dtype)")
    too_big = accumulator_too_big(shape, elem, elem.bitwidth // 8)
    if too_big is not None:
        raise _reject(too_big)
    rt = SharedAccumulatorType(elem, size, shape)

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


_SHARED_ACCUMULATOR = _intrinsic(target="cuda", prefer_literal=True)(_shared_accumulator_typer)


def builtins() -> dict[str, Any]:
    """``__ss_view_acc`` and ``__ss_shared_accumulator``."""
    return {"__ss_view_acc": _view_acc, "__ss_shared_accumulator": _SHARED_ACCUMULATOR}
