# pyright: basic
"""A raw probe (no checks): bf16 GEMM on sm_90's warpgroup MMA (``wgmma.mma_async``).

Not Tier 1 and not an example: it measures whether the ``wgmma`` schedule is worth a Tier-1
form before one is designed (issue 20: bf16 GEMM >= 60% of cuBLAS, the ``mma.sync``
schedule of examples/gemm_bf16.py reaching 36%). ``benchmarks/gemm_bf16.py --wgmma`` times
it beside the example.

Schedule: a block of 256 threads (two warpgroups) computes a 128 x 256 tile of ``c``; each
warpgroup owns 64 rows and issues one ``wgmma.mma_async.m64n256k16`` per 16 columns of K
(A and B read from shared memory through descriptors; 128 fp32 accumulators a thread).
K is walked 64 columns a stage through ``STAGES`` stages of shared tiles in the 128-byte
swizzled layout the descriptors name: A (128 x 64, K-major) rows of 128 bytes; B
(64 x 256, N-major) four blocks of 64 columns, each 64 rows of 128 bytes; the 16-byte
chunk ``c`` of row ``r`` stored at chunk ``c ^ (r % 8)``. Every thread fills with 16-byte
``cp.async.cg`` (4 runs of A, 8 of B a stage). Per stage: ``cp.async.wait_group``,
``fence.proxy.async`` (the copies become visible to the tensor cores' reads), a block
barrier, the refill of the stage read ``LAG + 1`` stages ago, ``wgmma.fence``, four
``wgmma``, ``wgmma.commit_group``, ``wgmma.wait_group LAG`` (``LAG`` groups stay in
flight). Sizes must be multiples of the tile (128, 256, 64): a probe, no edges.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import ir
from numba import cuda
from numba.cuda import cgutils
from numba.cuda import types as nb_types
from numba.cuda.extending import intrinsic
from numba.cuda.np.arrayobj import make_array  # pyright: ignore[reportMissingImports]

BM = 128
BN = 256
BK = 64
BLOCK = (32, 8, 1)
A_BYTES = BM * BK * 2  # 16384
B_BYTES = BK * BN * 2  # 32768
STAGE_BYTES = A_BYTES + B_BYTES
NACC = 128  # fp32 accumulators a thread (64 x 256 over 128 threads)

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()
_ACC = nb_types.UniTuple(nb_types.float32, NACC)


def _asm(builder: ir.IRBuilder, ret: Any, args: list[Any], text: str, cons: str) -> Any:
    fty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(
        ir.InlineAsm(fty, text, cons, side_effect=True), args, attrs=("convergent", "nounwind")
    )


@intrinsic
def _smem_base(typingctx: Any, arr: Any) -> Any:
    """The 32-bit shared address of ``arr``'s first element, rounded up to 1024 bytes."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        data = builder.extract_value(args[0], 4)
        shared = builder.addrspacecast(data, ir.PointerType(data.type.pointee, 3))
        addr = builder.ptrtoint(shared, _I32)
        return builder.and_(builder.add(addr, _I32(1023)), _I32(~1023 & 0xFFFFFFFF))

    return nb_types.uint32(arr), codegen


@intrinsic
def _cp16(typingctx: Any, dst: Any, src: Any, r: Any, c: Any) -> Any:
    """``cp.async.cg`` of the 16 bytes at ``&src[r, c]`` to shared address ``dst``."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        ary = make_array(signature.args[1])(context, builder, args[1])
        inds = [
            context.cast(builder, v, t, nb_types.intp)
            for v, t in zip(args[2:4], signature.args[2:4], strict=True)
        ]
        ptr = cgutils.get_item_pointer(context, builder, signature.args[1], ary, inds)
        dst32 = context.cast(builder, args[0], signature.args[0], nb_types.uint32)
        text = (
            "{\n\t.reg .u64 %rg;\n\tcvta.to.global.u64 %rg, $1;\n"
            "\tcp.async.cg.shared.global [$0], [%rg], 16;\n}"
        )
        _asm(builder, ir.VoidType(), [dst32, builder.ptrtoint(ptr, _I64)], text, "r,l,~{memory}")
        return context.get_dummy_value()

    return nb_types.void(dst, src, r, c), codegen


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


@intrinsic
def _zeros(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        return context.make_tuple(builder, _ACC, [_F32(0.0)] * NACC)

    return _ACC(), codegen


def _acc_asm(text: str, extra: list[str]) -> Any:
    """asm reading and writing every accumulator ("+f"), the ``extra`` operands after them."""
    return text, ",".join(["=f"] * NACC + extra + [str(i) for i in range(NACC)])


def _desc(builder: ir.IRBuilder, addr32: Any, lbo: int, sbo: int) -> Any:
    """A 128-byte-swizzled wgmma descriptor of shared address ``addr32``."""
    start = builder.and_(builder.lshr(builder.zext(addr32, _I64), _I64(4)), _I64(0x3FFF))
    fixed = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (1 << 62)
    return builder.or_(start, _I64(fixed))


@intrinsic
def _wgmma(typingctx: Any, acc: Any, a_addr: Any, b_addr: Any) -> Any:
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


_wait_mma_all = _wait_typer(0)


@intrinsic
def _store(typingctx: Any, c: Any, acc: Any, r0: Any, c0: Any) -> Any:
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


@cuda.jit(device=True, inline=True)
def _fill(base, a, b, row0, col0, k0):  # type: ignore[no-untyped-def]
    """Stage at shared address ``base``: A = a[row0:+128, k0:+64], B = b[k0:+64, col0:+256]."""
    tid = cuda.threadIdx.y * 32 + cuda.threadIdx.x
    for q in range(4):
        i = tid + q * 256
        r = i >> 3
        ch = i & 7
        _cp16(base + r * 128 + ((ch ^ (r & 7)) << 4), a, row0 + r, k0 + ch * 8)
    for q in range(8):
        i = tid + q * 256
        k = i >> 5
        nc = i & 31
        ch = nc & 7
        dst = base + A_BYTES + (nc >> 3) * 8192 + k * 128 + ((ch ^ (k & 7)) << 4)
        _cp16(dst, b, k0 + k, col0 + nc * 8)


class Probe:
    """The probe with ``stages`` shared stages, ``lag`` wgmma groups left in flight a stage
    (``stages - 1 - lag`` stages of copies in flight ahead of the one read)."""

    BLOCK = BLOCK

    def __init__(self, stages: int = 4, lag: int = 1) -> None:
        ahead = stages - 1 - lag
        assert ahead >= 1
        self.shared = stages * STAGE_BYTES + 1024  # + room to align the first stage
        wait_copies = _plain(f"cp.async.wait_group {ahead - 1};")
        wait_mma = _wait_typer(lag)

        @cuda.jit
        def gemm_bf16_raw(c, a, b):  # type: ignore[no-untyped-def]
            """c = a @ b (a, b: the bf16 bits as uint16), ``self.shared`` bytes of dynamic
            shared memory."""
            sm = cuda.shared.array(0, np.uint16, alignment=16)
            base = _smem_base(sm)
            ty = cuda.threadIdx.y
            lane = cuda.threadIdx.x
            group = ty // 4
            row0 = cuda.blockIdx.y * BM
            col0 = cuda.blockIdx.x * BN
            steps = a.shape[1] // BK
            acc = _zeros()
            for s in range(ahead):
                if s < steps:
                    _fill(base + s * STAGE_BYTES, a, b, row0, col0, s * BK)
                _commit()
            for s in range(steps):
                wait_copies()
                _fence_proxy()
                cuda.syncthreads()
                nxt = s + ahead  # into the tiles stage s - 1 - lag read (its group is done)
                if nxt < steps:
                    _fill(base + (nxt % stages) * STAGE_BYTES, a, b, row0, col0, nxt * BK)
                _commit()
                at = base + (s % stages) * STAGE_BYTES
                acc = _wgmma(acc, at + group * (64 * 128), at + A_BYTES)
                acc = wait_mma(acc)
            acc = _wait_mma_all(acc)
            _wait_all_copies()
            _store(c, acc, row0 + group * 64 + (ty % 4) * 16 + lane // 4, col0 + (lane % 4) * 2)

        self.gemm_bf16_raw = gemm_bf16_raw

    @staticmethod
    def grid_for(m: int, n: int) -> tuple[int, int]:
        return (math.ceil(n / BN), math.ceil(m / BM))

    def raw_launcher(self, m: int, n: int, sig: Any) -> Any:
        """The kernel compiled for ``sig``, opted in to its shared memory."""
        from simtsafe.lowering._launching import compiled_function, set_max_dynamic_shared

        kernel = self.gemm_bf16_raw.compile(sig)
        error = set_max_dynamic_shared(
            compiled_function(kernel), self.shared, cuda.get_current_device().id
        )
        if error is not None:
            raise RuntimeError(f"wgmma probe: {self.shared} B of shared memory refused: {error}")
        return self.gemm_bf16_raw[self.grid_for(m, n), BLOCK, 0, self.shared]
