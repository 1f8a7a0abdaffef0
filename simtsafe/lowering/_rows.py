"""Row walks on the device: ``for w in thread.block_row(s)`` and ``thread.warp_row(s)``,
and their chunked forms ``thread.block_row_chunks(s)`` / ``thread.warp_row_chunks(s)``.

The rewrite expands each walk into ``for k in range(start(), extent(s),
step()): w = mint(k)`` and each chunked walk into ``__ss_s = s; for k in
range(chunks(__ss_s)): c = mint_chunk(k, __ss_s)``; this module supplies those
``__ss_*`` names.

* ``BlockRow``: block ``b`` of a 1D launch owns row ``b``; thread ``t`` the
  columns ``t, t + blockDim.x, ...``.
* ``WarpRow``: warp ``g = blockIdx.x * ceil(blockDim.x / 32) + threadIdx.x // 32``
  owns row ``g``; lane ``l`` the columns ``l, l + 32, ...``. A block whose size
  is not a multiple of 32 stays sound (its last, partial warp walks only the
  columns of its lanes); ``covers=`` refuses it (host/_rowcover).

Invariant: the (row, col) pairs of different threads differ when the launch
is 1D. A ``domain=1`` contract proves that on the host; otherwise the minted
witness reads blockDim.y/z and gridDim.y/z and is invalid (row ``SENTINEL``:
every access through it is out of bounds) when any is not 1. The loop's
bound is the walked array's ``shape[1]``; the witness's row and column are
bounds-checked against the array each access addresses, like any witness.

Chunked walks: chunk ``k`` of a thread is column ``start + k * step`` of the
same row, for ``k < ceil(s.shape[1] / step)`` -- a trip count computed from
``shape[1]`` and ``ntid.x`` (or 32) alone, so every thread of the block (the
warp) runs the loop the same number of times and a collective inside it is
reached by all: the compiled-form divergence analysis derives that from these
operands (kernel arguments and ``ntid`` are grid-uniform), nothing marks it.
The last chunk holds columns past the row's end; their witnesses address no
element (the bounds check of every access drops the store and reads 0), and
``.valid`` says so. The columns of one thread's chunks are distinct (``k``
grows by one, ``step > 0``), and the threads of a row have distinct starts
below ``step``: disjoint as the plain walk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import intrinsic, lower_getattr, models, register_model
from numba.cuda.np.arrayobj import make_array
from numba.cuda.typing.templates import AttributeTemplate, infer_getattr

from ._cuda import (
    SENTINEL,
    DisjointSliceType,
    ThreadIndexType,
    _all_one,
    _const,
    _make_witness,
    _reject,
    _slice_array,
    _sreg,
)

__all__ = ["RowChunkType", "builtins"]

_LAUNCH_Y_Z = ("ntid.y", "ntid.z", "nctaid.y", "nctaid.z")


def _block_row(builder: ir.IRBuilder) -> ir.Value:
    return _sreg(builder, "ctaid.x")


def _warp_row(builder: ir.IRBuilder) -> ir.Value:
    warps = builder.lshr(builder.add(_sreg(builder, "ntid.x"), _const(31)), _const(5))
    return builder.add(
        builder.mul(_sreg(builder, "ctaid.x"), warps),
        builder.lshr(_sreg(builder, "tid.x"), _const(5)),
    )


def _scalar(compute: Callable[[ir.IRBuilder], ir.Value]) -> Any:
    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            return compute(builder)

        return types.intp(), codegen

    return intrinsic(typer)


def _mint(space: str, row: Callable[[ir.IRBuilder], ir.Value], checked: bool) -> Any:
    wty = ThreadIndexType(space)

    def typer(typingctx: Any, k: Any) -> Any:
        if not isinstance(k, types.Integer):
            return None

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            r = row(builder)
            if checked:
                r = builder.select(_all_one(builder, _LAUNCH_Y_Z), r, _const(SENTINEL))
            col = context.cast(builder, args[0], k, types.intp)
            return _make_witness(context, builder, wty, [r, col])

        return wty(k), codegen

    return intrinsic(typer)


def _walked(space: str, what: str, s: Any) -> Any:
    """The array type a ``thread.<what>(s)`` walk reads: ``s`` is a 2D DisjointSlice of
    ``space`` or a 2D array (anything else is refused)."""
    if isinstance(s, DisjointSliceType):
        if s.space != space:
            raise _reject(
                f"thread.{what}() walks a DisjointSlice of space {space} (or a 2D input); "
                f"got one of space {s.space}: its rows are not owned per "
                f"{'block' if space == 'BlockRow' else 'warp'}. Annotate the output "
                f"DisjointSlice[..., {space}]"
            )
        arrty = s.arr_type
    elif isinstance(s, types.Array):
        arrty = s
    else:
        raise _reject(f"thread.{what}() takes a 2D DisjointSlice or a 2D input; got {s}")
    if arrty.ndim != 2:
        raise _reject(f"thread.{what}() walks the row of a 2D array; got a {arrty.ndim}D one")
    return arrty


def _shape(context: Any, builder: ir.IRBuilder, s: Any, arrty: Any, val: Any) -> list[ir.Value]:
    """``[rows, cols]`` of the walked array: the values its witnesses' bounds checks read."""
    arr = _slice_array(context, builder, s, val) if s is not arrty else val
    return list(cgutils.unpack_tuple(builder, make_array(arrty)(context, builder, arr).shape, 2))


def _extent(space: str, what: str, row: Callable[[ir.IRBuilder], ir.Value]) -> Any:
    """The walked array's ``shape[1]`` (0 when this row is not one of its rows).

    ``s``: a 2D DisjointSlice of ``space`` or a 2D array. The row test only
    ends the loop early (every access still checks its own array's bounds);
    it makes the walked array's per-access row check redundant, so NVVM drops it.
    """

    def typer(typingctx: Any, s: Any) -> Any:
        arrty = _walked(space, what, s)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # shape[1]: the same value the witness's column bounds check reads.
            rows, cols = _shape(context, builder, s, arrty, args[0])
            inside = builder.icmp_unsigned("<", row(builder), rows)
            return builder.select(inside, cols, ir.Constant(cols.type, 0))

        return types.intp(s), codegen

    return intrinsic(typer)


# --------------------------------------------------------------------------- chunked walks


class RowChunkType(ThreadIndexType):
    """A chunked walk's witness: a ``ThreadIndex[space]`` (it writes what a row walk's witness
    writes) that also knows its chunk and whether it addresses an element of the walked array.
    """

    def __init__(self, space: str) -> None:
        super().__init__(space)
        self.name = f"RowChunk[{space}]"


@register_model(RowChunkType)
class _RowChunkModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: RowChunkType) -> None:
        members = [("r", types.intp), ("c", types.intp), ("k", types.intp), ("ok", types.boolean)]
        super().__init__(dmm, fe_type, members)


@infer_getattr
class _RowChunkAttrs(AttributeTemplate):
    key = RowChunkType

    def resolve_valid(self, w: RowChunkType) -> Any:
        return types.boolean

    def resolve_chunk(self, w: RowChunkType) -> Any:
        return types.intp


@lower_getattr(RowChunkType, "valid")
def _lower_valid(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.create_struct_proxy(ty)(context, builder, value=val).ok


@lower_getattr(RowChunkType, "chunk")
def _lower_chunk(context: Any, builder: ir.IRBuilder, ty: Any, val: Any) -> Any:
    return cgutils.create_struct_proxy(ty)(context, builder, value=val).k


def _chunks(space: str, what: str, step: Callable[[ir.IRBuilder], ir.Value]) -> Any:
    """``ceil(s.shape[1] / step)``: the chunk loop's trip count, the same in every thread.

    Only ``shape[1]`` (a kernel argument) and ``step`` (``ntid.x`` or 32) enter it -- not
    the row, which differs between the warps of a block -- so the compiled form's
    divergence analysis finds it grid-uniform. ``(w - 1) / step + 1`` for ``w > 0``:
    no ``w + step - 1`` that could wrap.
    """

    def typer(typingctx: Any, s: Any) -> Any:
        arrty = _walked(space, what, s)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            _, cols = _shape(context, builder, s, arrty, args[0])
            some = builder.icmp_signed(">", cols, _const(0))
            full = builder.add(builder.udiv(builder.sub(cols, _const(1)), step(builder)), _const(1))
            return builder.select(some, full, _const(0))

        return types.intp(s), codegen

    return intrinsic(typer)


def _mint_chunk(
    space: str,
    what: str,
    row: Callable[[ir.IRBuilder], ir.Value],
    start: Callable[[ir.IRBuilder], ir.Value],
    step: Callable[[ir.IRBuilder], ir.Value],
    checked: bool,
) -> Any:
    """Chunk ``k``'s witness: row ``row``, column ``start + k * step`` (past the row's end
    in the last chunk: no access through it touches memory), ``.valid`` when it addresses an
    element of the walked array. Unchecked launch shape: row ``SENTINEL``, never valid."""
    wty = RowChunkType(space)

    def typer(typingctx: Any, k: Any, s: Any) -> Any:
        if not isinstance(k, types.Integer):
            return None
        arrty = _walked(space, what, s)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            r = row(builder)
            if checked:
                r = builder.select(_all_one(builder, _LAUNCH_Y_Z), r, _const(SENTINEL))
            chunk = context.cast(builder, args[0], k, types.intp)
            col = builder.add(start(builder), builder.mul(chunk, step(builder)))
            rows, cols = _shape(context, builder, s, arrty, args[1])
            ok = builder.and_(
                builder.icmp_unsigned("<", r, rows), builder.icmp_unsigned("<", col, cols)
            )
            w = cgutils.create_struct_proxy(wty)(context, builder)
            w.r, w.c, w.k, w.ok = r, col, chunk, ok
            return w._getvalue()

        return wty(k, s), codegen

    return intrinsic(typer)


_BR_START = _scalar(lambda b: _sreg(b, "tid.x"))
_BR_STEP = _scalar(lambda b: _sreg(b, "ntid.x"))
_WR_START = _scalar(lambda b: b.and_(_sreg(b, "tid.x"), _const(31)))
_WR_STEP = _scalar(lambda b: _const(32))  # a constant: the range's step check folds away
_BR_EXTENT = _extent("BlockRow", "block_row", _block_row)
_WR_EXTENT = _extent("WarpRow", "warp_row", _warp_row)
_MINTS = {
    (space, checked): _mint(space, row, checked)
    for space, row in (("BlockRow", _block_row), ("WarpRow", _warp_row))
    for checked in (False, True)
}


def _tid_x(b: ir.IRBuilder) -> ir.Value:
    return _sreg(b, "tid.x")


def _ntid_x(b: ir.IRBuilder) -> ir.Value:
    return _sreg(b, "ntid.x")


def _lane(b: ir.IRBuilder) -> ir.Value:
    return b.and_(_sreg(b, "tid.x"), _const(31))


def _warp_size(b: ir.IRBuilder) -> ir.Value:
    return _const(32)


_BRC_CHUNKS = _chunks("BlockRow", "block_row_chunks", _ntid_x)
_WRC_CHUNKS = _chunks("WarpRow", "warp_row_chunks", _warp_size)
_CHUNK_MINTS = {
    (space, checked): _mint_chunk(space, what, row, start, step, checked)
    for space, what, row, start, step in (
        ("BlockRow", "block_row_chunks", _block_row, _tid_x, _ntid_x),
        ("WarpRow", "warp_row_chunks", _warp_row, _lane, _warp_size),
    )
    for checked in (False, True)
}


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names of the row walks (witnesses check the launch unless proven 1D)."""
    checked = proven_domain != 1
    return {
        "__ss_br_start": _BR_START,
        "__ss_br_step": _BR_STEP,
        "__ss_br_extent": _BR_EXTENT,
        "__ss_mint_br": _MINTS["BlockRow", checked],
        "__ss_wr_start": _WR_START,
        "__ss_wr_step": _WR_STEP,
        "__ss_wr_extent": _WR_EXTENT,
        "__ss_mint_wr": _MINTS["WarpRow", checked],
        "__ss_brc_chunks": _BRC_CHUNKS,
        "__ss_mint_brc": _CHUNK_MINTS["BlockRow", checked],
        "__ss_wrc_chunks": _WRC_CHUNKS,
        "__ss_mint_wrc": _CHUNK_MINTS["WarpRow", checked],
    }
