"""Compiled form of ``simtsafe.wgmma``: warpgroup-level tensor-core multiply-accumulate (sm_90).

``wgmma.mma(ta, tb, acc)`` is, for the warpgroup ``g`` of the calling thread
(its linear thread number // 128, four whole warps), one
``wgmma.mma_async.sync.aligned.m64n{N}k16.f32`` per 16 columns of K: rows
``64g .. 64g + 63`` of the swizzled tile ``ta`` (M x K, K-major) times the
swizzled tile ``tb`` (K x N, N-major: ``imm-trans-b`` 1), added to the
warpgroup's 64 x N fp32 accumulator, of which each thread holds ``N / 2``
(the layout of ``mma.m16n8``'s C per 8 columns: thread ``t`` of warp ``w``
holds row ``16w + (t % 32) // 4 + 8 * ((i // 2) % 2)``, column
``8 * (i // 4) + 2 * (t % 4) + i % 2`` as element ``i``).

Operands are read through shared-memory matrix descriptors (``_swizzle``'s
128-byte layout: start address, leading byte offset -- between two column
blocks of ``tb`` --, stride byte offset 1024 -- between two 8-row groups --,
swizzle mode 1).

Soundness (docs/tensor_cores.md):

* **No shared access outside the tiles.** The tiles' shapes are static; the
  contract pins the block (``.reqntid``: the call is refused without it) to a
  whole number of warpgroups, at most ``M / 64`` of them, so warpgroup ``g``'s
  rows ``64g .. 64g + 63`` lie inside ``ta`` and every descriptor addresses
  64 x 16 (A) or 16 x N (B) elements inside its tile (compile-time arithmetic
  on constants, checked here).
* **The whole warpgroup executes it together**, as ``.sync.aligned`` needs:
  the call is tagged as a block collective (``!ss.site``, scope ``block``) and
  the compiled-form check refuses it under control flow that may differ
  between the threads of a block.
* **Reads in the read phase.** ``mma`` waits for its own group
  (``wgmma.wait_group 0``) before it returns, so its reads of the tiles are
  over when the next instruction runs: the phase analyses count it as a read
  of both tiles at the call, as ``mma.load_a``. ``mma_async`` returns with its
  group in flight: the compiled-form phase check (``verify._tilephases``)
  counts its read in every barrier interval up to the one in which the thread
  waits for the group (``wait(acc, n)`` with ``n`` or fewer groups issued after
  it), as it counts a ``cp.async`` copy as a write until its wait. The
  accumulator it returns is a ``PendingAcc``: nothing reads it but
  ``mma_async``, ``mma`` and ``wait`` (whose inline assembly ties every
  register, so no read of them moves across the wait); ``wait(acc, 0)`` gives
  the tuple back.
* **Copies visible to the tensor cores.** The tensor cores read through
  another memory proxy than the ``cp.async`` copies and stores that filled
  the tiles wrote through: in a kernel that uses ``wgmma``, every wait for
  copies (``shared.wait_group`` / ``wait_all``) is followed by
  ``fence.proxy.async`` in the waiting thread, before the barrier that ends
  the fill (the decorator emits it; ``verify._tilephases`` refuses a kernel
  with ``wgmma`` and a wait without it).
* **Writes race-free.** ``out_tile(out, BM, BN)`` gives block ``(bx, by)``
  the ``BM x BN`` rectangle at ``(by*BM, bx*BN)`` and warpgroup ``g`` rows
  ``64g .. 64g + 63`` of it; ``store`` writes thread ``t``'s ``N / 2``
  elements, distinct for distinct ``(warp, lane, i)``: (block, warpgroup,
  warp, lane, i) -> element is injective.
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import intrinsic, lower_cast, models, register_model
from numba.cuda.np.arrayobj import make_array, store_item
from numba.cuda.typeconv import Conversion
from numba.cuda.typing.templates import AbstractTemplate, infer, infer_global

from . import _tilebase as tb
from ._bf16 import is_bf16, stored_element
from ._cuda import SENTINEL, DisjointSliceType, _const, _reject, _sreg
from ._outtiles import _make, _OutTileModel, element_store
from ._provenance import site
from ._swizzle import ALIGN, BLOCK_COLS, SwizzledTileType
from ._swizzlerule import GROUP_ROWS, WIDTHS, groups_refusal

__all__ = ["PendingAccType", "WgmmaOutTileType", "builtins"]

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()


def acc_type(n: int) -> types.UniTuple:
    """A thread's part of a 64 x ``n`` fp32 accumulator."""
    return types.UniTuple(types.float32, n // 2)


def _is_acc(ty: Any) -> int | None:
    """The N of an accumulator type, or None."""
    if isinstance(ty, types.UniTuple) and ty.dtype == types.float32 and 2 * ty.count in WIDTHS:
        return int(2 * ty.count)
    return None


def _elem(dtype: Any) -> str | None:
    return "bf16" if is_bf16(dtype) else "f16" if dtype == types.float16 else None


class WgmmaOutTileType(tb.NoReturnType):
    """The 64 x BN rectangle of an output a warpgroup owns; each thread stores its elements."""

    def __init__(self, ds: DisjointSliceType, block: tuple[int, int]) -> None:
        self.ds = ds
        self.arr_type = ds.arr_type
        self.dtype = ds.dtype
        self.kind = "wgmma"
        self.tile = (GROUP_ROWS, block[1])
        self.block = block
        self.ndim = 2
        super().__init__(
            name=f"WgmmaOutTile[{ds.arr_type}, block {block[0]}x{block[1]}, warpgroup 64x{block[1]}]"
        )


# Invariant: the same struct as an output tile (arr, full, origin/step per axis): the
# warpgroup's rectangle is origin_k + i for 0 <= i < tile[k]; `store` writes only the
# thread's elements of it.
register_model(WgmmaOutTileType)(_OutTileModel)


class PendingAccType(types.Type):
    """An accumulator whose wgmma groups may still be in flight (``mma_async``): read by
    ``mma_async``, ``mma`` and ``wait`` only."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.acc = acc_type(n)
        super().__init__(name=f"WgmmaPendingAcc[64x{n}]")

    def unify(self, typingctx: Any, other: Any) -> Any:
        """A finished accumulator joins a pending one as pending (``acc = wgmma.zeros(N)``
        before a loop of ``acc = wgmma.mma_async(...)``); never the other way round."""
        return self if other == self.acc else None

    def can_convert_from(self, typingctx: Any, other: Any) -> Any:
        return Conversion.safe if other == self.acc else None


@lower_cast(types.UniTuple, PendingAccType)
def _pending_of(context: Any, builder: ir.IRBuilder, fromty: Any, toty: Any, val: Any) -> Any:
    pending = cgutils.create_struct_proxy(toty)(context, builder)
    pending.acc = val
    return pending._getvalue()


class _PendingRead(AbstractTemplate):
    def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        if args and isinstance(args[0], PendingAccType):
            raise _reject(
                f"an accumulator with wgmma groups in flight ({args[0]}) is read only by "
                "wgmma.mma_async, wgmma.mma and wgmma.wait: take its values with "
                "acc = wgmma.wait(acc, 0) first"
            )
        return None


for _op in (operator.getitem, len, iter, operator.add, operator.mul):
    infer_global(_op)(_PendingRead)
for _key in ("getiter", "exhaust_iter"):  # `for v in acc`, `x, y, ... = acc`
    infer(type(f"_PendingRead_{_key}", (_PendingRead,), {"key": _key}))


@register_model(PendingAccType)
class _PendingModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: PendingAccType) -> None:
        super().__init__(dmm, fe_type, [("acc", fe_type.acc)])


# --------------------------------------------------------------------------- mma


def _literal(ty: Any, what: str) -> int:
    value = getattr(ty, "literal_value", None)
    if not isinstance(ty, types.IntegerLiteral) or not isinstance(value, int):
        raise _reject(
            f"{what} must be a compile-time int (a literal or a module constant); got {ty}"
        )
    return value


def _zeros(typingctx: Any, n: Any) -> Any:
    width = _literal(n, "wgmma.zeros(n): n")
    if width not in WIDTHS:
        raise _reject(f"wgmma.zeros(n): n is the accumulator's width, one of {WIDTHS}; got {width}")
    aty = acc_type(width)

    count = aty.count
    # One asm defining every register: LLVM cannot fold them into copies of one zero, which
    # ptxas would split with moves inside a wgmma pipeline stage (serializing the wgmmas).
    text = "\n\t".join(f"mov.b32 ${i}, 0;" for i in range(count))

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        fty = ir.FunctionType(ir.LiteralStructType([_F32] * count), [])
        asm = ir.InlineAsm(fty, text, ",".join(["=f"] * count), side_effect=False)
        got = builder.call(asm, [])
        return context.make_tuple(
            builder, aty, [builder.extract_value(got, i) for i in range(count)]
        )

    return aty(n), codegen


def _descriptor(builder: ir.IRBuilder, addr: Any, lbo: int) -> Any:
    """The 128-byte-swizzle descriptor at shared address ``addr`` (i64): start, LBO, SBO 1024."""
    start = builder.lshr(builder.and_(addr, ir.Constant(_I64, 0x3FFFF)), ir.Constant(_I64, 4))
    fixed = ((lbo >> 4) << 16) | ((ALIGN >> 4) << 32) | (1 << 62)
    return builder.or_(start, ir.Constant(_I64, fixed))


def _shared_address(context: Any, builder: ir.IRBuilder, tty: Any, val: Any) -> Any:
    data, _, _ = tb.holder_parts(context, builder, tty, val)
    shared = ir.PointerType(ir.IntType(16), 3)
    return builder.ptrtoint(builder.addrspacecast(data, shared), _I64)


def _block_groups(builder: ir.IRBuilder, api: str, rows: int) -> None:
    """Refuse a block that is not pinned to whole warpgroups, at most ``rows / 64``."""
    block = tb.required_block(builder)
    if block is None:
        raise _reject(
            f"{api} needs the contract's exact block (LaunchContract(block=...)): the "
            "warpgroups and the rows each one reads are fixed when the kernel compiles"
        )
    refusal = groups_refusal(api, block, rows)
    if refusal is not None:
        raise _reject(refusal)


def _width(acc: Any) -> int | None:
    """The N of an accumulator or pending accumulator, or None."""
    return acc.n if isinstance(acc, PendingAccType) else _is_acc(acc)


def _acc_values(context: Any, builder: ir.IRBuilder, aty: Any, val: Any, count: int) -> list[Any]:
    if isinstance(aty, PendingAccType):
        val = cgutils.create_struct_proxy(aty)(context, builder, value=val).acc
    return list(cgutils.unpack_tuple(builder, val, count))


def _acc_result(context: Any, builder: ir.IRBuilder, rty: Any, got: Any, count: int) -> Any:
    values = [builder.extract_value(got, i) for i in range(count)]
    if isinstance(rty, PendingAccType):
        pending = cgutils.create_struct_proxy(rty)(context, builder)
        pending.acc = context.make_tuple(builder, rty.acc, values)
        return pending._getvalue()
    return context.make_tuple(builder, rty, values)


def _acc_asm(count: int, extra: list[str]) -> str:
    """Constraints of asm that reads and writes every accumulator register, ``extra``
    operands after the outputs."""
    return ",".join(["=f"] * count + extra + [str(i) for i in range(count)])


def _mma_typer(api: str, wait: bool) -> Any:
    """``wgmma.mma`` (``wait``: the group waited for before the call returns) or
    ``wgmma.mma_async`` (returned in flight: a ``PendingAcc``)."""

    def typer(typingctx: Any, ta: Any, tb_: Any, acc: Any) -> Any:
        for name, t in (("ta", ta), ("tb", tb_)):
            if not isinstance(t, SwizzledTileType):
                raise _reject(
                    f"{api}(ta, tb, acc): {name} is a swizzled shared tile "
                    f"(shared.tile(shape, ss.bfloat16, swizzle=128)); got {t}"
                )
        elem = _elem(ta.dtype)
        if elem is None or _elem(tb_.dtype) != elem:
            raise _reject(
                f"{api}(ta, tb, acc): ta and tb hold the same 16-bit type (ss.bfloat16 or "
                f"np.float16); got {ta}, {tb_}"
            )
        (m, k), (k2, n) = ta.shape, tb_.shape
        if k != k2 or m % GROUP_ROWS or n not in WIDTHS:
            raise _reject(
                f"{api}(ta, tb, acc): ta is M x K (M a multiple of 64), tb is K x N with the "
                f"same K and N one of {WIDTHS}; got {ta} and {tb_}"
            )
        if _width(acc) != n:
            raise _reject(
                f"{api}(ta, tb, acc): acc is the thread's part of a 64 x {n} accumulator, a "
                f"tuple of {n // 2} float32 (wgmma.zeros({n}), or a wgmma result); got {acc}"
            )
        rty = acc_type(n) if wait else PendingAccType(n)
        steps = k // 16
        count = n // 2
        regs = ", ".join(f"${i}" for i in range(count))
        lines = ["{", ".reg .pred %ssp;", f"setp.ne.b32 %ssp, ${count + 2 * steps}, 0;"]
        lines.append("wgmma.fence.sync.aligned;")
        for s in range(steps):
            lines.append(
                f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{elem}.{elem} {{{regs}}}, "
                f"${count + 2 * s}, ${count + 2 * s + 1}, %ssp, 1, 1, 0, 1;"
            )
        lines.append("wgmma.commit_group.sync.aligned;")
        if wait:
            lines.append("wgmma.wait_group.sync.aligned 0;")
        text = "\n\t".join([*lines, "}"])
        constraints = _acc_asm(count, ["l"] * (2 * steps) + ["r"])

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            _block_groups(builder, api, m)
            with site(api, "block"):
                # Invariant (_block_groups): g < M / 64, so rows 64g .. 64g + 63 are in ta.
                g = builder.lshr(tb.linear_tid(builder), _const(7))
                a_at = builder.add(
                    _shared_address(context, builder, ta, args[0]),
                    builder.mul(g, _const(GROUP_ROWS * 128)),
                )
                b_at = _shared_address(context, builder, tb_, args[1])
                descs = []
                for s in range(steps):
                    col = 16 * s  # A: columns col .. col + 15 of the warpgroup's 64 rows
                    a_off = (col // BLOCK_COLS) * m * 128 + (col % BLOCK_COLS) * 2
                    descs.append(_descriptor(builder, builder.add(a_at, _const(a_off)), 16))
                    # B: rows col .. col + 15 of every column block (k * 128 bytes apart)
                    descs.append(
                        _descriptor(builder, builder.add(b_at, _const(col * 128)), k * 128)
                    )
                values = _acc_values(context, builder, acc, args[2], count)
                fty = ir.FunctionType(
                    ir.LiteralStructType([_F32] * count),
                    [_I64] * (2 * steps) + [_I32] + [_F32] * count,
                )
                asm = ir.InlineAsm(fty, text, constraints, side_effect=True)
                got = builder.call(
                    asm, [*descs, ir.Constant(_I32, 1), *values], attrs=("convergent", "nounwind")
                )
                return _acc_result(context, builder, rty, got, count)

        return rty(ta, tb_, acc), codegen

    return typer


#: The most wgmma groups ``wait`` may leave in flight (PTX takes 0 .. 7).
_MAX_PENDING = 7


def _wait(typingctx: Any, acc: Any, n: Any) -> Any:
    if _is_acc(acc) is not None:
        # A finished accumulator (the type inference may try this first, before a loop's
        # pending accumulator joins it): waiting is harmless, the tuple stays a tuple.
        acc = PendingAccType(_is_acc(acc) or 0)
        finished = True
    elif isinstance(acc, PendingAccType):
        finished = False
    else:
        raise _reject(
            f"wgmma.wait(acc, n) waits for the groups of an accumulator in flight (the result "
            f"of wgmma.mma_async); got {acc}"
        )
    pending = getattr(n, "literal_value", None)
    if not isinstance(n, types.IntegerLiteral) or not isinstance(pending, int):
        raise _reject(f"wgmma.wait(acc, n): n must be a compile-time int; got {n}")
    if not 0 <= pending <= _MAX_PENDING:
        raise _reject(
            f"wgmma.wait(acc, n): n is how many of the newest groups may stay in flight, "
            f"0 .. {_MAX_PENDING}; got {pending}"
        )
    rty = acc.acc if pending == 0 or finished else acc
    aty = acc.acc if finished else acc
    count = acc.n // 2
    text = f"wgmma.wait_group.sync.aligned {pending};"

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("wgmma.wait", "block"):
            values = _acc_values(context, builder, aty, args[0], count)
            fty = ir.FunctionType(ir.LiteralStructType([_F32] * count), [_F32] * count)
            asm = ir.InlineAsm(fty, text, _acc_asm(count, []), side_effect=True)
            got = builder.call(asm, values, attrs=("convergent", "nounwind"))
            return _acc_result(context, builder, rty, got, count)

    return rty(aty, n), codegen


# --------------------------------------------------------------------------- output


def _out_tile(proven: bool) -> Any:
    def typer(typingctx: Any, out: Any, bm: Any, bn: Any) -> Any:
        if not isinstance(out, DisjointSliceType) or out.space != "Index2D":
            raise _reject(
                f"wgmma.out_tile() takes a DisjointSlice2D output (of a 2D launch); got {out}"
            )
        BM = _literal(bm, "wgmma.out_tile(out, BM, BN): BM")  # noqa: N806 - the GEMM's names
        BN = _literal(bn, "wgmma.out_tile(out, BM, BN): BN")  # noqa: N806
        if not (0 < BM <= 4096 and BM % GROUP_ROWS == 0 and BN in WIDTHS):
            raise _reject(
                f"wgmma.out_tile(out, BM, BN): a warpgroup owns 64 rows of the block's BM x BN "
                f"tile (BM a multiple of 64, at most 4096; BN one of {WIDTHS}); got BM={BM}, "
                f"BN={BN}"
            )
        oty = WgmmaOutTileType(out, (BM, BN))
        groups = BM // GROUP_ROWS

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # Invariant: block (by, bx) owns the BM x BN rectangle at (by*BM, bx*BN) (a 2D
            # grid: distinct (by, bx)); in it warpgroup g < BM / 64 owns rows 64g .. 64g + 63
            # -- distinct for distinct g --, and warpgroups g >= BM / 64 own nothing.
            g = builder.lshr(tb.linear_tid(builder), _const(7))
            ok = builder.icmp_unsigned("<", g, _const(groups))
            if not proven:
                ok = builder.and_(
                    ok, builder.icmp_unsigned("==", _sreg(builder, "nctaid.z"), _const(1))
                )
            row = builder.add(
                builder.mul(_sreg(builder, "ctaid.y"), _const(BM)),
                builder.mul(g, _const(GROUP_ROWS)),
            )
            col = builder.mul(_sreg(builder, "ctaid.x"), _const(BN))
            origins = [builder.select(ok, v, _const(SENTINEL)) for v in (row, col)]
            return _make(context, builder, oty, args[0], origins, [_const(1), _const(1)])

        return oty(out, bm, bn), codegen

    return tb.literal_intrinsic(typer)


@intrinsic
def _store(typingctx: Any, o: Any, acc: Any) -> Any:
    if not isinstance(o, WgmmaOutTileType):
        raise _reject(f"wgmma.store(o, acc) writes through o = wgmma.out_tile(...); got {o}")
    if _is_acc(acc) != o.tile[1]:
        raise _reject(
            f"wgmma.store(o, acc): acc is the thread's part of a 64 x {o.tile[1]} accumulator "
            f"(a tuple of {o.tile[1] // 2} float32); got {acc}"
        )
    if not isinstance(o.dtype, (types.Float, types.Integer)) and not is_bf16(o.dtype):
        raise _reject(f"wgmma.store writes an int or float output; got {o.dtype}")
    count = o.tile[1] // 2

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        # Thread (w, lane) of its warpgroup writes rows 16w + lane // 4 + {0, 8}, columns
        # 8c + 2 * (lane % 4) + {0, 1}: distinct (w, lane, i), distinct elements.
        t = tb.linear_tid(builder)
        lane = builder.and_(t, _const(31))
        w = builder.and_(builder.lshr(t, _const(5)), _const(3))
        r = builder.add(builder.shl(w, _const(4)), builder.lshr(lane, _const(2)))
        c = builder.shl(builder.and_(lane, _const(3)), _const(1))
        values = [
            stored_element(context, builder, o.dtype, types.float32, v)
            for v in cgutils.unpack_tuple(builder, args[1], count)
        ]
        # Element i of the thread: local (r + 8 * ((i >> 1) & 1), c + 8 * (i >> 2) + (i & 1)),
        # inside the 64 x N rectangle (r <= 63, c + 8 * (N / 8 - 1) + 1 <= N - 1).
        tile = cgutils.create_struct_proxy(o)(context, builder, value=args[0])
        # A C-contiguous output (every output is compiled so) whose 64 x N rectangle lies
        # wholly inside: constant offsets from two row addresses, no compare, addressed as
        # element_store addresses them (by the shape); otherwise each element's own test.
        full = tile.full if o.arr_type.layout == "C" else cgutils.false_bit
        with builder.if_else(full, likely=True) as (whole, edge):
            with whole:
                ary = make_array(o.arr_type)(context, builder, tile.arr)
                shapes = cgutils.unpack_tuple(builder, ary.shape, 2)
                strides = cgutils.unpack_tuple(builder, ary.strides, 2)
                coords = [builder.add(tile.origin0, r), builder.add(tile.origin1, c)]
                first = cgutils.get_item_pointer2(
                    context, builder, ary.data, shapes, strides, "C", coords
                )
                item = context.get_abi_sizeof(context.get_data_type(o.dtype))
                row0 = builder.bitcast(first, ir.IntType(8).as_pointer())
                rows = [row0, builder.gep(row0, [builder.mul(shapes[1], _const(8 * item))])]
                for i, v in enumerate(values):
                    k = 8 * (i >> 2) + (i & 1)  # the element's column past c
                    at = builder.gep(rows[(i >> 1) & 1], [_const(k * item)])
                    store_item(context, builder, o.arr_type, v, builder.bitcast(at, first.type))
            with edge:
                for i, v in enumerate(values):
                    ri = builder.add(r, _const(8 * ((i >> 1) & 1)))
                    ci = builder.add(c, _const(8 * (i >> 2) + (i & 1)))
                    element_store(context, builder, o, args[0], [ri, ci], v)
        return context.get_dummy_value()

    return types.none(o, acc), codegen


_ZEROS = tb.literal_intrinsic(_zeros)
_MMA = intrinsic(_mma_typer("wgmma.mma", wait=True))
_MMA_ASYNC = intrinsic(_mma_typer("wgmma.mma_async", wait=False))
_WAIT = tb.literal_intrinsic(_wait)


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_wgmma_*`` names for compiled kernels."""
    return {
        "__ss_wgmma_zeros": _ZEROS,
        "__ss_wgmma_mma": _MMA,
        "__ss_wgmma_mma_async": _MMA_ASYNC,
        "__ss_wgmma_wait": _WAIT,
        "__ss_wgmma_out_tile": _out_tile(proven_domain == 2),
        "__ss_wgmma_store": _store,
    }
