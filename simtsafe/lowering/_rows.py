"""Row walks on the device: ``for w in thread.block_row(s)`` and ``thread.warp_row(s)``.

The rewrite expands each loop into ``for k in range(start(), extent(s),
step()): w = mint(k)``; this module supplies those ``__ss_*`` names.

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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import intrinsic
from numba.cuda.np.arrayobj import make_array

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

__all__ = ["builtins"]

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


def _extent(space: str, what: str, row: Callable[[ir.IRBuilder], ir.Value]) -> Any:
    """The walked array's ``shape[1]`` (0 when this row is not one of its rows).

    ``s``: a 2D DisjointSlice of ``space`` or a 2D array. The row test only
    ends the loop early (every access still checks its own array's bounds);
    it makes the walked array's per-access row check redundant, so NVVM drops it.
    """

    def typer(typingctx: Any, s: Any) -> Any:
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

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            arr = _slice_array(context, builder, s, args[0]) if s is not arrty else args[0]
            # shape[1]: the same value the witness's column bounds check reads.
            shape = make_array(arrty)(context, builder, arr).shape
            rows, cols = cgutils.unpack_tuple(builder, shape, 2)
            inside = builder.icmp_unsigned("<", row(builder), rows)
            return builder.select(inside, cols, ir.Constant(cols.type, 0))

        return types.intp(s), codegen

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
    }
