"""Numba types and lowering of shared tiles and block-local witnesses.

What the kernel decorator's rewrite calls for ``simtsafe.shared.tile``,
``simtsafe.shared.dynamic_tile``, ``thread.local_index()``,
``thread.local_index_2d()`` and ``for w in thread.block_stride(tile)``:

* ``SharedTileType`` -- a one-member struct around Numba's shared array,
  with the static shape (and row padding) in the type, so bounds checks
  against it are compares with constants. Written only through a
  block-local witness of its space (``Local1D`` for a 1D tile, ``Local2D``
  for a 2D one); read through such a witness or with ints. Every access is
  checked against the tile's own logical shape (one unsigned compare per
  axis: out of range, a write writes nothing and a read gives 0); the
  compares fold where LLVM can prove them, which the block_stride witness
  and the ``.reqntid`` block shape make the common case.
* block-local witnesses: the thread's linear number in its block
  (``Local1D``) and its ``(threadIdx.y, threadIdx.x)`` (``Local2D``). They
  are unique within a block only, so they write tiles, never outputs.
* the ``block_stride`` loop bounds (``__ss_bs_*``) and witness
  (``__ss_mint_local``).

The phase discipline (fill through witnesses, a barrier, then reads) and the
uniformity of barriers are the decorator's proofs, not this module's.
Output tiles are in ``_outtiles``, thread-private arrays in ``_localarrays``;
``builtins()`` here gives all of their private names.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.cudadrv import nvvm
from numba.cuda.cudaimpl import _generic_array, _get_unique_smem_id
from numba.cuda.extending import intrinsic, lower_builtin
from numba.cuda.typing.templates import (
    AbstractTemplate,
    infer_global,
    signature,
)

from . import _localarrays, _outtiles
from . import _tilebase as tb
from ._accumulate import SharedAccumulatorType
from ._bf16 import is_bf16, stored_element
from ._cooprule import WALK_2D_ACCUMULATOR
from ._cuda import SENTINEL, ThreadIndexType, _const, _make_witness, _reject, _witness_indices
from ._provenance import mark_witness, tile_symbol
from ._swizzle import ALIGN, SwizzledTileType, only_fill_and_wgmma, swizzle_refusal
from ._vec import TILE_ALIGN, element_value, value_type

__all__ = ["SharedTileType", "builtins"]

#: The block-local space that writes a tile of each rank.
_TILE_SPACE = {1: "Local1D", 2: "Local2D"}

#: How to get a witness of each block-local space, for messages.
_LOCAL_CTOR = {
    "Local1D": "thread.local_index() or `for w in thread.block_stride(tile)`",
    "Local2D": "thread.local_index_2d() or `for w in thread.block_stride(tile)`",
}


@tb.register_holder
class SharedTileType(tb.HolderType):
    """A block's shared tile: element type, static shape (None: dynamic, 1D), row padding."""

    #: Static and dynamic tiles start at a multiple of 16 bytes (``_tile_alignment``,
    #: ``_shared_dynamic_tile``; a ``tile_shared`` window's tiles at multiples of 16).
    base_align = TILE_ALIGN

    def __init__(
        self, dtype: Any, shape: tuple[int, ...] | None, pad: int = 0, readonly: bool = False
    ) -> None:
        self.dtype = dtype
        self.shape = shape
        self.pad = pad
        #: The view a helper receives: it reads the tile during a read phase, never writes.
        self.readonly = readonly
        self.ndim = 1 if shape is None else len(shape)
        self.storage = None if shape is None else (*shape[:-1], shape[-1] + pad)
        self.space = _TILE_SPACE[self.ndim]
        self.arr_type = types.Array(dtype, self.ndim, "C")
        extent = "dynamic" if shape is None else "x".join(str(n) for n in shape)
        padding = f", pad {pad}" if pad else ""
        view = ", read-only" if readonly else ""
        super().__init__(name=f"SharedTile[{dtype}, {extent}{padding}{view}]")

    @property
    def helper_refusal(self) -> str | None:
        """Why this tile may not be a helper's argument (``_cuda`` asks at each helper call)."""
        if self.readonly:
            return None
        return (
            f"a shared tile ({self}) reaches a @simtsafe.device helper writable; a helper "
            "receives a tile only as a read (pass the tile's name itself, `helper(t)`, during "
            "a read phase: the kernel gives the helper a read-only view), never inside a "
            "tuple or through another name"
        )


# --------------------------------------------------------------------------- typing


@infer_global(operator.setitem)
class _SetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx, val = args
        if isinstance(target, SwizzledTileType):
            raise _reject(only_fill_and_wgmma(target, "a store"))
        if not isinstance(target, SharedTileType):
            return None
        if target.readonly:
            raise _reject(
                f"a shared tile passed to a helper ({target}) is read-only there: the call is "
                "a read of the tile (in its read phase, after a barrier). Fill tiles in the "
                "kernel that makes them"
            )
        if not isinstance(idx, ThreadIndexType) or idx.space != target.space:
            raise _reject(
                f"a shared tile ({target}) is filled only through a block-local witness of its "
                f"space ({target.space}): each element then has one writer. Got an index of "
                f"type {idx}; use {_LOCAL_CTOR[target.space]}"
            )
        if is_bf16(target.dtype):  # bf16 tiles store any real, rounded via float32
            if not isinstance(val, (types.Integer, types.Float, types.Boolean)) and not is_bf16(
                val
            ):
                raise _reject(f"cannot store a value of type {val} into a {target}")
        elif self.context.can_convert(val, target.dtype) is None:
            raise _reject(f"cannot store a value of type {val} into a {target}")
        return signature(types.none, target, idx, val)


@infer_global(operator.getitem)
class _GetItem(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        target, idx = args
        if isinstance(target, SwizzledTileType):
            raise _reject(only_fill_and_wgmma(target, "an element read"))
        if not isinstance(target, SharedTileType):
            return None
        if isinstance(idx, ThreadIndexType):
            if idx.space != target.space:
                raise _reject(
                    f"a {idx} witness cannot index a {target} (its space is {target.space}); "
                    "read with ints, e.g. w.index or (w.row, w.col)"
                )
        elif not tb.is_int_index(idx, target.ndim):
            what = "an int" if target.ndim == 1 else "(row, col) ints"
            raise _reject(
                f"a {target.ndim}D shared tile is read with a {target.space} witness or {what}, "
                f"got {idx}; tiles have no slices"
            )
        return signature(value_type(target.dtype), target, idx)  # bf16: read as float32


tb.type_array_like(
    SharedTileType,
    no_iteration=lambda ty: (
        f"a shared tile ({ty}) cannot be iterated; fill it with "
        "`for w in thread.block_stride(tile)` and read it with indices"
    ),
)


# --------------------------------------------------------------------------- lowering: access


@lower_builtin(operator.setitem, SharedTileType, ThreadIndexType, types.Any)
def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    tty, wty, vty = sig.args
    val = stored_element(context, builder, tty.dtype, vty, args[2])
    idx = _witness_indices(context, builder, wty, args[1])
    tb.holder_store(context, builder, tty, args[0], idx, val, own=True)
    return context.get_dummy_value()


@lower_builtin(operator.getitem, SharedTileType, ThreadIndexType)
def _lower_getitem_witness(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    tty, wty = sig.args
    idx = _witness_indices(context, builder, wty, args[1])
    raw = tb.holder_load(context, builder, tty, args[0], idx)
    return element_value(context, builder, tty.dtype, raw)


def _lower_getitem_ints(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    tty, ity = sig.args
    idx = tb.int_indices(context, builder, ity, args[1])
    raw = tb.holder_load(context, builder, tty, args[0], idx)
    return element_value(context, builder, tty.dtype, raw)


lower_builtin(operator.getitem, SharedTileType, types.Integer)(_lower_getitem_ints)
lower_builtin(operator.getitem, SharedTileType, types.BaseTuple)(_lower_getitem_ints)


tb.lower_holder_metadata(SharedTileType)


# --------------------------------------------------------------------------- constructors


def _literal_pad(pad: Any) -> int | None:
    if pad is None or isinstance(pad, types.Omitted | types.NoneType):
        return 0
    value = getattr(pad, "literal_value", None)
    return value if isinstance(pad, types.IntegerLiteral) and isinstance(value, int) else None


def _tile_type(
    shape: Any, dtype: Any, pad: Any, swizzle: Any = None
) -> SharedTileType | SwizzledTileType:
    """The type of ``shared.tile(shape, dtype, pad, swizzle)``, or the refusal of a bad call."""
    static = tb.static_shape(shape)
    if static is None:
        raise _reject(
            f"shared.tile(shape, dtype) needs a static shape: an int or a tuple of ints known "
            f"when the kernel compiles (literals or module constants, not expressions), got "
            f"{shape}. For a size chosen at launch use shared.dynamic_tile(dtype)"
        )
    if len(static) not in _TILE_SPACE or any(n < 1 for n in static):
        raise _reject(f"shared.tile(): a tile is 1D or 2D with positive extents, got {static}")
    padding = _literal_pad(pad)
    if padding is None or padding < 0 or (padding and len(static) != 2):
        raise _reject(
            f"shared.tile(): pad is a compile-time int >= 0 that pads the rows of a 2D tile, got "
            f"{pad} for a {len(static)}D tile"
        )
    elem = tb.dtype_of(dtype, "shared.tile")
    layout = _literal_pad(swizzle)
    if layout not in (0, 128):
        raise _reject(
            f"shared.tile(): swizzle is 0 (rows) or 128 (the 128-byte swizzled layout that "
            f"wgmma.mma reads), a compile-time int; got {swizzle}"
        )
    if layout:
        refusal = swizzle_refusal(static, elem, padding)
        if refusal is not None:
            raise _reject(refusal)
        return SwizzledTileType(elem, (static[0], static[1]))
    return SharedTileType(elem, static, padding)


def _tile_alignment(tty: SharedTileType | SwizzledTileType) -> int:
    if isinstance(tty, SwizzledTileType):
        return ALIGN  # the swizzle pattern starts at a multiple of 1024 bytes (_swizzle)
    # 16 bytes: a run of 16 bytes at a multiple of 16 from the start is one ld.shared.v4
    # (vec.load) or one cp.async.cg (shared.fill_async), and rows of 16 bytes for
    # ldmatrix (lowering/_mma).
    return max(TILE_ALIGN, _element_align(tty.dtype))


def _element_align(dtype: Any) -> int:
    """The alignment an element of ``dtype`` needs: its size for a number (complex128: 16);
    for a record at most 16 (its size need not be a power of two: a 24-byte record's
    ``.align 24`` is invalid PTX -- attack round 20's false refusal; numpy aligns a record's
    fields to at most 8 bytes)."""
    if isinstance(dtype, types.Record):
        return TILE_ALIGN
    return int(dtype.bitwidth // 8) if hasattr(dtype, "bitwidth") else 0


def _storage_dtype(tty: SharedTileType | SwizzledTileType) -> Any:
    # bf16: numba-cuda allocates no __nv_bfloat16 array; i16 is the same storage
    return types.int16 if is_bf16(tty.dtype) else tty.dtype


def _omitted(arg: Any) -> Any:
    return types.Omitted(None) if arg is None else arg


def _shared_tile(
    typingctx: Any, shape: Any, dtype: Any, pad: Any = None, swizzle: Any = None
) -> Any:
    """``shared.tile(shape, dtype, pad=0, swizzle=0)``: a static shared array of the block per
    call site.

    ``pad`` extra elements at the end of each row of a 2D tile (storage only:
    the tile's shape, its bounds and block_stride stay ``shape``) shift
    consecutive rows by one bank, so column reads do not conflict.
    ``swizzle=128``: the layout of ``_swizzle`` (1024-byte aligned).
    """
    tty = _tile_type(shape, dtype, pad, swizzle)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        tile = cgutils.create_struct_proxy(tty)(context, builder)
        tile.arr = _generic_array(
            context,
            builder,
            shape=tty.storage,
            dtype=_storage_dtype(tty),
            symbol_name=_get_unique_smem_id(tile_symbol("_simtsafe_tile")),
            addrspace=nvvm.ADDRSPACE_SHARED,
            alignment=_tile_alignment(tty),
        )
        return tile._getvalue()

    return tty(shape, dtype, _omitted(pad), _omitted(swizzle)), codegen


#: The bytes of a kernel's tile window laid out so far, on the LLVM module being lowered.
_WINDOW_USED = "_simtsafe_window_used"


def _shared_wtile(
    typingctx: Any, window: Any, shape: Any, dtype: Any, pad: Any = None, swizzle: Any = None
) -> Any:
    """``shared.tile(...)`` of a kernel whose contract declares ``tile_shared``.

    The tile lives in the launch's dynamic shared memory (which prepare sizes to
    ``tile_shared`` bytes and opts the function in to, above 48 KiB) at an offset
    fixed here: the tiles of the kernel, in the order they are lowered, each at the
    next multiple of 16 bytes. A tile past ``window`` bytes is refused. A swizzled
    tile takes 1024 bytes more and starts at the first multiple of 1024 in them
    (the launch's dynamic base is aligned at run time: its alignment is not known).

    Safety: the tiles' byte ranges are disjoint (the running offset lives on the
    module, and only the kernel itself makes tiles: ``_check_helper_uses``); each
    tile is its own ``.extern .shared`` symbol (every one starts at the dynamic base),
    so the compiled-form phase check (``verify._tilephases``) sees one object per
    tile, as for static tiles. No dynamic tile can share the window: the contract
    refuses ``tile_shared`` with ``dynamic_shared``, which ``dynamic_tile`` needs.
    """
    limit = getattr(window, "literal_value", None)
    if not isinstance(window, types.IntegerLiteral) or not isinstance(limit, int):
        return None
    tty = _tile_type(shape, dtype, pad, swizzle)
    storage = tty.storage
    assert storage is not None
    swizzled = isinstance(tty, SwizzledTileType)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        elem = _storage_dtype(tty)
        itemsize = context.get_abi_sizeof(context.get_data_type(elem))
        nbytes = itemsize
        for n in storage:
            nbytes *= n
        nbytes = -(-nbytes // TILE_ALIGN) * TILE_ALIGN
        if swizzled:
            nbytes += ALIGN  # room to start at a multiple of 1024
        module = builder.module
        offset = getattr(module, _WINDOW_USED, 0)
        if offset + nbytes > limit:
            raise _reject(
                f"the kernel's shared tiles need more than the {limit} B its contract declares "
                f"as tile_shared: this {tty} ({nbytes} B) would end at byte {offset + nbytes}. "
                f"Raise tile_shared to the sum of the tiles' bytes (each rounded up to 16, a "
                "swizzled tile 1024 more), or use smaller tiles"
            )
        setattr(module, _WINDOW_USED, offset + nbytes)
        i8 = ir.IntType(8)
        gv = cgutils.add_global_variable(
            module,
            ir.ArrayType(i8, 0),
            _get_unique_smem_id(tile_symbol("_simtsafe_tile")),
            nvvm.ADDRSPACE_SHARED,
        )
        gv.linkage = "external"
        gv.align = _tile_alignment(tty)
        base = builder.gep(gv, [_const(0), ir.Constant(ir.IntType(64), offset)])
        if swizzled:
            # Invariant: skip < 1024 <= the room reserved above, so the tile stays inside
            # its bytes [offset, offset + nbytes) of the window.
            low = builder.and_(builder.ptrtoint(base, ir.IntType(64)), _const(ALIGN - 1))
            skip = builder.and_(builder.sub(_const(ALIGN), low), _const(ALIGN - 1))
            base = builder.gep(base, [skip])
        generic = builder.addrspacecast(base, ir.PointerType(i8), "generic")
        aryty = types.Array(elem, tty.ndim, "C")
        ary = context.make_array(aryty)(context, builder)
        stride = itemsize
        strides = []
        for n in reversed(storage):
            strides.append(stride)
            stride *= n
        context.populate_array(
            ary,
            data=builder.bitcast(generic, ary.data.type),
            shape=[context.get_constant(types.intp, n) for n in storage],
            strides=[context.get_constant(types.intp, s) for s in reversed(strides)],
            itemsize=context.get_constant(types.intp, itemsize),
            meminfo=None,
        )
        tile = cgutils.create_struct_proxy(tty)(context, builder)
        tile.arr = ary._getvalue()
        return tile._getvalue()

    return tty(window, shape, dtype, _omitted(pad), _omitted(swizzle)), codegen


_DYNAMIC_SYMBOL = "_simtsafe_dyntile"


def _shared_dynamic_tile(typingctx: Any, dtype: Any) -> Any:
    """``shared.dynamic_tile(dtype)``: the launch's dynamic shared memory as a 1D tile.

    Its extent is ``%dynamic_smem_size // itemsize``, read on the device, so
    it is always the launch's own size (``prepare(shared_mem=...)``).

    Safety: every dynamic tile starts at the same address; a second one in
    the same function is refused here (the two would alias), and the
    decorator must treat a helper's dynamic tile as the kernel's.
    """
    tty = SharedTileType(tb.dtype_of(dtype, "shared.dynamic_tile"), None)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        if any(name.startswith(_DYNAMIC_SYMBOL) for name in builder.module.globals):
            raise _reject(
                "shared.dynamic_tile() is called twice in one function: both tiles would be "
                "the same memory. Make one dynamic tile and pass it where it is needed"
            )
        tile = cgutils.create_struct_proxy(tty)(context, builder)
        tile.arr = _generic_array(
            context,
            builder,
            shape=(0,),
            dtype=tty.dtype,
            symbol_name=_get_unique_smem_id(tile_symbol(_DYNAMIC_SYMBOL)),
            addrspace=nvvm.ADDRSPACE_SHARED,
            can_dynsized=True,
            # 16 bytes, as a static tile: shared.fill_async copies 16-byte runs to
            # multiples of 16 from the start (cp.async.cg needs its destination aligned).
            alignment=max(TILE_ALIGN, _element_align(tty.dtype)),
        )
        return tile._getvalue()

    return tty(dtype), codegen


# --------------------------------------------------------------------------- block-local witnesses


def _local_index(builder: ir.IRBuilder) -> list[ir.Value]:
    # Invariant: the linear thread number is unique within a block of any shape.
    return [tb.linear_tid(builder)]


def _local_index_2d(z_proven: bool) -> Callable[[ir.IRBuilder], list[ir.Value]]:
    def compute(builder: ir.IRBuilder) -> list[ir.Value]:
        # Invariant: (ty, tx) is unique within a block only when blockDim.z == 1.
        row = tb.tid(builder, "y")
        if not z_proven:
            ok = builder.icmp_unsigned("==", tb.ntid(builder, "z"), _const(1))
            row = builder.select(ok, row, _const(SENTINEL))
        return [row, tb.tid(builder, "x")]

    return compute


def _local_witness(space: str, compute: Callable[[ir.IRBuilder], list[ir.Value]]) -> Any:
    wty = ThreadIndexType(space)

    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            idx = [mark_witness(builder, v, space, k) for k, v in enumerate(compute(builder))]
            return _make_witness(context, builder, wty, idx)

        return wty(), codegen

    return intrinsic(typer)


_Bound = Callable[[Any, ir.IRBuilder, SharedTileType, Any], Any]

#: What follows the refusal of block_stride over anything but a tile or an accumulator.
_WALK_ACCUMULATOR = " or a 1D shared accumulator (shared.accumulator(n, dtype))"


def _walked(tile: Any) -> None:
    """Refuse what block_stride cannot walk: anything but a shared tile or a 1D shared
    accumulator (whose walk gives the Local1D witnesses it is read with, ``acc[w]``: a
    bounds-checked read, phase-checked as ``acc[j]`` is; the walk itself touches nothing)."""
    if isinstance(tile, SwizzledTileType):
        raise _reject(only_fill_and_wgmma(tile, "thread.block_stride()"))
    if isinstance(tile, SharedAccumulatorType) and tile.ndim != 1:
        raise _reject(WALK_2D_ACCUMULATOR.format(what=tile))
    if not isinstance(tile, SharedTileType | SharedAccumulatorType):
        raise _reject(f"thread.block_stride() walks a shared tile{_WALK_ACCUMULATOR}, got {tile}")


def _extent(context: Any, builder: ir.IRBuilder, t: Any, v: Any) -> list[Any]:
    """The walked object's shape (an accumulator's is static)."""
    if isinstance(t, SharedAccumulatorType):
        return [context.get_constant(types.intp, n) for n in t.shape]
    return list(tb.holder_shape(context, builder, t, v))


def _tile_scalar(compute: _Bound) -> Any:
    """An intp-valued intrinsic of a shared tile (a block_stride loop bound)."""

    def typer(typingctx: Any, tile: Any) -> Any:
        _walked(tile)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            return compute(context, builder, tile, args[0])

        return types.intp(tile), codegen

    return intrinsic(typer)


def _block_stride(z_proven: bool) -> dict[str, Any]:
    """The ``__ss_bs_*`` bounds of ``for w in thread.block_stride(tile)``.

    1D tile: one row; columns ``tid, tid + T, ...`` (``T`` threads per block,
    ``tid`` the linear thread number). 2D tile: rows ``ty + bdy * tz, ... +
    bdy * bdz, ...`` and columns ``tx, tx + bdx, ...``; the z terms vanish
    when a 1D or 2D launch is proven (``blockDim.z == 1``).

    Invariant: every element of the tile is visited by exactly one thread of
    the block; with ``blockDim.z == 1`` it is the thread that
    ``local_index()`` (1D) or ``local_index_2d()`` (2D) names for the element
    when the element is in the thread's first row and column: one owner per
    element under every block-local witness.
    """

    def row_start(context: Any, builder: ir.IRBuilder, t: SharedTileType, v: Any) -> Any:
        if t.ndim == 1:
            return _const(0)
        ty = tb.opaque_tid(builder, "y")
        if z_proven:
            return ty
        return builder.add(ty, builder.mul(tb.ntid(builder, "y"), tb.opaque_tid(builder, "z")))

    def row_step(context: Any, builder: ir.IRBuilder, t: SharedTileType, v: Any) -> Any:
        if t.ndim == 1:
            return _const(1)
        bdy = tb.ntid(builder, "y")
        return bdy if z_proven else builder.mul(bdy, tb.ntid(builder, "z"))

    def col_start(context: Any, builder: ir.IRBuilder, t: SharedTileType, v: Any) -> Any:
        if t.ndim == 1:
            return tb.linear_tid(builder, tb.opaque_tid)
        return tb.opaque_tid(builder, "x")

    def col_step(context: Any, builder: ir.IRBuilder, t: SharedTileType, v: Any) -> Any:
        return tb.threads_per_block(builder) if t.ndim == 1 else tb.ntid(builder, "x")

    def stop(start: _Bound, step: _Bound, axis: int) -> _Bound:
        def compute(context: Any, builder: ir.IRBuilder, t: SharedTileType, v: Any) -> Any:
            """The extent, or ``start + extent`` when the step divides it.

            With ``0 <= start < step`` (the thread's offset within one step)
            and ``extent % step == 0``, both stops give the same indices, but
            the second gives every thread the trip count ``extent // step``:
            a constant for a static tile and block, so the loop unrolls like
            a raw ``for j in range(0, TILE, ROWS)``.
            """
            if t.ndim == 1 and axis == 0:
                return _const(1)
            extent = _extent(context, builder, t, v)[axis if t.ndim == 2 else 0]
            n = step(context, builder, t, v)
            if (
                isinstance(extent, ir.Constant)
                and isinstance(n, ir.Constant)
                and extent.constant % n.constant == 0
            ):
                return builder.add(start(context, builder, t, v), extent)
            return extent

        return compute

    parts: dict[str, _Bound] = {
        "row_start": row_start,
        "rows": stop(row_start, row_step, 0),
        "row_step": row_step,
        "col_start": col_start,
        "cols": stop(col_start, col_step, 1),
        "col_step": col_step,
    }
    return {f"__ss_bs_{name}": _tile_scalar(f) for name, f in parts.items()}


@intrinsic
def _mint_local(typingctx: Any, tile: Any, r: Any, c: Any) -> Any:
    """The block_stride loop's witness for element (r, c) (only emitted by that rewrite)."""
    _walked(tile)
    if not isinstance(r, types.Integer) or not isinstance(c, types.Integer):
        return None
    wty = ThreadIndexType(getattr(tile, "space", "Local1D"))  # an accumulator: Local1D

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        rr = context.cast(builder, args[1], r, types.intp)
        cc = context.cast(builder, args[2], c, types.intp)
        idx = [cc] if tile.ndim == 1 else [rr, cc]
        idx = [mark_witness(builder, v, wty.space, k) for k, v in enumerate(idx)]
        # Invariant: the expansion draws r and c from range(start, stop, step)
        # with 0 <= start, step >= 1 and stop at most this very tile's extent
        # (a tile's type carries its static shape; a function has one dynamic
        # tile), so the witness is inside the tile. Telling LLVM lets it drop
        # the bounds check of every access through the witness.
        shape = _extent(context, builder, tile, args[0])
        builder.assume(tb.unsigned_below(builder, idx, shape))
        return _make_witness(context, builder, wty, idx)

    return wty(tile, r, c), codegen


# --------------------------------------------------------------------------- builtins


_SHARED_TILE = tb.literal_intrinsic(_shared_tile)
_SHARED_WTILE = tb.literal_intrinsic(_shared_wtile)
_DYNAMIC_TILE = intrinsic(_shared_dynamic_tile)
_LOCAL_INDEX = _local_witness("Local1D", _local_index)
_BY_DOMAIN: dict[int | None, dict[str, Any]] = {}


@intrinsic
def _tile_read(typingctx: Any, tile: Any) -> Any:
    """``__ss_tile_read(t)``: the read-only view of a tile that a helper receives."""
    if isinstance(tile, SwizzledTileType):
        raise _reject(tile.helper_refusal)
    if not isinstance(tile, SharedTileType):
        return None
    view = SharedTileType(tile.dtype, tile.shape, tile.pad, readonly=True)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return args[0]  # the same struct: only the type forbids writes

    return view(tile), codegen


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names of tiles, block-local witnesses, output tiles and local arrays.

    Args:
        proven_domain: the launch rank the host proves (a contract's
            ``domain``), or None; domains 1 and 2 also prove
            ``blockDim.z == 1``, which drops the z terms of ``local_index_2d``
            and of 2D ``block_stride``.
    """
    per_domain = _BY_DOMAIN.get(proven_domain)
    if per_domain is None:
        z_proven = proven_domain in (1, 2)
        per_domain = {
            "__ss_local_index_2d": _local_witness("Local2D", _local_index_2d(z_proven)),
            **_block_stride(z_proven),
            **_outtiles.builtins(proven_domain=proven_domain),
        }
        per_domain = _BY_DOMAIN.setdefault(proven_domain, per_domain)
    return {
        "__ss_shared_tile": _SHARED_TILE,
        "__ss_shared_wtile": _SHARED_WTILE,
        "__ss_shared_dynamic_tile": _DYNAMIC_TILE,
        "__ss_tile_read": _tile_read,
        "__ss_local_array": _localarrays.local_array,
        "__ss_local_index": _LOCAL_INDEX,
        "__ss_mint_local": _mint_local,
        **per_domain,
    }
