"""Numba-CUDA types, typing rules and lowering for views and witnesses.

This is the only module that touches numba-cuda's typing and lowering
machinery. It registers, through ``numba.cuda.extending`` (numba-cuda's own
registries, not numba core's):

* ``DisjointSliceType(arr, space)`` -- a one-member struct around the array,
  so the kernel ABI and the generated loads/stores are the raw array's.
* ``ThreadIndexType(space)`` -- an opaque struct of one (1D spaces), two
  (``Index2D``) or three (``Index3D``) ``intp``; no arithmetic, no
  comparison, no constructor.
* typing templates for ``setitem``/``getitem``/``len``/attributes whose
  rejections start with ``simtsafe:`` (the kernel decorator lifts those lines
  out of Numba's report).
* the private intrinsics the kernel decorator injects into rewritten kernels
  (``__ss_*`` names; user code cannot name them).

Invariant: a ``ThreadIndexType`` value is produced only by the witness
intrinsics below; each gives distinct (or invalid) indices to distinct
threads of a launch whose shape matches the witness's space.
"""

from __future__ import annotations

import operator
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from types import FrameType
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.core import errors
from numba.cuda.extending import (
    intrinsic,
    lower_builtin,
    lower_getattr,
    models,
    register_model,
)
from numba.cuda.np.arrayobj import load_item, make_array, store_item
from numba.cuda.typing.templates import (
    AbstractTemplate,
    AttributeTemplate,
    bound_function,
    infer_getattr,
    infer_global,
    signature,
)

from .._spaces import (
    LOCAL_SPACE_NDIM,
    SPACE_NDIM,
    WITNESS_NDIM,
    field_read_refusal,
    in_bounds_rank_refusal,
    witness_required,
)
from . import _coop, _halfcasts, _lowerchecks, _nvvminput, _provenance  # noqa: F401
from ._bf16 import bf16_to_f32, is_bf16, stored_element
from ._blockgeo import MAX_THREADS_METADATA
from ._runaligned import assume_run_aligned

# Source lines and collective sites on every instruction of simtsafe functions
# (the compiled-form checks read them; NVVM ignores them).
_provenance.install()
# Statement checks on the typed IR while it is lowered: a simtsafe value that may be unbound
# where it is used (Numba makes it 0), an exception with a run-time message.
_lowerchecks.install()

__all__ = ["SENTINEL", "DisjointSliceType", "ThreadIndexType", "builtins", "simtsafe_typing"]

#: Index of an invalid witness: out of bounds for every array (unsigned compare).
SENTINEL = 2**63 - 1

_I64 = ir.IntType(64)

_CTOR_FOR_SPACE = {
    "Index1D": "thread.index_1d() or `for w in thread.grid_stride(out)`",
    "Index2D": "thread.index_2d()",
    "Index3D": "thread.index_3d()",
    "PerWarp": "thread.warp_leader()",
    "PerBlock": "thread.block_leader()",
    "BlockRow": "`for w in thread.block_row(out)`",
    "WarpRow": "`for w in thread.warp_row(out)`",
    "Columns": "`out[row, thread.column()]`",
}


#: Rank of every witness space: the output spaces and the block-local ones (shared tiles).
_WITNESS_RANK = {**WITNESS_NDIM, **LOCAL_SPACE_NDIM}

#: Struct members of a witness, by rank: the array indices, outermost axis first.
_MEMBERS = {1: ("i",), 2: ("r", "c"), 3: ("z", "y", "x")}

#: Witness attributes that read one coordinate: name -> (rank -> member).
_COORDS: dict[str, dict[int, str]] = {
    "index": {1: "i"},
    "row": {2: "r"},
    "col": {2: "c"},
    "x": {2: "c", 3: "x"},
    "y": {2: "r", 3: "y"},
    "z": {3: "z"},
}

#: What each rank offers instead, for the message when an attribute does not exist.
_ACCESSORS = {
    1: "a 1D witness has .index",
    2: "a 2D witness has .row and .col (also .y and .x)",
    3: "a 3D witness has .z, .y and .x",
}

# --------------------------------------------------------------------------- types


class ThreadIndexType(types.Type):
    """Numba type of a witness of one index space."""

    def __init__(self, space: str) -> None:
        self.space = space
        self.rank = _WITNESS_RANK[space]
        super().__init__(name=f"ThreadIndex[{space}]")


class DisjointSliceType(types.Type):
    """Numba type of an output view: an array plus the index space that may write it."""

    def __init__(self, arr_type: types.Array, space: str) -> None:
        self.arr_type = arr_type
        self.space = space
        self.dtype = arr_type.dtype
        self.ndim = arr_type.ndim
        super().__init__(name=f"DisjointSlice[{arr_type}, {space}]")


@register_model(ThreadIndexType)
class _ThreadIndexModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: ThreadIndexType) -> None:
        super().__init__(dmm, fe_type, [(n, types.intp) for n in _MEMBERS[fe_type.rank]])


@register_model(DisjointSliceType)
class _DisjointSliceModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: DisjointSliceType) -> None:
        super().__init__(dmm, fe_type, [("arr", fe_type.arr_type)])


def _reject(message: str) -> errors.TypingError:
    return errors.TypingError("simtsafe: " + message)


def _contains_witness(ty: Any) -> bool:
    # Tiles and thread-private arrays (lowering/_tiles) are not returned either.
    if isinstance(ty, ThreadIndexType) or getattr(ty, "helpers_cannot_return", False):
        return True
    if isinstance(ty, types.BaseTuple):
        return any(_contains_witness(t) for t in ty.types)
    return False


# --------------------------------------------------------------------------- codegen helpers


def _sreg(builder: ir.IRBuilder, name: str) -> ir.Value:
    return builder.zext(nvvmutils.call_sreg(builder, name), _I64)


def _const(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _all_one(builder: ir.IRBuilder, names: Sequence[str]) -> ir.Value:
    ok = ir.Constant(ir.IntType(1), 1)
    for n in names:
        ok = builder.and_(ok, builder.icmp_unsigned("==", _sreg(builder, n), _const(1)))
    return ok


def _linear_1d(builder: ir.IRBuilder) -> ir.Value:
    return builder.add(
        builder.mul(_sreg(builder, "ctaid.x"), _sreg(builder, "ntid.x")), _sreg(builder, "tid.x")
    )


def _linear_tid_in_block(builder: ir.IRBuilder) -> ir.Value:
    tx, ty, tz = (_sreg(builder, f"tid.{a}") for a in "xyz")
    nx, ny = _sreg(builder, "ntid.x"), _sreg(builder, "ntid.y")
    return builder.add(tx, builder.mul(nx, builder.add(ty, builder.mul(ny, tz))))


def _linear_block(builder: ir.IRBuilder) -> ir.Value:
    bx, by, bz = (_sreg(builder, f"ctaid.{a}") for a in "xyz")
    gx, gy = _sreg(builder, "nctaid.x"), _sreg(builder, "nctaid.y")
    return builder.add(bx, builder.mul(gx, builder.add(by, builder.mul(gy, bz))))


def _make_witness(
    context: Any, builder: ir.IRBuilder, wty: ThreadIndexType, idx: list[ir.Value]
) -> Any:
    w = cgutils.create_struct_proxy(wty)(context, builder)
    for member, value in zip(_MEMBERS[wty.rank], idx, strict=True):
        setattr(w, member, value)
    return w._getvalue()


def _witness_indices(
    context: Any, builder: ir.IRBuilder, wty: ThreadIndexType, val: Any
) -> list[Any]:
    w = cgutils.create_struct_proxy(wty)(context, builder, value=val)
    return [getattr(w, member) for member in _MEMBERS[wty.rank]]


def _guarded_pointer(
    context: Any, builder: ir.IRBuilder, arrty: types.Array, arrval: Any, idx: list[Any]
) -> tuple[ir.Value, Callable[[], ir.Value]]:
    """(in-bounds predicate, thunk computing the element pointer) for a witness index.

    The compare is unsigned, so the invalid-witness sentinel and any
    negative value are out of bounds; the pointer math skips Numba's
    negative-index wraparound because witness indices are never negative.
    """
    ary = make_array(arrty)(context, builder, arrval)
    shapes = cgutils.unpack_tuple(builder, ary.shape, arrty.ndim)
    ok = ir.Constant(ir.IntType(1), 1)
    for i, n in zip(idx, shapes, strict=True):
        ok = builder.and_(ok, builder.icmp_unsigned("<", i, n))

    def pointer() -> ir.Value:
        strides = cgutils.unpack_tuple(builder, ary.strides, arrty.ndim)
        return cgutils.get_item_pointer2(
            context, builder, ary.data, shapes, strides, arrty.layout, idx, wraparound=False
        )

    return ok, pointer


def _store(
    context: Any, builder: ir.IRBuilder, arrty: Any, arrval: Any, idx: list[Any], val: Any
) -> None:
    ok, pointer = _guarded_pointer(context, builder, arrty, arrval, idx)
    with builder.if_then(ok, likely=True):
        store_item(context, builder, arrty, val, pointer())


def _hidden(builder: ir.IRBuilder, local: ir.Value, as_type: ir.Type) -> ir.Value:
    """``local``'s address through a ``mov`` the optimizer cannot see into.

    CUDA 13.0's NVVM deletes every load and store of a kernel that reads one
    record through a pointer chosen between a global element and a local
    scratch record, then writes another the same way (the stores vanish; 13.5
    keeps them: ``scripts/diag_record_store.py``). Hidden, the scratch is just an
    address, and the choice is between two pointers NVVM knows nothing about.
    ``simtsafe.grid.read`` sends its address through the same ``mov``: a call,
    which keeps its tags where LLVM rewrites a load (``_coop._grid_read``).
    """
    address = builder.ptrtoint(local, ir.IntType(64))
    mov = ir.InlineAsm(ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "mov.b64 $0, $1;", "=l,l")
    return builder.inttoptr(builder.call(mov, [address]), as_type)


def _load_through_mov(
    context: Any, builder: ir.IRBuilder, arrty: Any, arrval: Any, idx: list[Any]
) -> Any:
    """A bounds-checked element read (0 outside) whose address first passes an opaque
    ``mov``: the call instruction that stands for the read in the compiled form."""
    ok, pointer = _guarded_pointer(context, builder, arrty, arrval, idx)
    out = cgutils.alloca_once_value(builder, context.get_constant_null(arrty.dtype))
    with builder.if_then(ok, likely=True):
        element = pointer()
        builder.store(
            load_item(context, builder, arrty, _hidden(builder, element, element.type)), out
        )
    return builder.load(out)


def guarded_record(
    context: Any, builder: ir.IRBuilder, arrty: Any, ok: ir.Value, pointer: ir.Value
) -> Any:
    """The record at ``pointer`` where ``ok``, else a zero-filled scratch record of this
    thread (reads give 0, field stores through it land nowhere that matters).

    A record is a reference to its bytes, so a read of one is its address: never a null
    one out of range -- a load through a null pointer is undefined, and LLVM deletes that
    path together with the bounds test that led to it (attack round 18: tile, local-array
    and output-tile record reads lost their bounds tests that way). ``pointer`` is only
    address math here; it is computed whether or not ``ok`` holds.
    """
    model = context.data_model_manager[arrty.dtype]
    scratch = cgutils.alloca_once(builder, model.get_data_type())
    builder.store(ir.Constant(model.get_data_type(), None), scratch)
    element = load_item(context, builder, arrty, pointer)  # address math only
    return builder.select(ok, element, _hidden(builder, scratch, model.get_value_type()))


def _load(context: Any, builder: ir.IRBuilder, arrty: Any, arrval: Any, idx: list[Any]) -> Any:
    ok, pointer = _guarded_pointer(context, builder, arrty, arrval, idx)
    if isinstance(arrty.dtype, types.Record):
        return guarded_record(context, builder, arrty, ok, pointer())
    out = cgutils.alloca_once_value(builder, context.get_constant_null(arrty.dtype))
    with builder.if_then(ok, likely=True):
        builder.store(load_item(context, builder, arrty, pointer()), out)
    return builder.load(out)


def _read_type(dtype: Any) -> Any:
    """The type a witness read of an element of ``dtype`` gives (bf16 reads give float32)."""
    return types.float32 if is_bf16(dtype) else dtype


def _widened(builder: ir.IRBuilder, dtype: Any, value: ir.Value) -> ir.Value:
    """A loaded element as :func:`_read_type` gives it (bf16 bits -> exact float32)."""
    return bf16_to_f32(builder, value) if is_bf16(dtype) else value


def _slice_array(context: Any, builder: ir.IRBuilder, dsty: DisjointSliceType, val: Any) -> Any:
    return cgutils.create_struct_proxy(dsty)(context, builder, value=val).arr


def _witness_view(ty: Any) -> bool:
    """An output view written through witnesses of its ``space`` (its struct's ``arr``):
    a DisjointSlice, or a view that says so (an AppendBuffer: lowering._append)."""
    return isinstance(ty, DisjointSliceType) or getattr(ty, "written_by_witness", False)


def _bounded_by_own_shape(ty: Any) -> bool:
    """A read-only holder whose struct's ``arr`` carries the shape its reads are checked
    against (a constant array: lowering._constarrays); ``w.in_bounds(t)`` compares with it."""
    return getattr(ty, "in_bounds_by_shape", False)


# --------------------------------------------------------------------------- typing: views


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx, val = args
        if isinstance(target, types.Array) and not target.mutable:
            raise _reject(
                f"cannot store into a read-only input ({target}): In[...] parameters are "
                "read-only. Make the parameter a DisjointSlice output if the kernel writes it"
            )
        if not isinstance(target, DisjointSliceType):
            return None
        ctor = _CTOR_FOR_SPACE[target.space]
        idx = _column_witness(target, idx)
        if not isinstance(idx, ThreadIndexType):
            raise _reject(witness_required(target.space, ctor, str(idx)))
        if idx.space in LOCAL_SPACE_NDIM:
            raise _reject(
                f"a block-local {idx} witness cannot write a DisjointSlice: it is unique within "
                f"a block only (another block has the same one). It fills shared tiles; write "
                f"the output with {ctor}"
            )
        if idx.space != target.space:
            raise _reject(
                f"a {idx} witness cannot write a DisjointSlice of space {target.space}: "
                f"its uniqueness is proven for {idx.space} only. Use {ctor}"
            )
        if is_bf16(target.dtype):  # stores take a real value, rounded to bf16 (_bf16)
            if not isinstance(val, (types.Integer, types.Float, types.Boolean)) and not is_bf16(
                val
            ):
                raise _reject(
                    f"cannot store a value of type {val} into a DisjointSlice of bfloat16 "
                    "(a bf16 output takes an int, float or bool, rounded to nearest even)"
                )
            return signature(types.none, *args)
        if self.context.can_convert(val, target.dtype) is None:
            raise _reject(store_refusal(val, "a DisjointSlice", target.dtype, "out", _VIEWS_DOC))
        return signature(types.none, *args)


_VIEWS_DOC = "docs/porting.md, 'Python constructs on views'"


def store_refusal(val: Any, container: str, dtype: Any, name: str, doc: str) -> str:
    """Why ``name[w] = val`` does not type for an output ``container`` of ``dtype``; for a
    record element, the field stores that write it (a tuple of the fields is the first try:
    port20's RGBA downsample)."""
    if not isinstance(dtype, types.Record):
        return f"cannot store a value of type {val} into {container} of {dtype}"
    fields = list(dtype.fields)
    first, *rest = fields
    more = f", `{name}[w].{rest[0]} = ...`" if rest else ""
    return (
        f"cannot store a value of type {val} into {container} of records (fields "
        f"{', '.join(fields)}): a record element takes a record of its dtype (`{name}[w] = "
        "src[k]`, src an input of that dtype) or is written field by field through the witness, "
        f"`{name}[w].{first} = ...`{more}{', ...' if len(rest) > 1 else ''} "
        f"({doc})"
    )


def _column_witness(target: DisjointSliceType, idx: Any) -> Any:
    """The witness of an access to ``target``; for a ``Columns`` output, of ``out[row, w]``.

    A ``Columns`` output is indexed by a plain integer row and the thread's column
    witness (any row: the thread owns its column in every one); any other index of
    it, or that form on another output, is refused here.
    """
    pair = isinstance(idx, types.BaseTuple) and len(idx) == 2
    if target.space != "Columns":
        if pair and any(isinstance(t, ThreadIndexType) for t in idx.types):
            raise _reject(
                f"a DisjointSlice of space {target.space} is indexed by the witness alone "
                f"(`out[w]`), not by a (row, witness) pair; that form is for Columns outputs "
                "(`out[row, thread.column()]`)"
            )
        return idx
    if pair and isinstance(idx.types[0], types.Integer):
        if isinstance(idx.types[1], ThreadIndexType):
            return idx.types[1]
    raise _reject(
        f"a Columns output is indexed as out[row, w]: a plain integer row and the thread's "
        f"column witness w = thread.column() (it owns its column in every row); got {idx}"
    )


# --------------------------------------------------------------------------- typing: records

#: Depth of simtsafe compiles on this thread (kernels and their helpers are typed inside).
_TYPING = threading.local()


def compiling() -> bool:
    """Is a simtsafe kernel (or a helper of one) being compiled on this thread?"""
    return bool(getattr(_TYPING, "depth", 0))


# NVVM compiles, for simtsafe's kernels, the text the compiled-form analysis reads.
_nvvminput.install(compiling)


class simtsafe_typing:  # noqa: N801 - a context manager, used as a function is
    """Type the enclosed compile with simtsafe's rules for Numba's own record templates.

    Numba types ``r["x"] = v`` (and ``r[0] = v``, a field by position) on any
    record, and a record read from an array is a reference to the array's
    bytes: from an input, or from another thread's element. simtsafe kernels
    write fields only as ``out[w].field = v`` (an attribute store the
    decoration admits only on the thread's own output element), so the
    subscript form is refused while a simtsafe kernel is compiled; raw
    ``numba.cuda.jit`` code compiled outside keeps Numba's behaviour.

    A class, not a generator: an unchecked launch enters it at every call (Numba may
    compile there), and a generator-based context manager cost micro-seconds a launch.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        _TYPING.depth = getattr(_TYPING, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _TYPING.depth -= 1


@cache
def _trusted_record_writers() -> frozenset[Any]:
    """Python functions of numba.cuda.random: they advance xoroshiro states by field."""
    from numba.cuda import random as numba_random

    return frozenset(
        f for v in vars(numba_random).values() if (f := getattr(v, "py_func", None)) is not None
    )


def _function_being_typed() -> Any:
    """The Python function whose body Numba is typing (found on the typing call stack)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        inferer = frame.f_locals.get("typeinfer")
        func_id = getattr(inferer, "func_id", None)
        if func_id is not None:
            return func_id.func
        frame = frame.f_back
    return None


def _refuse_record_setitem(template: Any) -> None:
    original = template.generic

    def generic(self: Any, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if (
            getattr(_TYPING, "depth", 0)
            and args
            and isinstance(args[0], types.Record)
            and _function_being_typed() not in _trusted_record_writers()
        ):
            raise _reject(
                f"a record field is written only by attribute on the thread's own output "
                f"element (`out[w].field = v`); `r[...] = v` on a record ({args[0]}) is refused: "
                "the record may be an input's element or another thread's"
            )
        return original(self, args, kws)

    template.generic = generic


def _guard_record_templates() -> None:
    from numba.cuda.typing import arraydecl

    for name in ("StaticSetItemRecord", "StaticSetItemLiteralRecord"):
        _refuse_record_setitem(getattr(arraydecl, name))


_guard_record_templates()

#: What an input (a read-only array: ``In``, or a slice of one) offers, by its Numba type.
#: Everything else Numba's array type has -- ``.flat``, ``.T``, ``.view``, methods -- is
#: refused while a simtsafe kernel is typed: ``a.flat[k] = v`` writes a read-only array.
INPUT_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype", "itemsize", "nbytes", "strides"})

_INPLACE = frozenset(
    getattr(operator, f"i{n}")
    for n in (
        "add",
        "sub",
        "mul",
        "truediv",
        "floordiv",
        "mod",
        "pow",
        "lshift",
        "rshift",
        "and",
        "or",
        "xor",
        "matmul",
    )
)


def _typed_by_view(context_class: Any) -> None:
    """What a view allows is decided on its Numba type, while a simtsafe kernel is typed."""
    original_getattr = context_class.resolve_getattr
    original_function = context_class.resolve_function_type

    def resolve_getattr(self: Any, typ: Any, attr: str) -> Any:
        if (
            getattr(_TYPING, "depth", 0)
            and isinstance(typ, types.Array)
            and not typ.mutable
            and attr not in INPUT_ATTRIBUTES
        ):
            raise _reject(
                f"an input ({typ}) offers only {', '.join(sorted(INPUT_ATTRIBUTES))}; `.{attr}` "
                "is not available on it (array attributes and methods such as .flat, .T or "
                ".view can write or alias the array). Index the input with ints or a witness"
            )
        if (
            getattr(_TYPING, "depth", 0)
            and isinstance(typ, types.Record)
            and attr not in typ.fields
            and not attr.startswith("__")
        ):
            # Numba's record typing fails with a raw KeyError here (`r.size` of a record
            # without a field `size`): a record offers its fields only.
            raise _reject(field_read_refusal(attr, f"a value of type {typ}"))
        return original_getattr(self, typ, attr)

    def resolve_function_type(self: Any, func: Any, args: Any, kws: Any) -> Any:
        key = getattr(func, "typing_key", func)
        if getattr(_TYPING, "depth", 0) and args and _hashable(key) and key in _INPLACE:
            target = args[0]
            if isinstance(target, types.Array) and not target.mutable:
                raise _reject(
                    f"an input ({target}) is read-only: `{_inplace_symbol(key)}` would update "
                    "it in place. Compute into a local (`x = a[i] + 1`) and write an output"
                )
            if isinstance(target, DisjointSliceType):
                raise _reject(
                    f"a DisjointSlice is written one element at a time through a witness; "
                    f"`out {_inplace_symbol(key)} v` is refused. Write `out[w] = out[w] + v`"
                )
        if (
            getattr(_TYPING, "depth", 0)
            and getattr(key, "__module__", None) == "numba.cuda.stubs"
            and _hashable(key)
        ):
            # numba.cuda's own operations (atomics, loads with cache hints...) type on
            # anything that has an array's ``ndim`` and ``dtype``; a simtsafe value that
            # none of them may take says so (a constant array: no atomic writes it).
            for arg in _flattened((*args, *(kws or {}).values())):
                refusal = getattr(arg, "stub_refusal", None)
                if refusal:
                    raise _reject(refusal)
        if getattr(_TYPING, "depth", 0) and isinstance(func, types.Dispatcher):
            for arg in _flattened((*args, *(kws or {}).values())):
                refusal = getattr(arg, "helper_refusal", None)
                if refusal:
                    raise _reject(refusal)
        return original_function(self, func, args, kws)

    context_class.resolve_getattr = resolve_getattr
    context_class.resolve_function_type = resolve_function_type


def _flattened(tys: Sequence[Any]) -> Iterator[Any]:
    """The types of ``tys`` and, for tuples, of their members (to any depth)."""
    for ty in tys:
        yield ty
        if isinstance(ty, types.BaseTuple):
            yield from _flattened(tuple(ty.types))


def _hashable(key: Any) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _inplace_symbol(func: Any) -> str:
    names = {"iadd": "+=", "isub": "-=", "imul": "*=", "itruediv": "/=", "ifloordiv": "//="}
    name = getattr(func, "__name__", "")
    return names.get(name, f"{name[1:]}=")


def _install_view_rules() -> None:
    from numba.cuda.typing.context import BaseContext

    _typed_by_view(BaseContext)


_install_view_rules()


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if isinstance(target, DisjointSliceType):
            w = _column_witness(target, idx)
            if not isinstance(w, ThreadIndexType) or w.space != target.space:
                raise _reject(
                    f"a DisjointSlice of space {target.space} is read only through a witness of "
                    f"that space (got {w}): any other element may be written by another "
                    f"thread. Read through {_CTOR_FOR_SPACE[target.space]}, or keep the value in "
                    "a local"
                )
            return signature(_read_type(target.dtype), *args)
        if isinstance(target, types.Array) and isinstance(idx, types.BaseTuple):
            if not any(isinstance(t, ThreadIndexType) for t in idx.types):
                return None
            raise _reject(
                f"an input is indexed by a witness alone (`a[w]`) or by plain ints; got {idx}. "
                "Read a 2D input at a column witness's column with its plain int: "
                "a[row, w.index] (not bounds-checked, as any plain-int read)"
            )
        if isinstance(target, types.Array) and isinstance(idx, ThreadIndexType):
            if idx.rank != target.ndim:
                raise _reject(
                    f"a {idx} witness addresses {idx.rank}D elements, but the array is "
                    f"{target.ndim}D; use a witness of matching rank or index with plain ints"
                )
            return signature(_read_type(target.dtype), target, idx)
        return None


@infer_global(len)
class _Len(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if len(args) == 1 and isinstance(args[0], DisjointSliceType):
            return signature(types.intp, args[0])
        return None


@infer_getattr
class _SliceAttrs(AttributeTemplate):
    key = DisjointSliceType

    def resolve_size(self, ds: DisjointSliceType) -> Any:
        return types.intp

    def resolve_ndim(self, ds: DisjointSliceType) -> Any:
        return types.intp

    def resolve_shape(self, ds: DisjointSliceType) -> Any:
        return types.UniTuple(types.intp, ds.ndim)


@infer_getattr
class _WitnessAttrs(AttributeTemplate):
    key = ThreadIndexType

    def generic_resolve(self, w: ThreadIndexType, attr: str) -> Any:
        ranks = _COORDS.get(attr)
        if ranks is None:
            return None
        if w.rank not in ranks:
            raise _reject(f"{w} has no .{attr}; {_ACCESSORS[w.rank]}")
        return types.intp

    @bound_function("ThreadIndex.in_bounds")
    def resolve_in_bounds(self, w: ThreadIndexType, args: tuple[Any, ...], kws: Any) -> Any:
        (target,) = args
        held = _witness_view(target) or _bounded_by_own_shape(target)
        arr = target.arr_type if held else target
        if not isinstance(arr, types.Array):
            advice = getattr(target, "in_bounds_advice", "")  # a HashTable's: lowering._hash
            raise _reject(
                f"w.in_bounds() takes a DisjointSlice, an input array or a constant array, got "
                f"{target}" + advice.format(param=getattr(target, "param", ""))
            )
        if _witness_view(target) and target.space != w.space:
            raise _reject(f"{w}.in_bounds() of a view written by witnesses of {target.space}")
        if arr.ndim != w.rank and not isinstance(target, DisjointSliceType):
            raise _reject(in_bounds_rank_refusal(str(w), w.rank, arr.ndim))
        return signature(types.boolean, target)


# --------------------------------------------------------------------------- lowering: views


@lower_builtin(operator.setitem, DisjointSliceType, ThreadIndexType, types.Any)
def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    dsty, wty, vty = sig.args
    val = stored_element(context, builder, dsty.dtype, vty, args[2])
    arr = _slice_array(context, builder, dsty, args[0])
    _store(
        context, builder, dsty.arr_type, arr, _witness_indices(context, builder, wty, args[1]), val
    )
    return context.get_dummy_value()


def _column_indices(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> list[Any]:
    """``[row, column]`` of ``out[row, w]`` on a ``Columns`` output (the row as ``intp``)."""
    pair = sig.args[1]
    row, w = cgutils.unpack_tuple(builder, args[1], 2)
    row = context.cast(builder, row, pair.types[0], types.intp)
    return [row, *_witness_indices(context, builder, pair.types[1], w)]


@lower_builtin(operator.setitem, DisjointSliceType, types.BaseTuple, types.Any)
def _lower_setitem_column(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    dsty, _, vty = sig.args
    _store(
        context,
        builder,
        dsty.arr_type,
        _slice_array(context, builder, dsty, args[0]),
        _column_indices(context, builder, sig, args),
        stored_element(context, builder, dsty.dtype, vty, args[2]),
    )
    return context.get_dummy_value()


@lower_builtin(operator.getitem, DisjointSliceType, types.BaseTuple)
def _lower_getitem_column(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    dsty = sig.args[0]
    arr = _slice_array(context, builder, dsty, args[0])
    idx = _column_indices(context, builder, sig, args)
    return _widened(builder, dsty.dtype, _load(context, builder, dsty.arr_type, arr, idx))


@lower_builtin(operator.getitem, DisjointSliceType, ThreadIndexType)
def _lower_getitem_slice(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    dsty, wty = sig.args
    arr = _slice_array(context, builder, dsty, args[0])
    return _widened(
        builder,
        dsty.dtype,
        _load(
            context, builder, dsty.arr_type, arr, _witness_indices(context, builder, wty, args[1])
        ),
    )


@lower_builtin(operator.getitem, types.Array, ThreadIndexType)
def _lower_getitem_array(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    arrty, wty = sig.args
    idx = _witness_indices(context, builder, wty, args[1])
    return _widened(builder, arrty.dtype, _load(context, builder, arrty, args[0], idx))


@lower_builtin(len, DisjointSliceType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    (dsty,) = sig.args
    ary = make_array(dsty.arr_type)(context, builder, _slice_array(context, builder, dsty, args[0]))
    return cgutils.unpack_tuple(builder, ary.shape, dsty.ndim)[0]


@lower_getattr(DisjointSliceType, "size")
def _lower_size(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return make_array(ty.arr_type)(context, builder, _slice_array(context, builder, ty, val)).nitems


@lower_getattr(DisjointSliceType, "ndim")
def _lower_ndim(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return context.get_constant(types.intp, ty.ndim)


@lower_getattr(DisjointSliceType, "shape")
def _lower_shape(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return make_array(ty.arr_type)(context, builder, _slice_array(context, builder, ty, val)).shape


def _lower_coordinate(attr: str) -> None:
    ranks = _COORDS[attr]

    @lower_getattr(ThreadIndexType, attr)
    def lower(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
        w = cgutils.create_struct_proxy(ty)(context, builder, value=val)
        return getattr(w, ranks[ty.rank])


for _attr in _COORDS:
    _lower_coordinate(_attr)


@lower_builtin("ThreadIndex.in_bounds", ThreadIndexType, types.Any)
def _lower_in_bounds(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    wty, target = sig.args
    if _witness_view(target) or _bounded_by_own_shape(target):
        arrty, arr = target.arr_type, _slice_array(context, builder, target, args[1])
    else:
        arrty, arr = target, args[1]
    idx = _witness_indices(context, builder, wty, args[0])
    if isinstance(target, DisjointSliceType) and target.space == "Columns":
        # The column exists (in every row): a Columns output is 2D, its witness 1D.
        shape = cgutils.unpack_tuple(builder, make_array(arrty)(context, builder, arr).shape, 2)
        return builder.icmp_unsigned("<", idx[0], shape[1])
    ok, _ = _guarded_pointer(context, builder, arrty, arr, idx)
    return ok


# --------------------------------------------------------------------------- intrinsics


def _witness_intrinsic(space: str, compute: Callable[[ir.IRBuilder], list[ir.Value]]) -> Any:
    wty = ThreadIndexType(space)

    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            return _make_witness(context, builder, wty, compute(builder))

        return wty(), codegen

    return intrinsic(typer)


def _index_1d(checked: bool) -> Callable[[ir.IRBuilder], list[ir.Value]]:
    def compute(builder: ir.IRBuilder) -> list[ir.Value]:
        i = _linear_1d(builder)
        if checked:
            ok = _all_one(builder, ("ntid.y", "ntid.z", "nctaid.y", "nctaid.z"))
            i = builder.select(ok, i, _const(SENTINEL))
        return [i]

    return compute


def _index_2d(checked: bool) -> Callable[[ir.IRBuilder], list[ir.Value]]:
    def compute(builder: ir.IRBuilder) -> list[ir.Value]:
        row = builder.add(
            builder.mul(_sreg(builder, "ctaid.y"), _sreg(builder, "ntid.y")),
            _sreg(builder, "tid.y"),
        )
        col = _linear_1d(builder)
        if checked:
            ok = _all_one(builder, ("ntid.z", "nctaid.z"))
            row = builder.select(ok, row, _const(SENTINEL))
        return [row, col]

    return compute


def _axis(builder: ir.IRBuilder, axis: str) -> ir.Value:
    """``blockIdx * blockDim + threadIdx`` along one axis."""
    return builder.add(
        builder.mul(_sreg(builder, f"ctaid.{axis}"), _sreg(builder, f"ntid.{axis}")),
        _sreg(builder, f"tid.{axis}"),
    )


def _index_3d(builder: ir.IRBuilder) -> list[ir.Value]:
    # Invariant: unique per thread in every launch shape (each coordinate
    # decomposes into block and thread index uniquely), so no check is needed.
    return [_axis(builder, "z"), _axis(builder, "y"), _linear_1d(builder)]


def _warp_leader(builder: ir.IRBuilder) -> list[ir.Value]:
    nthreads = builder.mul(
        builder.mul(_sreg(builder, "ntid.x"), _sreg(builder, "ntid.y")), _sreg(builder, "ntid.z")
    )
    warps_per_block = builder.udiv(builder.add(nthreads, _const(31)), _const(32))
    ltid = _linear_tid_in_block(builder)
    idx = builder.add(
        builder.mul(_linear_block(builder), warps_per_block), builder.udiv(ltid, _const(32))
    )
    is_lane0 = builder.icmp_unsigned("==", builder.and_(ltid, _const(31)), _const(0))
    return [builder.select(is_lane0, idx, _const(SENTINEL))]


def _block_leader(builder: ir.IRBuilder) -> list[ir.Value]:
    is_first = builder.icmp_unsigned("==", _linear_tid_in_block(builder), _const(0))
    return [builder.select(is_first, _linear_block(builder), _const(SENTINEL))]


def _scalar_intrinsic(compute: Callable[[ir.IRBuilder], ir.Value]) -> Any:
    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            return compute(builder)

        return types.intp(), codegen

    return intrinsic(typer)


@intrinsic
def _mint_1d(typingctx: Any, k: Any) -> Any:
    """Witness for grid-stride element ``k`` (only emitted by the grid_stride rewrite)."""
    if not isinstance(k, types.Integer):
        return None
    wty = ThreadIndexType("Index1D")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return _make_witness(context, builder, wty, [context.cast(builder, args[0], k, types.intp)])

    return wty(k), codegen


@intrinsic
def _extent(typingctx: Any, s: Any) -> Any:
    """Number of elements of a DisjointSlice or input array (grid_stride's bound)."""
    if isinstance(s, DisjointSliceType):
        arrty = s.arr_type
    elif isinstance(s, types.Array):
        arrty = s
    else:
        raise _reject(f"thread.grid_stride() takes a DisjointSlice or an input array, got {s}")
    if arrty.ndim != 1:
        raise _reject(f"thread.grid_stride() walks 1D arrays; got a {arrty.ndim}D one")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        arr = _slice_array(context, builder, s, args[0]) if s is not arrty else args[0]
        # shape[0]: the same value the witness bounds check reads.
        return cgutils.unpack_tuple(builder, make_array(arrty)(context, builder, arr).shape, 1)[0]

    return types.intp(s), codegen


@intrinsic
def _unchecked(typingctx: Any, ds: Any) -> Any:
    """The raw array of a DisjointSlice: what `out.unchecked` inside an unsafe region becomes."""
    if not isinstance(ds, DisjointSliceType):
        raise _reject(f".unchecked is a DisjointSlice attribute; got {ds}")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return _slice_array(context, builder, ds, args[0])

    return ds.arr_type(ds), codegen


@intrinsic
def _no_witness(typingctx: Any, x: Any) -> Any:
    """Identity that refuses witnesses: wraps every ``return`` of a device helper."""
    if _contains_witness(x):
        raise _reject(
            f"a device helper may not return a witness, a tile or a thread-private array ({x}): "
            "they are made in the function that uses them. Return plain values, or pass the "
            "DisjointSlice (or the tile, or the array) to the helper"
        )

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return args[0]

    return x(x), codegen


def _make_view(space: str | None) -> Any:
    """Intrinsic turning a kernel's plain array argument into its typed view."""

    def typer(typingctx: Any, arr: Any) -> Any:
        if not isinstance(arr, types.Array):
            raise _reject(f"expected a device array argument, got {arr}")
        if space is None:  # In[...]: Numba's readonly array type refuses every store
            rt: Any = arr.copy(readonly=True)
        else:
            if arr.ndim != SPACE_NDIM[space]:
                raise _reject(
                    f"a DisjointSlice of space {space} is {SPACE_NDIM[space]}D; got a "
                    f"{arr.ndim}D array"
                )
            rt = DisjointSliceType(arr, space)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            if space is None:
                assume_run_aligned(context, builder, arr, args[0])  # what the launch checked
                return args[0]
            view = cgutils.create_struct_proxy(rt)(context, builder)
            view.arr = args[0]
            return view._getvalue()

        return rt(arr), codegen

    return intrinsic(typer)


@intrinsic
def _bound_block(typingctx: Any, n: Any) -> Any:
    """Record the contract's ``max_threads`` (no exact block) on the kernel, as the named
    metadata ``!ss.maxthreads = !{ptr @kernel, i32 n}`` that ``_blockgeo.bound_sreg`` reads
    (NVVM ignores it; the ``.maxntid`` stamp comes from the launch bounds).

    Emitted by the decorator as the kernel's first statement, before any thread-index read.
    """
    limit = getattr(n, "literal_value", None)
    if not isinstance(limit, int) or limit < 1:
        return None

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        module, fn = builder.module, builder.function
        bounds = cgutils.get_or_insert_named_metadata(module, MAX_THREADS_METADATA)
        bounds.add(module.add_metadata([fn, ir.Constant(ir.IntType(32), limit)]))
        return context.get_dummy_value()

    return types.none(n), codegen


@intrinsic
def _require_block(typingctx: Any, x: Any, y: Any, z: Any) -> Any:
    """Stamp ``.reqntid x, y, z`` on the kernel: the driver then refuses any other block.

    Emitted by the decorator as the kernel's first statement when the
    contract fixes the block (never together with launch_bounds: ptxas
    rejects .maxntid with .reqntid).
    """
    dims = tuple(getattr(t, "literal_value", None) for t in (x, y, z))
    if any(not isinstance(d, int) for d in dims):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        module, fn = builder.module, builder.function
        annotations = cgutils.get_or_insert_named_metadata(module, "nvvm.annotations")
        for key, value in zip(("reqntidx", "reqntidy", "reqntidz"), dims, strict=True):
            md = module.add_metadata(
                [fn, ir.MetaDataString(module, key), ir.Constant(ir.IntType(32), value)]
            )
            annotations.add(md)
        return context.get_dummy_value()

    return types.none(x, y, z), codegen


def _kernel_annotation(key: str) -> Any:
    """Intrinsic ``(n)`` stamping the NVVM annotation ``key`` = ``n`` (a literal int) on the
    kernel being compiled."""

    def typer(typingctx: Any, n: Any) -> Any:
        value = getattr(n, "literal_value", None)
        if not isinstance(value, int):
            return None

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            module, fn = builder.module, builder.function
            annotations = cgutils.get_or_insert_named_metadata(module, "nvvm.annotations")
            md = module.add_metadata(
                [fn, ir.MetaDataString(module, key), ir.Constant(ir.IntType(32), value)]
            )
            annotations.add(md)
            return context.get_dummy_value()

        return types.none(n), codegen

    return intrinsic(typer)


#: ``.maxnreg n`` (``max_registers=``): ptxas allocates no more. Numba passes
#: ``max_registers`` to the linker only (the cubin); the annotation puts it in the PTX
#: too, so a kernel compiled from its PTX by any tool is held to it.
_max_registers = _kernel_annotation("maxnreg")
#: ``.minnctapersm n`` (the contract's ``blocks_per_sm``): ptxas keeps the registers per
#: thread low enough for ``n`` resident blocks of the bounded size.
_min_blocks = _kernel_annotation("minctasm")


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names a rewritten kernel or helper is executed with.

    Args:
        proven_domain: the launch rank the host proves before every launch
            (a contract's ``domain``), or None for helpers and contract-less
            kernels, whose witnesses check the launch shape on the device.
    """
    proven1 = proven_domain == 1
    proven2 = proven_domain == 2
    gs_start = _scalar_intrinsic(lambda b: _index_1d(not proven1)(b)[0])
    gs_step = _scalar_intrinsic(lambda b: b.mul(_sreg(b, "nctaid.x"), _sreg(b, "ntid.x")))
    names: dict[str, Any] = {
        "__ss_index_1d": _witness_intrinsic("Index1D", _index_1d(not proven1)),
        "__ss_column": _witness_intrinsic("Columns", _index_1d(not proven1)),
        "__ss_index_2d": _witness_intrinsic("Index2D", _index_2d(not proven2)),
        "__ss_index_3d": _INDEX_3D,
        "__ss_warp_leader": _witness_intrinsic("PerWarp", _warp_leader),
        "__ss_block_leader": _witness_intrinsic("PerBlock", _block_leader),
        "__ss_gs_start": gs_start,
        "__ss_gs_step": gs_step,
        "__ss_mint_1d": _mint_1d,
        "__ss_extent": _extent,
        "__ss_no_witness": _no_witness,
        "__ss_unchecked": _unchecked,
        "__ss_require_block": _require_block,
        "__ss_bound_block": _bound_block,
        "__ss_max_registers": _max_registers,
        "__ss_min_blocks": _min_blocks,
        "__ss_view_in": _VIEW_IN,
    }
    for space in SPACE_NDIM:
        names[f"__ss_view_{space}"] = _VIEWS[space]
    from . import _random

    names.update(_random.builtins())
    from . import _tiles  # imports this module: bound late

    names.update(_tiles.builtins(proven_domain=proven_domain))
    names.update(_coop.builtins(proven_domain=proven_domain))
    from . import _rows  # imports this module: bound late

    names.update(_rows.builtins(proven_domain=proven_domain))
    from . import _ufuncs_cuda

    names.update(_ufuncs_cuda.builtins())
    from . import _vec

    names.update(_vec.builtins())
    from . import _asyncfill  # imports _tiles: bound late

    names.update(_asyncfill.builtins())

    from . import _mma  # imports this module: bound late

    names.update(_mma.builtins(proven_domain=proven_domain))
    from . import _wgmma  # imports this module: bound late

    names.update(_wgmma.builtins(proven_domain=proven_domain))
    from . import _append, _hash  # import this module: bound late

    names.update(_append.builtins())
    names.update(_hash.builtins())
    from . import _constarrays  # imports this module: bound late

    names["__ss_const_array"] = _constarrays.const_array
    from . import _fieldreads  # imports this module: bound late

    names["__ss_field"] = _fieldreads.field_read
    return names


_INDEX_3D = _witness_intrinsic("Index3D", _index_3d)
_VIEW_IN = _make_view(None)
_VIEWS = {space: _make_view(space) for space in SPACE_NDIM}
