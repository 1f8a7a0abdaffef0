# pyright: basic
# (the raw twin's llvmlite/Numba extension code is untyped, Tier 3; mypy --strict checks it all)
"""The previous schedule of examples/gemm_bf16.py (128 x 128 block tiles, 64 x 32 warp
tiles, four 16-deep cp.async stages in 42 KiB of static shared memory: 16 MMAs and 8
ldmatrix per warp per barrier), kept so that ``benchmarks/gemm_bf16.py`` times it beside the
current one (the ``... previous schedule`` rows). Not an example: the text below is its
original description.

bf16 matrix multiply on tensor cores, ``c = a @ b`` with fp32 accumulation (Tier 1).

``a`` is M x K and ``b`` is K x N, both row-major bf16; ``c`` is M x N float32.
A block of 32 x 8 threads (8 warps) computes a 128 x 128 tile of ``c``; the
warps form a 2 x 4 grid of 64 x 32 warp tiles, each made of 4 x 4 16 x 8
accumulators (``simtsafe.mma.out_tile(c, 128, 128, 64, 32)``: the warp's
rectangle, each lane writing the four elements the MMA gives it). The K axis
is walked 16 columns (one MMA deep) at a time through four stages of shared
tiles, three of them in flight while one is read:

1. prologue: ``shared.fill_async`` copies ``a[row0:row0+128, k0:k0+16]`` into
   ``ta0`` (128 x 16, rows padded to 24 elements: the 8 rows an ``ldmatrix``
   reads fall in 8 different bank groups) and ``b[k0:k0+16, col0:col0+128]``
   into ``tb0`` (16 x 128, padded to 136), then stages 1 and 2 into
   ``ta1/tb1``, ``ta2/tb2``: 16-byte ``cp.async.cg`` runs, one per thread per
   tile (the padded rows, 48 and 272 bytes, are multiples of 16), 0 outside
   the matrices; ``commit_group()`` closes each stage's group;
2. each step ``s`` (stage ``s % 4``): ``wait_group(2)`` (every group but the
   two newest has landed: stage ``s``) and ``simtsafe.block.sync()`` (every
   warp is done with stage ``s - 1``), then the fill of stage ``s + 3`` into
   the tiles stage ``s - 1`` used, and the reads: every warp loads its 4 A
   fragments (``mma.load_a``: ``ldmatrix.x4``) and, one at a time, its 4 B
   fragments (``mma.load_b``: ``ldmatrix.x2.trans``, the tile being k-major),
   and issues 16 ``mma.sync.m16n8k16``. One barrier per step.

The body holds the four steps of a round (``ta0/tb0`` .. ``ta3/tb3``): the
phase analysis follows tiles by name, so a tile chosen by the stage's index
is refused (docs/cooperation.md "Whole-tile fills"). Every fragment origin is
a constant or a function of ``threadIdx.y`` (the contract's exact block bounds
it), so the compiled form proves every ``ldmatrix`` run inside its tile and
the loop holds the raw twin's instructions (``tests/ptx/test_gemm_bf16_ptx.py``).
The four stages fill 42 KiB of the 48 KiB of static shared memory a block may
have (a 32-deep stage, 18.5 KiB, would allow two). Past ``k``'s end the fills
copy zeros, so any ``k`` works; a run whose source is not 16-byte aligned
(``k`` or ``n`` not a multiple of 8) is copied element by element.

The raw twin ``gemm_bf16_raw`` (``numba.cuda.jit``, inline PTX through
``llvmlite``, no checks) has the same schedule; ``benchmarks/gemm_bf16.py``
times both beside cuBLAS and Triton (and the previous schedule, two 32-deep
stages: ``benchmarks/_gemm_bf16_2stage.py``).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D

BM = 128  # block tile rows
BN = 128  # block tile columns
BK = 16  # K step: one stage, one MMA deep
STAGES = 4  # shared stages; STAGES - 1 in flight while one is read
WM = 64  # warp tile rows
WN = 32  # warp tile columns
MI = WM // 16  # 4 accumulators down a warp tile
NI = WN // 8  # 4 across
WARPS_N = BN // WN  # 4 warps across the block tile
PAD = 8  # 16 bytes per row: ldmatrix's 8 rows hit 8 different bank groups
BLOCK = (32, 8, 1)
ROUND = STAGES * BK  # one loop iteration: every stage once


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
        fa0 = ss.mma.load_a(ta0, (wr, 0))
        fa1 = ss.mma.load_a(ta0, (wr + 16, 0))
        fa2 = ss.mma.load_a(ta0, (wr + 32, 0))
        fa3 = ss.mma.load_a(ta0, (wr + 48, 0))
        for j in range(NI):
            fb = ss.mma.load_b(tb0, (0, wc + 8 * j))
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
        # Stage 1 is read; stage 0's tiles (read in the previous step) are refilled.
        ss.shared.wait_group(2)  # STAGES - 2 groups may stay in flight: stage 1 has landed
        ss.block.sync()
        ss.shared.fill_async(ta0, a, (row0, k0 + 4 * BK))
        ss.shared.fill_async(tb0, b, (k0 + 4 * BK, col0))
        ss.shared.commit_group()
        fa0 = ss.mma.load_a(ta1, (wr, 0))
        fa1 = ss.mma.load_a(ta1, (wr + 16, 0))
        fa2 = ss.mma.load_a(ta1, (wr + 32, 0))
        fa3 = ss.mma.load_a(ta1, (wr + 48, 0))
        for j in range(NI):
            fb = ss.mma.load_b(tb1, (0, wc + 8 * j))
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
        # Stage 2 is read; stage 1's tiles (read in the previous step) are refilled.
        ss.shared.wait_group(2)  # STAGES - 2 groups may stay in flight: stage 2 has landed
        ss.block.sync()
        ss.shared.fill_async(ta1, a, (row0, k0 + 5 * BK))
        ss.shared.fill_async(tb1, b, (k0 + 5 * BK, col0))
        ss.shared.commit_group()
        fa0 = ss.mma.load_a(ta2, (wr, 0))
        fa1 = ss.mma.load_a(ta2, (wr + 16, 0))
        fa2 = ss.mma.load_a(ta2, (wr + 32, 0))
        fa3 = ss.mma.load_a(ta2, (wr + 48, 0))
        for j in range(NI):
            fb = ss.mma.load_b(tb2, (0, wc + 8 * j))
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
        # Stage 3 is read; stage 2's tiles (read in the previous step) are refilled.
        ss.shared.wait_group(2)  # STAGES - 2 groups may stay in flight: stage 3 has landed
        ss.block.sync()
        ss.shared.fill_async(ta2, a, (row0, k0 + 6 * BK))
        ss.shared.fill_async(tb2, b, (k0 + 6 * BK, col0))
        ss.shared.commit_group()
        fa0 = ss.mma.load_a(ta3, (wr, 0))
        fa1 = ss.mma.load_a(ta3, (wr + 16, 0))
        fa2 = ss.mma.load_a(ta3, (wr + 32, 0))
        fa3 = ss.mma.load_a(ta3, (wr + 48, 0))
        for j in range(NI):
            fb = ss.mma.load_b(tb3, (0, wc + 8 * j))
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
    ss.shared.wait_all()  # the last stages' copies (zeros past k's end) are never read
    for i in range(MI):
        for j in range(NI):
            ss.mma.store(o, i, j, (acc[i, j, 0], acc[i, j, 1], acc[i, j, 2], acc[i, j, 3]))


# --------------------------------------------------------------------------- the raw twin
# numba.cuda.jit with the same schedule: shared arrays of the bf16 bits (uint16), inline
# PTX for ldmatrix and mma, no bounds checks on the fragments (the fill pads with zeros).

# Its inline-PTX intrinsics are the example's (the same instructions); only the schedule
# differs. benchmarks/gemm_bf16.py loads the example under this name first; alone, this
# module loads it itself.
_EXAMPLE = "gemm_bf16_example"
if _EXAMPLE not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        _EXAMPLE, Path(__file__).resolve().parents[1] / "examples" / "gemm_bf16.py"
    )
    assert _spec is not None and _spec.loader is not None
    sys.modules[_EXAMPLE] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_EXAMPLE])
_ex = sys.modules[_EXAMPLE]
_raw_ldmatrix_a = _ex._raw_ldmatrix(4, False)
_raw_ldmatrix_b = _ex._raw_ldmatrix(2, True)  # one B fragment (the example reads two)
_raw_mma, _raw_cp_async, _raw_plain = _ex._raw_mma, _ex._raw_cp_async, _ex._raw_plain
_raw_commit, _raw_wait_all = _ex._raw_commit, _ex._raw_wait_all
_raw_wait = _raw_plain(f"cp.async.wait_group {STAGES - 2};")

_PA = BK + PAD  # 24: the A tile's row pitch
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
def _raw_step(ta, tb, acc, wr, wc, a_row, a_col, b_row):  # type: ignore[no-untyped-def]
    """One stage's 16 columns of K: 8 ldmatrix and 16 mma.sync per warp."""
    fa0 = _raw_ldmatrix_a(ta, (wr + a_row) * _PA + a_col)
    fa1 = _raw_ldmatrix_a(ta, (wr + 16 + a_row) * _PA + a_col)
    fa2 = _raw_ldmatrix_a(ta, (wr + 32 + a_row) * _PA + a_col)
    fa3 = _raw_ldmatrix_a(ta, (wr + 48 + a_row) * _PA + a_col)
    for j in range(NI):
        fb = _raw_ldmatrix_b(tb, b_row * _PB + wc + 8 * j)
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
    ta2 = cuda.shared.array(_A_ELEMS, np.uint16, alignment=16)
    ta3 = cuda.shared.array(_A_ELEMS, np.uint16, alignment=16)
    tb0 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
    tb1 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
    tb2 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
    tb3 = cuda.shared.array(_B_ELEMS, np.uint16, alignment=16)
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
    _raw_fill(ta1, BM, BK, _PA, a, row0, BK)
    _raw_fill(tb1, BK, BN, _PB, b, BK, col0)
    _raw_commit()
    _raw_fill(ta2, BM, BK, _PA, a, row0, 2 * BK)
    _raw_fill(tb2, BK, BN, _PB, b, 2 * BK, col0)
    _raw_commit()
    for k0 in range(0, kdim, ROUND):
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(ta3, BM, BK, _PA, a, row0, k0 + 3 * BK)
        _raw_fill(tb3, BK, BN, _PB, b, k0 + 3 * BK, col0)
        _raw_commit()
        _raw_step(ta0, tb0, acc, wr, wc, a_row, a_col, b_row)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(ta0, BM, BK, _PA, a, row0, k0 + 4 * BK)
        _raw_fill(tb0, BK, BN, _PB, b, k0 + 4 * BK, col0)
        _raw_commit()
        _raw_step(ta1, tb1, acc, wr, wc, a_row, a_col, b_row)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(ta1, BM, BK, _PA, a, row0, k0 + 5 * BK)
        _raw_fill(tb1, BK, BN, _PB, b, k0 + 5 * BK, col0)
        _raw_commit()
        _raw_step(ta2, tb2, acc, wr, wc, a_row, a_col, b_row)
        _raw_wait()
        cuda.syncthreads()
        _raw_fill(ta2, BM, BK, _PA, a, row0, k0 + 6 * BK)
        _raw_fill(tb2, BK, BN, _PB, b, k0 + 6 * BK, col0)
        _raw_commit()
        _raw_step(ta3, tb3, acc, wr, wc, a_row, a_col, b_row)
    _raw_wait_all()
    for i in range(MI):
        for j in range(NI):
            for e in range(4):
                r = row0 + wr + 16 * i + g + 8 * (e // 2)
                cc = col0 + wc + 8 * j + 2 * q + e % 2
                if r < m and cc < n:
                    c[r, cc] = acc[i, j, e]


def grid_for(m: int, n: int) -> tuple[int, int]:
    """One block per 128 x 128 tile of c: (column tiles, row tiles)."""
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
