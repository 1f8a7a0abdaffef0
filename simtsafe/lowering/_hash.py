"""Numba types and lowering of open-addressing hash tables: a value slot won by a CAS.

* ``HashTableType(keys, counter, param)`` -- a ``HashTable[K]`` parameter: the
  keys array (``EMPTY``, the all-ones key, marks a free slot) and the counter
  of failed inserts, bound together in the kernel's prologue
  (``__ss_view_Table(keys, nfail, "keys")``). ``keys.insert(k)`` and
  ``keys.insert_or_find(k)``; the keys are not otherwise read or written
  during the launch.
* ``HashValuesType(arr, table)`` -- a ``HashValues[V]`` parameter: one value per
  slot, written and read only through an ``InsertedType(table)`` witness of
  its own table (``__ss_view_Values(vals, "keys")``).
* ``InsertedType(table)`` -- the witness ``insert`` returns: the slot whose
  compare-and-swap from ``EMPTY`` to the key this call performed. A slot
  leaves ``EMPTY`` once (nothing ever empties it during a launch), so one
  call per slot ever gets a valid witness: its values have one writer.
* ``FoundType`` -- ``hashing.find(keys, k)`` on a read-only table (an input):
  the key's slot, reading inputs only.

The probe: ``slot = hash(k) % capacity`` (``hash``: MurmurHash3's 32- or
64-bit finalizer of the key's bits), then ``slot + 1``, ... wrapping, at most
``capacity`` slots. At each slot a weak load of the key (``ld.global``, the
raw twin's load, L1-cached: a key never changes once set, so a stale read of
another key is exact, and a stale ``EMPTY`` only leads to the swap); if it is
``k`` the key is found; if it is ``EMPTY``, a ``cmpxchg`` from ``EMPTY`` to
``k``: success inserts, an old value of ``k`` finds, another key probes on. After
``capacity`` slots, or for the key ``EMPTY`` itself, or an empty table, the
insert failed: one atomic add on the failure counter, which the host reads
(``simtsafe.inserted``).
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

from ._append import _mark_past_top
from ._bf16 import is_bf16, stored_element
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
)

__all__ = ["FoundType", "HashTableType", "HashValuesType", "InsertedType", "builtins"]

_I1 = ir.IntType(1)
_I8 = ir.IntType(8)
_I64 = ir.IntType(64)
_KEY_TYPES = (types.int32, types.uint32, types.int64, types.uint64)
#: The outcome of a probe (an i8 in the generated code).
_INSERTED, _FOUND, _FAILED = 0, 1, 2

_WHAT_TABLE_OFFERS = (
    "a HashTable offers w = keys.insert(k), keys.insert_or_find(k), and keys.size, "
    "keys.shape, len(keys)"
)
_WHAT_VALUES_OFFER = (
    "a HashValues offers vals[w] = v and vals[w] with a witness of its table's insert, "
    "and vals.size, vals.shape, len(vals)"
)


def _reject(message: str) -> errors.TypingError:
    return errors.TypingError("simtsafe: " + message)


# --------------------------------------------------------------------------- types


class HashTableType(types.Type):
    """Numba type of a ``HashTable`` parameter: its keys, failure counter and name."""

    #: Why ``w.in_bounds(keys)`` is refused, and what says whether an insert won its key
    #: (``lowering._cuda``'s refusal appends it; {param} is the table's parameter).
    in_bounds_advice = (
        "; the keys of a HashTable bound no witness. Whether `f = {param}.insert(k)` inserted "
        "the key is `f.in_bounds(vals)` for a value array of the table (declare one, "
        "`tables={{'{param}': {{'values': ['vals'], ...}}}}` with `vals: ss.HashValues[...]`; a "
        "visited set stores its level or parent there, `vals[f] = v`)"
    )

    def __init__(self, arr_type: types.Array, counter_type: types.Array, param: str) -> None:
        self.arr_type = arr_type
        self.counter_type = counter_type
        self.param = param
        self.dtype = arr_type.dtype
        super().__init__(name=f"HashTable[{arr_type}, {counter_type}, {param}]")


class HashValuesType(types.Type):
    """Numba type of a ``HashValues`` parameter: values written by its table's inserts."""

    #: ``w.in_bounds(vals)`` takes it (lowering._cuda): its witnesses are of ``space``.
    written_by_witness = True

    def __init__(self, arr_type: types.Array, table: str) -> None:
        self.arr_type = arr_type
        self.table = table
        self.space = f"Inserted[{table}]"
        self.dtype = arr_type.dtype
        self.ndim = 1
        super().__init__(name=f"HashValues[{arr_type}, {table}]")


class InsertedType(ThreadIndexType):
    """The witness of a value slot whose key this call inserted into table ``table``."""

    def __init__(self, table: str) -> None:
        self.space = f"Inserted[{table}]"
        self.rank = 1
        self.table = table
        types.Type.__init__(self, name=f"ThreadIndex[{self.space}]")


class FoundType(ThreadIndexType):
    """The witness of a key's slot in a read-only table: it reads inputs, writes nothing."""

    def __init__(self) -> None:
        self.space = "Found"
        self.rank = 1
        types.Type.__init__(self, name="ThreadIndex[Found]")


@register_model(HashTableType)
class _HashTableModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: HashTableType) -> None:
        super().__init__(
            dmm, fe_type, [("arr", fe_type.arr_type), ("counter", fe_type.counter_type)]
        )


@register_model(HashValuesType)
class _HashValuesModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: HashValuesType) -> None:
        super().__init__(dmm, fe_type, [("arr", fe_type.arr_type)])


register_model(InsertedType)(_ThreadIndexModel)
register_model(FoundType)(_ThreadIndexModel)


# --------------------------------------------------------------------------- typing


def _check_key(what: str, key_type: Any, key: Any) -> None:
    """The key must keep its value when converted to the table's key type."""
    if not isinstance(key, types.Integer) or isinstance(key, types.Boolean):
        raise _reject(f"{what}: the key must be an integer; got {key}")
    literal = getattr(key, "literal_value", None)
    if isinstance(literal, int) and not isinstance(literal, bool):
        lo, hi = (
            (-(2 ** (key_type.bitwidth - 1)), 2 ** (key_type.bitwidth - 1) - 1)
            if key_type.signed
            else (0, 2**key_type.bitwidth - 1)
        )
        if lo <= literal <= hi:
            return
    keeps = key == key_type or (
        key.bitwidth < key_type.bitwidth and (key_type.signed or not key.signed)
    )
    if not keeps:
        raise _reject(
            f"{what}: a key of type {key} would change its value in a table of {key_type} keys; "
            f"convert it explicitly, e.g. np.{key_type}(k)"
        )


def _check_witness(target: HashValuesType, idx: Any, verb: str) -> None:
    if not isinstance(idx, ThreadIndexType):
        raise _reject(
            f"a HashValues is {verb} only at a slot whose key this thread inserted: w = "
            f"{target.table}.insert(k), then vals[w]; got an index of type {idx}"
        )
    if idx.space != target.space:
        raise _reject(
            f"a {idx} witness cannot {'write' if verb == 'written' else 'read'} the values of the "
            f"hash table {target.table!r}: only the call that inserted a key into "
            f"{target.table!r} owns its value slot. Use w = {target.table}.insert(k)"
        )


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx, val = args
        if isinstance(target, HashTableType):
            raise _reject(
                "the keys of a hash table are written only by keys.insert(k) (a "
                f"compare-and-swap); {_WHAT_TABLE_OFFERS}"
            )
        if not isinstance(target, HashValuesType):
            return None
        _check_witness(target, idx, "written")
        if is_bf16(target.dtype):
            if not isinstance(val, (types.Integer, types.Float, types.Boolean)) and not is_bf16(
                val
            ):
                raise _reject(
                    f"cannot store a value of type {val} into a HashValues of bfloat16 "
                    "(a bf16 output takes an int, float or bool, rounded to nearest even)"
                )
            return signature(types.none, target, idx, val)
        if self.context.can_convert(val, target.dtype) is None:
            raise _reject(f"cannot store a value of type {val} into a HashValues of {target.dtype}")
        return signature(types.none, target, idx, val)


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if isinstance(target, HashTableType):
            raise _reject(
                "the keys of a hash table are not read during the launch (other threads are "
                f"inserting); {_WHAT_TABLE_OFFERS}. Read them in a later launch as an input, "
                "with simtsafe.hashing.find(keys, k)"
            )
        if not isinstance(target, HashValuesType):
            return None
        _check_witness(target, idx, "read")
        return signature(_read_type(target.dtype), target, idx)


@infer_global(len)
class _Len(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if len(args) == 1 and isinstance(args[0], (HashTableType, HashValuesType)):
            return signature(types.intp, args[0])
        return None


class _SizedAttrs(AttributeTemplate):
    offers = ""

    def resolve_size(self, ty: Any) -> Any:
        return types.intp

    def resolve_ndim(self, ty: Any) -> Any:
        return types.intp

    def resolve_shape(self, ty: Any) -> Any:
        return types.UniTuple(types.intp, 1)

    def generic_resolve(self, ty: Any, attr: str) -> Any:
        raise _reject(f"{ty} has no .{attr}: {self.offers}")


@infer_getattr
class _HashTableAttrs(_SizedAttrs):
    key = HashTableType
    offers = _WHAT_TABLE_OFFERS

    def _key(self, table: HashTableType, args: tuple[Any, ...], kws: Any, name: str) -> Any:
        if kws or len(args) != 1:
            raise _reject(f"{table.param}.{name}(k) takes one argument: the key")
        _check_key(f"{table.param}.{name}(k)", table.dtype, args[0])
        return args[0]

    @bound_function("HashTable.insert")
    def resolve_insert(self, table: HashTableType, args: tuple[Any, ...], kws: Any) -> Any:
        key = self._key(table, args, kws, "insert")
        return signature(InsertedType(table.param), key)

    @bound_function("HashTable.insert_or_find")
    def resolve_insert_or_find(self, table: HashTableType, args: tuple[Any, ...], kws: Any) -> Any:
        key = self._key(table, args, kws, "insert_or_find")
        return signature(types.intp, key)


@infer_getattr
class _HashValuesAttrs(_SizedAttrs):
    key = HashValuesType
    offers = _WHAT_VALUES_OFFER


# --------------------------------------------------------------------------- lowering: views


def _arr(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.create_struct_proxy(ty)(context, builder, value=val).arr


def _length(context: Any, builder: ir.IRBuilder, arrty: Any, arr: Any) -> ir.Value:
    return cgutils.unpack_tuple(builder, make_array(arrty)(context, builder, arr).shape, 1)[0]


@lower_builtin(operator.setitem, HashValuesType, ThreadIndexType, types.Any)
def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    vty, wty, xty = sig.args
    val = stored_element(context, builder, vty.dtype, xty, args[2])
    arr = _arr(context, builder, vty, args[0])
    _store(
        context, builder, vty.arr_type, arr, _witness_indices(context, builder, wty, args[1]), val
    )
    return context.get_dummy_value()


@lower_builtin(operator.getitem, HashValuesType, ThreadIndexType)
def _lower_getitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    vty, wty = sig.args
    arr = _arr(context, builder, vty, args[0])
    idx = _witness_indices(context, builder, wty, args[1])
    return _widened(builder, vty.dtype, _load(context, builder, vty.arr_type, arr, idx))


@lower_builtin(len, HashTableType)
@lower_builtin(len, HashValuesType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    ty = sig.args[0]
    return _length(context, builder, ty.arr_type, _arr(context, builder, ty, args[0]))


def _lower_size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return _length(context, builder, ty.arr_type, _arr(context, builder, ty, val))


def _lower_ndim(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return context.get_constant(types.intp, 1)


def _lower_shape(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.pack_array(builder, [_lower_size(context, builder, ty, val)])


for _ty in (HashTableType, HashValuesType):
    lower_getattr(_ty, "size")(_lower_size)
    lower_getattr(_ty, "ndim")(_lower_ndim)
    lower_getattr(_ty, "shape")(_lower_shape)


# --------------------------------------------------------------------------- lowering: probes


def _peek(builder: ir.IRBuilder, ptr: ir.Value) -> ir.Value:
    """The key at ``ptr`` read by a weak ``ld.global`` (inline PTX): what the raw twin reads.

    Other threads swap keys in during the launch, so this read races with their
    compare-and-swaps. In LLVM's memory model (NVVM's optimizer) a plain ``load``
    in a race may be ``undef``, and NVVM lowers every ``load atomic`` (even
    ``unordered``) and ``load volatile`` to ``ld.volatile``, which bypasses L1: a
    round trip to L2 for each probed slot, where consecutive slots of a probe
    share a cache line. The PTX memory model, which does not require data-race
    freedom, defines the weak load: it returns the value of some write to the
    slot -- ``EMPTY`` or the slot's one key, since a slot changes only once, by
    the compare-and-swap. Inline assembly keeps NVVM from reasoning about the
    read, so what the PTX model says is what runs. A stale ``EMPTY`` (the line
    cached before another thread's swap) only sends the call to the
    compare-and-swap, whose result decides; a key read is the slot's for the
    rest of the launch.
    """
    ity = ptr.type.pointee
    width = ity.width
    gptr = builder.addrspacecast(ptr, ity.as_pointer(1))
    asm = ir.InlineAsm(
        ir.FunctionType(ity, [gptr.type]),
        f"ld.global.u{width} $0, [$1];",
        f"={'r' if width == 32 else 'l'},l",
    )
    return builder.call(asm, [gptr])


def _mix(builder: ir.IRBuilder, key: ir.Value) -> ir.Value:
    """MurmurHash3's finalizer of the key's bits (fmix32 or fmix64), as an i64."""
    width = key.type.width
    ity = key.type

    def c(v: int) -> ir.Constant:
        return ir.Constant(ity, v)

    h = key
    if width == 32:
        h = builder.xor(h, builder.lshr(h, c(16)))
        h = builder.mul(h, c(0x85EBCA6B))
        h = builder.xor(h, builder.lshr(h, c(13)))
        h = builder.mul(h, c(0xC2B2AE35))
        h = builder.xor(h, builder.lshr(h, c(16)))
        return builder.zext(h, _I64)
    h = builder.xor(h, builder.lshr(h, c(33)))
    h = builder.mul(h, c(0xFF51AFD7ED558CCD))
    h = builder.xor(h, builder.lshr(h, c(33)))
    h = builder.mul(h, c(0xC4CEB9FE1A85EC53))
    return builder.xor(h, builder.lshr(h, c(33)))


def _lookup_probe(
    context: Any, builder: ir.IRBuilder, arrty: Any, arr: Any, key: ir.Value
) -> tuple[ir.Value, ir.Value]:
    """Linear probing for ``key`` in a read-only table: (outcome i8, slot i64).

    The loop carries the slot alone and leaves by one test per probe: the key
    (found) or ``EMPTY`` (absent); another key: the next slot, until the probe
    is back at the home slot (``capacity`` slots probed: absent). The outcome
    is decided once, after the loop. (No atomic in the loop, so ptxas sees no
    spin loop here: no ``YIELD``; measured as fast as the raw twin's lookup.)
    """
    ary = make_array(arrty)(context, builder, arr)
    cap = cgutils.unpack_tuple(builder, ary.shape, 1)[0]
    stride = cgutils.unpack_tuple(builder, ary.strides, 1)[0]
    empty = ir.Constant(key.type, -1)
    outcome = cgutils.alloca_once_value(builder, ir.Constant(_I8, _FAILED))
    found_at = cgutils.alloca_once_value(builder, ir.Constant(_I64, SENTINEL))
    usable = builder.and_(
        builder.icmp_unsigned("!=", key, empty), builder.icmp_unsigned("!=", cap, _c64(0))
    )
    with builder.if_then(usable, likely=True):
        home = builder.urem(_mix(builder, key), cap)
        slot = cgutils.alloca_once_value(builder, home)
        seen = cgutils.alloca_once_value(builder, empty)
        body = builder.append_basic_block("ss.find.body")
        nxt = builder.append_basic_block("ss.find.next")
        done = builder.append_basic_block("ss.find.done")
        builder.branch(body)

        builder.position_at_end(body)
        s = builder.load(slot)  # Invariant: s < cap (home = h % cap; step wraps at cap)
        ptr = cgutils.get_item_pointer2(
            context, builder, ary.data, [cap], [stride], arrty.layout, [s], wraparound=False
        )
        got = builder.load(ptr)
        builder.store(got, seen)
        stop = builder.or_(
            builder.icmp_unsigned("==", got, key), builder.icmp_unsigned("==", got, empty)
        )
        builder.cbranch(stop, done, nxt)

        builder.position_at_end(nxt)
        step = builder.add(s, _c64(1))
        step = builder.select(builder.icmp_unsigned("==", step, cap), _c64(0), step)
        builder.store(step, slot)
        builder.cbranch(builder.icmp_unsigned("!=", step, home), body, done)

        builder.position_at_end(done)
        hit = builder.icmp_unsigned("==", builder.load(seen), key)
        builder.store(
            builder.select(hit, ir.Constant(_I8, _FOUND), ir.Constant(_I8, _FAILED)), outcome
        )
        builder.store(s, found_at)
    return builder.load(outcome), builder.load(found_at)


def _insert_probe(
    context: Any, builder: ir.IRBuilder, arrty: Any, arr: Any, key: ir.Value
) -> tuple[ir.Value, ir.Value]:
    """Linear probing for ``key`` (an iN of the key type), inserting: (outcome i8, slot i64).

    The loop has the raw twin's shape (``benchmarks/irregular.py``,
    ``examples/tsdf/raw.py``): it carries the slot and a count of the slots
    left, and leaves the moment a probe decides -- the peek sees the key
    (found), the compare-and-swap of an ``EMPTY`` slot returns ``EMPTY``
    (inserted) or the key (found) -- each exit edge bringing its outcome as a
    constant. Another key: the next slot, wrapping at ``capacity``, until
    ``capacity`` slots are probed (failed). A counted loop, not one that ends
    back at the home slot: with the atomic inside, ptxas takes a loop it cannot
    count for a possible spin loop and puts a ``YIELD`` (a forward-progress
    point) into every probe, which the raw twin's loop does not have
    (tests/ptx/test_hash_probe_ptx.py).

    The slot returned is the last one probed (``SENTINEL`` for the key
    ``EMPTY`` or an empty table); it means something only with the outcome
    ``_INSERTED`` or ``_FOUND``, which the callers select on.
    """
    ary = make_array(arrty)(context, builder, arr)
    cap = cgutils.unpack_tuple(builder, ary.shape, 1)[0]
    stride = cgutils.unpack_tuple(builder, ary.strides, 1)[0]
    empty = ir.Constant(key.type, -1)
    usable = builder.and_(
        builder.icmp_unsigned("!=", key, empty), builder.icmp_unsigned("!=", cap, _c64(0))
    )
    entry = builder.block
    pre = builder.append_basic_block("ss.probe.home")
    body = builder.append_basic_block("ss.probe.body")
    miss = builder.append_basic_block("ss.probe.miss")
    swap = builder.append_basic_block("ss.probe.cas")
    lost = builder.append_basic_block("ss.probe.lost")
    nxt = builder.append_basic_block("ss.probe.next")
    done = builder.append_basic_block("ss.probe.done")
    builder.cbranch(usable, pre, done)

    builder.position_at_end(pre)
    home = builder.urem(_mix(builder, key), cap)
    builder.branch(body)

    builder.position_at_end(body)
    s = builder.phi(_I64, name="ss.probe.slot")  # Invariant: s < cap (home = h % cap, wraps)
    left = builder.phi(_I64, name="ss.probe.left")  # slots not yet probed, s included
    s.add_incoming(home, pre)
    left.add_incoming(cap, pre)
    ptr = cgutils.get_item_pointer2(
        context, builder, ary.data, [cap], [stride], arrty.layout, [s], wraparound=False
    )
    cur = _peek(builder, ptr)
    builder.cbranch(builder.icmp_unsigned("==", cur, key), done, miss)

    builder.position_at_end(miss)
    builder.cbranch(builder.icmp_unsigned("==", cur, empty), swap, nxt)

    builder.position_at_end(swap)
    # Invariant: a slot leaves EMPTY once, by the one swap that returns EMPTY.
    old = builder.extract_value(builder.cmpxchg(ptr, empty, key, "monotonic", "monotonic"), 0)
    builder.cbranch(builder.icmp_unsigned("==", old, empty), done, lost)

    builder.position_at_end(lost)  # another call swapped first: its key, perhaps ours
    builder.cbranch(builder.icmp_unsigned("==", old, key), done, nxt)

    builder.position_at_end(nxt)
    step = builder.add(s, _c64(1))
    step = builder.select(builder.icmp_unsigned("==", step, cap), _c64(0), step)
    rest = builder.sub(left, _c64(1))
    s.add_incoming(step, nxt)
    left.add_incoming(rest, nxt)
    builder.cbranch(builder.icmp_unsigned("!=", rest, _c64(0)), body, done)

    builder.position_at_end(done)
    outcome = builder.phi(_I8, name="ss.probe.outcome")
    slot = builder.phi(_I64, name="ss.probe.at")
    for state, at, block in (
        (_FAILED, _c64(SENTINEL), entry),  # the key EMPTY, or an empty table
        (_FOUND, s, body),  # the peek saw the key
        (_INSERTED, s, swap),  # this call's swap filled the slot
        (_FOUND, s, lost),  # another call's swap put the key there
        (_FAILED, s, nxt),  # capacity slots probed: the table is full
    ):
        outcome.add_incoming(ir.Constant(_I8, state), block)
        slot.add_incoming(at, block)
    return outcome, slot


def _c64(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _count_failure(
    context: Any, builder: ir.IRBuilder, tty: HashTableType, table: Any, outcome: ir.Value
) -> None:
    counter = cgutils.create_struct_proxy(tty)(context, builder, value=table).counter
    ctr = make_array(tty.counter_type)(context, builder, counter)
    n = cgutils.unpack_tuple(builder, ctr.shape, 1)[0]
    failed = builder.icmp_unsigned("==", outcome, ir.Constant(_I8, _FAILED))
    # The host checks counter.size == 1 at every launch; the test keeps an unchecked
    # launch with an empty counter from touching memory.
    with builder.if_then(
        builder.and_(failed, builder.icmp_unsigned("!=", n, _c64(0))), likely=False
    ):
        old = builder.atomic_rmw("add", ctr.data, _c64(1), "monotonic")
        # As an append counter: one found at or past 2**63 (a start value) may wrap past
        # 2**64 and read as a small count; its top bit, set now, makes the host refuse it.
        _mark_past_top(builder, ctr.data, old)


def _table_key(
    context: Any, builder: ir.IRBuilder, tty: HashTableType, kty: Any, k: Any
) -> ir.Value:
    return context.cast(builder, k, kty, tty.dtype)


@lower_builtin("HashTable.insert", HashTableType, types.Integer)
def _lower_insert(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    tty, kty = sig.args
    arr = _arr(context, builder, tty, args[0])
    outcome, slot = _insert_probe(
        context, builder, tty.arr_type, arr, _table_key(context, builder, tty, kty, args[1])
    )
    _count_failure(context, builder, tty, args[0], outcome)
    won = builder.icmp_unsigned("==", outcome, ir.Constant(_I8, _INSERTED))
    return _make_witness(
        context, builder, sig.return_type, [builder.select(won, slot, _c64(SENTINEL))]
    )


@lower_builtin("HashTable.insert_or_find", HashTableType, types.Integer)
def _lower_insert_or_find(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    tty, kty = sig.args
    arr = _arr(context, builder, tty, args[0])
    outcome, slot = _insert_probe(
        context, builder, tty.arr_type, arr, _table_key(context, builder, tty, kty, args[1])
    )
    _count_failure(context, builder, tty, args[0], outcome)
    failed = builder.icmp_unsigned("==", outcome, ir.Constant(_I8, _FAILED))
    return builder.select(failed, _c64(-1), slot)


# --------------------------------------------------------------------------- intrinsics


def _counter_array(c: Any) -> Any:
    return getattr(c, "arr_type", c)


def _counter_value(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    if isinstance(ty, types.Array):
        return val
    return cgutils.create_struct_proxy(ty)(context, builder, value=val).arr


@intrinsic
def _view_table(typingctx: Any, arr: Any, counter: Any, param: Any) -> Any:
    """A ``HashTable`` parameter's prologue: the keys, the failure counter, its name."""
    name = getattr(param, "literal_value", None)
    if not isinstance(name, str):
        return None
    carr = _counter_array(counter)
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.dtype not in _KEY_TYPES:
        raise _reject(
            f"a HashTable parameter is a 1D array of int32/uint32/int64/uint64; got {arr}"
        )
    if not isinstance(carr, types.Array) or carr.ndim != 1 or carr.dtype != types.uint64:
        raise _reject(f"a Counter parameter is a 1D uint64 device array; got {carr}")
    rt = HashTableType(arr, carr, name)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        view = cgutils.create_struct_proxy(rt)(context, builder)
        view.arr = args[0]
        view.counter = _counter_value(context, builder, counter, args[1])
        return view._getvalue()

    return rt(arr, counter, param), codegen


@intrinsic
def _view_values(typingctx: Any, arr: Any, table: Any) -> Any:
    """A ``HashValues`` parameter's prologue: the array, and the name of its table."""
    name = getattr(table, "literal_value", None)
    if not isinstance(name, str):
        return None
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        raise _reject(f"a HashValues parameter is a 1D device array; got {arr}")
    rt = HashValuesType(arr, name)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        view = cgutils.create_struct_proxy(rt)(context, builder)
        view.arr = args[0]
        return view._getvalue()

    return rt(arr, table), codegen


@intrinsic
def _find(typingctx: Any, keys: Any, key: Any) -> Any:
    """``hashing.find(keys, k)``: the slot of ``k`` in a read-only table (an input)."""
    if isinstance(keys, HashTableType):
        raise _reject(
            "hashing.find(keys, k) reads a table that no thread is inserting into: pass its keys "
            "as an input (In[...]) in a later launch. During inserts use keys.insert_or_find(k)"
        )
    if not isinstance(keys, types.Array) or keys.ndim != 1 or keys.dtype not in _KEY_TYPES:
        raise _reject(
            f"hashing.find(keys, k) takes the keys as a 1D int32/uint32/int64/uint64 input; got {keys}"
        )
    _check_key("hashing.find(keys, k)", keys.dtype, key)
    wty = FoundType()

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        k = context.cast(builder, args[1], key, keys.dtype)
        outcome, slot = _lookup_probe(context, builder, keys, args[0], k)
        found = builder.icmp_unsigned("==", outcome, ir.Constant(_I8, _FOUND))
        return _make_witness(context, builder, wty, [builder.select(found, slot, _c64(SENTINEL))])

    return wty(keys, key), codegen


def builtins() -> dict[str, Any]:
    """``__ss_view_Table``, ``__ss_view_Values`` and ``__ss_hashing_find``."""
    return {
        "__ss_view_Table": _view_table,
        "__ss_view_Values": _view_values,
        "__ss_hashing_find": _find,
    }
