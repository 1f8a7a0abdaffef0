# pyright: basic
# (the raw twin's llvmlite/Numba extension code is untyped, Tier 3; mypy --strict checks it all)
"""The previous schedule of examples/gemm_bf16.py (two 32-deep cp.async stages, two
barriers per stage), kept so that ``benchmarks/gemm_bf16.py`` times it beside the current one
(the ``... 2x32 stages`` rows). Not an example: the text below is its original description.

bf16 matrix multiply on tensor cores, ``c = a @ b`` with fp32 accumulation (Tier 1).

``a`` is M x K and ``b`` is K x N, both row-major bf16; ``c`` is M x N float32.
A block of 32 x 8 threads (8 warps) computes a 128 x 128 tile of ``c``; the
warps form a 2 x 4 grid of 64 x 32 warp tiles, each made of 4 x 4 16 x 8
accumulators (``simtsafe.mma.out_tile(c, 128, 128, 64, 32)``: the warp's
rectangle, each lane writing the four elements the MMA gives it). The K axis
is walked 32 columns at a time through two stages of shared tiles, so that the
copy of stage ``s + 1`` is in flight while stage ``s`` is read:

1. fill: ``shared.fill_async`` copies ``a[row0:row0+128, k0:k0+32]`` into
   ``ta0`` (128 x 32, rows padded to 40 elements: the 8 rows an ``ldmatrix``
   reads fall in 8 different bank groups) and ``b[k0:k0+32, col0:col0+128]``
   into ``tb0`` (32 x 128, padded to 136): 16-byte ``cp.async.cg`` runs, two
   per thread per tile (the padded rows, 80 and 272 bytes, are multiples of 16),
   0 outside the matrices; ``commit_group()`` closes the stage's group;
2. the loop body issues the next stage into ``ta1``/``tb1``, then
   ``wait_group(1)`` (every group but the newest has landed) and
   ``simtsafe.block.sync()``;
3. read: for each 16-column half, every warp loads its 4 A fragments
   (``mma.load_a``: ``ldmatrix.x4``) and, one at a time, its 4 B fragments
   (``mma.load_b``: ``ldmatrix.x2.trans``, the tile being k-major), and issues
   16 ``mma.sync.m16n8k16``;
4. ``simtsafe.block.sync()`` before the stage's tiles are filled again.

The body holds two stages (``ta0/tb0`` then ``ta1/tb1``): the phase analysis
follows tiles by name, so a tile chosen by the stage's parity is refused
(docs/cooperation.md "Whole-tile fills"). Past ``k``'s end the fills copy
zeros, so any ``k`` works; a run whose source is not 16-byte aligned (``k`` or
``n`` not a multiple of 8) is copied element by element.

The raw twin ``gemm_bf16_raw`` (``numba.cuda.jit``, inline PTX through
``llvmlite``, no checks) has the same schedule; ``benchmarks/gemm_bf16.py``
times both beside cuBLAS and Triton.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D

# The raw twin's inline-PTX intrinsics and the host helpers are the example's (the same
# instructions); only the schedule differs. benchmarks/gemm_bf16.py loads the example under
# this name first; alone, this module loads it itself.
_EXAMPLE = "gemm_bf16_example"
if _EXAMPLE not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        _EXAMPLE, Path(__file__).resolve().parents[1] / "examples" / "gemm_bf16.py"
    )
    assert _spec is not None and _spec.loader is not None
    sys.modules[_EXAMPLE] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_EXAMPLE])
_ex = sys.modules[_EXAMPLE]
_raw_commit, _raw_cp_async, _raw_wait_all = _ex._raw_commit, _ex._raw_cp_async, _ex._raw_wait_all
_raw_ldmatrix_a, _raw_mma = _ex._raw_ldmatrix_a, _ex._raw_mma
_raw_ldmatrix_b = _ex._raw_ldmatrix(2, True)  # one B fragment (the example now reads two)
_raw_wait1 = _ex._raw_plain("cp.async.wait_group 1;")
grid_for, inputs, to_device_bf16 = _ex.grid_for, _ex.inputs, _ex.to_device_bf16

BM = 128  # block tile rows
BN = 128  # block tile columns
BK = 32  # K step
WM = 64  # warp tile rows
WN = 32  # warp tile columns
MI = WM // 16  # 4 accumulators down a warp tile
NI = WN // 8  # 4 across
WARPS_N = BN // WN  # 4 warps across the block tile
PAD = 8  # 16 bytes per row: ldmatrix's 8 rows hit 8 different bank groups
BLOCK = (32, 8, 1)
STEP = 2 * BK  # one loop iteration: two stages


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=BLOCK,
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
    tb0 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)  # tb0[i, j] = b[k0 + i, col0 + j]
    tb1 = ss.shared.tile((BK, BN), ss.bfloat16, pad=PAD)
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
    ss.shared.fill_async(ta0, a, (row0, 0))
    ss.shared.fill_async(tb0, b, (0, col0))
    ss.shared.commit_group()
    for k0 in range(0, kdim, STEP):
        # Stage k0 + BK goes to ta1/tb1 while ta0/tb0 (stage k0) are read.
        ss.shared.fill_async(ta1, a, (row0, k0 + BK))
        ss.shared.fill_async(tb1, b, (k0 + BK, col0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)  # every group but the newest: ta0/tb0 have landed
        ss.block.sync()
        for kk in range(0, BK, 16):
            fa0 = ss.mma.load_a(ta0, (wr, kk))
            fa1 = ss.mma.load_a(ta0, (wr + 16, kk))
            fa2 = ss.mma.load_a(ta0, (wr + 32, kk))
            fa3 = ss.mma.load_a(ta0, (wr + 48, kk))
            for j in range(NI):
                fb = ss.mma.load_b(tb0, (kk, wc + 8 * j))
                for i in range(MI):
                    fa = fa0
                    if i == 1:
                        fa = fa1
                    elif i == 2:
                        fa = fa2
                    elif i == 3:
                        fa = fa3
                    d = ss.mma.mma(fa, fb, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))
                    for e in range(4):
                        acc[i, j, e] = d[e]
        ss.block.sync()
        # Stage k0 + 2 BK goes to ta0/tb0 while ta1/tb1 are read.
        ss.shared.fill_async(ta0, a, (row0, k0 + STEP))
        ss.shared.fill_async(tb0, b, (k0 + STEP, col0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)  # ta1/tb1 have landed
        ss.block.sync()
        for kk in range(0, BK, 16):
            fa0 = ss.mma.load_a(ta1, (wr, kk))
            fa1 = ss.mma.load_a(ta1, (wr + 16, kk))
            fa2 = ss.mma.load_a(ta1, (wr + 32, kk))
            fa3 = ss.mma.load_a(ta1, (wr + 48, kk))
            for j in range(NI):
                fb = ss.mma.load_b(tb1, (kk, wc + 8 * j))
                for i in range(MI):
                    fa = fa0
                    if i == 1:
                        fa = fa1
                    elif i == 2:
                        fa = fa2
                    elif i == 3:
                        fa = fa3
                    d = ss.mma.mma(fa, fb, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))
                    for e in range(4):
                        acc[i, j, e] = d[e]
        ss.block.sync()
    ss.shared.wait_all()  # the last stage's copies (zeros past k's end) are never read
    for i in range(MI):
        for j in range(NI):
            ss.mma.store(o, i, j, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))


# --------------------------------------------------------------------------- the raw twin
# numba.cuda.jit with the same schedule: shared arrays of the bf16 bits (uint16), inline
# PTX for ldmatrix and mma, no bounds checks on the fragments (the fill pads with zeros).


_PA = BK + PAD  # 40: the A tile's row pitch
_PB = BN + PAD  # 136: the B tile's
_A_ELEMS = BM * _PA
_B_ELEMS = BK * _PB
_RUN = 8  # bf16 elements in one 16-byte run
_THREADS = BLOCK[0] * BLOCK[1]


@cuda.jit(device=True, inline=True)
def _raw_fill(t, rows, cols, pitch, src, r0, c0):  # type: ignore[no-untyped-def]
    """``shared.fill_async`` by hand: the ``rows`` x ``cols`` tile ``t`` (rows ``pitch``
    apart) from ``src[r0:, c0:]``, 0 outside; thread ``tid`` copies the 16-byte runs
    ``tid, tid + 256, ...``: one cp.async when the run starts inside ``src`` at a 16-byte
    boundary (the rest of a run past the row's end zero-filled), else element by element."""
    tid = cuda.threadIdx.y * BLOCK[0] + cuda.threadIdx.x
    per_row = cols // _RUN
    height = src.shape[0]
    width = src.shape[1]
    for k in range(tid, rows * per_row, _THREADS):
        i = k // per_row
        j = (k % per_row) * _RUN
        gr = r0 + i
        gc = c0 + j
        if gr < height and gc < width and width % _RUN == 0:
            _raw_cp_async(t, i * pitch + j, src, gr, gc, 2 * min(width - gc, _RUN))
        else:
            for e in range(_RUN):
                v = np.uint16(0)
                if gr < height and gc + e < width:
                    v = src[gr, gc + e]
                t[i * pitch + j + e] = v


@cuda.jit(device=True, inline=True)
def _raw_stage(ta, tb, acc, wr, wc, a_row, a_col, b_row):  # type: ignore[no-untyped-def]
    """One stage's 32 columns of K: ldmatrix and 32 mma.sync per warp."""
    for kk in range(0, BK, 16):
        fa0 = _raw_ldmatrix_a(ta, (wr + a_row) * _PA + kk + a_col)
        fa1 = _raw_ldmatrix_a(ta, (wr + 16 + a_row) * _PA + kk + a_col)
        fa2 = _raw_ldmatrix_a(ta, (wr + 32 + a_row) * _PA + kk + a_col)
        fa3 = _raw_ldmatrix_a(ta, (wr + 48 + a_row) * _PA + kk + a_col)
        for j in range(NI):
            fb = _raw_ldmatrix_b(tb, (kk + b_row) * _PB + wc + 8 * j)
            for i in range(MI):
                fa = fa0
                if i == 1:
                    fa = fa1
                elif i == 2:
                    fa = fa2
                elif i == 3:
                    fa = fa3
                d = _raw_mma(fa, fb, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))
                for e in range(4):
                    acc[i, j, e] = d[e]


@cuda.jit
def gemm_bf16_raw(c, a, b):  # type: ignore[no-untyped-def]
    """The same schedule as ``gemm_bf16``, raw (``a``, ``b``: the bf16 bits as uint16)."""
    ta0 = cuda.shared.array(_A_ELEMS, np.uint16, alignment=16)
    ta1 = cuda.shared.array(_A_ELEMS, np.uint16, alignment=16)
    tb0 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
    tb1 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
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
    b_row = lane % 16  # of a B fragment (.x2.trans)
    _raw_fill(ta0, BM, BK, _PA, a, row0, 0)
    _raw_fill(tb0, BK, BN, _PB, b, 0, col0)
    _raw_commit()
    for k0 in range(0, kdim, STEP):
        _raw_fill(ta1, BM, BK, _PA, a, row0, k0 + BK)
        _raw_fill(tb1, BK, BN, _PB, b, k0 + BK, col0)
        _raw_commit()
        _raw_wait1()
        cuda.syncthreads()
        _raw_stage(ta0, tb0, acc, wr, wc, a_row, a_col, b_row)
        cuda.syncthreads()
        _raw_fill(ta0, BM, BK, _PA, a, row0, k0 + STEP)
        _raw_fill(tb0, BK, BN, _PB, b, k0 + STEP, col0)
        _raw_commit()
        _raw_wait1()
        cuda.syncthreads()
        _raw_stage(ta1, tb1, acc, wr, wc, a_row, a_col, b_row)
        cuda.syncthreads()
    _raw_wait_all()
    for i in range(MI):
        for j in range(NI):
            for e in range(4):
                r = row0 + wr + 16 * i + g + 8 * (e // 2)
                cc = col0 + wc + 8 * j + 2 * q + e % 2
                if r < m and cc < n:
                    c[r, cc] = acc[i, j, e]


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
