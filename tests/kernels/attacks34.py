r"""Attack round 34 (an outside helper): the signed tuple positions of commit 1556cfb
(``verify/_ranges.Ranges.signed_span``, ``_twins``/``_offsets``, ``_incoming``; the switch
default ``verify/_feasible._targets`` drops), undefined behaviour the analysed copy's passes
might use (integer division, ``abs``, ``clz``/``ffs``, float-to-int, fastmath, uninitialized
locals), device helpers returning an ``IndexError`` status, and what NVVM makes of the
original IR at its *default* level.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), compiled
for sm_90 by tests/ptx/test_attacks34_ptx.py (NVVM from the cu13 wheels, no GPU). Scratch
harness (/tmp/a34 in the session): ``tryk(name, src)`` = ``k.ptx(cc=(9, 0))`` with
``lowering._irform._normalize`` wrapped to keep the original texts and the analysed copy.
Loop kernels are attacks29's ``loop_kernel`` (a 4-tuple ``t`` of ``a[i]``, the loop under a
thread-dependent ``if a[i] > 0.5`` before ``ss.block.sum``); the others attacks33's
``poison_kernel`` (``v = a[i]``, an int64 of the thread, before ``ss.block.sum``).

=============================================================================================
FINDINGS (LOW: synthetic, real at NVVM's default level; closed by lowering/_nvvminput)
=============================================================================================

Root cause: the analysed copy is made to mean what the GPU computes at ``-opt=0`` --
``_irform._wrapping`` drops ``nsw``/``nuw``/``exact``/fast-math flags, clamps shifts and
saturates float-to-int conversions, and instcombine then folds in wrapping, clamped,
saturated arithmetic. NVVM compiles the *original* text, flags and all. At ``-opt=0`` it
folds nothing and the GPU wraps, clamps and saturates: the copy is right. At its default
level (every kernel without ``opt=False``/``debug=True``) NVVM's own instcombine folds
through the original's poison: ``x +nsw 1 > x`` is ``true``, ``1 << n`` is not 0. Where the
copy proves a condition uniform by an identity that holds only in wrapping (clamped)
arithmetic, and NVVM folds one half of that identity through poison, the GPU is left with
the other half -- a compare of the thread's value -- and threads leave before the collective.

FINDING 1 (``nsw-add-identity``; ``nsw-sub-identity`` likewise with ``v - 1 < v``)::

    c1 = (v + 1) > v
    c2 = v != 9223372036854775807
    if c1 != c2:
        return
    s = ss.block.sum(np.float32(1))

The copy: ``icmp sgt (add i64 %v, 1), %v`` is ``%v != INT64_MAX`` in wrapping arithmetic,
so ``c1 != c2`` folds to ``false`` (``br i1 false``): accepted. Default PTX (NVVM folded
``add nsw`` > ``%v`` to true, so ``c1 != c2`` is ``v == INT64_MAX``)::

    ld.global.u64   %rd11, [%rd10];
    setp.eq.s64     %p2, %rd11, 9223372036854775807;
    @%p2 bra        $L__BB0_6;          // $L__BB0_6: ret -- past bar.sync
    ...
    bar.sync        0;

A thread whose ``a[i]`` is ``2**63 - 1`` leaves; the others wait at the barrier. At
``-opt=0`` (``opt=False``) the PTX computes both halves and wraps (``add.s64 %rd59, %rd24,
1; setp.gt.s64 %p4, %rd59, %rd24; setp.ne.s64 %p5, %rd24, 9223372036854775807``): no
thread leaves there.

FINDING 2 (``shl-amount-identity``): the same through a shift by a run-time amount (rounds 31
and 33 made the copy clamp it as PTX does)::

    c1 = (np.int64(1) << v) != 0
    c2 = (v & 4294967295) < 64
    if c1 != c2:
        return

The copy clamps: ``1 << v`` is 0 exactly when the amount's low 32 bits are 64 or more, so
``c1 == c2`` and the exit folds away. Default PTX (NVVM: ``shl i64 1, %v`` is never 0, or
poison)::

    ld.global.u32   %r3, [%rd10];
    and.b32         %r4, %r3, -64;
    setp.ne.s32     %p2, %r4, 0;
    @%p2 bra        $L__BB0_6;          // ret, past bar.sync

At ``-opt=0``: ``cvt.u32.u64 %r10, %rd24; mov.u64 %rd59, 1; shl.b64 %rd60, %rd59, %r10;
setp.ne.s64 %p4, %rd60, 0`` -- the hardware clamps, as the copy says.

Why it gets through: ``lowering/_irform._wrapping`` (and ``_clamped_shift`` /
``_saturating``) rewrite the analysed copy only; ``lowering/_compat.compile_kernel_ptx`` and
the launch path (``_compose``: ``cuda.jit(...)`` then ``disp.compile``) hand NVVM
``library.llvm_strs`` unchanged. No rule of ``verify/`` is wrong: the copy and the default
level's GPU mean different programs. Not fixed here: the fix is in what NVVM compiles, not in
the compiled-form checks -- give NVVM the same rewrite as the copy (drop the poison flags,
clamp run-time and literal shifts, ``llvm.fpto[su]i.sat`` for conversions) in the library's
modules before any PTX is made, on both paths (``compile_kernel_ptx`` and the dispatcher's
kernels); then the default level cannot fold through poison the copy does not have, and the
kernels stay accepted and become safe. The xfail tests assert the property (refused, or no
such exit in the default-level PTX), so either kind of fix turns them.

Prototype (scratch, not committed): ``_compat._compile_kernel`` patched to set
``library._llvm_strs = [_irform._wrapping(t) for t in library.llvm_strs]`` before NVVM runs.
NVVM accepts the text (``llvm.fptosi.sat`` included); the three findings' default-level PTX
then has no exit before ``bar.sync`` (only the lane-0 store's branch); the PTX of nine example
kernels (sgemm, histogram, softmax, heat3d, matmul, transpose, scan x2, layernorm) keeps its
instruction count (sgemm 1073 -> 1068, the others equal). The launch path cannot be patched
there: numba-cuda's ``_Kernel.__init__`` calls ``lib.get_asm_str()`` inside
``disp.compile``, so the rewrite has to reach the library before that (a hook in simtsafe's
target context / code library), which is why it is left to the lead.

Closed (the lead, same session): ``lowering/_nvvminput`` makes ``CUDACodeLibrary.llvm_strs``
the wrapping form (``_irform.wrapping_form``) while a simtsafe kernel is compiled, which
numba-cuda reads for NVVM on both paths (its PTX cache and pickles too); the analysis reads
the same text. The tests of the findings are plain tests now: accepted, no exit.

Severity LOW: the kernel must compare a value with the identity's other half (the overflow
boundary or the shift width) itself; the copy's range proofs (tuple positions, input reads)
never rest on a wrapped value (``x + y`` is bounded only while it fits), so plain index
arithmetic does not reach this.

=============================================================================================
HELD
=============================================================================================

Signed tuple positions (1556cfb): every unsafe shape tried is refused (``POSITIONS_REFUSED``,
21): ``range(np.int32(6))``, ``range(np.uint32(4))``/``range(np.uint64(4))`` with ``q - 5``,
an ``np.int8`` sum that wraps, ``while`` counters that reach 4 or -5, a second counter from 1 or -5 beside a range
loop, a counter stepped by 2 past the tuple, ``q`` rebound in the body (``q + 5 - 4``), ``q``
after a thread-dependent ``break`` from ``range(6)``, a counter after the loop from 0 (4),
a counter stepped under a thread-dependent ``break`` (0..4), a counter stepped in a
thread-dependent inner loop, an inner loop's ``j + r`` reaching 4, a swap of two counters
from -1 and 3, two counters ``while`` in phase 2 apart, a counter down to -5, a position near
``2**63`` whose ``+ 4`` wraps, an ``np.int32`` sum that wraps before ``sext``. Why: the
bounds are exact (``_fits``: no result past 64 bits), the counters stepped together need one
constant start offset on every entry and one same step on every path back, and a phi's
edges are pruned only by facts not re-evaluated since.

Accepted and safe by arithmetic (``POSITIONS_ACCEPTED``, 22): ``q - 1`` over ``int32``,
``uint32`` and ``int8`` range loops, ``range(-2**63, -2**63 + 3)`` with ``q + 2**63 - 1``,
``range(-4, 4, 2**63 - 1)`` (one trip), a ``while j < 4`` counter with
``t[j - 1]``, counters from -1 and -2 beside ``range(4)``, reset together on a thread-dependent
path, read after the loop (3) or after a ``break``, ``q`` rebound to ``q + 3`` then ``- 4``,
``q - 1`` after a ``break`` from ``range(4)``/``range(5)``, a ``continue`` after the step,
an inner loop's ``j + r - 1``, a 32-bit ``q - 1`` sign-extended, ``q + 2**64`` (Numba folds
it to ``q``).

Accepted and safe on the GPU only (``COMPILED_ONLY``, 3; Python would raise): Numba's range
count wraps as LLVM folds it -- ``range(3, -2**63 + 1, -2**62)`` and ``range(-4, 2**63 - 1,
2**63 - 1)`` run no trip on the GPU (the difference wraps past the sign), ``np.uint64(q) - 1``
is Numba's case ``t[-1]``.

Device helpers returning the ``IndexError`` status (``_Joins``): accepted and safe
(``HELPERS_ACCEPTED``, 6: ``t[q - 1]`` in a helper over ``range(4)`` and ``range(5)``, two
branches, a helper's own loop, two calls, ``(x & 3) - 1``); refused where a position leaves
the tuple (``HELPERS_REFUSED``, 4).

Undefined behaviour (``UB_HELD``, refused at the default level and at ``opt=False``, 19 shapes;
``FASTMATH_HELD``, 3):
Numba guards every integer ``//``, ``%``, ``divmod`` (zero divisor: 0; ``INT_MIN // -1``: 0)
for int64, int32 and uint64, so no ``sdiv``/``udiv`` by a possible zero or overflow reaches
the copy unguarded, and its range-loop count ``sdiv`` runs after the step-0 check; ``abs``
is ``select``/``sub`` without flags (instcombine's ``llvm.abs(x, i1 false)``: INT_MIN is
INT_MIN, as on the GPU); ``math.floor``/``round``/``math.trunc``/``math.ceil``/``int`` of a
huge or NaN float, ``np.uint32`` of a ``uint64``'s float, ``np.uint8`` of 300 and a float16
conversion all saturate in the copy as ``cvt.rzi`` does; fastmath kernels keep the
thread-dependent compare (the flags are dropped in the copy; NVVM's fast folds are
compile-time choices); a number bound on one path only is Numba's 0 elsewhere (a phi with a
constant), a ``cuda.local.array`` written under a branch is read as a thread-dependent
value. ``np.remainder`` (which would ``srem INT_MIN, -1`` unguarded), ``np.floor_divide``
and an integer ``np.fmod`` do not compile in kernels (``NOT_COMPILED``).

Accepted and safe (``SAFE_TWINS``, 7): ``cuda.clz`` is ``llvm.ctlz(x, i1 false)`` (64 for 0,
never poison), ``clz(v) > 64`` folds as ``clz.b64`` never exceeds 64; ``cuda.ffs``/``brev``
are libdevice calls (opaque, pure); ``-1 >> n`` is -1 at any amount (clamped ``ashr``);
``(v + 1 > v) or v == INT64_MAX`` is true in wrapping arithmetic and by NVVM's nsw fold;
an unwritten ``cuda.local.array`` element is Numba's zero fill (``alloca_once``).

Safe, still refused (``POSITIONS_STILL_REFUSED``, 11; conservative): a ``while`` counter
down from 3 to -1, a counter stepped by 2 (-4..2), ``j - q - 1`` with ``enumerate``'s count,
``q - 5`` after ``range(4)`` (always -2), a counter stepped after a ``continue``, positions
near ``2**63`` (``q - (2**63 - 1)``), a range step from data, two counters swapped, a counter
stepping down (0..-3, 0..-4).
"""

from __future__ import annotations

__all__ = [
    "COMPILED_ONLY",
    "FINDINGS",
    "FASTMATH_HELD",
    "FINDING_EXITS",
    "HELPERS_ACCEPTED",
    "HELPERS_REFUSED",
    "NOT_COMPILED",
    "NOT_UNIFORM_BLOCK",
    "OPT0_COMPUTES",
    "POSITIONS_ACCEPTED",
    "POSITIONS_REFUSED",
    "POSITIONS_STILL_REFUSED",
    "SAFE_TWINS",
    "TUPLE_INDEX",
    "UB_HELD",
    "helper_kernel",
]

from .attacks29 import loop_kernel
from .attacks33 import NOT_UNIFORM_BLOCK

#: the refusal of a tuple index the analysis does not prove in range
TUPLE_INDEX = "reads a 4-element tuple at a position computed at run time"

# --------------------------------------------------------------------------- findings

#: name -> body of attacks33's ``poison_kernel``: accepted (at both levels); at NVVM's
#: default level the PTX branches to ``ret`` before ``bar.sync`` for some values of ``v``.
FINDINGS: dict[str, str] = {
    # FINDING 1: NVVM folds `add nsw` > x to true; the copy wraps: c1 == c2 always
    "nsw-add-identity": (
        "    c1 = (v + 1) > v\n    c2 = v != 9223372036854775807\n    if c1 != c2:\n        return"
    ),
    "nsw-sub-identity": (
        "    c1 = (v - 1) < v\n    c2 = v != -9223372036854775808\n    if c1 != c2:\n        return"
    ),
    # FINDING 2: NVVM folds `1 << v` != 0 to true; the copy clamps as -opt=0's PTX does
    "shl-amount-identity": (
        "    c1 = (np.int64(1) << v) != 0\n    c2 = (v & 4294967295) < 64\n"
        "    if c1 != c2:\n        return"
    ),
}

#: name -> the default-level PTX (before ``bar.sync``) of the thread-dependent exit
FINDING_EXITS: dict[str, str] = {
    "nsw-add-identity": r"setp\.eq\.s64\s+(%p\d+), %rd\d+, 9223372036854775807;\s*@\1 bra",
    "nsw-sub-identity": r"setp\.eq\.s64\s+(%p\d+), %rd\d+, -9223372036854775808;\s*@\1 bra",
    "shl-amount-identity": (
        r"and\.b32\s+(%r\d+), %r\d+, -64;\s*setp\.ne\.s32\s+(%p\d+), \1, 0;\s*@\2 bra"
    ),
}

#: name -> the -opt=0 PTX that computes both halves as the copy does (no thread leaves)
OPT0_COMPUTES: dict[str, str] = {
    "nsw-add-identity": (
        r"add\.s64\s+(%rd\d+), (%rd\d+), 1;\s*setp\.gt\.s64\s+%p\d+, \1, \2;\s*"
        r"setp\.ne\.s64\s+%p\d+, \2, 9223372036854775807;"
    ),
    "nsw-sub-identity": (r"setp\.lt\.s64\s+%p\d+, %rd\d+, (%rd\d+);\s*setp\.ne\.s64\s+%p\d+, \1, "),
    # (NVVM compiles the wrapping form, lowering/_nvvminput: the amount's low 32 bits, the
    # shift by them, 0 where they are 64 or more)
    "shl-amount-identity": (
        r"and\.b64\s+(%rd\d+), %rd\d+, 4294967295;(?s:.*?)shl\.b64\s+(%rd\d+), %rd\d+, %r\d+;"
        r"\s*setp\.lt\.u64\s+(%p\d+), \1, 64;\s*selp\.b64\s+%rd\d+, \2, 0, \3;"
    ),
}

# --------------------------------------------------------------------------- held: UB

#: name -> body of ``poison_kernel`` (``import math`` prepended): refused with
#: NOT_UNIFORM_BLOCK at the default level and at ``opt=False`` -- the exit is real for some
#: thread, and the copy did not fold it away through undefined behaviour.
UB_HELD: dict[str, str] = {
    # Numba: INT_MIN // -1 is 0 (guarded), so v | INT_MIN (v > 0) // -1 is positive
    "intmin-floordiv-minus1": (
        "    w = (v | np.int64(-9223372036854775808)) // np.int64(-1) if v > 0 else np.int64(0)\n"
        "    if w != 0:\n        return"
    ),
    # a zero divisor on some threads: Numba gives 0 there (guarded), n elsewhere
    "floordiv-by-zero-select": (
        "    d = np.int64(0) if v > 0 else np.int64(1)\n    w = n // d\n    if w != n:\n        return"
    ),
    "mod-by-zero-select": (
        "    d = np.int64(0) if v > 0 else np.int64(7)\n    w = (n + 7) % d\n"
        "    if w != (n + 7) % 7:\n        return"
    ),
    "int32-floordiv-zero": (
        "    d = np.int32(0) if v > 0 else np.int32(1)\n    w = np.int32(n) // d\n"
        "    if w != np.int32(n):\n        return"
    ),
    "uint64-floordiv-zero": (
        "    d = np.uint64(0) if v > 0 else np.uint64(1)\n    w = np.uint64(n) // d\n"
        "    if w != np.uint64(n):\n        return"
    ),
    "divmod-zero": (
        "    d = np.int64(0) if v > 0 else np.int64(1)\n    q, r = divmod(n, d)\n"
        "    if q != n:\n        return"
    ),
    # the range count's sdiv(INT_MIN, -1): after the step check, the loop's trips by data
    "range-step-to-intmin": (
        "    st = np.int64(-1) if v > 0 else np.int64(-2)\n    c = 0\n"
        "    for q in range(np.int64(0), np.int64(-9223372036854775807) - 1, st):\n"
        "        c += 1\n        break\n    if c == 0:\n        return"
    ),
    # abs: select/sub without nsw (llvm.abs(x, i1 false)): INT_MIN stays INT_MIN
    "abs-of-intmin": "    w = abs(v | np.int64(-9223372036854775808))\n    if w < 0:\n        return",
    "np-abs-of-intmin": (
        "    w = np.abs(v | np.int64(-9223372036854775808))\n    if w < 0:\n        return"
    ),
    # float to int out of range: saturated in the copy, as cvt.rzi does
    "floor-of-huge": "    w = math.floor(np.float64(v) * 1e300)\n    if w != 0 and v > 0:\n        return",
    "round-of-huge": "    w = round(np.float64(v) * 1e300)\n    if w != 0 and v > 0:\n        return",
    "int-of-nan": "    w = int(np.float64(v) * np.inf * 0.0)\n    if w != 0:\n        return",
    "trunc-of-huge": "    w = math.trunc(np.float64(v) * 1e300)\n    if w != 0 and v > 0:\n        return",
    "ceil-of-huge": (
        "    w = math.ceil(np.float32(v) * np.float32(1e30))\n    if w == 0 and v > 0:\n        return"
    ),
    "uint32-of-uint64-float": (
        "    w = np.uint32(np.float32(np.uint64(v)))\n    if w == 0:\n        return"
    ),
    "int16-of-float16": (
        "    w = np.int16(np.float16(v) * np.float16(1000))\n    if w == 0:\n        return"
    ),
    "uint8-of-300": (
        "    w = np.uint8(np.float32(v) * np.float32(300))\n    if w == 0:\n        return"
    ),
    # a number bound on one path only: Numba's 0 on the other (a phi with a constant)
    "number-bound-in-branch": "    if v > 0:\n        w = np.int64(7)\n    if w == 7:\n        return",
    # a thread-private element written under a branch: the other threads read the zero fill
    "local-array-written-in-branch": (
        "    arr = cuda.local.array(2, np.int64)\n    if v > 0:\n        arr[0] = 1\n"
        "    if arr[0] != 1:\n        return"
    ),
}

#: name -> body of ``poison_kernel`` compiled with ``fastmath=True``: refused (the flags are
#: dropped in the copy; NVVM's fast folds are one compile-time choice for every thread)
FASTMATH_HELD: dict[str, str] = {
    "fastmath-self-compare": (
        "    f = np.float32(v) / np.float32(n)\n    if f != f:\n        return"
    ),
    "fastmath-divide-self": (
        "    f = np.float32(v) * np.float32(1e30)\n    if f / f != np.float32(1):\n        return"
    ),
    "fastmath-isinf": (
        "    f = np.float32(v) * np.float32(1e30)\n    if math.isinf(f):\n        return"
    ),
}

#: name -> (body of ``poison_kernel``, fragment of the refusal): not compiled at all
NOT_COMPILED: dict[str, tuple[str, str]] = {
    "np-remainder": (
        "    d = np.int64(-1) if v > 0 else np.int64(3)\n"
        "    w = np.remainder(np.int64(-9223372036854775808), d)\n    if w != 1:\n        return",
        "np.remainder does not compile in kernels",
    ),
    "np-floor-divide": (
        "    w = np.floor_divide(n, v)\n    if w != n:\n        return",
        "np.floor_divide does not compile in kernels",
    ),
    "np-fmod-int": (
        "    w = np.fmod(n, v)\n    if w != 0:\n        return",
        "np.fmod of integer values (int64, int64) has no GPU implementation",
    ),
}

#: name -> body of ``poison_kernel``: accepted, and safe at both levels (why: module doc)
SAFE_TWINS: dict[str, str] = {
    "clz-of-zero": "    w = cuda.clz(v & 0)\n    if w != 64:\n        return",
    "clz-at-most-64": "    w = cuda.clz(v)\n    if w > 64:\n        return",
    "ffs-of-zero": "    w = cuda.ffs(v & 0)\n    if w != 0:\n        return",
    "brev-equals-itself": "    w = cuda.brev(np.uint64(v))\n    if w != w:\n        return",
    "ashr-of-minus-one": "    if (np.int64(-1) >> (v & 127)) != -1:\n        return",
    "nsw-add-or-max": (
        "    c1 = (v + 1) > v\n    if c1 or v == 9223372036854775807:\n"
        "        s = np.float32(2)\n    else:\n        return"
    ),
    "local-array-zero-fill": (
        "    arr = cuda.local.array(2, np.int64)\n    if arr[1] != 0:\n        return"
    ),
}

# --------------------------------------------------------------------------- held: positions

#: loop bodies of ``loop_kernel``: safe by arithmetic, accepted
_POSITIONS_ACCEPTED = {
    "while-minus-1": "j = 0\nwhile j < 4:\n    acc += t[j - 1]\n    j += 1",  # -1..2
    "counter-from-minus-1": "j = -1\nfor q in range(4):\n    acc += t[j]\n    j += 1",  # -1..2
    "counter-from-minus-2": "j = -2\nfor q in range(4):\n    acc += t[j]\n    j += 1",  # -2..1
    "q-rebound-plus-3": "for q in range(4):\n    q = q + 3\n    acc += t[q - 4]",  # -1..2
    "after-break-minus-1": (
        "q = 0\nfor q in range(4):\n    if a[i] > q:\n        break\nacc += t[q - 1]"
    ),  # -1..2
    "after-break-range-5-minus-1": (
        "q = 0\nfor q in range(5):\n    if a[i] > q:\n        break\nacc += t[q - 1]"
    ),  # -1..3
    "continue-after-step": (
        "j = -1\nfor q in range(4):\n    j += 1\n    if a[i] > q:\n        continue\n"
        "    acc += t[j]"
    ),  # 0..3
    "plus-2-to-the-64": (
        "for q in range(4):\n    acc += t[q + 9223372036854775807 + 9223372036854775807 + 2]"
    ),  # q
    "int32-minus-1-sext": "for q in range(4):\n    acc += t[np.int64(np.int32(q) - np.int32(1))]",
    "counter-beside-inner-loop": (
        "j = -1\nfor q in range(4):\n    for r in range(2):\n        acc += 1.0\n"
        "    acc += t[j]\n    j += 1"
    ),  # -1..2
    "counter-after-loop": "j = -1\nfor q in range(4):\n    j += 1\nacc += t[j]",  # 3
    "counter-after-loop-from-minus-4": "j = -4\nfor q in range(4):\n    j += 1\nacc += t[j]",  # 0
    "counter-after-break": (
        "j = -1\nfor q in range(4):\n    if a[i] > q:\n        break\n    j += 1\nacc += t[j]"
    ),  # -1..3
    "two-counters-while": (
        "j = -1\nr = 0\nwhile r < 4:\n    acc += t[j]\n    j += 1\n    r += 1"
    ),  # -1..2
    "two-counters-reset-together": (
        "j = -1\nr = 0\nwhile r < 4:\n    acc += t[j]\n    if a[i] > r:\n        j = -1\n"
        "        r = 0\n        break\n    j += 1\n    r += 1"
    ),  # j == r - 1
    "inner-loop-j-plus-r-minus-1": (
        "j = -1\nfor q in range(4):\n    for r in range(3):\n        acc += t[j + r - 1]\n"
        "    j += 1"
    ),  # -2..3
    "int32-range-minus-1": "for q in range(np.int32(4)):\n    acc += t[q - 1]",  # -1..2
    "uint32-range-minus-1": "for q in range(np.uint32(4)):\n    acc += t[q - 1]",  # -1..2
    "int8-range-minus-1": "for q in range(np.int8(4)):\n    acc += t[q - np.int8(1)]",  # -1..2
    "range-from-int64-min": (
        "for q in range(-9223372036854775807 - 1, -9223372036854775807 + 2):\n"
        "    acc += t[q + 9223372036854775807]"
    ),  # -1..1
    "range-step-huge-one-trip": "for q in range(-4, 4, 9223372036854775807):\n    acc += t[q]",
    "while-two-counters-one-bounded": (
        "j = 0\nr = 0\nwhile j < 4:\n    acc += t[r - 1]\n    j += 1\n    r += 1"
    ),  # -1..2
    "near-2-63": (
        "for q in range(9223372036854775804, 9223372036854775807):\n"
        "    acc += t[q - 9223372036854775807]"
    ),  # -3..-1 (accepted since the carried-copy / signed-bound rules)
}

#: loop bodies of ``loop_kernel``: some input reaches a position outside the tuple
_POSITIONS_REFUSED = {
    "while-minus-1-to-6": "j = 0\nwhile j < 6:\n    acc += t[j - 1]\n    j += 1",  # 4
    "while-down-to-minus-6": "j = 3\nwhile j > -6:\n    acc += t[j]\n    j -= 1",  # -5
    "counter-from-1": "j = 1\nfor q in range(4):\n    acc += t[j]\n    j += 1",  # 4
    "counter-from-minus-5": "j = -5\nfor q in range(4):\n    acc += t[j]\n    j += 1",  # -5
    "counter-step-2-range-5": ("j = -4\nfor q in range(5):\n    acc += t[j]\n    j += 2"),  # 4
    "q-rebound-plus-5": "for q in range(4):\n    q = q + 5\n    acc += t[q - 4]",  # 4
    "after-break-range-6-minus-1": (
        "q = 0\nfor q in range(6):\n    if a[i] > q:\n        break\nacc += t[q - 1]"
    ),  # 4
    "counter-after-loop-from-0": "j = 0\nfor q in range(4):\n    j += 1\nacc += t[j]",  # 4
    "counter-after-break-from-0": (
        "j = 0\nfor q in range(4):\n    if a[i] > q:\n        break\n    j += 1\nacc += t[j]"
    ),  # 4
    "counter-in-thread-inner-loop": (
        "j = -1\nfor q in range(4):\n    for r in range(int(a[i]) & 1):\n        j += 1\n"
        "    acc += t[j]\n    j += 1"
    ),  # up to 6
    "inner-loop-j-plus-r": (
        "j = -1\nfor q in range(4):\n    for r in range(3):\n        acc += t[j + r]\n    j += 1"
    ),  # 4
    "two-counters-while-to-6": (
        "j = -1\nr = 0\nwhile r < 6:\n    acc += t[j]\n    j += 1\n    r += 1"
    ),  # 4
    "swap-from-minus-1-and-3": (
        "j = -1\nr = 3\nfor q in range(4):\n    acc += t[j]\n    j, r = r + 1, j + 1"
    ),  # 4
    "two-counters-two-apart": (
        "j = 0\nr = 2\nwhile j < 4:\n    acc += t[r - 1]\n    j += 1\n    r += 1"
    ),  # 4
    "counter-down-to-minus-5": "j = 0\nfor q in range(6):\n    acc += t[j]\n    j -= 1",  # -5
    "near-2-63-plus-4": (
        "for q in range(9223372036854775804, 9223372036854775807):\n    acc += t[q + 4]"
    ),  # wraps to -2**63
    "int32-range-6-minus-1": "for q in range(np.int32(6)):\n    acc += t[q - 1]",  # 4
    "uint32-range-minus-5": "for q in range(np.uint32(4)):\n    acc += t[q - 5]",  # -5
    "uint64-range-minus-5": (
        "for q in range(np.uint64(4)):\n    acc += t[q - np.uint64(5)]"
    ),  # 2**64 - 5: -5
    "int8-wrap": (
        "for q in range(np.int8(4)):\n"
        "    acc += t[np.int8(q) + np.int8(127) + np.int8(127) + np.int8(2)]"
    ),
    "int32-wrap-then-sext": (
        "for q in range(4):\n"
        "    acc += t[np.int64(np.int32(q) + np.int32(2147483647) + np.int32(2))]"
    ),  # -2**31 + 1 + q
}

#: loop bodies of ``loop_kernel``: safe, still refused (outside what the rules prove)
_POSITIONS_STILL_REFUSED = {
    "while-down-to-minus-1": "j = 3\nwhile j > -2:\n    acc += t[j]\n    j -= 1",  # 3..-1
    "counter-step-2": "j = -4\nfor q in range(4):\n    acc += t[j]\n    j += 2",  # -4..2
    "enumerate-j-minus-q-minus-1": (
        "j = 0\nfor q, e in enumerate(t):\n    acc += t[j - q - 1]\n    j += 1"
    ),  # -1
    "q-after-range-4-minus-5": "q = 0\nfor q in range(4):\n    acc += 1.0\nacc += t[q - 5]",  # -2
    "counter-stepped-after-continue": (
        "j = -1\nfor q in range(4):\n    if a[i] > q:\n        continue\n    j += 1\n"
        "    acc += t[j]"
    ),  # 0..3
    "step-from-data": "for q in range(3, -2, -(m & 1) - 1):\n    acc += t[q]",  # 3..-1
    "step-from-parameter": "for q in range(0, 4, m):\n    acc += t[q - 1]",  # -1..2
    "swap-from-minus-1": (
        "j = -1\nr = -1\nfor q in range(4):\n    acc += t[j]\n    j, r = r + 1, j + 1"
    ),  # -1..2
    "counter-down-4": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j -= 1",  # 0..-3
    "counter-down-5": "j = 0\nfor q in range(5):\n    acc += t[j]\n    j -= 1",  # 0..-4
}

#: loop bodies of ``loop_kernel``: accepted, and safe on the GPU, where Numba's range count is
#: computed in wrapping arithmetic (LLVM folds the same constant the GPU computes); Python
#: (and so the simulator) would raise IndexError. ``range(3, -2**63 + 1, -2**62)``: ``stop -
#: start`` wraps to a positive value, the step is negative, the count is 0 -- no trip (Python:
#: 3, 3 - 2**62, ...). ``range(-4, 2**63 - 1, 2**63 - 1)``: the difference wraps negative,
#: the count is 0 (Python: -4, then 2**63 - 5). ``np.uint64(q) - 1``: the bits of -1, Numba's
#: case ``t[-1]`` (Python: 2**64 - 1).
_COMPILED_ONLY = {
    "range-difference-wraps-positive": (
        "for q in range(3, -9223372036854775807, -4611686018427387904):\n    acc += t[q]"
    ),
    "range-difference-wraps-negative": (
        "for q in range(-4, 9223372036854775807, 9223372036854775807):\n    acc += t[q]"
    ),
    "uint64-range-minus-1": "for q in range(np.uint64(4)):\n    acc += t[q - np.uint64(1)]",
}

COMPILED_ONLY: dict[str, str] = {name: loop_kernel(body) for name, body in _COMPILED_ONLY.items()}

POSITIONS_ACCEPTED: dict[str, str] = {
    name: loop_kernel(body) for name, body in _POSITIONS_ACCEPTED.items()
}
POSITIONS_REFUSED: dict[str, str] = {
    name: loop_kernel(body) for name, body in _POSITIONS_REFUSED.items()
}
POSITIONS_STILL_REFUSED: dict[str, str] = {
    name: loop_kernel(body) for name, body in _POSITIONS_STILL_REFUSED.items()
}

# --------------------------------------------------------------------------- held: helpers

_HELPERS = """
@ss.device
def pick(t, q):
    return t[q - 1]


@ss.device
def pick2(t, q):
    if q > 2:
        return t[q]
    return t[q - 4]


@ss.device
def pick3(t, q):
    for r in range(q):
        if r == 3:
            return t[r - 4]
    return t[0]

"""


def helper_kernel(body: str) -> str:
    """``loop_kernel(body)`` with the helpers ``pick`` (``t[q - 1]``), ``pick2`` (``t[q]``
    for ``q > 2``, else ``t[q - 4]``) and ``pick3`` (a loop returning ``t[r - 4]`` at
    ``r == 3``) defined before the kernel: each returns Numba's ``IndexError`` status, which
    the kernel checks after the call (``verify/_feasible._Joins``)."""
    return loop_kernel(body).replace("@ss.device\ndef get(", _HELPERS + "\n@ss.device\ndef get(", 1)


HELPERS_ACCEPTED: dict[str, str] = {
    "pick-range-4": helper_kernel("for q in range(4):\n    acc += pick(t, q)"),  # -1..2
    "pick-range-5": helper_kernel("for q in range(5):\n    acc += pick(t, q)"),  # -1..3
    "pick2-range-4": helper_kernel("for q in range(4):\n    acc += pick2(t, q)"),
    "pick3-range-6": helper_kernel("for q in range(6):\n    acc += pick3(t, q)"),
    "pick-twice": helper_kernel("for q in range(4):\n    acc += pick(t, q) + pick(t, 3 - q)"),
    "pick-of-mask": helper_kernel("acc += pick(t, int(a[i]) & 3)"),  # -1..2
}

HELPERS_REFUSED: dict[str, str] = {
    "pick-range-6": helper_kernel("for q in range(6):\n    acc += pick(t, q)"),  # 4
    "pick2-range-5": helper_kernel("for q in range(5):\n    acc += pick2(t, q)"),  # t[4]
    "pick-twice-past": helper_kernel(
        "for q in range(4):\n    acc += pick(t, q) + pick(t, 5 - q)"
    ),  # 4
    "pick-of-mask-7": helper_kernel("acc += pick(t, int(a[i]) & 7)"),  # 6
}
