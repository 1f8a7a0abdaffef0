"""Compiled form of ``simtsafe.mma``: warp-level tensor-core multiply-accumulate.

One ``mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}`` multiplies a 16 x 16
A fragment by a 16 x 8 B fragment into a 16 x 8 fp32 accumulator held by the
32 lanes of a warp (PTX ISA, "Matrix Fragments for mma.m16n8k16"). With
``g = lane // 4`` and ``q = lane % 4``, lane ``lane`` holds

* A (4 registers, 2 elements each): ``a[j]`` = row ``g + 8 * (j & 1)``,
  columns ``2q + 8 * (j >> 1) + {0, 1}``;
* B (2 registers): ``b[j]`` = rows (k) ``2q + 8j + {0, 1}``, column ``g``;
* C/D (4 floats): ``c[j]`` = row ``g + 8 * (j >> 1)``, column ``2q + (j & 1)``.

Fragments come from shared tiles by ``ldmatrix``: each of the warp's lanes
gives the address of one 8-element row run (lanes ``8m .. 8m + 7`` the rows of
matrix ``m``) and lane ``lane`` receives elements ``2q, 2q + 1`` of row ``g``
of every matrix (``.trans``: elements ``(2q, g), (2q + 1, g)``).

Soundness (docs/tensor_cores.md):

* **No shared access outside the tile.** A run is *valid* when its row is
  inside the tile's logical rows, its 8 columns inside the logical columns,
  its first column a multiple of 8 (its address is then a multiple of 16:
  tiles start at a multiple of 16 and rows are multiples of 16 bytes); a lane
  whose run is not valid gives the tile's first 16 bytes instead (tiles are
  16-byte aligned and a tile ldmatrix reads has at least 8 elements per row:
  refused at typing otherwise), and every lane zeroes the halves it received
  from runs that are not valid by its own indices. Whatever the indices, each
  lane's address lies inside the tile.
* **The whole warp executes them together.** ``mma.sync``/``ldmatrix.sync``
  are tagged as a warp collective (``!ss.site``, scope ``warp``): the
  compiled-form check (``verify``) refuses one under control flow that may
  differ between the lanes of a warp. A block whose thread count is not a
  multiple of 32 has a partial warp, for which neither is defined: there the
  loads give zeros and ``mma`` returns its accumulator (a grid-uniform branch;
  it folds away with an exact block).
* **Reads in the read phase.** The decorator's phase analysis counts
  ``load_a``/``load_b`` as reads of the tile (``decoration._phases``).
* **Writes race-free.** ``out_tile(out, BM, BN, WM, WN)`` gives block
  ``(bx, by)`` the rectangle ``BM x BN`` at ``(by*BM, bx*BN)``; inside it warp
  ``w`` (the linear thread number // 32) the ``WM x WN`` rectangle
  ``(w // (BN/WN), w % (BN/WN))`` if ``w < (BM/WM)*(BN/WN)``, else nothing.
  ``store`` writes lane ``lane``'s four accumulator elements, whose
  ``(g, q)`` residues differ between the lanes. So (block, warp, lane) ->
  elements is injective. Fragments are plain per-lane values: whatever a lane
  holds (another lane's registers through a shuffle included), ``mma`` only
  computes with registers, and where results land is decided by
  ``(block, warp, lane)`` alone.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.extending import intrinsic, models, register_model

from . import _tilebase as tb
from ._bf16 import is_bf16, stored_element
from ._cuda import SENTINEL, DisjointSliceType, _const, _reject, _sreg
from ._outtiles import _make, _OutTileModel, element_store
from ._provenance import site
from ._swizzle import SwizzledTileType, only_fill_and_wgmma
from ._tiles import SharedTileType
from ._vec import TILE_ALIGN

__all__ = ["FragmentType", "MmaOutTileType", "builtins"]

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()

#: The accumulator: lane's four fp32 elements (``c[j]``: row g + 8*(j >> 1), col 2q + (j & 1)).
ACC = types.UniTuple(types.float32, 4)

#: The largest block tile side ``out_tile`` takes (origins stay far below 2**63).
_MAX_SIDE = 1 << 12


class FragmentType(types.Type):
    """A lane's registers of an A (16 x 16) or B (16 x 8) operand of ``mma``."""

    def __init__(self, operand: str, elem: str) -> None:
        self.operand = operand  # "a" | "b"
        self.elem = elem  # "bf16" | "f16"
        self.regs = 4 if operand == "a" else 2
        super().__init__(name=f"MmaFragment[{operand.upper()}, {elem}]")


@register_model(FragmentType)
class _FragmentModel(models.StructModel):
    def __init__(self, dmm: Any, fe_type: FragmentType) -> None:
        super().__init__(dmm, fe_type, [(f"r{k}", types.uint32) for k in range(fe_type.regs)])


class MmaOutTileType(tb.NoReturnType):
    """The ``WM x WN`` rectangle of an output a warp owns; each lane stores its own elements."""

    def __init__(
        self, ds: DisjointSliceType, block: tuple[int, int], warp: tuple[int, int]
    ) -> None:
        self.ds = ds
        self.arr_type = ds.arr_type
        self.dtype = ds.dtype
        self.kind = "mma"
        self.tile = warp
        self.block = block
        self.ndim = 2
        super().__init__(
            name=f"MmaOutTile[{ds.arr_type}, block {block[0]}x{block[1]}, warp {warp[0]}x{warp[1]}]"
        )


# Invariant: the same struct as an output tile (arr, full, origin/step per axis): the
# warp's rectangle is origin_k + i for 0 <= i < tile[k]; `store` writes only the lane's
# four elements of it (never the rectangle through an index).
register_model(MmaOutTileType)(_OutTileModel)


# --------------------------------------------------------------------------- helpers


def _elem(dtype: Any) -> str | None:
    if is_bf16(dtype):
        return "bf16"
    if dtype == types.float16:
        return "f16"
    return None


def _check_tile(tile: Any, api: str) -> str:
    """The element kind of a tile ldmatrix may read, or a typing error saying why not."""
    if isinstance(tile, SwizzledTileType):
        raise _reject(only_fill_and_wgmma(tile, f"mma.{api}"))
    if not isinstance(tile, SharedTileType):
        raise _reject(f"mma.{api} reads a fragment from a 2D shared tile; got {tile}")
    elem = _elem(tile.dtype)
    if elem is None or tile.ndim != 2 or tile.shape is None:
        raise _reject(
            f"mma.{api} reads a 2D shared tile of ss.bfloat16 or np.float16 with a static "
            f"shape; got {tile}"
        )
    rows, cols = tile.shape
    pitch = cols + tile.pad
    # _Runs.run's alignment proof: every static tile starts at a multiple of 16 bytes.
    assert TILE_ALIGN % 16 == 0
    if cols < 8 or (2 * pitch) % 16:
        raise _reject(
            f"mma.{api} reads rows of 8 elements (16 bytes, 16-byte aligned): the tile needs at "
            f"least 8 columns and a row pitch (columns + pad) that is a multiple of 8 elements; "
            f"got {tile} (pitch {pitch}). Pad the rows, e.g. pad=8"
        )
    return elem


def _index_pair(idx: Any, api: str, what: str) -> None:
    ok = isinstance(idx, types.BaseTuple) and len(idx) == 2
    if not ok or not all(isinstance(t, types.Integer) for t in idx):
        raise _reject(f"mma.{api} takes the fragment's origin {what} as a pair of ints; got {idx}")


def _lane(builder: ir.IRBuilder) -> ir.Value:
    return builder.and_(tb.linear_tid(builder), _const(31))


def _whole_warps(builder: ir.IRBuilder) -> ir.Value:
    """Every warp of the block is whole (a grid-uniform value; a constant with .reqntid)."""
    n = tb.threads_per_block(builder)
    return builder.icmp_unsigned("==", builder.and_(n, _const(31)), _const(0))


class _Runs:
    """Where the 8-element row runs of one tile are, and which are valid."""

    def __init__(self, context: Any, builder: ir.IRBuilder, tty: SharedTileType, val: Any) -> None:
        self.builder = builder
        data, shape, storage = tb.holder_parts(context, builder, tty, val)
        shared = ir.PointerType(ir.IntType(16), 3)
        self.base = builder.ptrtoint(builder.addrspacecast(data, shared), _I64)
        self.rows, self.cols = shape
        self.pitch = storage[1]
        assert tty.shape is not None  # _check_tile: a static 2D tile
        self.last_col = _const(tty.shape[1] - 7)  # a run starts below it (cols >= 8)

    def run(self, row: ir.Value, col: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(valid?, shared address) of the run at (row, col); the tile's start if not valid.

        Proof that a valid run's address is a multiple of 16 (no run-time test
        needed): the tile starts at a multiple of 16 (``TILE_ALIGN``), a row is
        ``2 * pitch`` bytes, a multiple of 16 (``_check_tile``), and the run's
        first column is a multiple of 8 (tested), i.e. 16 bytes.
        """
        b = self.builder
        addr = b.add(self.base, b.shl(b.add(b.mul(row, self.pitch), col), _const(1)))
        ok = b.and_(b.icmp_unsigned("<", row, self.rows), b.icmp_unsigned("<", col, self.last_col))
        ok = b.and_(ok, b.icmp_unsigned("==", b.and_(col, _const(7)), _const(0)))
        return ok, b.select(ok, addr, self.base)


def _ldmatrix(
    builder: ir.IRBuilder, count: int, trans: bool, addr: ir.Value, whole: ir.Value
) -> list[ir.Value]:
    """``ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16`` at ``addr`` (zeros when the
    block has a partial warp)."""
    regs = ", ".join(f"${k}" for k in range(count))
    text = (
        f"ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}.shared.b16 "
        f"{{{regs}}}, [${count}];"
    )
    fty = ir.FunctionType(ir.LiteralStructType([_I32] * count), [_I64])
    # sideeffect: never moved across a barrier, hoisted out of a loop or sunk into a branch.
    asm = ir.InlineAsm(fty, text, ",".join(["=r"] * count + ["l"]), side_effect=True)
    slots = [cgutils.alloca_once_value(builder, ir.Constant(_I32, 0)) for _ in range(count)]
    with builder.if_then(whole, likely=True):
        got = builder.call(asm, [addr], attrs=("convergent", "nounwind"))
        for k, slot in enumerate(slots):
            builder.store(builder.extract_value(got, k), slot)
    return [builder.load(slot) for slot in slots]


def _keep(builder: ir.IRBuilder, reg: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """``reg`` with its low / high 16-bit half zeroed where ``lo`` / ``hi`` is false."""
    mask = builder.or_(
        builder.select(lo, ir.Constant(_I32, 0xFFFF), ir.Constant(_I32, 0)),
        builder.select(hi, ir.Constant(_I32, 0xFFFF0000), ir.Constant(_I32, 0)),
    )
    return builder.and_(reg, mask)


def _fragment(context: Any, builder: ir.IRBuilder, fty: FragmentType, regs: list[Any]) -> Any:
    frag = cgutils.create_struct_proxy(fty)(context, builder)
    for k, r in enumerate(regs):
        setattr(frag, f"r{k}", r)
    return frag._getvalue()


def _origin(context: Any, builder: ir.IRBuilder, ity: Any, ival: Any) -> list[ir.Value]:
    return tb.int_indices(context, builder, ity, ival)


# --------------------------------------------------------------------------- loads


@intrinsic
def _load_a(typingctx: Any, tile: Any, idx: Any) -> Any:
    elem = _check_tile(tile, "load_a")
    _index_pair(idx, "load_a", "(row0, k0)")
    fty = FragmentType("a", elem)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("mma.load_a", "warp"):
            # Invariant: every lane's address is a run inside the tile (_Runs.run).
            runs = _Runs(context, builder, tile, args[0])
            r0, k0 = _origin(context, builder, idx, args[1])
            lane = _lane(builder)
            g = builder.lshr(lane, _const(2))
            m, i = builder.lshr(lane, _const(3)), builder.and_(lane, _const(7))
            row = builder.add(
                builder.add(r0, i), builder.shl(builder.and_(m, _const(1)), _const(3))
            )
            col = builder.add(k0, builder.shl(builder.lshr(m, _const(1)), _const(3)))
            _, addr = runs.run(row, col)
            regs = _ldmatrix(builder, 4, False, addr, _whole_warps(builder))
            out = []
            for j, reg in enumerate(regs):
                # a[j] is row g + 8*(j & 1) of the run at column k0 + 8*(j >> 1).
                ok, _ = runs.run(
                    builder.add(r0, builder.add(g, _const(8 * (j & 1)))),
                    builder.add(k0, _const(8 * (j >> 1))),
                )
                out.append(_keep(builder, reg, ok, ok))
            return _fragment(context, builder, fty, out)

    return fty(tile, idx), codegen


@intrinsic
def _load_b(typingctx: Any, tile: Any, idx: Any) -> Any:
    elem = _check_tile(tile, "load_b")
    _index_pair(idx, "load_b", "(k0, col0)")
    fty = FragmentType("b", elem)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("mma.load_b", "warp"):
            # The tile is k-major (row k, column n): .trans gives b[j] = (k 2q+8j+{0,1}, n g).
            runs = _Runs(context, builder, tile, args[0])
            k0, n0 = _origin(context, builder, idx, args[1])
            lane = _lane(builder)
            q = builder.and_(lane, _const(3))
            # Lanes 0..15 give rows k0 + lane (.x2 reads them); 16..31 the same rows again.
            _, addr = runs.run(builder.add(k0, builder.and_(lane, _const(15))), n0)
            regs = _ldmatrix(builder, 2, True, addr, _whole_warps(builder))
            out = []
            for j, reg in enumerate(regs):
                k = builder.add(k0, builder.add(builder.shl(q, _const(1)), _const(8 * j)))
                lo, _ = runs.run(k, n0)
                hi, _ = runs.run(builder.add(k, _const(1)), n0)
                out.append(_keep(builder, reg, lo, hi))
            return _fragment(context, builder, fty, out)

    return fty(tile, idx), codegen


@intrinsic
def _load_b2(typingctx: Any, tile: Any, idx: Any) -> Any:
    elem = _check_tile(tile, "load_b2")
    _index_pair(idx, "load_b2", "(k0, col0)")
    fty = FragmentType("b", elem)
    pair = types.UniTuple(fty, 2)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("mma.load_b2", "warp"):
            # Two B fragments (columns col0 .. col0+7 and col0+8 .. col0+15) by one
            # ldmatrix.x4.trans: matrix m = 2f + h is rows k0 + 8h .. +7 at column
            # col0 + 8f, its rows given by lanes 8m .. 8m+7; regs 2f, 2f+1 are fragment f.
            runs = _Runs(context, builder, tile, args[0])
            k0, n0 = _origin(context, builder, idx, args[1])
            lane = _lane(builder)
            q = builder.and_(lane, _const(3))
            row = builder.add(k0, builder.and_(lane, _const(15)))
            col = builder.add(n0, builder.shl(builder.lshr(lane, _const(4)), _const(3)))
            _, addr = runs.run(row, col)
            regs = _ldmatrix(builder, 4, True, addr, _whole_warps(builder))
            frags = []
            for f in range(2):
                nf = builder.add(n0, _const(8 * f))
                out = []
                for j in range(2):
                    k = builder.add(k0, builder.add(builder.shl(q, _const(1)), _const(8 * j)))
                    lo, _ = runs.run(k, nf)
                    hi, _ = runs.run(builder.add(k, _const(1)), nf)
                    out.append(_keep(builder, regs[2 * f + j], lo, hi))
                frags.append(_fragment(context, builder, fty, out))
            return context.make_tuple(builder, pair, frags)

    return pair(tile, idx), codegen


# --------------------------------------------------------------------------- mma


@intrinsic
def _zeros(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        zero = ir.Constant(_F32, 0.0)
        return context.make_tuple(builder, ACC, [zero] * 4)

    return ACC(), codegen


def _is_acc(ty: Any) -> bool:
    return isinstance(ty, types.BaseTuple) and len(ty) == 4 and all(t == types.float32 for t in ty)


@intrinsic
def _mma(typingctx: Any, a: Any, b: Any, acc: Any) -> Any:
    if not (isinstance(a, FragmentType) and a.operand == "a"):
        raise _reject(f"mma.mma(a, b, acc): a is an A fragment (mma.load_a); got {a}")
    if not (isinstance(b, FragmentType) and b.operand == "b"):
        raise _reject(f"mma.mma(a, b, acc): b is a B fragment (mma.load_b); got {b}")
    if a.elem != b.elem:
        raise _reject(f"mma.mma(a, b, acc): a and b have different element types ({a}, {b})")
    if not _is_acc(acc):
        raise _reject(
            f"mma.mma(a, b, acc): acc is a tuple of 4 float32 (mma.zeros(), or mma's result); "
            f"got {acc}"
        )
    text = (
        f"mma.sync.aligned.m16n8k16.row.col.f32.{a.elem}.{a.elem}.f32 "
        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
    )

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        with site("mma.mma", "warp"):
            fa = cgutils.create_struct_proxy(a)(context, builder, value=args[0])
            fb = cgutils.create_struct_proxy(b)(context, builder, value=args[1])
            c = cgutils.unpack_tuple(builder, args[2], 4)
            fty = ir.FunctionType(ir.LiteralStructType([_F32] * 4), [_I32] * 6 + [_F32] * 4)
            asm = ir.InlineAsm(fty, text, ",".join(["=f"] * 4 + ["r"] * 6 + ["f"] * 4), True)
            slots = [cgutils.alloca_once_value(builder, v) for v in c]
            with builder.if_then(_whole_warps(builder), likely=True):
                operands = [fa.r0, fa.r1, fa.r2, fa.r3, fb.r0, fb.r1, *c]
                got = builder.call(asm, operands, attrs=("convergent", "nounwind"))
                for k, slot in enumerate(slots):
                    builder.store(builder.extract_value(got, k), slot)
            return context.make_tuple(builder, ACC, [builder.load(s) for s in slots])

    return ACC(a, b, acc), codegen


# --------------------------------------------------------------------------- output


def _side(ty: Any, what: str) -> int:
    value = getattr(ty, "literal_value", None)
    if not isinstance(ty, types.IntegerLiteral) or not isinstance(value, int):
        raise _reject(
            f"mma.out_tile(out, BM, BN, WM, WN): {what} must be a compile-time int (a literal "
            f"or a module constant); got {ty}"
        )
    return value


def _out_tile(proven: bool) -> Any:
    def typer(typingctx: Any, out: Any, bm: Any, bn: Any, wm: Any, wn: Any) -> Any:
        if not isinstance(out, DisjointSliceType) or out.space != "Index2D":
            raise _reject(
                f"mma.out_tile() takes a DisjointSlice2D output (of a 2D launch); got {out}"
            )
        sides = [_side(t, w) for t, w in ((bm, "BM"), (bn, "BN"), (wm, "WM"), (wn, "WN"))]
        BM, BN, WM, WN = sides  # noqa: N806 - the GEMM's names
        if not (
            0 < WM <= BM <= _MAX_SIDE
            and 0 < WN <= BN <= _MAX_SIDE
            and WM % 16 == 0
            and WN % 8 == 0
            and BM % WM == 0
            and BN % WN == 0
        ):
            raise _reject(
                f"mma.out_tile(out, BM, BN, WM, WN): a warp's WM x WN tile is made of 16 x 8 "
                f"accumulators (WM a multiple of 16, WN of 8) and divides the block's BM x BN "
                f"tile (at most {_MAX_SIDE} a side); got BM={BM}, BN={BN}, WM={WM}, WN={WN}"
            )
        oty = MmaOutTileType(out, (BM, BN), (WM, WN))
        across, warps = BN // WN, (BM // WM) * (BN // WN)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            # Invariant: block (by, bx) owns the BM x BN rectangle at (by*BM, bx*BN) (a
            # 2D grid: blocks have distinct (by, bx)); in it warp w < warps owns the WM x WN
            # rectangle (w // across, w % across) -- distinct for distinct w -- and warps
            # w >= warps own nothing (the sentinel origin).
            w = builder.lshr(tb.linear_tid(builder), _const(5))
            ok = builder.icmp_unsigned("<", w, _const(warps))
            if not proven:
                ok = builder.and_(
                    ok, builder.icmp_unsigned("==", _sreg(builder, "nctaid.z"), _const(1))
                )
            row = builder.add(
                builder.mul(_sreg(builder, "ctaid.y"), _const(BM)),
                builder.mul(builder.udiv(w, _const(across)), _const(WM)),
            )
            col = builder.add(
                builder.mul(_sreg(builder, "ctaid.x"), _const(BN)),
                builder.mul(builder.urem(w, _const(across)), _const(WN)),
            )
            origins = [builder.select(ok, v, _const(SENTINEL)) for v in (row, col)]
            return _make(context, builder, oty, args[0], origins, [_const(1), _const(1)])

        return oty(out, bm, bn, wm, wn), codegen

    return tb.literal_intrinsic(typer)


@intrinsic
def _store(typingctx: Any, o: Any, mi: Any, ni: Any, acc: Any) -> Any:
    if not isinstance(o, MmaOutTileType):
        raise _reject(f"mma.store(o, mi, ni, acc) writes through o = mma.out_tile(...); got {o}")
    if not (isinstance(mi, types.Integer) and isinstance(ni, types.Integer)):
        raise _reject(f"mma.store(o, mi, ni, acc): mi, ni are ints; got {mi}, {ni}")
    if not _is_acc(acc):
        raise _reject(f"mma.store(o, mi, ni, acc): acc is a tuple of 4 float32; got {acc}")
    if not isinstance(o.dtype, (types.Float, types.Integer)) and not is_bf16(o.dtype):
        raise _reject(f"mma.store writes an int or float output; got {o.dtype}")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        # Lane (g, q) writes rows 16mi + g + {0, 8}, columns 8ni + 2q + {0, 1} of its
        # warp's rectangle: distinct lanes, distinct (g, q), distinct elements.
        lane = _lane(builder)
        g, q = builder.lshr(lane, _const(2)), builder.and_(lane, _const(3))
        r = builder.add(builder.mul(context.cast(builder, args[1], mi, types.intp), _const(16)), g)
        c = builder.add(
            builder.mul(context.cast(builder, args[2], ni, types.intp), _const(8)),
            builder.shl(q, _const(1)),
        )
        for j, v in enumerate(cgutils.unpack_tuple(builder, args[3], 4)):
            rj = builder.add(r, _const(8 * (j >> 1)))
            cj = builder.add(c, _const(j & 1))
            elem = stored_element(context, builder, o.dtype, types.float32, v)
            element_store(context, builder, o, args[0], [rj, cj], elem)
        return context.get_dummy_value()

    return types.none(o, mi, ni, acc), codegen


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_mma_*`` names for compiled kernels."""
    return {
        "__ss_mma_load_a": _load_a,
        "__ss_mma_load_b": _load_b,
        "__ss_mma_load_b2": _load_b2,
        "__ss_mma_zeros": _zeros,
        "__ss_mma_mma": _mma,
        "__ss_mma_out_tile": _out_tile(proven_domain == 2),
        "__ss_mma_store": _store,
    }
