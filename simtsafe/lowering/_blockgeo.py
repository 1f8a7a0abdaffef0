"""The calling thread's place in its block and warp, as LLVM i32 values (for the collectives).

Threads are numbered linearly, ``x + bdx * (y + bdy * z)``; a warp is 32
consecutive linear threads. When the kernel's contract fixes the block,
the kernel carries ``.reqntid`` (emitted by ``__ss_require_block`` as its
first statement), every checked launch has that block (``prepare`` refuses
any other; the driver refuses most others, not a one-thread block), and the
block dimensions here are constants: LLVM then folds the warp count, the lanes
present and the masks (a block of a multiple of 32 threads has no partial
warp path at all) and unrolls the loops over the warps.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.cuda import nvvmutils

__all__ = ["MAX_THREADS_METADATA", "BlockGeometry", "bound_sreg", "exact_block", "max_threads"]

#: named metadata ``!{ptr @kernel, i32 n}``: the contract's ``max_threads`` (``_cuda._bound_block``)
MAX_THREADS_METADATA = "ss.maxthreads"

_I32 = ir.IntType(32)
_FULL = 0xFFFFFFFF


def _c32(v: int) -> ir.Constant:
    return ir.Constant(_I32, v)


def exact_block(builder: ir.IRBuilder) -> tuple[int, int, int] | None:
    """The ``.reqntid`` of the function being built, if it has one.

    Invariant: ``reqntid{x,y,z}`` annotations are added only by
    ``_cuda._require_block`` for the kernel function itself, from the
    contract's exact block, which every checked launch has (``prepare``).
    In a device helper (another LLVM function) there is none.
    """
    module: Any = builder.module
    try:
        annotations = module.get_named_metadata("nvvm.annotations")
    except KeyError:
        return None
    found: dict[str, int] = {}
    for md in annotations.operands:
        ops: Any = getattr(md, "operands", ())
        if len(ops) == 3 and ops[0] is builder.function:
            key = getattr(ops[1], "string", None)
            if key in ("reqntidx", "reqntidy", "reqntidz"):
                found[key] = int(ops[2].constant)
    if len(found) != 3:
        return None
    return (found["reqntidx"], found["reqntidy"], found["reqntidz"])


def max_threads(builder: ir.IRBuilder) -> int | None:
    """The contract's ``max_threads`` of the kernel being built, if it has one.

    Invariant: ``!ss.maxthreads`` entries are added only by ``_cuda._bound_block`` for the
    kernel function itself (its first statement), from the contract's ``max_threads``,
    which ``prepare`` enforces on every checked launch (``TooManyThreads``).
    """
    module: Any = builder.module
    try:
        bounds = module.get_named_metadata(MAX_THREADS_METADATA)
    except KeyError:
        return None
    for md in bounds.operands:
        ops: Any = getattr(md, "operands", ())
        if len(ops) == 2 and ops[0] is builder.function:
            return int(ops[1].constant)
    return None


_SREG = "llvm.nvvm.read.ptx.sreg."


def bound_sreg(builder: ir.IRBuilder, instr: ir.Instruction) -> None:
    """Give a ``%tid``/``%ntid`` read in a kernel with ``.reqntid`` (or the contract's
    ``max_threads``) its ``!range``.

    Called for every instruction inserted (``_provenance``'s hook), so that the
    reads Numba itself emits (``cuda.threadIdx.y``, ``cuda.blockDim.x``) are
    bounded too: ``tid`` in ``[0, n)``, ``ntid`` in ``[n, n + 1)`` (a constant
    to LLVM). Bounds checks that the block shape decides then fold (a warp
    tile's rows ``(threadIdx.y // 4) * 64 + 48 + 15 < 128`` with ``blockDim.y
    == 8``), as clang does for CUDA C++ with ``__launch_bounds__``.

    Safety: ``prepare`` refuses a launch with any other block, so the
    registers hold values in these ranges in every checked launch (Tiers 1
    and 2). ``.reqntid`` makes the driver refuse most other blocks too, but not
    all: a one-thread block ``(1, 1, 1)`` was seen to launch (docs/safety.md),
    and then ``ntid`` is outside its range. That launch is only possible
    unchecked (``kernel.unchecked`` inside ``simtsafe.unsafe``, or Numba's own
    launch of the compiled function): Tier 3, where nothing is promised and
    docs/safety.md says the folded checks are gone.

    Without an exact block, the contract's ``max_threads`` ``m`` bounds every axis: ``tid``
    in ``[0, m)``, ``ntid`` in ``[1, m + 1)`` (a block of at most ``m`` threads has at most
    ``m`` on each axis). ``prepare`` refuses a larger block (``TooManyThreads``), and the
    launch bounds stamp ``.maxntid m``: a branch the bound decides folds (``threadIdx.x //
    32 > 2`` under ``max_threads=64``), as with ``__launch_bounds__`` in CUDA C++.
    """
    if not isinstance(instr, ir.CallInstr):
        return
    name = getattr(instr.callee, "name", "")
    if not name.startswith(_SREG) or name[-2:] not in (".x", ".y", ".z"):
        return
    reg = name[len(_SREG) : -2]
    if reg not in ("tid", "ntid"):
        return
    dims = exact_block(builder)
    if dims is None:
        most = max_threads(builder)
        if most is None:
            return
        low, high = (0, most) if reg == "tid" else (1, most + 1)
        instr.set_metadata("range", builder.module.add_metadata([_c32(low), _c32(high)]))
        return
    n = dims["xyz".index(name[-1])]
    low, high = (0, n) if reg == "tid" else (n, n + 1)
    instr.set_metadata("range", builder.module.add_metadata([_c32(low), _c32(high)]))


class BlockGeometry:
    """Linear thread id, threads per block, lane, warp, warps, lanes present, mask (i32)."""

    def __init__(self, builder: ir.IRBuilder) -> None:
        dims = exact_block(builder)

        def sreg(name: str) -> ir.Value:
            return nvvmutils.call_sreg(builder, name)

        def tid(axis: int) -> ir.Value:
            if dims is None:
                return sreg(f"tid.{'xyz'[axis]}")
            if dims[axis] == 1:
                return _c32(0)
            value = sreg(f"tid.{'xyz'[axis]}")
            # tid < ntid, which .reqntid fixes: tell LLVM (as clang does for CUDA C++).
            value.set_metadata("range", builder.module.add_metadata([_c32(0), _c32(dims[axis])]))
            return value

        if dims is None:
            nx, ny, nz = (sreg(f"ntid.{a}") for a in "xyz")
        else:
            nx, ny, nz = (_c32(d) for d in dims)
        tx, ty, tz = tid(0), tid(1), tid(2)
        self.static = dims
        self.ltid = builder.add(tx, builder.mul(nx, builder.add(ty, builder.mul(ny, tz))))
        self.nthreads = builder.mul(builder.mul(nx, ny), nz)
        self.lane = builder.and_(self.ltid, _c32(31))
        self.warp = builder.lshr(self.ltid, _c32(5))
        self.nwarps = builder.lshr(builder.add(self.nthreads, _c32(31)), _c32(5))
        if dims is not None and (dims[0] * dims[1] * dims[2]) % 32 == 0:
            # Every warp is full: no partial-warp path survives.
            self.present = _c32(32)
            self.full = ir.Constant(ir.IntType(1), 1)
            self.mask = _c32(_FULL)
            return
        # Lanes present in this warp: min(32, T - 32 * warp), at least 1 for a live thread.
        rest = builder.sub(self.nthreads, builder.and_(self.ltid, _c32(~31 & _FULL)))
        big = builder.icmp_unsigned(">", rest, _c32(32))
        self.present = builder.select(big, _c32(32), rest)
        self.full = builder.icmp_unsigned("==", self.present, _c32(32))
        # The mask of the present lanes: the low `present` bits (present in 1..32).
        self.mask = builder.lshr(_c32(_FULL), builder.sub(_c32(32), self.present))
