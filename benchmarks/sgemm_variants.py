"""Candidate SGEMM schedules side by side: Tier-1 simtsafe kernels, their raw twins, cuBLAS.

    python benchmarks/sgemm_variants.py [--n 4096] [--check 520] [--reps 10]

Every variant computes ``c = a @ b`` (float32, C-contiguous) with 16 x 16
threads per block, a 128 x 128 block tile and an 8 x 8 register micro-tile
per thread. What changes is the fill of the shared tiles, the K step, the
prefetch and the shared-memory layout:

| variant | fill | K step | prefetch | micro-tile rows / cols | shared reads |
|---|---|---|---|---|---|
| ``lin`` (examples/sgemm.py and coop_raw.sgemm_raw since 2026-12-01) | every thread loads 4 elements of each tile into registers (all 8 global loads issued before any shared store), block-uniform interior fast path without per-element guards | 8 | the next K slice into registers during the FMAs | ``ty + 16 r`` / ``tx + 16 c`` | 16 scalar per k |
| ``async`` (examples/sgemm_async.py; raw twin here) | B: two 16-byte ``cp.async`` per thread per stage; A: ``shared.fill_transposed`` (two 16-byte runs of rows of ``a`` down columns of the tile); two stages, one barrier per stage, ``blocks_per_sm=2`` | 16 | the next stage by cp.async (B) and plain loads (A); the stage's 16 ``k`` written out, ``k + 1``'s shared reads before ``k``'s FMAs | ``8 ty + i`` / ``8 tx + j`` (``thread.tile_2d``) | 4 ``ld.shared.v4`` per k |
| ``async bk8`` (benchmarks/_sgemm_async_bk8.py, the example before 2026-12-06; raw twin here) | as async, one run of each per thread per stage; two barriers per stage | 8 | as async, the ``k`` loop a loop (no early reads) | as async | 4 ``ld.shared.v4`` per k |
| ``vec`` (raw only) | as lin, A stored transposed (``As[k, row]``) | 8 | as lin | ``4 ty + i``, ``64 + 4 ty + i`` / ``4 tx + j``, ``64 + 4 tx + j`` | 4 ``ld.shared.v4`` per k |

The examples' previous schedule (``block_stride`` over (128, 8) and (8, 128)
tiles with a 16 x 16 block: half the threads, 8 guarded load + store pairs
each per tile, no prefetch, 165 registers) measured 6.3 TFLOP/s (Tier 1) and
6.0 (raw) in the run that chose ``lin`` (26.8 and 25.8 with launch bounds).

``+ lb2`` rows: the raw kernel compiled with ``launch_bounds=(256, 2)``
(``.minnctapersm 2``: ptxas keeps the kernel at <= 128 registers, two blocks
per SM); a Tier-1 kernel asks for the same with the contract's ``blocks_per_sm=2``
(examples/sgemm_async.py does). ``vec`` has no Tier-1 row: its micro-tile rows
``4 ty + i, 64 + 4 ty + i`` are no output tile of Tier 1 (``thread.tile_2d`` gives
rows ``8 ty + i``); ``async`` is its Tier-1 counterpart (since 2026-12-02: 16-byte
aligned tiles, ``vec.load`` of tiles, transposed and asynchronous fills).

Each variant is checked against numpy (float64) at ``--check`` (not a
multiple of the tile, so the edge paths run) and against a row sample at
``--n``, then timed at ``--n`` with CUDA events (warm-up, median of
``--reps``). cuBLAS is ``cupy.matmul`` with ``CUPY_TF32=0`` set before CuPy is
imported (plain FP32), and ``torch.matmul`` with
``torch.backends.cuda.matmul.allow_tf32 = False``; each row is skipped when its library
is missing, and "% of cuBLAS" is against the faster of the two. The last lines give
safe / raw (throughput) for each Tier-1 kernel and its raw twin (``PAIRS``). A variant
that fails to compile or launch prints its error in its row; the others run.

``NUMBA_ENABLE_CUDASIM=1 python benchmarks/sgemm_variants.py`` runs only
the correctness checks, on the simulator, at 150 x 105 x 115 (about 5 minutes).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["CUPY_TF32"] = "0"  # plain FP32 cuBLAS (before CuPy is imported anywhere)

import numpy as np  # noqa: E402
from numba import cuda, float32, uint32  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import device_name, time_gpu  # noqa: E402

from simtsafe import SIMULATOR  # noqa: E402

BM = 128  # block tile rows
BN = 128  # block tile columns
TM = 8  # micro-tile rows per thread
TN = 8  # micro-tile columns per thread
TX = BN // TN  # 16 threads along x
TY = BM // TM  # 16 threads along y
NT = TX * TY  # 256 threads
BK = 8  # K step of lin / vec
BK16 = 16  # K step of async (examples/sgemm_async.py)
FILL = BM * BK // NT  # 4: elements of each tile a thread fills per K step (BK = 8)


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 128 tile of c: (column tiles, row tiles)."""
    return (math.ceil(n / BN), math.ceil(m / BM))


# ------------------------------------------------------------------ vec (raw only)

#: vec's A tile is transposed: a_t[k, row]; each thread owns rows 4 ty + i and
#: 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j (i, j < 4), so its 8 values of
#: a k-row of either tile are two aligned float4: two ld.shared.v4 each.
HALF = BM // 2  # 64
SMEM_ALIGN = None if SIMULATOR else 16  # the simulator refuses an alignment


def _sgemm_vec_raw(c, a, b):  # type: ignore[no-untyped-def]
    """Transposed A tile, 16-byte aligned shared arrays, ld.shared.v4 reads, register prefetch."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    m = a.shape[0]
    kdim = a.shape[1]
    n = b.shape[1]
    a_t = cuda.shared.array(
        (BK, BM), float32, alignment=SMEM_ALIGN
    )  # a[row0 + j, k0 + i] at [i, j]
    b_s = cuda.shared.array((BK, BN), float32, alignment=SMEM_ALIGN)
    acc = cuda.local.array((TM, TN), float32)
    af = cuda.local.array(TM, float32)
    bf = cuda.local.array(TN, float32)
    pa = cuda.local.array(FILL, float32)
    pb = cuda.local.array(FILL, float32)
    for r in range(TM):
        for cc in range(TN):
            acc[r, cc] = float32(0.0)
    # A: thread loads a[row0 + tid // 2, k0 + 4 (tid % 2) + i], i < 4 (a warp: 16 rows x 32 B).
    ar = tid // 2
    ak = 4 * (tid % 2)
    # B: thread loads b[k0 + tid // 32 ... ] -- rows tid // 128 + 2 i, column tid % 128.
    bk = tid // BN
    bc = tid % BN
    inside = row0 + BM <= m and col0 + BN <= n
    for k0 in range(0, kdim + BK, BK):
        if k0 > 0:
            for i in range(FILL):
                a_t[ak + i, ar] = pa[i]
            for i in range(FILL):
                b_s[bk + 2 * i, bc] = pb[i]
        cuda.syncthreads()
        if k0 < kdim:
            if inside and k0 + BK <= kdim:
                for i in range(FILL):
                    pa[i] = a[row0 + ar, k0 + ak + i]
                for i in range(FILL):
                    pb[i] = b[k0 + bk + 2 * i, col0 + bc]
            else:
                for i in range(FILL):
                    gr = row0 + ar
                    gk = k0 + ak + i
                    pa[i] = a[gr, gk] if gr < m and gk < kdim else float32(0.0)
                for i in range(FILL):
                    gk = k0 + bk + 2 * i
                    gc = col0 + bc
                    pb[i] = b[gk, gc] if gk < kdim and gc < n else float32(0.0)
        if k0 > 0:
            ua = uint32(4) * uint32(ty)
            ub = uint32(4) * uint32(tx)
            for k in range(BK):
                kk = uint32(k)
                for i in range(4):
                    af[i] = a_t[kk, ua + uint32(i)]
                    af[4 + i] = a_t[kk, uint32(HALF) + ua + uint32(i)]
                for j in range(4):
                    bf[j] = b_s[kk, ub + uint32(j)]
                    bf[4 + j] = b_s[kk, uint32(HALF) + ub + uint32(j)]
                for r in range(TM):
                    for cc in range(TN):
                        acc[r, cc] += af[r] * bf[cc]
        cuda.syncthreads()
    full = row0 + BM <= m and col0 + BN <= n
    for r in range(TM):
        gr = row0 + 4 * ty + r % 4 + HALF * (r // 4)
        for cc in range(TN):
            gc = col0 + 4 * tx + cc % 4 + HALF * (cc // 4)
            if full or (gr < m and gc < n):
                c[gr, gc] = acc[r, cc]


def _jit(fn: Any, bounds: Any = None) -> Any:
    if bounds is None or SIMULATOR:
        return cuda.jit(fn)
    return cuda.jit(launch_bounds=bounds)(fn)


sgemm_vec_raw = _jit(_sgemm_vec_raw)
sgemm_vec_raw_lb2 = _jit(_sgemm_vec_raw, (NT, 2))


# ------------------------------------------------------------------ async (raw twin)

#: The raw twin of examples/sgemm_async.py: the same tiles, fills, double buffering and
#: reads, in plain Numba with cp.async through a small intrinsic of its own (raw Numba has
#: none). A stage's B run is one cp.async when the whole run is inside b and b's rows are
#: a multiple of 16 bytes, else element by element (the Tier-1 fill zero-fills with the
#: src-size operand instead). GPU only: the simulator has no cp.async.
A_PAD = 4
A_ROW = BM + A_PAD  # 132 floats: 528 bytes, a multiple of 16


def _cp_async_intrinsics() -> tuple[Any, Any, Any, Any, Any]:
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic
    from numba.cuda.np.arrayobj import make_array

    i64 = ir.IntType(64)

    @intrinsic
    def cp_async16(typingctx, sarr, si, sj, garr, gi, gj):  # type: ignore[no-untyped-def]
        sig = types.void(sarr, si, sj, garr, gi, gj)

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            def ptr(aty, aval, idx_vals, idx_tys):  # type: ignore[no-untyped-def]
                ary = make_array(aty)(context, builder, aval)
                inds = [
                    context.cast(builder, v, t, types.intp)
                    for v, t in zip(idx_vals, idx_tys, strict=True)
                ]
                return cgutils.get_item_pointer(context, builder, aty, ary, inds)

            dst = ptr(sig.args[0], args[0], args[1:3], sig.args[1:3])
            src = ptr(sig.args[3], args[3], args[4:6], sig.args[4:6])
            text = (
                "{\n\t.reg .u64 %rd, %rg;\n\tcvta.to.shared.u64 %rd, $0;\n"
                "\tcvta.to.global.u64 %rg, $1;\n"
                "\tcp.async.cg.shared.global [%rd], [%rg], 16;\n}"
            )
            fnty = ir.FunctionType(ir.VoidType(), [i64, i64])
            asm = ir.InlineAsm(fnty, text, "l,l,~{memory}", side_effect=True)
            builder.call(asm, [builder.ptrtoint(dst, i64), builder.ptrtoint(src, i64)])
            return context.get_dummy_value()

        return sig, codegen

    def plain(text: str) -> Any:
        @intrinsic
        def op(typingctx):  # type: ignore[no-untyped-def]
            def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
                fnty = ir.FunctionType(ir.VoidType(), [])
                builder.call(ir.InlineAsm(fnty, text, "~{memory}", side_effect=True), [])
                return context.get_dummy_value()

            return types.void(), codegen

        return op

    return (
        cp_async16,
        plain("cp.async.commit_group;"),
        plain("cp.async.wait_group 1;"),
        plain("cp.async.wait_group 0;"),
        plain("cp.async.wait_all;"),
    )


def _ld_v4_intrinsic() -> Any:
    """``ld.global.nc.v4.f32`` of ``a[i, j : j + 4]`` (the caller checks that the run is
    whole and 16-byte aligned): the raw counterpart of the Tier-1 fill's vector load."""
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic
    from numba.cuda.np.arrayobj import make_array

    @intrinsic
    def ld_v4(typingctx, garr, gi, gj):  # type: ignore[no-untyped-def]
        sig = types.UniTuple(types.float32, 4)(garr, gi, gj)

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            ary = make_array(sig.args[0])(context, builder, args[0])
            inds = [
                context.cast(builder, v, t, types.intp)
                for v, t in zip(args[1:], sig.args[1:], strict=True)
            ]
            ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, inds)
            vty = ir.VectorType(ir.FloatType(), 4)
            vec = builder.load(builder.bitcast(ptr, vty.as_pointer()), align=16)
            vals = [builder.extract_element(vec, ir.Constant(ir.IntType(32), e)) for e in range(4)]
            return context.make_tuple(builder, sig.return_type, vals)

        return sig, codegen

    return ld_v4


def _async_raw_kernels() -> tuple[Any, Any]:
    """The raw twin of examples/sgemm_async.py: 16-deep stages, one barrier per stage, the
    stage's 16 ``k`` written out (a k's shared reads issued before the previous k's FMAs)."""
    cp_async16, commit, _, wait0, wait_all = _cp_async_intrinsics()
    ld_v4 = _ld_v4_intrinsic()
    bk = BK16

    @cuda.jit(device=True, inline=True)
    def fill_a(t, a, row0, k0, ar, aq, m, kdim):  # type: ignore[no-untyped-def]
        # 2 runs of 4 per thread: rows ar and ar + 64, columns k0 + aq ... k0 + aq + 3.
        # Unsigned indices: no negative-index wraparound code (every index is >= 0).
        for h in range(2):
            gr = uint32(row0 + ar + 64 * h)
            gk = uint32(k0 + aq)
            col = uint32(ar + 64 * h)
            if gr < m and gk + 4 <= kdim and kdim % 4 == 0:
                v = ld_v4(a, gr, gk)
                for i in range(4):
                    t[uint32(aq + i), col] = v[i]
            else:
                for i in range(4):
                    ok = gr < m and gk + i < kdim
                    t[uint32(aq + i), col] = a[gr, gk + uint32(i)] if ok else float32(0.0)

    @cuda.jit(device=True, inline=True)
    def fill_b(t, b, k0, col0, bk_, bc, kdim, n):  # type: ignore[no-untyped-def]
        # 2 runs of 4 per thread: rows bk_ and bk_ + 8.
        for h in range(2):
            row = uint32(bk_ + 8 * h)
            gk = uint32(k0 + bk_ + 8 * h)
            gc = uint32(col0 + bc)
            if gk < kdim and gc + 4 <= n and n % 4 == 0:
                cp_async16(t, row, uint32(bc), b, gk, gc)
            else:
                for i in range(4):
                    ok = gk < kdim and gc + i < n
                    t[row, uint32(bc + i)] = b[gk, gc + uint32(i)] if ok else float32(0.0)

    @cuda.jit(device=True, inline=True)
    def frags(ta, tb, k, ra, cb0, cb1):  # type: ignore[no-untyped-def]
        kk = uint32(k)
        return (
            (ta[kk, ra], ta[kk, ra + uint32(1)], ta[kk, ra + uint32(2)], ta[kk, ra + uint32(3)]),
            (
                ta[kk, ra + uint32(4)],
                ta[kk, ra + uint32(5)],
                ta[kk, ra + uint32(6)],
                ta[kk, ra + uint32(7)],
            ),
            (
                tb[kk, cb0],
                tb[kk, cb0 + uint32(1)],
                tb[kk, cb0 + uint32(2)],
                tb[kk, cb0 + uint32(3)],
            ),
            (
                tb[kk, cb1],
                tb[kk, cb1 + uint32(1)],
                tb[kk, cb1 + uint32(2)],
                tb[kk, cb1 + uint32(3)],
            ),
        )

    @cuda.jit(device=True, inline=True)
    def fmas(acc, f):  # type: ignore[no-untyped-def]
        x0, x1, y0, y1 = f
        for r in range(4):
            for cc in range(4):
                acc[r, cc] += x0[r] * y0[cc]
                acc[r, 4 + cc] += x0[r] * y1[cc]
                acc[4 + r, cc] += x1[r] * y0[cc]
                acc[4 + r, 4 + cc] += x1[r] * y1[cc]

    @cuda.jit(device=True, inline=True)
    def stage(acc, ta, tb, ra, cb0, cb1):  # type: ignore[no-untyped-def]
        # Written out like the example's (a loop of 16 stays a loop).
        f = frags(ta, tb, 0, ra, cb0, cb1)
        g = frags(ta, tb, 1, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 2, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 3, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 4, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 5, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 6, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 7, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 8, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 9, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 10, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 11, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 12, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 13, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 14, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        g = frags(ta, tb, 15, ra, cb0, cb1)
        fmas(acc, f)
        f = g
        fmas(acc, f)

    def kernel(c, a, b):  # type: ignore[no-untyped-def]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tid = ty * TX + tx
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        m = a.shape[0]
        kdim = a.shape[1]
        n = b.shape[1]
        a0 = cuda.shared.array((bk, A_ROW), float32, alignment=16)
        a1 = cuda.shared.array((bk, A_ROW), float32, alignment=16)
        b0 = cuda.shared.array((bk, BN), float32, alignment=16)
        b1 = cuda.shared.array((bk, BN), float32, alignment=16)
        acc = cuda.local.array((TM, TN), float32)
        for r in range(TM):
            for cc in range(TN):
                acc[r, cc] = float32(0.0)
        p = (tx >> 2) & 1
        ra = uint32(8 * ty)
        cb0 = uint32(8 * tx + 4 * p)
        cb1 = uint32(8 * tx + 4 - 4 * p)
        ar = tid // 4  # A: runs tid and tid + 256 of the tile's 512 (4 per row of a)
        aq = 4 * (tid % 4)
        bk_ = tid // 32  # B: runs tid and tid + 256 (32 per row of b)
        bc = 4 * (tid % 32)
        fill_a(a0, a, row0, 0, ar, aq, m, kdim)
        fill_b(b0, b, 0, col0, bk_, bc, kdim, n)
        commit()
        for k0 in range(0, kdim, 2 * bk):
            wait0()
            cuda.syncthreads()
            fill_a(a1, a, row0, k0 + bk, ar, aq, m, kdim)
            fill_b(b1, b, k0 + bk, col0, bk_, bc, kdim, n)
            commit()
            stage(acc, a0, b0, ra, cb0, cb1)
            wait0()
            cuda.syncthreads()
            fill_a(a0, a, row0, k0 + 2 * bk, ar, aq, m, kdim)
            fill_b(b0, b, k0 + 2 * bk, col0, bk_, bc, kdim, n)
            commit()
            stage(acc, a1, b1, ra, cb0, cb1)
        wait_all()
        full = row0 + BM <= m and col0 + BN <= n
        for r in range(TM):
            gr = row0 + 8 * ty + r
            for cc in range(TN):
                gc = col0 + 8 * tx + (cc ^ (4 * p))
                if full or (gr < m and gc < n):
                    c[gr, gc] = acc[r, cc]

    return cuda.jit(kernel), cuda.jit(launch_bounds=(NT, 2))(kernel)


def _async_bk8_raw_kernels() -> tuple[Any, Any]:
    cp_async16, commit, wait1, _, _ = _cp_async_intrinsics()

    @cuda.jit(device=True, inline=True)
    def fill_a(t, a, row0, k0, ar, aq, m, kdim):  # type: ignore[no-untyped-def]
        gr = row0 + ar
        gk = k0 + aq
        if gr < m and gk + 4 <= kdim:
            for i in range(4):
                t[aq + i, ar] = a[gr, gk + i]
        else:
            for i in range(4):
                t[aq + i, ar] = a[gr, gk + i] if gr < m and gk + i < kdim else float32(0.0)

    @cuda.jit(device=True, inline=True)
    def fill_b(t, b, k0, col0, bk, bc, kdim, n):  # type: ignore[no-untyped-def]
        gk = k0 + bk
        gc = col0 + bc
        if gk < kdim and gc + 4 <= n and n % 4 == 0:
            cp_async16(t, bk, bc, b, gk, gc)
        else:
            for i in range(4):
                t[bk, bc + i] = b[gk, gc + i] if gk < kdim and gc + i < n else float32(0.0)

    @cuda.jit(device=True, inline=True)
    def stage(ta, tb, acc, af, bf, ra, cb0, cb1):  # type: ignore[no-untyped-def]
        for k in range(BK):
            kk = uint32(k)
            for i in range(4):
                af[i] = ta[kk, ra + uint32(i)]
                af[4 + i] = ta[kk, ra + uint32(4 + i)]
                bf[i] = tb[kk, cb0 + uint32(i)]
                bf[4 + i] = tb[kk, cb1 + uint32(i)]
            for r in range(TM):
                for cc in range(TN):
                    acc[r, cc] += af[r] * bf[cc]

    def kernel(c, a, b):  # type: ignore[no-untyped-def]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tid = ty * TX + tx
        row0 = cuda.blockIdx.y * BM
        col0 = cuda.blockIdx.x * BN
        m = a.shape[0]
        kdim = a.shape[1]
        n = b.shape[1]
        a0 = cuda.shared.array((BK, A_ROW), float32, alignment=16)
        a1 = cuda.shared.array((BK, A_ROW), float32, alignment=16)
        b0 = cuda.shared.array((BK, BN), float32, alignment=16)
        b1 = cuda.shared.array((BK, BN), float32, alignment=16)
        acc = cuda.local.array((TM, TN), float32)
        af = cuda.local.array(TM, float32)
        bf = cuda.local.array(TN, float32)
        for r in range(TM):
            for cc in range(TN):
                acc[r, cc] = float32(0.0)
        p = (tx >> 2) & 1
        ra = uint32(8 * ty)
        cb0 = uint32(8 * tx + 4 * p)
        cb1 = uint32(8 * tx + 4 - 4 * p)
        ar = tid // 2
        aq = 4 * (tid % 2)
        bk = tid // 32
        bc = 4 * (tid % 32)
        fill_a(a0, a, row0, 0, ar, aq, m, kdim)
        fill_b(b0, b, 0, col0, bk, bc, kdim, n)
        commit()
        for k0 in range(0, kdim, 2 * BK):
            fill_a(a1, a, row0, k0 + BK, ar, aq, m, kdim)
            fill_b(b1, b, k0 + BK, col0, bk, bc, kdim, n)
            commit()
            wait1()
            cuda.syncthreads()
            stage(a0, b0, acc, af, bf, ra, cb0, cb1)
            cuda.syncthreads()
            fill_a(a0, a, row0, k0 + 2 * BK, ar, aq, m, kdim)
            fill_b(b0, b, k0 + 2 * BK, col0, bk, bc, kdim, n)
            commit()
            wait1()
            cuda.syncthreads()
            stage(a1, b1, acc, af, bf, ra, cb0, cb1)
            cuda.syncthreads()
        full = row0 + BM <= m and col0 + BN <= n
        for r in range(TM):
            gr = row0 + 8 * ty + r
            for cc in range(TN):
                gc = col0 + 8 * tx + (cc ^ (4 * p))
                if full or (gr < m and gc < n):
                    c[gr, gc] = acc[r, cc]

    return cuda.jit(kernel), cuda.jit(launch_bounds=(NT, 2))(kernel)


_ASYNC_RAW: dict[str, tuple[Any, Any]] = {}


def _async_raw(which: str, lb2: bool) -> Any:
    if SIMULATOR:
        raise RuntimeError(
            "the raw cp.async twin runs on a GPU only (no cp.async on the simulator)"
        )
    if which not in _ASYNC_RAW:
        make = _async_raw_kernels if which == "bk16" else _async_bk8_raw_kernels
        _ASYNC_RAW[which] = make()
    return _ASYNC_RAW[which][1 if lb2 else 0]


def sgemm_async_raw(lb2: bool = True) -> Any:
    """The raw twin of examples/sgemm_async.py (compiled on first use; GPU only)."""
    return _async_raw("bk16", lb2)


def sgemm_async_bk8_raw(lb2: bool = True) -> Any:
    """The raw twin of benchmarks/_sgemm_async_bk8.py, the example's previous schedule."""
    return _async_raw("bk8", lb2)


# ------------------------------------------------------------------ the benchmark

#: (variant, tier, factory(m, n) -> launch(c, a, b))
Variant = tuple[str, str, Callable[[int, int], Callable[..., None]]]
TIER1 = "simtsafe Tier 1"
RAW = "raw numba"


def _safe(kernel: Callable[[], Any]) -> Callable[[int, int], Callable[..., None]]:
    def make(m: int, n: int) -> Callable[..., None]:
        return kernel().prepare(grid=grid_for(m, n), block=(TX, TY, 1))  # type: ignore[no-any-return]

    return make


def _safe_general(kernel: Callable[[], Any]) -> Callable[[int, int], Callable[..., None]]:
    """As ``_safe``, the inputs compiled in the general layout (``"C"``) even where aligned
    for runs: the code a launch compiled before the run-aligned specialization (``"C16"``),
    for the A/B of that specialization in one run."""

    def make(m: int, n: int) -> Callable[..., None]:
        from unittest import mock

        with mock.patch("simtsafe.host._launch.run_layouts", lambda kernel: False):
            return kernel().prepare(grid=grid_for(m, n), block=(TX, TY, 1))  # type: ignore[no-any-return]

    return make


def _raw(kernel: Callable[[], Any]) -> Callable[[int, int], Callable[..., None]]:
    def make(m: int, n: int) -> Callable[..., None]:
        k = kernel()
        grid = grid_for(m, n)
        return lambda *args: k[grid, (TX, TY)](*args)

    return make


def _example_async() -> Any:
    import sgemm_async

    return sgemm_async.sgemm_async


def _async_bk8() -> Any:
    import _sgemm_async_bk8

    return _sgemm_async_bk8.sgemm_async_bk8


def _example(attr: str) -> Any:
    import coop_raw
    import sgemm

    return getattr(sgemm, attr) if hasattr(sgemm, attr) else getattr(coop_raw, attr)


VARIANTS: list[Variant] = [
    ("lin (examples/sgemm.py)", TIER1, _safe(lambda: _example("sgemm"))),
    ("lin + lb2 (coop_raw.sgemm_raw)", RAW, _raw(lambda: _example("sgemm_raw"))),
    ("lin", RAW, _raw(lambda: _jit(_example("_sgemm_raw")))),
    ("vec", RAW, _raw(lambda: sgemm_vec_raw)),
    ("vec + lb2", RAW, _raw(lambda: sgemm_vec_raw_lb2)),
    ("async (examples/sgemm_async.py)", TIER1, _safe(lambda: _example_async())),
    ("async, general layout", TIER1, _safe_general(lambda: _example_async())),
    ("async + lb2 (raw twin)", RAW, _raw(lambda: sgemm_async_raw(lb2=True))),
    ("async bk8 (benchmarks/_sgemm_async_bk8.py)", TIER1, _safe(lambda: _async_bk8())),
    ("async bk8 + lb2 (raw twin)", RAW, _raw(lambda: sgemm_async_bk8_raw(lb2=True))),
]

#: (Tier-1 row, its raw twin's row): the table's last lines give safe / raw for each pair.
PAIRS = [
    ("async (examples/sgemm_async.py)", "async + lb2 (raw twin)"),
    ("async bk8 (benchmarks/_sgemm_async_bk8.py)", "async bk8 + lb2 (raw twin)"),
    ("lin (examples/sgemm.py)", "lin + lb2 (coop_raw.sgemm_raw)"),
]


def _inputs(m: int, k: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((m, k), dtype=np.float32),
        rng.standard_normal((k, n), dtype=np.float32),
    )


def _matches(got: np.ndarray, ref: np.ndarray, k: int) -> bool:
    return bool(np.allclose(got, ref, rtol=1e-3, atol=1e-4 * k))


def check(make: Callable[[int, int], Callable[..., None]], m: int, k: int, n: int) -> bool:
    """The variant's c = a @ b at m x k x n against numpy (float64)."""
    ha, hb = _inputs(m, k, n, seed=7)
    c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    make(m, n)(c, cuda.to_device(ha), cuda.to_device(hb))
    return _matches(c.copy_to_host(), ha.astype(np.float64) @ hb.astype(np.float64), k)


def time_ms(fn: Callable[[], None], reps: int) -> float:
    """Median device time of one call in ms (CUDA events, warm-up first)."""
    return 1e3 * time_gpu(fn, reps=reps, warmup=2)


def _error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return text[:200]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096, help="timed size (n x n x n)")
    parser.add_argument(
        "--check", type=int, default=None, help="checked size (odd shapes; 520, simulator 150)"
    )
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--sim", action="store_true", help="correctness checks only")
    args = parser.parse_args()
    sim = args.sim or SIMULATOR
    size = args.check or (150 if sim else 520)
    cm, ck, cn = size, size * 2 // 3 + 5, size * 3 // 4 + 3
    if sim:
        ok = True
        for name, tier, make in VARIANTS:
            try:
                good = check(make, cm, ck, cn)
            except Exception as exc:  # noqa: BLE001 -- one row per variant
                good = False
                print(f"{name} [{tier}]: {_error(exc)}")
            print(f"{name} [{tier}] {cm}x{ck}x{cn}: {'matches' if good else 'DOES NOT MATCH'}")
            ok = ok and good
        return 0 if ok else 1

    n = args.n
    flops = 2.0 * n**3
    ha, hb = _inputs(n, n, n, seed=1)
    a, b = cuda.to_device(ha), cuda.to_device(hb)
    c = cuda.device_array((n, n), np.float32)
    sample = np.random.default_rng(2).choice(n, size=min(n, 64), replace=False)
    ref = ha[sample].astype(np.float64) @ hb.astype(np.float64)
    rows: list[dict[str, Any]] = []

    cublas_ms = None
    try:
        import cupy as cp

        ca, cb = cp.asarray(a), cp.asarray(b)
        cc = cp.empty((n, n), cp.float32)
        cp.matmul(ca, cb, out=cc)
        ok = _matches(cc.get()[sample], ref, n)
        cublas_ms = time_ms(lambda: cp.matmul(ca, cb, out=cc), args.reps)
        rows.append(
            {
                "variant": "cuBLAS (cupy.matmul, CUPY_TF32=0)",
                "tier": "library",
                "ms": cublas_ms,
                "ok": ok,
                "error": "",
            }
        )
    except ImportError:
        print("cupy not installed: no cuBLAS row")
    except Exception as exc:  # noqa: BLE001
        print(f"cuBLAS row failed: {_error(exc)}")
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False  # plain FP32 cuBLAS
        ta, tb = torch.as_tensor(ha, device="cuda"), torch.as_tensor(hb, device="cuda")
        tc = torch.empty((n, n), dtype=torch.float32, device="cuda")
        torch.matmul(ta, tb, out=tc)
        torch.cuda.synchronize()
        ok = _matches(tc[torch.as_tensor(sample, device="cuda")].cpu().numpy(), ref, n)
        torch_ms = time_ms(lambda: torch.matmul(ta, tb, out=tc), args.reps)
        rows.append(
            {
                "variant": "cuBLAS (torch.matmul, allow_tf32=False)",
                "tier": "library",
                "ms": torch_ms,
                "ok": ok,
                "error": "",
            }
        )
        cublas_ms = torch_ms if cublas_ms is None else min(cublas_ms, torch_ms)
    except ImportError:
        print("torch not installed: no torch row")
    except Exception as exc:  # noqa: BLE001
        print(f"torch row failed: {_error(exc)}")

    for name, tier, make in VARIANTS:
        row: dict[str, Any] = {"variant": name, "tier": tier, "ms": None, "ok": False, "error": ""}
        try:
            small = check(make, cm, ck, cn)
            launch = make(n, n)
            launch(c, a, b)
            cuda.synchronize()
            row["ok"] = small and _matches(c.copy_to_host()[sample], ref, n)
            row["ms"] = time_ms(lambda launch=launch: launch(c, a, b), args.reps)
        except Exception as exc:  # noqa: BLE001 -- a failing variant is a row, not a crash
            row["error"] = _error(exc)
            traceback.print_exc()
        rows.append(row)

    lines = [
        f"SGEMM {n}^3 float32 on {device_name()} (median of {args.reps}; checked at "
        f"{cm}x{ck}x{cn} and on {len(sample)} rows at {n}^3)",
        "",
        "| variant | tier | ms | TFLOP/s | % of cuBLAS | matches |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["ms"] is None:
            lines.append(f"| {row['variant']} | {row['tier']} | - | - | - | {row['error']} |")
            continue
        tflops = flops / (row["ms"] * 1e-3) / 1e12
        pct = f"{100.0 * cublas_ms / row['ms']:.1f}%" if cublas_ms else "-"
        lines.append(
            f"| {row['variant']} | {row['tier']} | {row['ms']:.3f} | {tflops:.2f} | {pct} "
            f"| {row['ok']} |"
        )
    ms = {row["variant"]: row["ms"] for row in rows}
    lines.append("")
    for safe_name, raw_name in PAIRS:
        if ms.get(safe_name) and ms.get(raw_name):
            # Time ratio raw / safe = throughput ratio safe / raw (>= 0.99: zero cost).
            lines.append(f"safe/raw {safe_name}: {ms[raw_name] / ms[safe_name]:.3f}")
    print("\n".join(lines))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
