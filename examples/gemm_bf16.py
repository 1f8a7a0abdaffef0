# pyright: basic
# (the raw twin's llvmlite/Numba extension code is untyped, Tier 3; mypy --strict checks it all)
"""bf16 matrix multiply on tensor cores, ``c = a @ b`` with fp32 accumulation (Tier 1).

``a`` is M x K and ``b`` is K x N, both row-major bf16; ``c`` is M x N float32.
A block of 32 x 8 threads (8 warps) computes a 128 x 256 tile of ``c``; the
warps form a 2 x 4 grid of 64 x 64 warp tiles, each made of 4 x 8 16 x 8
accumulators (``simtsafe.mma.out_tile(c, 128, 256, 64, 64)``: the warp's
rectangle, each lane writing the four elements the MMA gives it; 128 fp32
accumulators per lane, in registers). The K axis is walked 32 columns (two
MMAs deep) at a time through four stages of shared tiles, three of them in
flight while one is read:

1. prologue: ``shared.fill_async`` copies ``a[row0:row0+128, k0:k0+32]`` into
   ``ta0`` (128 x 32, rows padded to 40 elements: the 8 rows an ``ldmatrix``
   reads fall in 8 different bank groups) and ``b[k0:k0+32, col0:col0+256]``
   into ``tb0`` (32 x 256, padded to 264), then stages 1 and 2 into
   ``ta1/tb1``, ``ta2/tb2``: 16-byte ``cp.async.cg`` runs (2 and 4 per thread
   per tile), 0 outside the matrices; ``commit_group()`` closes each stage's group;
2. each step ``s`` (stage ``s % 4``): ``wait_group(2)`` (every group but the
   two newest has landed: stage ``s``) and ``simtsafe.block.sync()`` (every
   warp is done with stage ``s - 1``), then the fill of stage ``s + 3`` into
   the tiles stage ``s - 1`` used, and the reads: per 16-deep half, every warp
   loads its 4 A fragments (``mma.load_a``: ``ldmatrix.x4``) and 4 pairs of B
   fragments (``mma.load_b2``: one ``ldmatrix.x4.trans`` for two 16 x 8
   fragments, the tile being k-major), and issues 32 ``mma.sync.m16n8k16``:
   64 MMAs and 16 ``ldmatrix`` per warp per barrier.

The four stages take 106 KiB of shared memory (27136 B each), over the 48 KiB a
block may have statically: the contract declares ``tile_shared=TILE_SHARED``,
so the tiles are laid out in the launch's dynamic shared memory, and
``prepare`` checks the size against the device and opts the function in to it
(``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``) before any launch. One
block per multiprocessor (227 registers a thread, no spills: sm_90 SASS).

The body holds the four steps of a round (``ta0/tb0`` .. ``ta3/tb3``): the
phase analysis follows tiles by name, so a tile chosen by the stage's index
is refused (docs/cooperation.md "Whole-tile fills"). A step's reads are the
helpers ``_step`` / ``_half`` / ``_pair``, declared ``@ss.device(inline=True)``:
inlined into the kernel by Numba, their code is lowered where the contract's
exact block is known, so every fragment origin (a constant or a function of
``threadIdx.y``) is proved inside its tile at compile time and the loop holds
the raw twin's instructions (``tests/ptx/test_gemm_bf16_ptx.py``); each call
with a constant ``j`` or ``i`` unrolls its short loop, so the accumulators stay in
registers. Past ``k``'s end the fills copy zeros, so any ``k`` works; a run whose
source is not 16-byte aligned (``k`` or ``n`` not a multiple of 8) is copied
element by element.

The raw twin ``gemm_bf16_raw`` (``numba.cuda.jit``, inline PTX through
``llvmlite``, no checks) has the same schedule, its tiles carved from one
dynamic shared array (``raw_launcher`` opts it in); ``benchmarks/gemm_bf16.py``
times both beside cuBLAS and Triton, and the previous schedules (four 16-deep
stages of 128 x 128 tiles, ``benchmarks/_gemm_bf16_4x16.py``; two 32-deep
stages, ``benchmarks/_gemm_bf16_2stage.py``).
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
from llvmlite import ir
from numba import cuda
from numba.cuda import cgutils
from numba.cuda import types as nb_types
from numba.cuda.extending import intrinsic
from numba.cuda.np.arrayobj import make_array  # pyright: ignore[reportMissingImports]

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D

BM = 128  # block tile rows
BN = 256  # block tile columns
BK = 32  # K step: one stage, two MMAs deep
STAGES = 4  # shared stages; STAGES - 1 in flight while one is read
WM = 64  # warp tile rows
WN = 64  # warp tile columns
MI = WM // 16  # 4 accumulators down a warp tile
NI = WN // 8  # 8 across
WARPS_N = BN // WN  # 4 warps across the block tile
PAD = 8  # 16 bytes per row: ldmatrix's 8 rows hit 8 different bank groups
BLOCK = (32, 8, 1)
ROUND = STAGES * BK  # one loop iteration: every stage once
A_BYTES = BM * (BK + PAD) * 2  # 10240: one stage's A tile (bf16)
B_BYTES = BK * (BN + PAD) * 2  # 16896: its B tile
TILE_SHARED = STAGES * (A_BYTES + B_BYTES)  # 108544 B (106 KiB): over the static 48 KiB


@ss.device(inline=True)
def _pair(
    fa0: Any, fa1: Any, fa2: Any, fa3: Any, tb: Any, acc: Any, kk: int, n0: int, j: int
) -> None:
    """Accumulators ``(i, j)`` and ``(i, j + 1)`` of the warp, ``i`` = 0 .. 3: one
    ``ldmatrix.x4.trans`` (the B fragments of columns ``n0 .. n0 + 15``) and 8 MMAs."""
    fb0, fb1 = ss.mma.load_b2(tb, (kk, n0))
    for i in range(MI):
        fa = fa0
        if i == 1:
            fa = fa1
        elif i == 2:
            fa = fa2
        elif i == 3:
            fa = fa3
        d = ss.mma.mma(fa, fb0, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))
        for e in range(4):
            acc[i, j, e] = d[e]
        d = ss.mma.mma(
            fa, fb1, (acc[i, j + 1, 0], acc[i, j + 1, 1], acc[i, j + 1, 2], acc[i, j + 1, 3])
        )
        for e in range(4):
            acc[i, j + 1, e] = d[e]


@ss.device(inline=True)
def _half(ta: Any, tb: Any, acc: Any, wr: int, wc: int, kk: int) -> None:
    """16 columns of K (one MMA deep) for the warp's 64 x 64 tile: its 4 A fragments
    (``ldmatrix.x4``), 4 pairs of B fragments (``ldmatrix.x4.trans``), 32 MMAs. (The pairs
    are calls with constant ``j``: each inlined copy unrolls its short loop, so the
    accumulators stay in registers.)"""
    fa0 = ss.mma.load_a(ta, (wr, kk))
    fa1 = ss.mma.load_a(ta, (wr + 16, kk))
    fa2 = ss.mma.load_a(ta, (wr + 32, kk))
    fa3 = ss.mma.load_a(ta, (wr + 48, kk))
    _pair(fa0, fa1, fa2, fa3, tb, acc, kk, wc, 0)
    _pair(fa0, fa1, fa2, fa3, tb, acc, kk, wc + 16, 2)
    _pair(fa0, fa1, fa2, fa3, tb, acc, kk, wc + 32, 4)
    _pair(fa0, fa1, fa2, fa3, tb, acc, kk, wc + 48, 6)


@ss.device(inline=True)
def _step(ta: Any, tb: Any, acc: Any, wr: int, wc: int) -> None:
    """One stage's 32 columns of K: two halves, 16 ldmatrix and 64 MMAs per warp."""
    _half(ta, tb, acc, wr, wc, 0)
    _half(ta, tb, acc, wr, wc, 16)


@ss.device(inline=True)
def _store_row(o: Any, acc: Any, i: int) -> None:
    """Write the warp's accumulators ``(i, 0 .. NI-1)`` to its rectangle of ``c``."""
    for j in range(NI):
        ss.mma.store(o, i, j, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=BLOCK,
        tile_shared=TILE_SHARED,
        requires=[
            "a.shape[1] == b.shape[0]",
            "c.shape[0] == a.shape[0]",
            "c.shape[1] == b.shape[1]",
        ],
    )
)
def gemm_bf16(c: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:
    ta0 = ss.shared.tile((BM, BK), ss.bfloat16, pad=PAD)  # ta0[i, j] = a[row0 + i, k0 + j]
    ta1 = ss.shared.tile((BM, BK), ss.bfloat16, pad=PAD)
    ta2 = ss.shared.tile((BM, BK), ss.bfloat16, pad=PAD)
    ta3 = ss.shared.tile((BM, BK), ss.bfloat16, pad=PAD)
    tb0 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)  # tb0[i, j] = b[k0 + i, col0 + j]
    tb1 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)
    tb2 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)
    tb3 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)
    o = ss.mma.out_tile(c, BM, BN, WM, WN)
    warp = cuda.threadIdx.y  # block (32, 8): warp w is row w of threads
    wr = (warp // WARPS_N) * WM
    wc = (warp % WARPS_N) * WN
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    kdim = a.shape[1]
    acc = cuda.local.array((MI, NI, 4), np.float32)
    for i in range(MI):
        for j in range(NI):
            for e in range(4):
                acc[i, j, e] = np.float32(0.0)
    # Prologue: stages 0, 1, 2 in flight, one group each.
    ss.shared.fill_async(ta0, a, (row0, 0))
    ss.shared.fill_async(tb0, b, (0, col0))
    ss.shared.commit_group()
    ss.shared.fill_async(ta1, a, (row0, BK))
    ss.shared.fill_async(tb1, b, (BK, col0))
    ss.shared.commit_group()
    ss.shared.fill_async(ta2, a, (row0, 2 * BK))
    ss.shared.fill_async(tb2, b, (2 * BK, col0))
    ss.shared.commit_group()
    for k0 in range(0, kdim, ROUND):
        # Stage 0 is read; stage 3's tiles (read in the previous step) are refilled.
        ss.shared.wait_group(2)  # STAGES - 2 groups may stay in flight: stage 0 has landed
        ss.block.sync()
        ss.shared.fill_async(ta3, a, (row0, k0 + 3 * BK))
        ss.shared.fill_async(tb3, b, (k0 + 3 * BK, col0))
        ss.shared.commit_group()
        _step(ta0, tb0, acc, wr, wc)
        # Stage 1 is read; stage 0's tiles (read in the previous step) are refilled.
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(ta0, a, (row0, k0 + 4 * BK))
        ss.shared.fill_async(tb0, b, (k0 + 4 * BK, col0))
        ss.shared.commit_group()
        _step(ta1, tb1, acc, wr, wc)
        # Stage 2 is read; stage 1's tiles are refilled.
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(ta1, a, (row0, k0 + 5 * BK))
        ss.shared.fill_async(tb1, b, (k0 + 5 * BK, col0))
        ss.shared.commit_group()
        _step(ta2, tb2, acc, wr, wc)
        # Stage 3 is read; stage 2's tiles are refilled.
        ss.shared.wait_group(2)
        ss.block.sync()
        ss.shared.fill_async(ta2, a, (row0, k0 + 6 * BK))
        ss.shared.fill_async(tb2, b, (k0 + 6 * BK, col0))
        ss.shared.commit_group()
        _step(ta3, tb3, acc, wr, wc)
    ss.shared.wait_all()  # the last stages' copies (zeros past k's end) are never read
    # One call per row of accumulators (constant i: each copy's loop unrolls, the
    # accumulators stay in registers).
    _store_row(o, acc, 0)
    _store_row(o, acc, 1)
    _store_row(o, acc, 2)
    _store_row(o, acc, 3)


# --------------------------------------------------------------------------- the raw twin
# numba.cuda.jit with the same schedule: shared arrays of the bf16 bits (uint16), inline
# PTX for ldmatrix and mma, no bounds checks on the fragments (the fill pads with zeros).

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _raw_ldmatrix(count: int, trans: bool) -> Any:
    """``ldmatrix.x{count}[.trans]`` at ``arr[offset]``."""

    def typer(typingctx: Any, arr: Any, offset: Any) -> Any:
        sig = nb_types.UniTuple(nb_types.uint32, count)(arr, offset)

        def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
            data = builder.extract_value(args[0], 4)  # Numba's array struct: member 4 is data
            ptr = builder.gep(data, [args[1]])
            shared = ir.PointerType(ir.IntType(16), 3)
            addr = builder.ptrtoint(builder.addrspacecast(ptr, shared), _I64)
            regs = ", ".join(f"${k}" for k in range(count))
            text = (
                f"ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}"
                f".shared.b16 {{{regs}}}, [${count}];"
            )
            fty = ir.FunctionType(ir.LiteralStructType([_I32] * count), [_I64])
            asm = ir.InlineAsm(fty, text, ",".join(["=r"] * count + ["l"]), side_effect=True)
            got = builder.call(asm, [addr], attrs=("convergent", "nounwind"))
            values = [builder.extract_value(got, k) for k in range(count)]
            return context.make_tuple(builder, signature.return_type, values)

        return sig, codegen

    return intrinsic(typer)


_raw_ldmatrix_a = _raw_ldmatrix(4, False)
_raw_ldmatrix_b2 = _raw_ldmatrix(4, True)  # two B fragments: (r0, r1) and (r2, r3)


def _raw_mma_typer(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
    acc = nb_types.UniTuple(nb_types.float32, 4)
    text = (
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
    )

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        f32 = ir.FloatType()
        ops = [
            builder.extract_value(args[i], k) for i, n in ((0, 4), (1, 2), (2, 4)) for k in range(n)
        ]
        fty = ir.FunctionType(ir.LiteralStructType([f32] * 4), [_I32] * 6 + [f32] * 4)
        asm = ir.InlineAsm(fty, text, ",".join(["=f"] * 4 + ["r"] * 6 + ["f"] * 4), True)
        got = builder.call(asm, ops, attrs=("convergent", "nounwind"))
        return context.make_tuple(builder, acc, [builder.extract_value(got, k) for k in range(4)])

    return acc(a, b, c), codegen


_raw_mma = intrinsic(_raw_mma_typer)


def _raw_cp_async_typer(
    typingctx: Any, tile: Any, offset: Any, src: Any, gr: Any, gc: Any, nbytes: Any
) -> Any:
    """``cp.async.cg`` of 16 bytes from ``&src[gr, gc]`` into ``&tile[offset]``, ``nbytes``
    of them read and the rest zero-filled: what a whole-tile fill issues for one run."""
    sig = nb_types.void(tile, offset, src, gr, gc, nbytes)

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        dst = builder.gep(builder.extract_value(args[0], 4), [args[1]])
        ary = make_array(signature.args[2])(context, builder, args[2])
        inds = [
            context.cast(builder, v, t, nb_types.intp)
            for v, t in zip(args[3:5], signature.args[3:5], strict=True)
        ]
        first = cgutils.get_item_pointer(context, builder, signature.args[2], ary, inds)
        nb = context.cast(builder, args[5], signature.args[5], nb_types.int32)
        text = (
            "{\n\t.reg .u64 %rd, %rg;\n\tcvta.to.shared.u64 %rd, $0;\n"
            "\tcvta.to.global.u64 %rg, $1;\n"
            "\tcp.async.cg.shared.global [%rd], [%rg], 16, $2;\n}"
        )
        fty = ir.FunctionType(ir.VoidType(), [_I64, _I64, _I32])
        asm = ir.InlineAsm(fty, text, "l,l,r,~{memory}", side_effect=True)
        builder.call(asm, [builder.ptrtoint(dst, _I64), builder.ptrtoint(first, _I64), nb])
        return context.get_dummy_value()

    return sig, codegen


_raw_cp_async = intrinsic(_raw_cp_async_typer)


def _raw_plain(text: str) -> Any:
    """An intrinsic issuing the PTX ``text`` (no operands)."""

    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
            fty = ir.FunctionType(ir.VoidType(), [])
            builder.call(ir.InlineAsm(fty, text, "~{memory}", side_effect=True), [])
            return context.get_dummy_value()

        return nb_types.void(), codegen

    return intrinsic(typer)


_raw_commit = _raw_plain("cp.async.commit_group;")
_raw_wait = _raw_plain(f"cp.async.wait_group {STAGES - 2};")
_raw_wait_all = _raw_plain("cp.async.wait_all;")

_PA = BK + PAD  # 40: the A tile's row pitch
_PB = BN + PAD  # 264: the B tile's
_A_ELEMS = BM * _PA
_B_ELEMS = BK * _PB
_RUN = 8  # bf16 elements in one 16-byte run
_THREADS = BLOCK[0] * BLOCK[1]
#: Where the raw twin's tiles start in its dynamic shared memory (uint16 elements): the
#: four A tiles, then the four B tiles -- the safe kernel's layout of its window.
_TA = tuple(s * _A_ELEMS for s in range(STAGES))
_TB = tuple(STAGES * _A_ELEMS + s * _B_ELEMS for s in range(STAGES))


@cuda.jit(device=True, inline=True)
def _raw_fill(sm, base, rows, cols, pitch, src, r0, c0):  # type: ignore[no-untyped-def]
    """``shared.fill_async`` by hand: the ``rows`` x ``cols`` tile at ``sm[base:]`` (rows
    ``pitch`` apart) from ``src[r0:, c0:]``, 0 outside; thread ``tid`` copies the 16-byte
    runs ``tid, tid + 256, ...``: where the whole tile lies inside ``src`` (rows 16-byte
    aligned), one cp.async each with no test; otherwise one cp.async when the run starts
    inside ``src`` at a 16-byte boundary (the rest of a run past the row's end
    zero-filled), else element by element."""
    tid = cuda.threadIdx.y * BLOCK[0] + cuda.threadIdx.x
    per_row = cols // _RUN
    height = src.shape[0]
    width = src.shape[1]
    if r0 + rows <= height and c0 + cols <= width and width % _RUN == 0:
        for q in range(rows * per_row // _THREADS):  # a whole number of runs a thread
            k = tid + q * _THREADS
            i = k // per_row
            j = (k % per_row) * _RUN
            _raw_cp_async(sm, base + i * pitch + j, src, r0 + i, c0 + j, 16)
        return
    for k in range(tid, rows * per_row, _THREADS):
        i = k // per_row
        j = (k % per_row) * _RUN
        gr = r0 + i
        gc = c0 + j
        if gr < height and gc < width and width % _RUN == 0:
            _raw_cp_async(sm, base + i * pitch + j, src, gr, gc, 2 * min(width - gc, _RUN))
        else:
            for e in range(_RUN):
                v = np.uint16(0)
                if gr < height and gc + e < width:
                    v = src[gr, gc + e]
                sm[base + i * pitch + j + e] = v


@cuda.jit(device=True, inline=True)
def _raw_pair(fa0, fa1, fa2, fa3, sm, b_at, acc, j):  # type: ignore[no-untyped-def]
    """Accumulators (i, j), (i, j + 1): one ldmatrix.x4.trans, 8 mma.sync."""
    fb = _raw_ldmatrix_b2(sm, b_at)
    fb0 = (fb[0], fb[1])
    fb1 = (fb[2], fb[3])
    for i in range(MI):
        fa = fa0
        if i == 1:
            fa = fa1
        elif i == 2:
            fa = fa2
        elif i == 3:
            fa = fa3
        d = _raw_mma(fa, fb0, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))
        for e in range(4):
            acc[i, j, e] = d[e]
        d = _raw_mma(
            fa, fb1, (acc[i, j + 1, 0], acc[i, j + 1, 1], acc[i, j + 1, 2], acc[i, j + 1, 3])
        )
        for e in range(4):
            acc[i, j + 1, e] = d[e]


@cuda.jit(device=True, inline=True)
def _raw_half(sm, ta, tb, acc, wr, wc, kk, a_row, a_col, b_row, b_col):  # type: ignore[no-untyped-def]
    """16 columns of K: 4 ldmatrix.x4 (A), 4 ldmatrix.x4.trans (B), 32 mma.sync per warp."""
    fa0 = _raw_ldmatrix_a(sm, ta + (wr + a_row) * _PA + kk + a_col)
    fa1 = _raw_ldmatrix_a(sm, ta + (wr + 16 + a_row) * _PA + kk + a_col)
    fa2 = _raw_ldmatrix_a(sm, ta + (wr + 32 + a_row) * _PA + kk + a_col)
    fa3 = _raw_ldmatrix_a(sm, ta + (wr + 48 + a_row) * _PA + kk + a_col)
    b_at = tb + (kk + b_row) * _PB + wc + b_col
    _raw_pair(fa0, fa1, fa2, fa3, sm, b_at, acc, 0)
    _raw_pair(fa0, fa1, fa2, fa3, sm, b_at + 16, acc, 2)
    _raw_pair(fa0, fa1, fa2, fa3, sm, b_at + 32, acc, 4)
    _raw_pair(fa0, fa1, fa2, fa3, sm, b_at + 48, acc, 6)


@cuda.jit(device=True, inline=True)
def _raw_step(sm, ta, tb, acc, wr, wc, a_row, a_col, b_row, b_col):  # type: ignore[no-untyped-def]
    """One stage's 32 columns of K: 16 ldmatrix and 64 mma.sync per warp."""
    _raw_half(sm, ta, tb, acc, wr, wc, 0, a_row, a_col, b_row, b_col)
    _raw_half(sm, ta, tb, acc, wr, wc, 16, a_row, a_col, b_row, b_col)


@cuda.jit
def gemm_bf16_raw(c, a, b):  # type: ignore[no-untyped-def]
    """The same schedule as ``gemm_bf16``, raw (``a``, ``b``: the bf16 bits as uint16).
    Launch it with ``RAW_SHARED`` bytes of dynamic shared memory, the function opted in
    above 48 KiB first (``raw_launcher``)."""
    sm = cuda.shared.array(0, np.uint16, alignment=16)
    lane = cuda.threadIdx.x
    warp = cuda.threadIdx.y
    wr = (warp // WARPS_N) * WM
    wc = (warp % WARPS_N) * WN
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    acc = cuda.local.array((MI, NI, 4), np.float32)
    for i in range(MI):
        for j in range(NI):
            for e in range(4):
                acc[i, j, e] = np.float32(0.0)
    g = lane // 4
    q = lane % 4
    mat = lane // 8
    a_row = (lane % 8) + 8 * (mat % 2)  # this lane's ldmatrix row of an A fragment
    a_col = 8 * (mat // 2)
    b_row = lane % 16  # of a pair of B fragments (.x4.trans)
    b_col = 8 * (lane // 16)
    _raw_fill(sm, _TA[0], BM, BK, _PA, a, row0, 0)
    _raw_fill(sm, _TB[0], BK, BN, _PB, b, 0, col0)
    _raw_commit()
    _raw_fill(sm, _TA[1], BM, BK, _PA, a, row0, BK)
    _raw_fill(sm, _TB[1], BK, BN, _PB, b, BK, col0)
    _raw_commit()
    _raw_fill(sm, _TA[2], BM, BK, _PA, a, row0, 2 * BK)
    _raw_fill(sm, _TB[2], BK, BN, _PB, b, 2 * BK, col0)
    _raw_commit()
    for k0 in range(0, kdim, ROUND):
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(sm, _TA[3], BM, BK, _PA, a, row0, k0 + 3 * BK)
        _raw_fill(sm, _TB[3], BK, BN, _PB, b, k0 + 3 * BK, col0)
        _raw_commit()
        _raw_step(sm, _TA[0], _TB[0], acc, wr, wc, a_row, a_col, b_row, b_col)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(sm, _TA[0], BM, BK, _PA, a, row0, k0 + 4 * BK)
        _raw_fill(sm, _TB[0], BK, BN, _PB, b, k0 + 4 * BK, col0)
        _raw_commit()
        _raw_step(sm, _TA[1], _TB[1], acc, wr, wc, a_row, a_col, b_row, b_col)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(sm, _TA[1], BM, BK, _PA, a, row0, k0 + 5 * BK)
        _raw_fill(sm, _TB[1], BK, BN, _PB, b, k0 + 5 * BK, col0)
        _raw_commit()
        _raw_step(sm, _TA[2], _TB[2], acc, wr, wc, a_row, a_col, b_row, b_col)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(sm, _TA[2], BM, BK, _PA, a, row0, k0 + 6 * BK)
        _raw_fill(sm, _TB[2], BK, BN, _PB, b, k0 + 6 * BK, col0)
        _raw_commit()
        _raw_step(sm, _TA[3], _TB[3], acc, wr, wc, a_row, a_col, b_row, b_col)
    _raw_wait_all()
    _raw_store_row(c, acc, row0 + wr, col0 + wc, g, q, m, n, 0)
    _raw_store_row(c, acc, row0 + wr, col0 + wc, g, q, m, n, 1)
    _raw_store_row(c, acc, row0 + wr, col0 + wc, g, q, m, n, 2)
    _raw_store_row(c, acc, row0 + wr, col0 + wc, g, q, m, n, 3)


@cuda.jit(device=True, inline=True)
def _raw_store_row(c, acc, r0, c0, g, q, m, n, i):  # type: ignore[no-untyped-def]
    for j in range(NI):
        for e in range(4):
            r = r0 + 16 * i + g + 8 * (e // 2)
            cc = c0 + 8 * j + 2 * q + e % 2
            if r < m and cc < n:
                c[r, cc] = acc[i, j, e]


#: The raw twin's dynamic shared memory: its tiles, as the safe kernel's tile_shared.
RAW_SHARED = (STAGES * (_A_ELEMS + _B_ELEMS)) * 2
assert RAW_SHARED == TILE_SHARED


def raw_launcher(m: int, n: int, sig: Any) -> Any:
    """``gemm_bf16_raw`` configured for an ``m x n`` output: compiled for ``sig``, its
    function opted in to ``RAW_SHARED`` bytes of dynamic shared memory (above the 48 KiB
    default: ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``, what ``prepare`` does for
    the safe kernel), launched with them."""
    from simtsafe.lowering._launching import compiled_function, set_max_dynamic_shared

    kernel = gemm_bf16_raw.compile(sig)
    error = set_max_dynamic_shared(
        compiled_function(kernel), RAW_SHARED, cuda.get_current_device().id
    )
    if error is not None:
        raise RuntimeError(f"gemm_bf16_raw: {RAW_SHARED} B of shared memory refused: {error}")
    return gemm_bf16_raw[grid_for(m, n), BLOCK, 0, RAW_SHARED]


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 256 tile of c: (column tiles, row tiles)."""
    return (math.ceil(n / BN), math.ceil(m / BM))


def inputs(m: int, k: int, n: int, seed: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Random bf16 ``a`` (m x k) and ``b`` (k x n)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    return a, b


def to_device_bf16(host: np.ndarray) -> Any:
    """A device copy of a bf16 array: through its uint16 bits (numba-cuda's host copy refuses
    ml_dtypes' dtype in the buffer protocol), viewed back as bf16."""
    host = np.ascontiguousarray(host)
    bits: Any = cuda.to_device(host.view(np.uint16))
    return bits.view(host.dtype)


def run(m: int = 300, k: int = 200, n: int = 250) -> bool:
    """c = a @ b for random bf16 matrices; compare with numpy (float64 over the bf16 values)."""
    a, b = inputs(m, k, n)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    gemm_bf16.prepare(grid=grid_for(m, n), block=BLOCK)(d_c, to_device_bf16(a), to_device_bf16(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    # bf16 products are exact in fp32; the fp32 sums round: about sqrt(k) * 2**-24 relative.
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-3))


if __name__ == "__main__":
    print("gemm_bf16 matches numpy:", run())
