# pyright: basic
# (the raw twin's llvmlite/Numba extension code is untyped, Tier 3; mypy --strict checks it all)
"""bf16 matrix multiply on sm_90's warpgroup tensor cores, ``c = a @ b`` with fp32 accumulation
(Tier 1: ``simtsafe.wgmma``).

``a`` is M x K and ``b`` is K x N, both row-major bf16; ``c`` is M x N float32. A block of
256 threads (two warpgroups) computes a 128 x 256 tile of ``c``: warpgroup ``g`` owns rows
``64g .. 64g + 63`` (``wgmma.out_tile(c, 128, 256)``) and holds its 64 x 256 fp32
accumulator in registers (128 a thread). K is walked 64 columns a stage through four stages
of shared tiles in the 128-byte swizzled layout the tensor cores read
(``shared.tile(..., swizzle=128)``: ``ta`` 128 x 64, ``tb`` 64 x 256): at each step one
stage is read by a new ``wgmma`` group, the previous stage may still be read by the group
before it, and two stages of ``cp.async`` copies are in flight:

1. prologue: ``shared.fill_async`` of stages 0 and 1 (16-byte runs: 4 of A and 8 of B a
   thread), a group each;
2. each step ``s``: ``wait_group(1)`` (stage ``s`` has landed; in a kernel that uses
   ``wgmma`` the wait also fences the copies for the tensor cores), a block barrier,
   the fill of stage ``s + 2`` into the tiles stage ``s - 2`` used, then
   ``acc = wgmma.mma_async(ta, tb, acc)`` -- four ``wgmma.mma_async.m64n256k16``, one per 16
   columns of K, issued as one group -- and ``acc = wgmma.wait(acc, 1)``: the group of stage
   ``s - 1`` is done, so its tiles may be refilled at the next step. The compiled-form phase
   check follows each group's reads until that wait: refilling stage ``s - 1``'s tiles
   instead is refused (tests/ptx/test_wgmma_ptx.py).

The four stages take 200 KiB of shared memory (each swizzled tile 1 KiB more, to start at a
multiple of 1024 bytes): the contract declares ``tile_shared`` and ``prepare`` opts the
function in. The body spells out the four steps of a round (``ta0/tb0`` .. ``ta3/tb3``: the
phase analysis follows tiles by name). Past ``k``'s end the fills copy zeros, so any ``k``
works; runs whose source is not 16-byte aligned are copied element by element. ``wgmma`` is an
sm_90a instruction: the kernel runs on H100/H200-class GPUs only (``run`` says so elsewhere).

The raw twin ``gemm_bf16_raw`` (``numba.cuda.jit``, inline PTX through ``llvmlite``, no
checks, sizes multiples of the tile) has the same schedule; ``benchmarks/gemm_bf16.py`` times
both beside cuBLAS and Triton.
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

BM = 128  # block tile rows: two warpgroups of 64
BN = 256  # block tile columns: the warpgroup's accumulator width
BK = 64  # K step: one stage (128-byte rows of bf16)
STAGES = 4  # shared stages: one read, one still read by the wgmma group in flight,
AHEAD = STAGES - 2  # and two being filled
ROUND = STAGES * BK
BLOCK = (32, 8, 1)  # 256 threads, two warpgroups
A_BYTES = BM * BK * 2  # 16384
B_BYTES = BK * BN * 2  # 32768
STAGE_BYTES = A_BYTES + B_BYTES  # the raw twin's stage (its tiles are carved from one array)
NACC = BN // 2  # fp32 accumulators a thread (64 x 256 over a warpgroup's 128 threads)
SWIZZLE_ROOM = 1024  # a swizzled tile of a tile_shared window starts at a multiple of 1024
TILE_SHARED = STAGES * (A_BYTES + B_BYTES + 2 * SWIZZLE_ROOM)  # 204800 B (200 KiB)


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
    ta0 = ss.shared.tile((BM, BK), ss.bfloat16, swizzle=128)  # ta0[i, j] = a[row0 + i, k0 + j]
    ta1 = ss.shared.tile((BM, BK), ss.bfloat16, swizzle=128)
    ta2 = ss.shared.tile((BM, BK), ss.bfloat16, swizzle=128)
    ta3 = ss.shared.tile((BM, BK), ss.bfloat16, swizzle=128)
    tb0 = ss.shared.tile((BK, BN), ss.bfloat16, swizzle=128)  # tb0[i, j] = b[k0 + i, col0 + j]
    tb1 = ss.shared.tile((BK, BN), ss.bfloat16, swizzle=128)
    tb2 = ss.shared.tile((BK, BN), ss.bfloat16, swizzle=128)
    tb3 = ss.shared.tile((BK, BN), ss.bfloat16, swizzle=128)
    o = ss.wgmma.out_tile(c, BM, BN)
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    kdim = a.shape[1]
    acc: ss.wgmma.AnyAcc = ss.wgmma.zeros(BN)  # pending once mma_async has run
    # Prologue: stages 0 and 1 in flight, one group each.
    ss.shared.fill_async(ta0, a, (row0, 0))
    ss.shared.fill_async(tb0, b, (0, col0))
    ss.shared.commit_group()
    ss.shared.fill_async(ta1, a, (row0, BK))
    ss.shared.fill_async(tb1, b, (BK, col0))
    ss.shared.commit_group()
    for k0 in range(0, kdim, ROUND):
        # Stage 0 is read; stage 2 is filled into the tiles stage -2 used (its group is done).
        ss.shared.wait_group(1)  # one group may stay in flight: stage 0 has landed
        ss.block.sync()
        ss.shared.fill_async(ta2, a, (row0, k0 + 2 * BK))
        ss.shared.fill_async(tb2, b, (k0 + 2 * BK, col0))
        ss.shared.commit_group()
        acc = ss.wgmma.mma_async(ta0, tb0, acc)
        acc = ss.wgmma.wait(acc, 1)  # the previous stage's group is done
        # Stage 1 is read; stage 3 is filled.
        ss.shared.wait_group(1)
        ss.block.sync()
        ss.shared.fill_async(ta3, a, (row0, k0 + 3 * BK))
        ss.shared.fill_async(tb3, b, (k0 + 3 * BK, col0))
        ss.shared.commit_group()
        acc = ss.wgmma.mma_async(ta1, tb1, acc)
        acc = ss.wgmma.wait(acc, 1)
        # Stage 2 is read; stage 4 is filled into stage 0's tiles.
        ss.shared.wait_group(1)
        ss.block.sync()
        ss.shared.fill_async(ta0, a, (row0, k0 + 4 * BK))
        ss.shared.fill_async(tb0, b, (k0 + 4 * BK, col0))
        ss.shared.commit_group()
        acc = ss.wgmma.mma_async(ta2, tb2, acc)
        acc = ss.wgmma.wait(acc, 1)
        # Stage 3 is read; stage 5 is filled into stage 1's tiles.
        ss.shared.wait_group(1)
        ss.block.sync()
        ss.shared.fill_async(ta1, a, (row0, k0 + 5 * BK))
        ss.shared.fill_async(tb1, b, (k0 + 5 * BK, col0))
        ss.shared.commit_group()
        acc = ss.wgmma.mma_async(ta3, tb3, acc)
        acc = ss.wgmma.wait(acc, 1)
    done = ss.wgmma.wait(acc, 0)
    ss.shared.wait_all()  # the last stages' copies (zeros past k's end) are never read
    ss.wgmma.store(o, done)


# --------------------------------------------------------------------------- the raw twin
# numba.cuda.jit with the same schedule: one dynamic shared array, the swizzle and the
# descriptors by hand, inline PTX for cp.async and wgmma; sizes multiples of the tile.

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()
_ACC = nb_types.UniTuple(nb_types.float32, NACC)


def _asm(builder: ir.IRBuilder, ret: Any, args: list[Any], text: str, cons: str) -> Any:
    fty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(
        ir.InlineAsm(fty, text, cons, side_effect=True), args, attrs=("convergent", "nounwind")
    )


def _smem_base_typer(typingctx: Any, arr: Any) -> Any:
    """The 32-bit shared address of ``arr``'s first element, rounded up to 1024 bytes."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        data = builder.extract_value(args[0], 4)
        shared = builder.addrspacecast(data, ir.PointerType(ir.IntType(16), 3))  # uint16 data
        addr = builder.ptrtoint(shared, _I32)
        return builder.and_(builder.add(addr, _I32(1023)), _I32(~1023 & 0xFFFFFFFF))

    return nb_types.uint32(arr), codegen


_smem_base = intrinsic(_smem_base_typer)


def _address_typer(typingctx: Any, arr: Any, r: Any, c: Any) -> Any:
    """The global address of ``arr[r, c]`` as an int64 (no bounds check)."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        ary = make_array(signature.args[0])(context, builder, args[0])
        inds = [
            context.cast(builder, v, t, nb_types.intp)
            for v, t in zip(args[1:3], signature.args[1:3], strict=True)
        ]
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, inds)
        return builder.ptrtoint(ptr, _I64)

    return nb_types.int64(arr, r, c), codegen


_address = intrinsic(_address_typer)


def _cp16_typer(typingctx: Any, dst: Any, src: Any) -> Any:
    """``cp.async.cg`` of the 16 bytes at global address ``src`` to shared address ``dst``."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        dst32 = context.cast(builder, args[0], signature.args[0], nb_types.uint32)
        src64 = context.cast(builder, args[1], signature.args[1], nb_types.int64)
        text = (
            "{\n\t.reg .u64 %rg;\n\tcvta.to.global.u64 %rg, $1;\n"
            "\tcp.async.cg.shared.global [$0], [%rg], 16;\n}"
        )
        _asm(builder, ir.VoidType(), [dst32, src64], text, "r,l,~{memory}")
        return context.get_dummy_value()

    return nb_types.void(dst, src), codegen


_cp16 = intrinsic(_cp16_typer)


def _plain(text: str) -> Any:
    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
            _asm(builder, ir.VoidType(), [], text, "~{memory}")
            return context.get_dummy_value()

        return nb_types.void(), codegen

    return intrinsic(typer)


_commit = _plain("cp.async.commit_group;")
_wait_all_copies = _plain("cp.async.wait_all;")
_fence_proxy = _plain("fence.proxy.async.shared::cta;")


def _zeros_typer(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        return context.make_tuple(builder, _ACC, [_F32(0.0)] * NACC)

    return _ACC(), codegen


_zeros = intrinsic(_zeros_typer)


def _acc_asm(text: str, extra: list[str]) -> Any:
    """asm reading and writing every accumulator ("+f"), the ``extra`` operands after them."""
    return text, ",".join(["=f"] * NACC + extra + [str(i) for i in range(NACC)])


def _desc(builder: ir.IRBuilder, addr32: Any, lbo: int, sbo: int) -> Any:
    """A 128-byte-swizzled wgmma descriptor of shared address ``addr32``."""
    start = builder.and_(builder.lshr(builder.zext(addr32, _I64), _I64(4)), _I64(0x3FFF))
    fixed = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 62)
    return builder.or_(start, _I64(fixed))


def _wgmma_typer(typingctx: Any, acc: Any, a_addr: Any, b_addr: Any) -> Any:
    """``wgmma.fence``, four ``wgmma.mma_async.m64n256k16`` over 64 columns of K (A K-major at
    ``a_addr``, B N-major at ``b_addr``), ``wgmma.commit_group``; the accumulators in and out."""
    regs = ", ".join(f"${i}" for i in range(NACC))
    lines = ["{", ".reg .pred p;", f"setp.ne.b32 p, ${NACC + 8}, 0;", "wgmma.fence.sync.aligned;"]
    for kk in range(4):
        lines.append(
            f"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{{regs}}}, "
            f"${NACC + 2 * kk}, ${NACC + 2 * kk + 1}, p, 1, 1, 0, 1;"
        )
    lines += ["wgmma.commit_group.sync.aligned;", "}"]
    text, cons = _acc_asm("\n".join(lines), ["l"] * 8 + ["r"])

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        vals = [builder.extract_value(args[0], i) for i in range(NACC)]
        a_at, b_at = (
            context.cast(builder, args[k], signature.args[k], nb_types.uint32) for k in (1, 2)
        )
        descs = []
        for kk in range(4):
            a = builder.add(a_at, _I32(32 * kk))  # 16 columns of a 128-byte row
            b = builder.add(b_at, _I32(2048 * kk))  # 16 rows of 128 bytes
            descs += [_desc(builder, a, 16, 1024), _desc(builder, b, 8192, 1024)]
        ret = ir.LiteralStructType([_F32] * NACC)
        got = _asm(builder, ret, [*descs, _I32(1), *vals], text, cons)
        return context.make_tuple(
            builder, _ACC, [builder.extract_value(got, i) for i in range(NACC)]
        )

    return _ACC(acc, a_addr, b_addr), codegen


_wgmma = intrinsic(_wgmma_typer)


def _wait_typer(n: int) -> Any:
    text, cons = _acc_asm(f"wgmma.wait_group.sync.aligned {n};", [])

    def typer(typingctx: Any, acc: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
            vals = [builder.extract_value(args[0], i) for i in range(NACC)]
            got = _asm(builder, ir.LiteralStructType([_F32] * NACC), vals, text, cons)
            return context.make_tuple(
                builder, _ACC, [builder.extract_value(got, i) for i in range(NACC)]
            )

        return _ACC(acc), codegen

    return intrinsic(typer)


_wait_mma = _wait_typer(1)  # one wgmma group left in flight
_wait_mma_all = _wait_typer(0)
_wait_copies = _plain(f"cp.async.wait_group {AHEAD - 1};")


def _store_typer(typingctx: Any, c: Any, acc: Any, r0: Any, c0: Any) -> Any:
    """Write the thread's accumulators to ``c``: value ``i`` at row ``r0 + 8 * ((i // 2) % 2)``,
    column ``c0 + 8 * (i // 4) + i % 2`` (the wgmma's lane layout, ``r0``/``c0`` the lane's)."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        cty = signature.args[0]
        ary = make_array(cty)(context, builder, args[0])
        r0 = context.cast(builder, args[2], signature.args[2], nb_types.intp)
        c0 = context.cast(builder, args[3], signature.args[3], nb_types.intp)
        for i in range(NACC):
            r = builder.add(r0, context.get_constant(nb_types.intp, 8 * ((i // 2) % 2)))
            col = builder.add(c0, context.get_constant(nb_types.intp, 8 * (i // 4) + i % 2))
            ptr = cgutils.get_item_pointer(context, builder, cty, ary, [r, col])
            builder.store(builder.extract_value(args[1], i), ptr)
        return context.get_dummy_value()

    return nb_types.void(c, acc, r0, c0), codegen


_store = intrinsic(_store_typer)


@cuda.jit(device=True, inline=True)
def _fill(base, a, b, row0, col0, k0):  # type: ignore[no-untyped-def]
    """Stage at shared address ``base``: A = a[row0:+128, k0:+64], B = b[k0:+64, col0:+256].

    Thread ``tid``'s runs lie 32 rows of A (8 of B) apart, at the same place of the swizzle:
    its first run's addresses do not depend on the stage (hoisted out of the K loop), each
    further run's is one add."""
    tid = cuda.threadIdx.y * 32 + cuda.threadIdx.x
    r = tid >> 3  # A: row r + 32q, chunk ch
    ch = tid & 7
    at = base + r * 128 + ((ch ^ (r & 7)) << 4)
    src = _address(a, row0 + r, ch * 8) + k0 * 2
    for q in range(4):
        _cp16(at + q * 4096, src + q * 32 * a.strides[0])
    k = tid >> 5  # B: row k + 8q, 16-byte column nc
    nc = tid & 31
    at = base + A_BYTES + (nc >> 3) * 8192 + k * 128 + (((nc & 7) ^ (k & 7)) << 4)
    src = _address(b, k, col0 + nc * 8) + k0 * b.strides[0]
    for q in range(8):
        _cp16(at + q * 1024, src + q * 8 * b.strides[0])


@cuda.jit
def gemm_bf16_raw(c, a, b):  # type: ignore[no-untyped-def]
    """The same schedule as ``gemm_bf16``, raw (``a``, ``b``: the bf16 bits as uint16; M, N,
    K multiples of 128, 256, 64). Launch it with ``RAW_SHARED`` bytes of dynamic shared
    memory (``raw_launcher``)."""
    sm = cuda.shared.array(0, np.uint16, alignment=16)
    base = _smem_base(sm)
    ty = cuda.threadIdx.y
    lane = cuda.threadIdx.x
    group = ty // 4
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    steps = a.shape[1] // BK
    acc = _zeros()
    for s in range(AHEAD):
        if s < steps:
            _fill(base + s * STAGE_BYTES, a, b, row0, col0, s * BK)
        _commit()
    for s in range(steps):
        _wait_copies()
        _fence_proxy()
        cuda.syncthreads()
        nxt = s + AHEAD  # into the tiles stage s - 2 read (its wgmma group is done)
        if nxt < steps:
            _fill(base + (nxt % STAGES) * STAGE_BYTES, a, b, row0, col0, nxt * BK)
        _commit()
        at = base + (s % STAGES) * STAGE_BYTES
        acc = _wgmma(acc, at + group * (64 * 128), at + A_BYTES)
        acc = _wait_mma(acc)
    acc = _wait_mma_all(acc)
    _wait_all_copies()
    _store(c, acc, row0 + group * 64 + (ty % 4) * 16 + lane // 4, col0 + (lane % 4) * 2)


#: The raw twin's dynamic shared memory: four stages, and room to align the first to 1024.
RAW_SHARED = STAGES * STAGE_BYTES + 1024


def raw_launcher(m: int, n: int, sig: Any) -> Any:
    """``gemm_bf16_raw`` compiled for ``sig``, opted in to ``RAW_SHARED`` bytes of dynamic
    shared memory (what ``prepare`` does for the safe kernel), launched with them."""
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
    """A device copy of a bf16 array (through its uint16 bits), viewed back as bf16."""
    host = np.ascontiguousarray(host)
    bits: Any = cuda.to_device(host.view(np.uint16))
    return bits.view(host.dtype)


#: What the kernel needs that a machine may lack (``run_all`` skips it there, saying so).
NEEDS = "wgmma needs a GPU of compute capability 9.0 (H100, H200) or the simulator"


def supported() -> bool:
    """wgmma runs here: the simulator, or a GPU of compute capability 9.0."""
    return bool(ss.SIMULATOR or cuda.get_current_device().compute_capability == (9, 0))


def run(m: int = 200, k: int = 160, n: int = 300) -> bool:
    """c = a @ b for random bf16 matrices; compare with numpy (float64 over the bf16 values)."""
    a, b = inputs(m, k, n)
    d_c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    gemm_bf16.prepare(grid=grid_for(m, n), block=BLOCK)(d_c, to_device_bf16(a), to_device_bf16(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    return bool(np.allclose(d_c.copy_to_host(), expected, rtol=1e-4, atol=1e-3))


if __name__ == "__main__":
    if supported():
        print("gemm_bf16_wgmma matches numpy:", run())
    else:
        print("gemm_bf16_wgmma: skipped:", NEEDS)
