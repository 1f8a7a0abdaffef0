"""Numba lowering of Tier-1 collectives: ``simtsafe.block.*`` and ``simtsafe.warp.*``.

The kernel decorator rewrites ``simtsafe.block.sum(v)`` to ``__ss_block_sum(v)``
and so on; ``builtins()`` maps those names to the intrinsics below, which emit
the whole collective as LLVM IR (no call, no local memory):

* **warp** ``sum/max/min/reduce``: a full warp (32 lanes present) with a
  builtin operator runs a 5-step xor butterfly (``shfl.sync.bfly``), leaving
  the result in every lane; a partial warp, or a user operator, runs a
  5-step ``shfl.sync.down`` tree whose steps skip absent lanes, then one
  ``shfl.sync.idx`` broadcasts lane 0's result. ``scan``: 5 ``shfl.sync.up``
  steps (Hillis-Steele); exclusive is the inclusive result shifted up one
  lane. ``broadcast``: one ``shfl.sync.idx`` from lane 0.
* **block** ``sum/max/min/reduce``: the down tree per warp, lane 0 of each
  warp stores its total in a 32-entry shared buffer, one barrier, every
  thread folds the warp totals in warp order (the same operations in the
  same order in every thread, so the result is bitwise identical across the
  block); the buffer is then made reusable for the next execution of the
  call (``_Exchange``: alternating buffers in a kernel body with an exact
  block, else a trailing barrier). ``scan``: warp scans, the last lane of
  each warp stores the warp total, one barrier, each thread folds the totals
  of the warps before its own. ``broadcast``: thread 0 stores, barrier,
  everyone loads.

**Tuple states** (``reduce(state, op)`` with ``state`` a tuple of 1..8 numbers and ``op`` a
``@simtsafe.device`` function of two states): the same algorithms with the user-operator
path, every field moved as a scalar is (``_words``: a shuffle per 32-bit word of each field,
at each step; the block buffer holds one state per warp). The result's fields are declared
uniform one by one, each a scalar the compiled-form check follows as it follows a scalar
collective's result.

Masks: lanes present in the calling warp are ``min(32, T - 32 * warp)`` for
``T`` threads per block (threads numbered ``x + bdx * (y + bdy * z)``); every
shuffle names exactly those lanes and never reads an absent one.

Safety: every thread of the block (block collectives) or every present lane
of the warp (warp collectives) must reach the call, the same number of
times. The kernel decorator's uniformity analysis proves this before the
code is compiled; these intrinsics rely on it (a barrier reached by only
part of a block is undefined behaviour on the GPU).

Invariant: results of ``sum/max/min/reduce/broadcast`` are the same value
in every participating thread (block: one fold order for all; warp: the
butterfly only for commutative builtin operators, otherwise a broadcast).
"""

from __future__ import annotations

import operator
from itertools import count
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.core import errors
from numba.cuda.extending import _intrinsic, intrinsic
from numba.cuda.typing.templates import signature

from ._accumulate import builtins as accumulate_builtins
from ._blockgeo import BlockGeometry
from ._cooprule import (
    COLLECTIVE_SCALARS,
    MAX_STATE_FIELDS,
    OP_SPELLING,
    builtin_state_op,
    complex_refused,
    not_a_state,
    state_op_refused,
    tuple_refused,
)
from ._provenance import current_site, declare_uniform, grid_read, site, user_code

__all__ = ["builtins"]

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_FULL = 0xFFFFFFFF

#: Operators a collective may name, by the object the kernel passes.
_BUILTIN_OPS: dict[Any, str] = {
    operator.add: "add",
    operator.mul: "mul",
    operator.and_: "and",
    operator.or_: "or",
    operator.xor: "xor",
    max: "max",
    min: "min",
}

_SHFL_MODE = {"idx": 0, "up": 1, "down": 2, "bfly": 3}

_names = count()


def _reject(message: str) -> errors.TypingError:
    return errors.TypingError("simtsafe: " + message)


# --------------------------------------------------------------------------- types


def _value_type(api: str, v: Any) -> Any:
    """The element type a collective works in (literals widened), or a rejection."""
    ty = types.unliteral(v)
    if isinstance(ty, types.BaseTuple):
        raise _reject(tuple_refused(api, str(ty)))
    return _scalar_type(api, ty)


def _scalar_type(api: str, ty: Any, what: str = "v") -> Any:
    if isinstance(ty, types.Float) and ty.bitwidth == 16:
        raise _reject(
            f"{api}({what}) does not take float16 (Numba's float16 arithmetic is a function call "
            "per operation); convert with np.float32(v) and back"
        )
    if isinstance(ty, types.Integer | types.Float | types.Boolean):
        return ty
    if isinstance(ty, types.Complex):
        raise _reject(complex_refused(api, what, str(ty)))
    raise _reject(
        f"{api}({what}) takes a number (an int, float or bool scalar); got {ty}. "
        + COLLECTIVE_SCALARS
    )


def _state_type(api: str, v: Any) -> Any:
    """The type ``reduce`` works in: a number, or a tuple of 1..8 numbers (literals widened)."""
    ty = types.unliteral(v)
    if not isinstance(ty, types.BaseTuple):
        return _scalar_type(api, ty)
    if not isinstance(ty, types.UniTuple | types.Tuple) or isinstance(ty, types.NamedTuple):
        raise _reject(not_a_state(api, str(ty), "a named tuple is not a state; pass tuple(...)"))
    if not 1 <= len(ty) <= MAX_STATE_FIELDS:
        raise _reject(not_a_state(api, str(ty), f"it has {len(ty)} fields"))
    fields = []
    for k, field in enumerate(ty.types):
        fty = types.unliteral(field)
        if isinstance(fty, types.Float) and fty.bitwidth == 16:
            _scalar_type(api, fty, "state")  # the scalar forms' float16 refusal
        if not isinstance(fty, types.Integer | types.Float | types.Boolean):
            raise _reject(not_a_state(api, str(ty), f"field {k} is {fty}, not a number"))
        fields.append(fty)
    return types.BaseTuple.from_types(fields)


def _sum_type(ty: Any) -> Any:
    """Sums of booleans count (int64), as Python's sum does; other types keep their type."""
    return types.int64 if isinstance(ty, types.Boolean) else ty


class _Op:
    """The combining operator of a reduction: a builtin by name, or a typed user function."""

    def __init__(self, name: str, fnty: Any = None, sig: Any = None) -> None:
        self.name = name
        self.fnty = fnty
        self.sig = sig

    @property
    def commutative(self) -> bool:
        """Builtins are commutative bit for bit; a user function is not trusted to be."""
        return self.name != "user"


def _op_name(op: Any) -> str:
    """A user operator's name as the kernel's source spells it."""
    fn = getattr(getattr(op, "dispatcher", None), "py_func", None)
    return f"`{fn.__name__}`" if fn is not None else str(op)


def _resolve_op(api: str, typingctx: Any, op: Any, ty: Any) -> _Op:
    if isinstance(ty, types.BaseTuple):
        return _resolve_state_op(api, typingctx, op, ty)
    key = getattr(op, "typing_key", None)
    name = _BUILTIN_OPS.get(key) if isinstance(op, types.Function) else None
    if name is not None:
        if name in ("and", "or", "xor") and isinstance(ty, types.Float):
            raise _reject(f"{api}(v, operator.{name}_) needs integer or bool values; got {ty}")
        return _Op(name)
    if isinstance(op, types.Dispatcher):
        try:
            sig = typingctx.resolve_function_type(op, (ty, ty), {})
        except errors.TypingError:
            sig = None
        if sig is None or typingctx.can_convert(sig.return_type, ty) is None:
            raise _reject(
                f"the op of {api} must take two {ty} values and return a {ty}; "
                f"{op} does not ({sig})"
            )
        return _Op("user", op, sig)
    raise _reject(
        f"the op of {api} must be operator.add/mul/and_/or_/xor, max, min or a "
        f"@simtsafe.device function of two values; got {op}"
    )


def _resolve_state_op(api: str, typingctx: Any, op: Any, state: Any) -> _Op:
    """The op of a tuple state: a ``@simtsafe.device`` function of two states returning a
    tuple whose fields convert to the state's (a builtin operator would add tuples by
    concatenating them)."""
    if not isinstance(op, types.Dispatcher):
        key = getattr(op, "typing_key", None)
        name = _BUILTIN_OPS.get(key) if isinstance(op, types.Function) else None
        raise _reject(builtin_state_op(api, str(state), OP_SPELLING.get(name or "", str(op))))
    try:
        sig = typingctx.resolve_function_type(op, (state, state), {})
    except (errors.TypingError, errors.NumbaError) as exc:  # a list result: NumbaRuntimeError
        raise _reject(
            state_op_refused(api, str(state), _op_name(op), f"cannot take them ({exc})")
        ) from None
    if sig is None:
        raise _reject(state_op_refused(api, str(state), _op_name(op), "cannot take them"))
    ret = types.unliteral(sig.return_type)
    if not (
        isinstance(ret, types.BaseTuple)
        and len(ret) == len(state)
        and all(
            typingctx.can_convert(types.unliteral(got), want) is not None
            for got, want in zip(ret.types, state.types, strict=True)
        )
    ):
        raise _reject(state_op_refused(api, str(state), _op_name(op), f"returns {ret}"))
    return _Op("user", op, sig)


# --------------------------------------------------------------------------- codegen helpers


def _sreg(builder: ir.IRBuilder, name: str) -> ir.Value:
    return nvvmutils.call_sreg(builder, name)


def _c32(v: int) -> ir.Constant:
    return ir.Constant(_I32, v)


def _word_count(ty: Any) -> int:
    """How many i32 words a value of Numba type ``ty`` shuffles as."""
    if isinstance(ty, types.BaseTuple):
        return sum(_word_count(t) for t in ty.types)
    return 2 if not isinstance(ty, types.Boolean) and ty.bitwidth > 32 else 1


def _field_type(lty: ir.Type, k: int) -> ir.Type:
    """The LLVM type of field ``k`` of a tuple's value (a struct, or an array for UniTuple)."""
    return lty.elements[k] if isinstance(lty, ir.LiteralStructType) else lty.element


def _words(builder: ir.IRBuilder, ty: Any, value: ir.Value) -> list[ir.Value]:
    """``value`` as the i32 words a shuffle moves (one, or two for 64-bit types; a tuple
    state: its fields' words in field order)."""
    if isinstance(ty, types.BaseTuple):
        return [
            w
            for k, fty in enumerate(ty.types)
            for w in _words(builder, fty, builder.extract_value(value, k))
        ]
    if isinstance(ty, types.Boolean):
        return [builder.zext(value, _I32)]
    bits = ty.bitwidth
    raw = builder.bitcast(value, ir.IntType(bits)) if value.type != ir.IntType(bits) else value
    if bits < 32:
        extend = builder.sext if getattr(ty, "signed", False) else builder.zext
        return [extend(raw, _I32)]
    if bits == 32:
        return [raw]
    return [builder.trunc(raw, _I32), builder.trunc(builder.lshr(raw, ir.Constant(_I64, 32)), _I32)]


def _unwords(builder: ir.IRBuilder, ty: Any, lty: ir.Type, words: list[ir.Value]) -> ir.Value:
    """The inverse of ``_words``, back to the value's LLVM type ``lty``."""
    if isinstance(ty, types.BaseTuple):
        out = ir.Constant(lty, ir.Undefined)
        at = 0
        for k, fty in enumerate(ty.types):
            n = _word_count(fty)
            field = _unwords(builder, fty, _field_type(lty, k), words[at : at + n])
            out = builder.insert_value(out, field, k)
            at += n
        return out
    if isinstance(ty, types.Boolean):
        return builder.trunc(words[0], _I1)
    bits = ty.bitwidth
    if bits <= 32:
        raw = builder.trunc(words[0], ir.IntType(bits)) if bits < 32 else words[0]
    else:
        lo, hi = (builder.zext(w, _I64) for w in words)
        raw = builder.or_(builder.shl(hi, ir.Constant(_I64, 32)), lo)
    return builder.bitcast(raw, lty) if raw.type != lty else raw


def _shfl_with_flag(
    builder: ir.IRBuilder,
    mode: str,
    mask: ir.Value,
    ty: Any,
    value: ir.Value,
    b: ir.Value,
    clamp: ir.Value | None = None,
) -> tuple[ir.Value, ir.Value]:
    """``shfl.sync.<mode>`` of a value of Numba type ``ty`` among the lanes of ``mask``.

    Returns (value, in_range): ``in_range`` is the instruction's own predicate,
    true when the source lane is within ``clamp`` (down: ``lane + b <= clamp``);
    out of range, the lane keeps its own value and reads no other lane.
    """
    fnty = ir.FunctionType(ir.LiteralStructType((_I32, _I1)), (_I32,) * 5)
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.nvvm.shfl.sync.i32")
    if clamp is None:
        clamp = _c32(0 if mode == "up" else 0x1F)
    calls = [
        builder.call(fn, (mask, _c32(_SHFL_MODE[mode]), w, b, clamp))
        for w in _words(builder, ty, value)
    ]
    out = [builder.extract_value(c, 0) for c in calls]
    return _unwords(builder, ty, value.type, out), builder.extract_value(calls[0], 1)


def _shfl(
    builder: ir.IRBuilder, mode: str, mask: ir.Value, ty: Any, value: ir.Value, b: ir.Value
) -> ir.Value:
    """``shfl.sync.<mode>`` of ``value`` among the lanes of ``mask`` (value only)."""
    return _shfl_with_flag(builder, mode, mask, ty, value, b)[0]


def _float_minmax(builder: ir.IRBuilder, name: str, ty: Any, a: ir.Value, b: ir.Value) -> Any:
    """fmax/fmin: a NaN operand is ignored (the result is NaN only if both are)."""
    if ty.bitwidth in (32, 64):
        suffix = "f" if ty.bitwidth == 32 else "d"
        lty = ir.FloatType() if ty.bitwidth == 32 else ir.DoubleType()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(lty, (lty, lty)), f"llvm.nvvm.f{name}.{suffix}"
        )
        return builder.call(fn, (a, b))
    raise AssertionError(f"unsupported float width {ty.bitwidth}")  # refused while typing


def _combine(context: Any, builder: ir.IRBuilder, op: _Op, ty: Any, a: Any, b: Any) -> Any:
    """``op(a, b)`` for values of Numba type ``ty``."""
    name = op.name
    if name == "user":
        impl = context.get_function(op.fnty, op.sig)
        with user_code(current_site()):
            out = impl(builder, (a, b))
        return context.cast(builder, out, op.sig.return_type, ty)
    is_float = isinstance(ty, types.Float)
    if name == "add":
        return builder.fadd(a, b) if is_float else builder.add(a, b)
    if name == "mul":
        return builder.fmul(a, b) if is_float else builder.mul(a, b)
    if name in ("and", "or", "xor"):
        return {"and": builder.and_, "or": builder.or_, "xor": builder.xor}[name](a, b)
    if is_float:
        return _float_minmax(builder, name, ty, a, b)
    signed = getattr(ty, "signed", False)
    cmp = builder.icmp_signed if signed else builder.icmp_unsigned
    return builder.select(cmp(">" if name == "max" else "<", a, b), a, b)


class _Exchange:
    """The shared buffer of one block-collective call site, and what makes it reusable.

    The buffer is written, published by a barrier, then read by every thread;
    the next execution of the call (in a loop) must not overwrite it while a
    slow warp still reads. Two ways, both sound:

    * in a kernel body with an exact block (``.reqntid``; see ``_blockgeo``),
      two copies alternate, chosen by a parity that lives in a register of the
      kernel across loop iterations: the barrier of execution ``k + 1``
      separates the reads of execution ``k`` from the writes of execution
      ``k + 2`` into the same copy. One barrier per collective.
    * elsewhere (a contract-less kernel, a ``@simtsafe.device`` helper, whose
      parity would restart at every call): one copy and a trailing barrier
      after the reads. Two barriers per collective.

    Invariant: every thread of the block executes the call site the same
    number of times (the decorator's uniformity analysis), so the parity is
    the same in every thread.
    """

    def __init__(
        self, builder: ir.IRBuilder, context: Any, ty: Any, n: int, geo: BlockGeometry
    ) -> None:
        lty = context.get_data_type(ty)
        self.double = geo.static is not None
        aty = ir.ArrayType(ir.ArrayType(lty, n), 2 if self.double else 1)
        gv = cgutils.add_global_variable(
            builder.module, aty, f"__ss_coop_{next(_names)}", addrspace=3
        )
        gv.linkage = "internal"
        gv.initializer = ir.Constant(aty, ir.Undefined)  # shared memory cannot be initialized
        gv.align = 8
        self.parity: ir.Value = _c32(0)
        if self.double:
            with builder.goto_entry_block():
                self.parity_slot = builder.alloca(_I32)
                builder.store(_c32(0), self.parity_slot)
            self.parity = builder.load(self.parity_slot)
        self.buf = builder.gep(gv, [_c32(0), self.parity], inbounds=True)

    def done(self, builder: ir.IRBuilder) -> None:
        """Every thread has read what it needs: make the buffer reusable."""
        if self.double:
            builder.store(builder.xor(self.parity, _c32(1)), self.parity_slot)
        else:
            _barrier(builder)


def _slot(builder: ir.IRBuilder, buf: ir.Value, i: ir.Value) -> ir.Value:
    return builder.gep(buf, [_c32(0), i], inbounds=True)


def _barrier(builder: ir.IRBuilder) -> None:
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), ()), "llvm.nvvm.barrier0"
    )
    builder.call(fn, ())


def _store_value(context: Any, builder: ir.IRBuilder, ty: Any, value: Any, ptr: ir.Value) -> None:
    builder.store(context.get_value_as_data(builder, ty, value), ptr)


def _load_value(context: Any, builder: ir.IRBuilder, ty: Any, ptr: ir.Value) -> Any:
    return context.get_data_as_value(builder, ty, builder.load(ptr))


# --------------------------------------------------------------------------- warp algorithms


def _down_tree(
    context: Any, builder: ir.IRBuilder, geo: BlockGeometry, op: _Op, ty: Any, v: Any
) -> Any:
    """Reduce over the present lanes; the result is exact in lane 0 (others: partial).

    Step ``off`` combines lane ``l`` with lane ``l + off`` only when that lane
    is present, so absent lanes are never read and no identity is needed.
    Every caller uses lane 0's result only.
    """
    x = v
    last = builder.sub(geo.present, _c32(1))
    # Known-full warps (an exact block of whole warps): the lanes that feed lane 0 read
    # lanes l + off <= 31 only, so no step needs the check (the others keep their own
    # value where the source is out of range: a real value, never garbage).
    always_full = isinstance(geo.full, ir.Constant) and bool(geo.full.constant)
    for off in (16, 8, 4, 2, 1):
        # Clamped at the last present lane: the shuffle's own predicate says whether
        # lane + off is present (as CUB's warp reduction does), at no extra instruction.
        other, ok = _shfl_with_flag(builder, "down", geo.mask, ty, x, _c32(off), last)
        if always_full:
            x = _combine(context, builder, op, ty, x, other)
        elif op.name == "user":
            # A user function runs only on present lanes' values (never on garbage).
            slot = cgutils.alloca_once_value(builder, x)
            with builder.if_then(ok):
                builder.store(_combine(context, builder, op, ty, x, other), slot)
            x = builder.load(slot)
        else:
            x = builder.select(ok, _combine(context, builder, op, ty, x, other), x)
    return x


def _warp_reduce(
    context: Any, builder: ir.IRBuilder, geo: BlockGeometry, op: _Op, ty: Any, v: Any
) -> Any:
    """Reduce over the warp's present lanes, the result in every lane."""
    result = cgutils.alloca_once(builder, v.type)
    if op.commutative:
        with builder.if_else(geo.full, likely=True) as (full, partial):
            with full:
                x = v
                for off in (16, 8, 4, 2, 1):
                    other = _shfl(builder, "bfly", _c32(_FULL), ty, x, _c32(off))
                    x = _combine(context, builder, op, ty, x, other)
                builder.store(x, result)
            with partial:
                x = _down_tree(context, builder, geo, op, ty, v)
                builder.store(_shfl(builder, "idx", geo.mask, ty, x, _c32(0)), result)
        return builder.load(result)
    x = _down_tree(context, builder, geo, op, ty, v)
    return _shfl(builder, "idx", geo.mask, ty, x, _c32(0))


def _warp_scan(context: Any, builder: ir.IRBuilder, geo: BlockGeometry, ty: Any, v: Any) -> Any:
    """Inclusive prefix sum over the warp's lanes (lane ``l`` reads only lanes below it)."""
    x = v
    add = _Op("add")
    for off in (1, 2, 4, 8, 16):
        other = _shfl(builder, "up", geo.mask, ty, x, _c32(off))
        ok = builder.icmp_unsigned(">=", geo.lane, _c32(off))
        x = builder.select(ok, _combine(context, builder, add, ty, x, other), x)
    return x


def _shift_up(context: Any, builder: ir.IRBuilder, geo: BlockGeometry, ty: Any, x: Any) -> Any:
    """Lane ``l`` gets lane ``l - 1``'s ``x``; lane 0 gets zero."""
    prev = _shfl(builder, "up", geo.mask, ty, x, _c32(1))
    first = builder.icmp_unsigned("==", geo.lane, _c32(0))
    return builder.select(first, context.get_constant_null(ty), prev)


# --------------------------------------------------------------------------- block algorithms


def _fold(
    context: Any,
    builder: ir.IRBuilder,
    op: _Op,
    ty: Any,
    buf: ir.Value,
    n: ir.Value,
) -> Any:
    """``buf[0] op buf[1] op ... op buf[n - 1]`` left to right (n >= 1)."""
    acc = cgutils.alloca_once_value(
        builder, _load_value(context, builder, ty, _slot(builder, buf, _c32(0)))
    )
    with cgutils.for_range_slice(builder, _c32(1), n, _c32(1), inc=True) as (j, _):
        item = _load_value(context, builder, ty, _slot(builder, buf, j))
        builder.store(_combine(context, builder, op, ty, builder.load(acc), item), acc)
    return builder.load(acc)


def _block_reduce(context: Any, builder: ir.IRBuilder, op: _Op, ty: Any, v: Any) -> Any:
    geo = BlockGeometry(builder)
    ex = _Exchange(builder, context, ty, 32, geo)
    x = _down_tree(context, builder, geo, op, ty, v)
    with builder.if_then(builder.icmp_unsigned("==", geo.lane, _c32(0))):
        _store_value(context, builder, ty, x, _slot(builder, ex.buf, geo.warp))
    _barrier(builder)
    total = _fold(context, builder, op, ty, ex.buf, geo.nwarps)
    ex.done(builder)
    return total


def _block_scan(context: Any, builder: ir.IRBuilder, ty: Any, v: Any, inclusive: ir.Value) -> Any:
    geo = BlockGeometry(builder)
    ex = _Exchange(builder, context, ty, 32, geo)
    x = _warp_scan(context, builder, geo, ty, v)
    last = builder.icmp_unsigned("==", geo.lane, builder.sub(geo.present, _c32(1)))
    with builder.if_then(last):
        _store_value(context, builder, ty, x, _slot(builder, ex.buf, geo.warp))
    _barrier(builder)
    prefix = cgutils.alloca_once_value(builder, context.get_constant_null(ty))
    has_prefix = builder.icmp_unsigned(">", geo.warp, _c32(0))
    with builder.if_then(has_prefix):
        builder.store(_fold(context, builder, _Op("add"), ty, ex.buf, geo.warp), prefix)
    ex.done(builder)
    p = builder.load(prefix)
    add = _Op("add")
    # Warp 0 adds nothing; lane 0 of a later warp gets the prefix itself.
    incl_r = builder.select(has_prefix, _combine(context, builder, add, ty, p, x), x)
    if isinstance(inclusive, ir.Constant) and inclusive.constant:
        return incl_r
    excl = _shift_up(context, builder, geo, ty, x)
    first_lane = builder.icmp_unsigned("==", geo.lane, _c32(0))
    excl_r = builder.select(
        has_prefix,
        builder.select(first_lane, p, _combine(context, builder, add, ty, p, excl)),
        excl,
    )
    return builder.select(inclusive, incl_r, excl_r)


def _block_broadcast(context: Any, builder: ir.IRBuilder, ty: Any, v: Any) -> Any:
    geo = BlockGeometry(builder)
    ex = _Exchange(builder, context, ty, 1, geo)
    with builder.if_then(builder.icmp_unsigned("==", geo.ltid, _c32(0))):
        _store_value(context, builder, ty, v, _slot(builder, ex.buf, _c32(0)))
    _barrier(builder)
    out = _load_value(context, builder, ty, _slot(builder, ex.buf, _c32(0)))
    ex.done(builder)
    return out


# --------------------------------------------------------------------------- intrinsics


def _reduction(scope: str, name: str) -> Any:
    """``__ss_<scope>_<name>(v)`` for name in sum/max/min: a builtin-operator reduction."""
    api = f"{scope}.{name}"
    op = _Op("add" if name == "sum" else name)

    def typer(typingctx: Any, v: Any) -> Any:
        vty = _value_type(api, v)
        ty = _sum_type(vty) if name == "sum" else vty

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            with site(api, scope) as ident:
                x = context.cast(builder, args[0], sig.args[0], ty)
                if scope == "block":
                    r = _block_reduce(context, builder, op, ty, x)
                else:
                    r = _warp_reduce(context, builder, BlockGeometry(builder), op, ty, x)
                declare_uniform(builder, r, scope, ident)
                return r

        return ty(v), codegen

    typer.__name__ = f"__ss_{scope}_{name}"
    return intrinsic(typer)


def _declared_uniform(builder: ir.IRBuilder, ty: Any, r: Any, scope: str, ident: int) -> Any:
    """``r`` with its uniformity declared: a number as it is; a tuple field by field (each
    field a scalar the compiled-form check follows as it follows a scalar collective's
    result), repacked."""
    if not isinstance(ty, types.BaseTuple):
        declare_uniform(builder, r, scope, ident)
        return r
    out = ir.Constant(r.type, ir.Undefined)
    for k in range(len(ty)):
        field = builder.extract_value(r, k)
        declare_uniform(builder, field, scope, ident)
        out = builder.insert_value(out, field, k)
    return out


def _reduce_with(scope: str) -> Any:
    api = f"{scope}.reduce"

    def typer(typingctx: Any, v: Any, op: Any) -> Any:
        ty = _state_type(api, v)
        resolved = _resolve_op(api, typingctx, op, ty)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # A user operator runs inside the collective: the compiled-form check
            # trusts the declared result only if the operator's own form is uniform
            # for uniform arguments (simtsafe.verify, "site callees").
            with site(api, scope) as ident:
                x = context.cast(builder, args[0], sig.args[0], ty)
                if scope == "block":
                    r = _block_reduce(context, builder, resolved, ty, x)
                else:
                    r = _warp_reduce(context, builder, BlockGeometry(builder), resolved, ty, x)
                return _declared_uniform(builder, ty, r, scope, ident)

        return ty(v, op), codegen

    typer.__name__ = f"__ss_{scope}_reduce"
    return intrinsic(typer)


def _broadcast(scope: str) -> Any:
    api = f"{scope}.broadcast"

    def typer(typingctx: Any, v: Any) -> Any:
        ty = _value_type(api, v)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            with site(api, scope) as ident:
                x = context.cast(builder, args[0], sig.args[0], ty)
                if scope == "block":
                    r = _block_broadcast(context, builder, ty, x)
                else:
                    geo = BlockGeometry(builder)
                    r = _shfl(builder, "idx", geo.mask, ty, x, _c32(0))
                declare_uniform(builder, r, scope, ident)
                return r

        return ty(v), codegen

    typer.__name__ = f"__ss_{scope}_broadcast"
    return intrinsic(typer)


def _scan(scope: str) -> Any:
    """``__ss_<scope>_scan(v, inclusive=True)``.

    An intrinsic, not an overload, so that it is lowered into the kernel's own
    function (where ``_blockgeo`` sees the exact block). ``inclusive`` is
    preferably a literal (the kind is chosen while compiling: shuffles are
    never removed as dead code, so only the asked-for kind is emitted); a
    run-time bool computes both and selects.
    """
    api = f"{scope}.scan"

    def typer(typingctx: Any, v: Any, inclusive: Any = None) -> Any:
        ty = _sum_type(_value_type(api, v))
        if inclusive is None:  # omitted: the default
            static: bool | None = True
            flag_type: Any = types.Omitted(None)
        elif isinstance(inclusive, types.BooleanLiteral):
            static, flag_type = bool(inclusive.literal_value), inclusive
        elif isinstance(inclusive, types.Boolean):
            static, flag_type = None, inclusive
        else:
            raise _reject(f"{api}(v, inclusive=...) takes a bool; got {inclusive}")

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # A scan's result differs between threads: no uniform declaration.
            with site(api, scope):
                x = context.cast(builder, args[0], sig.args[0], ty)
                flag = args[1] if static is None else ir.Constant(_I1, int(static))
                if scope == "block":
                    return _block_scan(context, builder, ty, x, flag)
                geo = BlockGeometry(builder)
                incl = _warp_scan(context, builder, geo, ty, x)
                if static:
                    return incl
                excl = _shift_up(context, builder, geo, ty, incl)
                return excl if static is not None else builder.select(flag, incl, excl)

        return signature(ty, v, flag_type), codegen

    typer.__name__ = f"__ss_{scope}_scan"
    return _intrinsic(target="cuda", prefer_literal=True)(typer)


@intrinsic
def _block_sync(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("block.sync", "block"):
            _barrier(builder)
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def _grid_sync(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("grid.sync", "grid"):
            # numba-cuda's cooperative-groups entry points: the kernel is then marked
            # cooperative (launched so, and linked with cudadevrt) as for this_grid().sync().
            context.active_code_library.use_cooperative = True
            handle = builder.call(
                nvvmutils.declare_cudaCGGetIntrinsicHandle(builder.module),
                (ir.Constant(ir.IntType(32), 1),),
            )
            builder.call(
                nvvmutils.declare_cudaCGSynchronize(builder.module),
                (handle, ir.Constant(ir.IntType(32), 0)),
            )
        return context.get_dummy_value()

    return types.none(), codegen


@intrinsic
def _grid_read(typingctx: Any, ds: Any, idx: Any) -> Any:
    from ._cuda import DisjointSliceType, _load_through_mov, _read_type, _slice_array, _widened

    if not isinstance(ds, DisjointSliceType):
        raise _reject(
            f"grid.read(out, i) reads an output (a DisjointSlice parameter) that other threads "
            f"wrote before a grid sync; got {ds}. Read inputs by index directly"
        )
    if isinstance(ds.dtype, types.Record):
        raise _reject(f"grid.read reads scalar elements; {ds} has records")
    parts = tuple(idx) if isinstance(idx, types.BaseTuple) else (idx,)
    if len(parts) != ds.ndim or not all(isinstance(t, types.Integer) for t in parts):
        want = "an int" if ds.ndim == 1 else f"a tuple of {ds.ndim} ints"
        raise _reject(f"grid.read of a {ds.ndim}D output takes {want} as its index; got {idx}")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        raw = cgutils.unpack_tuple(builder, args[1], len(parts)) if len(parts) > 1 else [args[1]]
        at = [context.cast(builder, v, t, types.intp) for v, t in zip(raw, parts, strict=True)]
        arr = _slice_array(context, builder, ds, args[0])
        # The compiled-form check finds the read by the tag on its address's `mov`, a call
        # LLVM keeps as it is (a load it may rebuild with another type, dropping the tag).
        with grid_read():
            value = _load_through_mov(context, builder, ds.arr_type, arr, at)
        return _widened(builder, ds.dtype, value)

    return signature(_read_type(ds.dtype), ds, idx), codegen


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_block_*`` / ``__ss_warp_*`` / ``__ss_grid_*`` / accumulator names for
    compiled kernels."""
    names = dict(_NAMES)
    names.update(accumulate_builtins())
    return names


_NAMES: dict[str, Any] = {
    "__ss_block_sync": _block_sync,
    "__ss_grid_sync": _grid_sync,
    "__ss_grid_read": _grid_read,
}
for _scope in ("block", "warp"):
    for _name in ("sum", "max", "min"):
        _NAMES[f"__ss_{_scope}_{_name}"] = _reduction(_scope, _name)
    _NAMES[f"__ss_{_scope}_reduce"] = _reduce_with(_scope)
    _NAMES[f"__ss_{_scope}_broadcast"] = _broadcast(_scope)
    _NAMES[f"__ss_{_scope}_scan"] = _scan(_scope)
