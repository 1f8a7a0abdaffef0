r"""Attack round 22 (an outside helper): 2D shared accumulators
(``shared.accumulator((R, C), dtype)``, ``h.add((i, j), v)``, ``h[i, j]``).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). The
module-level constants below are plain ``str``; scratch harness: /tmp/a22 in the session
(``load(src)`` = ``load_kernel_module(tempdir, src)``; ``k.ptx(cc=(9, 0))``; the
compiled-form-only runs patch ``simtsafe.decoration._rewrite.check_phases`` away, as
tests/ptx/test_phase_differential.py does).

Summary: the 2D lowering itself held everywhere I looked -- every update and read compares
both axes unsigned on the full 64-bit index before ``trunc`` to i32 and the asm
``mul.wide.u32`` (int8/int32 negatives, uint64 huge, uint32, literal 2**64-1 / 2**63 /
-2**63 / 2**32 rows and 2**32+1 columns); both phase analyses caught every race spelling
tried (also with the source analysis switched off). What broke is around it: the 48 KiB
limit is checked per accumulator, not per block (FINDING 1), and the simulator's value
conversion of an update's float value to an integer element is not the GPU's (FINDING 2).

=============================================================================================
FINDING 1 (LOW-MEDIUM: accepted by k.ptx and run by the simulator, then rejected by ptxas at
the GPU's first prepare with a raw toolchain error): the 48 KiB static shared limit is
checked for each accumulator alone (lowering/_cooprule.accumulator_too_big, its message
says "a block's static shared memory is at most 49152 bytes"), never for the kernel's
total. Two (4, 3072) int32 accumulators (exactly 48 KiB each, the size the new test
accepts) are 96 KiB of static shared memory.
=============================================================================================

``k.ptx(cc=(9, 0))`` accepts ``two-accumulators-96k``; its PTX declares::

    .shared .align 16 .b8 __ss_acc_L11_0[49152];
    .shared .align 16 .b8 __ss_acc_L12_1[49152];

and ptxas (/usr/local/cuda-13.0/bin/ptxas -arch=sm_90, the same PTX with .version 9.0 for
the local ptxas) stops::

    ptxas error   : Entry function '_ZN43ss_testmod_..._1kB2v1...' uses too much shared data
    (0x18000 bytes, 0xc000 max)

so the GPU's prepare (Numba's link of the PTX) fails with that text, not a simtsafe
``SafetyError``/``SharedMemoryError``. The simulator runs the same launch (grid 1, block 128,
idx zeros): out[:4] = [256. 256. 256. 256.] (it also runs the compile worker's typing and
compiled-form checks, which accept). The same holds for a 40 KiB shared.tile beside a
40 KiB accumulator, and for one 49156-byte shared.tile (no compile-time size check at all):
tiles have the same gap, the 2D accumulator only makes it one line to reach (R * C).

Broken promises:
  * docs/safety.md, "The simulator without a CUDA target": "A kernel passes on the simulator
    exactly when it compiles for the GPU" -- it passes on the simulator and does not build.
  * The refusal text of accumulator_too_big (a block's static shared memory) is enforced per
    object; docs/safety.md "Shared memory" row promises a SharedMemoryError for static +
    dynamic over the limit, which prepare cannot give when ptxas fails first.
Fix direction (not applied): sum the static shared bytes of every tile and accumulator of the
kernel when it compiles (the compiled form knows every addrspace(3) global and its size) and
refuse past 48 KiB with a simtsafe message, on both targets.

=============================================================================================
FINDING 2 (LOW-MEDIUM: the simulator and the GPU disagree on values, silently): an update's
value is converted to the element type by Numba's cast on the GPU -- float to int is PTX
``cvt.rzi.s32.f64`` / ``cvt.rzi.u32.f64``, which saturates (NaN -> 0) -- and by numpy's
``astype`` on the simulator (lowering/_coop_sim._cast, whose docstring says "wrapping like
the GPU's integer conversions"), which gives INT_MIN / wraps on x86.
=============================================================================================

``float-value-into-int-accumulator`` (accepted: ``can_convert(float64, int32)`` is Numba's
unsafe conversion), launch grid 1, block 128, val = [nan, 1e10, -1.0, 3e9, ...]:

    simulator  out[:4] = [-2147483648, -2147483648, 4294967295, 0]
    GPU (PTX)  cvt.rzi.s32.f64 %r8, %fd2; atom.shared.add.u32 [..], %r8      -> 0
               cvt.rzi.s32.f64 %r10, %fd3; atom.shared.add.u32 [..], %r10    -> 2147483647
               cvt.rzi.u32.f64 %r12, %fd4; atom.shared.add.u32 [..], %r12    -> 0
               cvt.rzi.s32.f64 %r14, %fd5; atom.shared.max.s32 [..], %r14    -> 2147483647
    (PTX ISA: float-to-integer cvt clamps to the destination range, NaN to 0; LLVM's own
    fptosi/fptoui of such a value is poison, so a constant one may fold to anything.)

Not 2D-specific (the 1D updates share _atomic_update and lower the same cast), but reached
by the natural ``h.add((b, lane), weight[t])`` with float weights into an integer bin.
Broken promise: docs/safety.md "When a check runs" / "simulator" rows (the simulator runs
the kernel as the GPU does), and the sim's own ``_cast`` docstring. Fix direction: refuse a
float value for an integer accumulator at typing (write ``np.int32(v)``), or make ``_cast``
saturate like cvt.rzi (NaN -> 0) for float sources.
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

FINDINGS: dict[str, str] = {
    # FINDING 1: 2 x 48 KiB of static shared memory; k.ptx accepts, ptxas refuses
    # ("uses too much shared data (0x18000 bytes, 0xc000 max)"), the simulator runs it.
    "two-accumulators-96k": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float64], idx: In[np.int64]) -> None:
    w = thread.index_1d()
    h = ss.shared.accumulator((4, 3072), np.int32)
    g = ss.shared.accumulator((4, 3072), np.int32)
    h.add((idx[0], idx[1]), 1)
    g.add((idx[0], idx[1]), 1)
    ss.block.sync()
    out[w] = h[idx[2], idx[3]] + g[idx[2], idx[3]]
""",
    # FINDING 2: float values into int32/uint32 2D accumulators. Launch grid 1, block 128,
    # val = [nan, 1e10, -1.0, 3e9, 0...]: simulator [-2147483648, -2147483648, 4294967295, 0],
    # GPU (cvt.rzi saturates) [0, 2147483647, 0, 2147483647].
    "float-value-into-int-accumulator": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float64], idx: In[np.int64], val: In[np.float64]) -> None:
    w = thread.index_1d()
    t = cuda.threadIdx.x
    h = ss.shared.accumulator((4, 32), np.int32)
    g = ss.shared.accumulator((4, 32), np.uint32)
    if t == 0:
        h.add((0, 0), val[0])
        h.add((0, 1), val[1])
        g.add((0, 0), val[2])
        h.max((0, 2), val[3])
    ss.block.sync()
    out[w] = (
        np.float64(h[0, 0]) * (t == 0)
        + np.float64(h[0, 1]) * (t == 1)
        + np.float64(g[0, 0]) * (t == 2)
        + np.float64(h[0, 2]) * (t == 3)
    )
""",
}

HELD: dict[str, str] = {
    "index-types": "h.add((np.int8(i), np.uint64(j)), 1) and h[np.uint64(i), np.int8(j)]: "
    "each element cast to i64 (sext/zext/bits), `setp.gt.u64 .., 4` and `.., 6` on the full "
    "value, `cvt.u32.u64` + `mul.wide.u32 .., 28` only inside the taken branch; the update's "
    "signature index UniTuple(intp, 2) makes Numba cast Tuple(int8, uint64) element-wise; "
    "simulator with idx = (-1, -4) skips, int8(260) = 4 wraps as on the GPU",
    "huge-literal-indices": "h.add((2**64-1, 0)), (2**63, 1), (-2**63, 2), (0, 2**32+1), "
    "(2**32, 3) and reads h[2**64-1, 0], h[2**32, 3], h[0, 2**32+1] on (4, 32): every update "
    "removed at compile (no atom in the PTX), reads give 0; (2**32, 3) is not truncated to "
    "row 0 first",
    "bool-and-odd-index-spellings": "(True, 1), ((i, 1), 1), (w, 1) with a witness, "
    "h[0, 0, 0], h[0, :], one int for 2D, a pair for 1D: all refused at typing with "
    "simtsafe text on both targets (the simulator types the kernel for CUDA too); "
    "(w.index, 1), a tuple in a variable `p = (i, j)` accepted and bounds-checked",
    "float-cas-minmax": "float32/float64 2D min/max go through numba's CAS helper on the "
    "moved pointer: `ld.volatile.shared.f64` + `atom.shared.cas.b64` at the checked address; "
    "the compiled-form check sees the helper call as an update of the accumulator (a read in "
    "the same interval refused, source analysis off, for f32/f64/i64/u32 x add/min/max)",
    "idempotent-atomics": "h.add((i, j), 0) and h.max((i, j), np.uint32(0)) stay "
    "atom.shared.add/max (not turned into loads that the compiled form would call reads): no "
    "false refusal",
    "shape-spellings": "(True, 32), (-1, -32), (1, 2, 3), (4,), (1, 2**62), (2**33, 2**31), "
    "(2**63, 1), 'int32' dtype, np.dtype(...) refused with simtsafe text; module constants "
    "(R, C), a module tuple SHAPE and a local `r = 4` accepted; exactly 48 KiB accepted",
    "len-shape-size": "len(h) = R, h.shape = (R, C), h.size = R * C (constants) on both "
    "targets; h.ndim, h.dtype refused",
    "phases-source-and-compiled": "read in the update phase, remaking in a loop (range(4) "
    "and range(n)) with no barrier after the reads, read-then-update in a loop, `continue` "
    "skipping the barrier, a read in a `while` condition with updates in the body, a read in "
    "`for ... else`, a read through a tuple variable: refused by the source analysis AND by "
    "the compiled form alone (check_phases patched off), the latter following the pointer "
    "through the asm offset's gep",
    "helpers-and-aliases": "passing the accumulator to a @ss.device helper, "
    "operator.getitem(h, ...), h.__getitem__ refused at decoration; a helper that makes its "
    "own accumulator refused ('a helper's would be shared by all its calls')",
    "barrier-inside-ctor-and-collectives": "the zeroing barrier of a second accumulator, or "
    "block.sum's barriers, between h's updates and h's reads: accepted (correctly: they are "
    "block barriers every thread passes)",
    "uint32-read-promotion": "h[0, 0] - 1 on a uint32 accumulator: simulator 4294967295.0 "
    "(numpy 2 keeps uint32), GPU -1.0 (Numba widens to int64: cvt.u64.u32, add.s64 -1) -- the "
    "class docs/checker.md 'Values, not bits' already names; not counted as a finding",
}

FALSE_REFUSALS: dict[str, str] = {
    "numpy-scalar-module-constant-shape": "R = np.int64(4) at module level (a numpy scalar: "
    "an allowed compile-time constant, docs/safety.md) in shared.accumulator((R, 32), "
    "np.int32) -- and (2 * R, C), and the 1D shared.accumulator(R, ...) / (2 * R) -- is "
    'refused on both targets with "Numba cannot type `_shared_accumulator_typer(Tuple(int64, '
    "Literal[int](32)), class(int32))`\": simtsafe's internal typer name, no hint that the "
    "shape must be a literal or a plain int module constant (_accumulator_shape returns None "
    "'for Numba to retry with literal types', which never happens for these)",
    "accumulator-witness-read-message": "a 1D accumulator read through its own "
    "thread.local_index() witness in the update phase (h.add(idx[t], 1); out[w] = h[l]) is "
    "rightly refused, but the message says 'read by index' and ends 'or read only through the "
    "filling thread's own witness' -- which is what the kernel does; for accumulators that "
    "hint cannot apply (any thread updates any element). Same text for 2D accumulators.",
}
