"""Output tiles: the rectangle of an output one thread owns, written with local indices.

``thread.tile_1d(out, n)``, ``thread.tile_2d(out, tm, tn)`` and
``thread.tile_2d_strided(out, tm, tn)`` become ``OutTileType`` values: the
output's array, per axis the coordinate of local index 0 (``origin``) and
the distance between consecutive local indices (``step``), and ``full``:
whether every element of the rectangle lies inside the output, decided once
when the tile is made. ``t[k] = v`` / ``t[r, c] = v`` then

* compares the local indices with the static tile shape (folds for static
  loop indices; out of range: nothing written), and
* on a full tile stores without any other compare; on an edge tile checks
  the element's coordinates against the output's shape.

The branch on ``full`` is loop-invariant, so NVVM unswitches a store loop
into a compare-free full-tile copy and a checked edge copy (or, once the
loop is unrolled, leaves one predicated branch per store); the PTX test
counts the compares on the full path. Reads ``t[k]`` of the thread's own
elements follow the same rules and give 0 out of range.

Tiles never overlap (each intrinsic's ``Invariant:``), so Tier-1 writes
through them never race, provided the launch has the tile's rank; without a
proven domain the rank is checked on the device as ``index_1d`` does, and a
tile of the wrong rank is invalid (its origin is the sentinel: writes
nothing). Tile sizes are at most ``MAX_OUT_TILE`` (2**16) per axis and in
all, refused at typing above it: an origin ``g * n`` then stays far below
2**63 for any launch, so no tile wraps around onto another thread's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import lower_builtin, models, register_model
from numba.cuda.np.arrayobj import load_item, make_array, store_item

from .._spaces import out_tile_too_large
from . import _tilebase as tb
from ._bf16 import stored_element
from ._cuda import (
    SENTINEL,
    DisjointSliceType,
    _all_one,
    _const,
    _index_1d,
    _index_2d,
    _reject,
    _slice_array,
    _sreg,
    guarded_record,
)

__all__ = ["OutTileType", "builtins", "element_store"]

_I1 = ir.IntType(1)


class OutTileType(tb.NoReturnType):
    """The rectangle of an output one thread owns (``kind``: 1d, 2d, 2d_strided)."""

    def __init__(self, ds: DisjointSliceType, kind: str, tile: tuple[int, ...]) -> None:
        self.ds = ds
        self.arr_type = ds.arr_type
        self.dtype = ds.dtype
        self.kind = kind
        self.tile = tile
        self.ndim = len(tile)
        extent = "x".join(str(n) for n in tile)
        super().__init__(name=f"OutTile[{ds.arr_type}, {kind} {extent}]")


@register_model(OutTileType)
class _OutTileModel(models.StructModel):
    # Invariant: the thread's elements are origin_k + i * step_k for 0 <= i <
    # tile[k] on each axis k; full is true only if all of them are inside the output.
    def __init__(self, dmm: Any, fe_type: OutTileType) -> None:
        members: list[tuple[str, Any]] = [("arr", fe_type.arr_type), ("full", types.boolean)]
        for axis in range(fe_type.ndim):
            members += [(f"origin{axis}", types.intp), (f"step{axis}", types.intp)]
        super().__init__(dmm, fe_type, members)


# --------------------------------------------------------------------------- typing


def _how(oty: OutTileType) -> str:
    return "t[k] = v" if oty.ndim == 1 else "t[r, c] = v"


tb.type_int_indexed(
    OutTileType,
    bad_write=lambda ty, idx: (
        f"an output tile ({ty}) is written with local indices ({_how(ty)}), got {idx}"
    ),
    bad_read=lambda ty, idx: (
        f"an output tile ({ty}) is read with local indices ({tb.ints_phrase(ty.ndim)}), "
        f"got {idx}; it has no slices"
    ),
)
tb.type_array_like(
    OutTileType,
    no_iteration=lambda ty: (
        f"an output tile ({ty}) cannot be iterated; loop over its local indices"
    ),
    has_len=lambda ty: ty.ndim == 1,
    attributes=False,
)


# --------------------------------------------------------------------------- lowering


def _element(
    context: Any, builder: ir.IRBuilder, oty: OutTileType, val: Any, idx: list[Any]
) -> tuple[Any, Any, Callable[[], Any], Callable[[], Any]]:
    """(local index in the tile?, full?, element inside the output?, pointer), lazily."""
    tile = cgutils.create_struct_proxy(oty)(context, builder, value=val)
    local_ok = tb.unsigned_below(builder, idx, [_const(n) for n in oty.tile])
    ary = make_array(oty.arr_type)(context, builder, tile.arr)
    shapes = list(cgutils.unpack_tuple(builder, ary.shape, oty.ndim))
    coords = [
        builder.add(getattr(tile, f"origin{k}"), builder.mul(i, getattr(tile, f"step{k}")))
        for k, i in enumerate(idx)
    ]

    def inside() -> Any:
        return tb.unsigned_below(builder, coords, shapes)

    def pointer() -> Any:
        strides = cgutils.unpack_tuple(builder, ary.strides, oty.ndim)
        return cgutils.get_item_pointer2(
            context, builder, ary.data, shapes, strides, oty.arr_type.layout, coords
        )

    return local_ok, tile.full, inside, pointer


def element_store(
    context: Any, builder: ir.IRBuilder, oty: OutTileType, val: Any, idx: list[Any], v: Any
) -> None:
    """``t[idx] = v`` with ``v`` already of the element type: nothing outside the tile or
    the output."""
    local_ok, full, inside, pointer = _element(context, builder, oty, val, idx)
    with builder.if_then(local_ok, likely=True):
        with builder.if_else(full, likely=True) as (on_full, on_edge):
            with on_full:
                store_item(context, builder, oty.arr_type, v, pointer())
            with on_edge, builder.if_then(inside()):
                store_item(context, builder, oty.arr_type, v, pointer())


def _load(context: Any, builder: ir.IRBuilder, oty: OutTileType, val: Any, idx: list[Any]) -> Any:
    local_ok, full, inside, pointer = _element(context, builder, oty, val, idx)
    if isinstance(oty.dtype, types.Record):
        ok = builder.and_(local_ok, builder.or_(full, inside()))
        return guarded_record(context, builder, oty.arr_type, ok, pointer())
    out = cgutils.alloca_once_value(builder, context.get_constant_null(oty.dtype))
    with builder.if_then(local_ok, likely=True):
        with builder.if_then(builder.or_(full, inside()), likely=True):
            builder.store(load_item(context, builder, oty.arr_type, pointer()), out)
    return builder.load(out)


def _lower_getitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    oty, ity = sig.args
    return _load(context, builder, oty, args[0], tb.int_indices(context, builder, ity, args[1]))


def _lower_setitem(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    oty, ity, vty = sig.args
    v = stored_element(context, builder, oty.dtype, vty, args[2])
    element_store(context, builder, oty, args[0], tb.int_indices(context, builder, ity, args[1]), v)
    return context.get_dummy_value()


for _ity in (types.Integer, types.BaseTuple):
    lower_builtin(operator.getitem, OutTileType, _ity)(_lower_getitem)
    lower_builtin(operator.setitem, OutTileType, _ity, types.Any)(_lower_setitem)


@lower_builtin(len, OutTileType)
def _lower_len(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
    return _const(sig.args[0].tile[0])


# --------------------------------------------------------------------------- constructors


def _make(
    context: Any,
    builder: ir.IRBuilder,
    oty: OutTileType,
    ds: Any,
    origins: list[Any],
    steps: list[Any],
) -> Any:
    """Build the tile; ``full`` iff the last element on every axis is in the output.

    An invalid tile has SENTINEL origins: its coordinates are then past every
    output (``origin + (n - 1) * step`` stays below 2**64 for tile sizes and
    block dims in range), so ``full`` and the edge check both fail.
    """
    tile = cgutils.create_struct_proxy(oty)(context, builder)
    arr = _slice_array(context, builder, oty.ds, ds)
    tile.arr = arr
    shapes = cgutils.unpack_tuple(
        builder, make_array(oty.arr_type)(context, builder, arr).shape, oty.ndim
    )
    full = ir.Constant(_I1, 1)
    for k, (origin, step, n) in enumerate(zip(origins, steps, oty.tile, strict=True)):
        setattr(tile, f"origin{k}", origin)
        setattr(tile, f"step{k}", step)
        last = builder.add(origin, builder.mul(_const(n - 1), step))
        full = builder.and_(full, builder.icmp_unsigned("<", last, shapes[k]))
    tile.full = full
    return tile._getvalue()


def _sizes(args: tuple[Any, ...], what: str) -> tuple[int, ...]:
    sizes = []
    for a in args:
        value = getattr(a, "literal_value", None)
        if not isinstance(a, types.IntegerLiteral) or not isinstance(value, int) or value < 1:
            raise _reject(
                f"thread.{what}(): tile sizes must be positive compile-time ints (literals or "
                f"module constants), got {a}"
            )
        sizes.append(value)
    too_large = out_tile_too_large(what, tuple(sizes))
    if too_large is not None:
        raise _reject(too_large)
    return tuple(sizes)


def _check_out(ds: Any, space: str, what: str) -> None:
    if not isinstance(ds, DisjointSliceType) or ds.space != space:
        raise _reject(
            f"thread.{what}() takes a DisjointSlice of space {space} (an output of a "
            f"{space[-2]} launch), got {ds}"
        )


def _scaled(builder: ir.IRBuilder, valid: Any, index: Any, size: int) -> Any:
    return builder.select(valid, builder.mul(index, _const(size)), _const(SENTINEL))


def _tile_1d(proven: bool) -> Any:
    def typer(typingctx: Any, out: Any, n: Any) -> Any:
        _check_out(out, "Index1D", "tile_1d")
        (size,) = _sizes((n,), "tile_1d")
        oty = OutTileType(out, "1d", (size,))

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # Invariant: thread g owns [g * n, (g + 1) * n): the ranges of distinct
            # g are disjoint, and g is unique per thread of a 1D launch.
            (g,) = _index_1d(not proven)(builder)
            origin = _scaled(builder, builder.icmp_unsigned("!=", g, _const(SENTINEL)), g, size)
            return _make(context, builder, oty, args[0], [origin], [_const(1)])

        return oty(out, n), codegen

    return tb.literal_intrinsic(typer)


def _tile_2d(proven: bool) -> Any:
    def typer(typingctx: Any, out: Any, tm: Any, tn: Any) -> Any:
        _check_out(out, "Index2D", "tile_2d")
        sizes = _sizes((tm, tn), "tile_2d")
        oty = OutTileType(out, "2d", sizes)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # Invariant: thread (row, col) owns rows [row*tm, (row+1)*tm) x cols
            # [col*tn, (col+1)*tn); (row, col) is unique per thread of a 2D launch.
            row, col = _index_2d(not proven)(builder)
            valid = builder.icmp_unsigned("!=", row, _const(SENTINEL))
            origins = [
                _scaled(builder, valid, row, sizes[0]),
                _scaled(builder, valid, col, sizes[1]),
            ]
            return _make(context, builder, oty, args[0], origins, [_const(1), _const(1)])

        return oty(out, tm, tn), codegen

    return tb.literal_intrinsic(typer)


def _tile_2d_strided(proven: bool) -> Any:
    def typer(typingctx: Any, out: Any, tm: Any, tn: Any) -> Any:
        _check_out(out, "Index2D", "tile_2d_strided")
        sizes = _sizes((tm, tn), "tile_2d_strided")
        oty = OutTileType(out, "2d_strided", sizes)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # Invariant: block (by, bx) owns the (tm*bdy) x (tn*bdx) rectangle at
            # (by*tm*bdy, bx*tn*bdx); in it thread (ty, tx) owns rows ty + r*bdy
            # (r < tm) and cols tx + c*bdx (c < tn). As ty < bdy and tx < bdx the
            # residues differ between threads: no element has two owners. A z
            # axis would repeat (ty, tx), so without a proven 2D launch the tile
            # is invalid when blockDim.z or gridDim.z is not 1.
            bdy, bdx = tb.ntid(builder, "y"), tb.ntid(builder, "x")
            row = builder.add(
                builder.mul(builder.mul(_sreg(builder, "ctaid.y"), _const(sizes[0])), bdy),
                tb.tid(builder, "y"),
            )
            col = builder.add(
                builder.mul(builder.mul(_sreg(builder, "ctaid.x"), _const(sizes[1])), bdx),
                tb.tid(builder, "x"),
            )
            if not proven:
                ok = _all_one(builder, ("ntid.z", "nctaid.z"))
                row = builder.select(ok, row, _const(SENTINEL))
                col = builder.select(ok, col, _const(SENTINEL))
            return _make(context, builder, oty, args[0], [row, col], [bdy, bdx])

        return oty(out, tm, tn), codegen

    return tb.literal_intrinsic(typer)


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The output-tile constructors of a kernel with the given proven launch rank."""
    return {
        "__ss_tile_1d": _tile_1d(proven_domain == 1),
        "__ss_tile_2d": _tile_2d(proven_domain == 2),
        "__ss_tile_2d_strided": _tile_2d_strided(proven_domain == 2),
    }
