"""Numba types and lowering of append buffers: ownership of a slot won by an atomic.

``w = buf.claim()`` adds one to the buffer's counter with an atomic fetch-add
and gives the calling thread a witness of the slot it won. Two claims of one
launch never get the same slot: the fetch-add returns each counter value
once (the counter is 64 bits wide, so it does not wrap within a launch).

* ``CounterType(arr)`` -- a ``Counter`` parameter: a one-member struct around
  the 1D ``uint64`` array. Kernel code can do nothing with it (every use is a
  typing error starting ``simtsafe:``); only ``claim()`` adds to it.
* ``AppendBufferType(arr, counter, param)`` -- an ``AppendBuffer`` parameter:
  the items array and its counter array, paired by the contract and bound
  in the kernel's prologue (``__ss_view_Append(out, count, "out")``), so a
  buffer always claims through the one counter the host reads.
* ``AppendedType(param)`` -- the witness of a claimed slot: a rank-1
  ``ThreadIndexType`` of space ``Appended[<param>]``. It writes and reads the
  buffer of that parameter only (the parameter's name is part of both
  types), reads inputs (bounds-checked) like any 1D witness, has no
  arithmetic, and no helper returns it (``_no_witness``).

The claim is warp-aggregated: the lanes that call it together
(``activemask``) elect the lowest one, which performs a single
``atom.global.add.u64`` of their count; a ``shfl.sync.idx`` broadcasts the
old value, and each lane takes ``old + (its rank among them)``. Lanes that
call it at another time (divergent code) form their own group: the masks of
one call partition the warp, every lane of a mask executes the shuffle with
that same mask, and the ranks within a group are distinct -- so slots stay
unique, in any control flow (no barrier; the compiled-form check knows the
call as a ``"coalesced"`` site, which needs no uniformity).

A slot at or past the buffer's end is dropped: the witness is the invalid
sentinel (writes through it do nothing), and the counter still counts it,
so ``counter - capacity`` items were dropped (``simtsafe.appended`` reads
it after the launch).
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
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

from .._spaces import other_buffer_advice
from ._bf16 import is_bf16, stored_element
from ._blockgeo import BlockGeometry
from ._coop import _barrier, _c32, _Exchange, _fold, _load_value, _Op, _slot, _store_value
from ._cuda import (
    SENTINEL,
    ThreadIndexType,
    _load,
    _make_witness,
    _read_type,
    _store,
    _ThreadIndexModel,
    _widened,
    _witness_indices,
    store_refusal,
)
from ._provenance import site

__all__ = ["AppendBufferType", "AppendedType", "CounterType", "builtins"]

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)

_WHAT_BUFFER_OFFERS = (
    "an AppendBuffer offers w = buf.claim(), buf[w] = v and buf[w] with that witness, "
    "and buf.size, buf.shape, len(buf)"
)
_WHAT_COUNTER_OFFERS = (
    "a Counter is not used by kernel code: its append buffer's claim() or its hash table's "
    "failed inserts add to it, and the host reads it after the launch (simtsafe.appended, "
    "simtsafe.inserted)"
)


def _reject(message: str) -> errors.TypingError:
    return errors.TypingError("simtsafe: " + message)


# --------------------------------------------------------------------------- types


class CounterType(types.Type):
    """Numba type of a ``Counter`` parameter: its ``uint64`` array, reached only by claims."""

    def __init__(self, arr_type: types.Array) -> None:
        self.arr_type = arr_type
        super().__init__(name=f"Counter[{arr_type}]")


class AppendBufferType(types.Type):
    """Numba type of an ``AppendBuffer`` parameter: items, counter, and the parameter's name."""

    #: ``w.in_bounds(buf)`` takes it (lowering._cuda): its witnesses are of ``space``.
    written_by_witness = True

    def __init__(self, arr_type: types.Array, counter_type: types.Array, param: str) -> None:
        self.arr_type = arr_type
        self.counter_type = counter_type
        self.param = param
        self.space = f"Appended[{param}]"
        self.dtype = arr_type.dtype
        self.ndim = 1
        super().__init__(name=f"AppendBuffer[{arr_type}, {counter_type}, {param}]")


class AppendedType(ThreadIndexType):
    """The witness of a slot won by ``claim()`` on the buffer parameter ``param``."""

    def __init__(self, param: str) -> None:
        # Not ThreadIndexType.__init__: the space is per buffer, its rank is 1.
        self.space = f"Appended[{param}]"
        self.rank = 1
        self.param = param
        types.Type.__init__(self, name=f"ThreadIndex[{self.space}]")


@register_model(CounterType)
class _CounterModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: CounterType) -> None:
        super().__init__(dmm, fe_type, [("arr", fe_type.arr_type)])


@register_model(AppendBufferType)
class _AppendBufferModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: AppendBufferType) -> None:
        super().__init__(
            dmm, fe_type, [("arr", fe_type.arr_type), ("counter", fe_type.counter_type)]
        )


register_model(AppendedType)(_ThreadIndexModel)


# --------------------------------------------------------------------------- typing


def _check_witness(target: AppendBufferType, idx: Any, verb: str) -> None:
    if not isinstance(idx, ThreadIndexType):
        raise _reject(
            f"an AppendBuffer is {verb} only at a slot this thread claimed: w = "
            f"{target.param}.claim(), then {target.param}[w]; got an index of type {idx}"
        )
    if idx.space != target.space:
        raise _reject(
            f"a {idx} witness cannot {'write' if verb == 'written' else 'read'} the AppendBuffer "
            f"{target.param!r}: only a slot won by {target.param}.claim() is this thread's "
            f"there (its counter gave it out once). "
            + other_buffer_advice(str(idx.space), target.param)
        )


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx, val = args
        if isinstance(target, CounterType):
            raise _reject(f"a Counter is not written by kernel code; {_WHAT_COUNTER_OFFERS}")
        if not isinstance(target, AppendBufferType):
            return None
        _check_witness(target, idx, "written")
        if is_bf16(target.dtype):
            if not isinstance(val, (types.Integer, types.Float, types.Boolean)) and not is_bf16(
                val
            ):
                raise _reject(
                    f"cannot store a value of type {val} into an AppendBuffer of bfloat16 "
                    "(a bf16 output takes an int, float or bool, rounded to nearest even)"
                )
            return signature(types.none, target, idx, val)
        if self.context.can_convert(val, target.dtype) is None:
            raise _reject(
                store_refusal(
                    val,
                    "an AppendBuffer",
                    target.dtype,
                    "buf",
                    "docs/atomics.md, 'Several values per item'",
                )
            )
        return signature(types.none, target, idx, val)


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if isinstance(target, CounterType):
            raise _reject(
                f"a Counter is not read during the launch (other threads are adding to it); "
                f"{_WHAT_COUNTER_OFFERS}"
            )
        if not isinstance(target, AppendBufferType):
            return None
        _check_witness(target, idx, "read")
        return signature(_read_type(target.dtype), target, idx)


@infer_global(len)
class _Len(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if len(args) == 1 and isinstance(args[0], AppendBufferType):
            return signature(types.intp, args[0])
        if len(args) == 1 and isinstance(args[0], CounterType):
            raise _reject(_WHAT_COUNTER_OFFERS)
        return None


@infer_getattr
class _AppendBufferAttrs(AttributeTemplate):
    key = AppendBufferType

    @bound_function("AppendBuffer.claim")
    def resolve_claim(self, buf: AppendBufferType, args: tuple[Any, ...], kws: Any) -> Any:
        if args or kws:
            raise _reject(f"{buf.param}.claim() takes no arguments (it claims one slot)")
        return signature(AppendedType(buf.param))

    @bound_function("AppendBuffer.block_claim")
    def resolve_block_claim(self, buf: AppendBufferType, args: tuple[Any, ...], kws: Any) -> Any:
        if kws or len(args) != 1 or not isinstance(types.unliteral(args[0]), types.Boolean):
            got = ", ".join([str(a) for a in args] + [f"{k}={v}" for k, v in dict(kws).items()])
            raise _reject(
                f"{buf.param}.block_claim(keep) takes one bool, whether this thread appends an "
                f"item (e.g. v > t); got ({got}). Every thread of the block calls it"
            )
        return signature(AppendedType(buf.param), types.boolean)

    def resolve_size(self, buf: AppendBufferType) -> Any:
        return types.intp

    def resolve_ndim(self, buf: AppendBufferType) -> Any:
        return types.intp

    def resolve_shape(self, buf: AppendBufferType) -> Any:
        return types.UniTuple(types.intp, 1)

    def generic_resolve(self, buf: AppendBufferType, attr: str) -> Any:
        raise _reject(f"{buf} has no .{attr}: {_WHAT_BUFFER_OFFERS}")


@infer_getattr
class _CounterAttrs(AttributeTemplate):
    key = CounterType

    def generic_resolve(self, counter: CounterType, attr: str) -> Any:
        raise _reject(f"a Counter has no .{attr}: {_WHAT_COUNTER_OFFERS}")


# --------------------------------------------------------------------------- lowering


def _parts(context: Any, builder: ir.IRBuilder, ty: AppendBufferType, val: Any) -> tuple[Any, Any]:
    view = cgutils.create_struct_proxy(ty)(context, builder, value=val)
    return view.arr, view.counter


@lower_builtin(operator.setitem, AppendBufferType, ThreadIndexType, types.Any)
def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    bty, wty, vty = sig.args
    val = stored_element(context, builder, bty.dtype, vty, args[2])
    arr, _ = _parts(context, builder, bty, args[0])
    _store(
        context, builder, bty.arr_type, arr, _witness_indices(context, builder, wty, args[1]), val
    )
    return context.get_dummy_value()


@lower_builtin(operator.getitem, AppendBufferType, ThreadIndexType)
def _lower_getitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    bty, wty = sig.args
    arr, _ = _parts(context, builder, bty, args[0])
    idx = _witness_indices(context, builder, wty, args[1])
    return _widened(builder, bty.dtype, _load(context, builder, bty.arr_type, arr, idx))


def _capacity(context: Any, builder: ir.IRBuilder, ty: AppendBufferType, val: Any) -> ir.Value:
    arr, _ = _parts(context, builder, ty, val)
    return cgutils.unpack_tuple(builder, make_array(ty.arr_type)(context, builder, arr).shape, 1)[0]


@lower_builtin(len, AppendBufferType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    return _capacity(context, builder, sig.args[0], args[0])


@lower_getattr(AppendBufferType, "size")
def _lower_size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return _capacity(context, builder, ty, val)


@lower_getattr(AppendBufferType, "ndim")
def _lower_ndim(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return context.get_constant(types.intp, 1)


@lower_getattr(AppendBufferType, "shape")
def _lower_shape(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.pack_array(builder, [_capacity(context, builder, ty, val)])


def _asm_u32(builder: ir.IRBuilder, text: str) -> ir.Value:
    """A 32-bit value read by inline PTX that must stay where it is (``convergent``).

    ``activemask`` answers "which lanes execute this call with me": hoisting it
    above a branch (or merging the copies of two branches) would name lanes that
    never reach the shuffle below. ``sideeffect`` and ``convergent`` keep it in place.
    """
    asm = ir.InlineAsm(ir.FunctionType(_I32, []), text, "=r", side_effect=True)
    return builder.call(asm, [], attrs=("convergent",))


def _shfl_idx(builder: ir.IRBuilder, mask: ir.Value, value: ir.Value, src: ir.Value) -> ir.Value:
    """``shfl.sync.idx.b32``: lane ``src``'s ``value`` to every lane of ``mask``."""
    fnty = ir.FunctionType(ir.LiteralStructType((_I32, _I1)), (_I32,) * 5)
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
    call = builder.call(fn, (mask, ir.Constant(_I32, 0), value, src, ir.Constant(_I32, 0x1F)))
    return builder.extract_value(call, 0)


def _aggregated_fetch_add(builder: ir.IRBuilder, counter: ir.Value) -> ir.Value:
    """``atomicAdd(counter, 1)`` for each calling lane, one atomic per group of lanes.

    Returns this lane's old value (i64): the group's old value plus the lane's
    rank among the group's lanes.

    Invariant: every lane of a group holds the same ``counter`` -- the group is
    one call site of one ``AppendBufferType``, and that type names one kernel
    parameter, whose view the prologue builds once -- so the leader's atomic
    counts for all of them.
    """
    mask = _asm_u32(builder, "activemask.b32 $0;")
    below = _asm_u32(builder, "mov.u32 $0, %lanemask_lt;")
    rank = builder.ctpop(builder.and_(mask, below))
    leader = builder.cttz(mask, ir.Constant(_I1, 1))
    base = cgutils.alloca_once_value(builder, ir.Constant(_I64, 0))
    with builder.if_then(builder.icmp_unsigned("==", rank, ir.Constant(_I32, 0))):
        n = builder.zext(builder.ctpop(mask), _I64)
        got = builder.atomic_rmw("add", counter, n, "monotonic")
        builder.store(got, base)
        _mark_past_top(builder, counter, got)
    old = builder.load(base)
    lo = _shfl_idx(builder, mask, builder.trunc(old, _I32), leader)
    hi = _shfl_idx(
        builder, mask, builder.trunc(builder.lshr(old, ir.Constant(_I64, 32)), _I32), leader
    )
    group = builder.or_(
        builder.shl(builder.zext(hi, _I64), ir.Constant(_I64, 32)), builder.zext(lo, _I64)
    )
    return builder.add(group, builder.zext(rank, _I64))


@lower_builtin("AppendBuffer.claim", AppendBufferType)
def _lower_claim(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    (bty,) = sig.args
    arr, counter = _parts(context, builder, bty, args[0])
    items = make_array(bty.arr_type)(context, builder, arr)
    capacity = cgutils.unpack_tuple(builder, items.shape, 1)[0]
    ctr = make_array(bty.counter_type)(context, builder, counter)
    has_counter = builder.icmp_unsigned(
        ">", cgutils.unpack_tuple(builder, ctr.shape, 1)[0], ir.Constant(_I64, 0)
    )
    slot = cgutils.alloca_once_value(builder, ir.Constant(_I64, SENTINEL))
    # The host checks counter.size == 1 at every launch; the test keeps an unchecked
    # launch with an empty counter from touching memory (it claims nothing then).
    with builder.if_then(has_counter, likely=True):
        with site("AppendBuffer.claim", "coalesced"):
            got = _aggregated_fetch_add(builder, ctr.data)
        inside = builder.icmp_unsigned("<", got, capacity)
        builder.store(builder.select(inside, got, ir.Constant(_I64, SENTINEL)), slot)
    return _make_witness(context, builder, sig.return_type, [builder.load(slot)])


def _ballot(builder: ir.IRBuilder, mask: ir.Value, keep: ir.Value) -> ir.Value:
    """``vote.sync.ballot.b32``: the lanes of ``mask`` whose ``keep`` is true."""
    fnty = ir.FunctionType(_I32, (_I32, _I1))
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.nvvm.vote.ballot.sync")
    return builder.call(fn, (mask, keep))


def _mark_past_top(builder: ir.IRBuilder, counter: ir.Value, got: ir.Value) -> None:
    """A counter found at or past 2**63 (only a start value gets it there: a launch cannot
    claim 2**63 times) may wrap: mark it with its top bit, which stays set through any
    wrap, so the host refuses to read it as a count (host._appended)."""
    top = ir.Constant(_I64, 1 << 63)
    with builder.if_then(builder.icmp_unsigned(">=", got, top), likely=False):
        builder.atomic_rmw("or", counter, top, "monotonic")


def _block_aggregated_fetch_add(
    context: Any, builder: ir.IRBuilder, counter: ir.Value, has_counter: ir.Value, keep: ir.Value
) -> ir.Value:
    """``atomicAdd(counter, 1)`` for each thread of the block whose ``keep`` is true, as one
    atomic of the block's total; this thread's old value (i64; meaningful where ``keep``).

    Every warp counts its keepers (``ballot``, ``popc``) and its lane 0 stores the count
    in the site's shared exchange; a barrier; thread 0 adds the counts (the block's total)
    and performs the one ``atom.global.add.u64`` (none when the total is 0), storing the
    old value in the exchange; a barrier; every thread reads it and adds its rank: the
    counts of the warps before its own plus its keeping lanes below it.

    Invariant: every thread of the block reaches the call the same number of times (the
    compiled-form check proves it: the site's scope is ``"block"``), so the ballots, the
    barriers and the exchange's parity line up. Ranks of the keepers are 0 .. total-1,
    each once (an exclusive scan of 0/1 flags in linear thread order), so the block's
    slots are ``old .. old + total - 1``, one per keeper; the fetch-add makes the ranges
    of two executions (of any call, any block) disjoint.
    """
    geo = BlockGeometry(builder)
    u64 = types.uint64
    ex = _Exchange(builder, context, u64, 33, geo)  # 32 warp counts, then the block's base
    votes = _ballot(builder, geo.mask, keep)
    below = builder.sub(builder.shl(_c32(1), geo.lane), _c32(1))
    rank = builder.zext(builder.ctpop(builder.and_(votes, below)), _I64)
    with builder.if_then(builder.icmp_unsigned("==", geo.lane, _c32(0))):
        n = builder.zext(builder.ctpop(votes), _I64)
        _store_value(context, builder, u64, n, _slot(builder, ex.buf, geo.warp))
    _barrier(builder)
    prefix = cgutils.alloca_once_value(builder, ir.Constant(_I64, 0))
    with builder.if_then(builder.icmp_unsigned(">", geo.warp, _c32(0))):
        builder.store(_fold(context, builder, _Op("add"), u64, ex.buf, geo.warp), prefix)
    with builder.if_then(builder.icmp_unsigned("==", geo.ltid, _c32(0))):
        total = _fold(context, builder, _Op("add"), u64, ex.buf, geo.nwarps)
        base = cgutils.alloca_once_value(builder, ir.Constant(_I64, 0))
        some = builder.icmp_unsigned(">", total, ir.Constant(_I64, 0))
        with builder.if_then(builder.and_(some, has_counter)):
            got = builder.atomic_rmw("add", counter, total, "monotonic")
            builder.store(got, base)
            _mark_past_top(builder, counter, got)
        _store_value(context, builder, u64, builder.load(base), _slot(builder, ex.buf, _c32(32)))
    _barrier(builder)
    old = _load_value(context, builder, u64, _slot(builder, ex.buf, _c32(32)))
    ex.done(builder)
    return builder.add(old, builder.add(builder.load(prefix), rank))


@lower_builtin("AppendBuffer.block_claim", AppendBufferType, types.Boolean)
def _lower_block_claim(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    bty, _ = sig.args
    arr, counter = _parts(context, builder, bty, args[0])
    items = make_array(bty.arr_type)(context, builder, arr)
    capacity = cgutils.unpack_tuple(builder, items.shape, 1)[0]
    ctr = make_array(bty.counter_type)(context, builder, counter)
    has_counter = builder.icmp_unsigned(
        ">", cgutils.unpack_tuple(builder, ctr.shape, 1)[0], ir.Constant(_I64, 0)
    )
    keep = context.cast(builder, args[1], sig.args[1], types.boolean)
    # A block collective: every thread of the block must reach it (the compiled-form
    # check refuses it under thread-dependent control flow, as block.scan).
    with site("AppendBuffer.block_claim", "block"):
        got = _block_aggregated_fetch_add(context, builder, ctr.data, has_counter, keep)
    # A thread that keeps nothing, a slot past the end, or no counter (an unchecked launch
    # with an empty one: nothing was added): the invalid witness, which writes nothing.
    inside = builder.and_(
        builder.and_(keep, has_counter), builder.icmp_unsigned("<", got, capacity)
    )
    slot = builder.select(inside, got, ir.Constant(_I64, SENTINEL))
    return _make_witness(context, builder, sig.return_type, [slot])


# --------------------------------------------------------------------------- intrinsics


def _counter_array(c: Any) -> Any:
    return c.arr_type if isinstance(c, CounterType) else c


@intrinsic
def _view_append(typingctx: Any, arr: Any, counter: Any, param: Any) -> Any:
    """An ``AppendBuffer`` parameter's prologue: the items, its counter, its name."""
    name = getattr(param, "literal_value", None)
    if not isinstance(name, str):
        return None
    carr = _counter_array(counter)
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        raise _reject(f"an AppendBuffer parameter is a 1D device array; got {arr}")
    if not isinstance(carr, types.Array) or carr.ndim != 1 or carr.dtype != types.uint64:
        raise _reject(f"a Counter parameter is a 1D uint64 device array; got {carr}")
    rt = AppendBufferType(arr, carr, name)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        view = cgutils.create_struct_proxy(rt)(context, builder)
        view.arr = args[0]
        if isinstance(counter, CounterType):
            view.counter = cgutils.create_struct_proxy(counter)(context, builder, value=args[1]).arr
        else:
            view.counter = args[1]
        return view._getvalue()

    return rt(arr, counter, param), codegen


@intrinsic
def _view_counter(typingctx: Any, arr: Any) -> Any:
    """A ``Counter`` parameter's prologue: the array, closed to kernel code."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.dtype != types.uint64:
        raise _reject(f"a Counter parameter is a 1D uint64 device array; got {arr}")
    rt = CounterType(arr)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        view = cgutils.create_struct_proxy(rt)(context, builder)
        view.arr = args[0]
        return view._getvalue()

    return rt(arr), codegen


def builtins() -> dict[str, Any]:
    """``__ss_view_Append`` and ``__ss_view_Counter``."""
    return {"__ss_view_Append": _view_append, "__ss_view_Counter": _view_counter}
