r"""Attack round 31 (an outside helper): the range-loop spans merged from branch range30
(``verify/_ranges``: ``_trips``, ``_span``, ``_signed_max``, ``_upper_at``, the ``C - x``
rule, zext tightening, the number bound in ``_within``) that let ``verify/_feasible`` drop the
``IndexError`` default of Numba's run-time tuple index and let an input read ``a[k]`` count
as grid-uniform.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). The loop
kernels are attacks29's ``loop_kernel`` (a 4-tuple ``t`` and a 5-tuple ``u`` of ``a[i]``, the
body under a thread-dependent ``if a[i] > 0.5``, then ``ss.block.sum``); the findings use
``int_kernel`` (an int64 input ``a``, ``x = a[i]``, a 4-tuple ``t``, then ``ss.block.sum``).
Scratch harness: /tmp/a31 in the session (``lowering._irform._normalize`` wrapped to keep
the analysed IR, ``_feasible._Counted.below`` wrapped to log each query and its answer,
``k.ptx(cc=(9, 0))``; accepted kernels run on Numba's simulator, ``NUMBA_ENABLE_CUDASIM=1``,
and through ``ss.sim.check``). Two random searches: 1,190 distinct loop bodies (``range``
with constant / ``min`` / ``max`` / masked / ``np.int8`` / thread-dependent counts, constant
starts and steps of either sign, nested ``range(p + c)``, ``c - p``, guards ``q < c`` /
``q >= c`` with ``break`` / ``continue``, values after the loop; indexes ``q + c``, ``c - q``,
``min``, ``max``, ``*``, ``>>``, ``&``, ``|``, ``np.int32`` / ``np.int8`` casts) of which 401
were accepted, and 492 input-read bodies (``requires=["a.size >= 4"]``, counts from ``m``,
``a.size``, ``min(m, a.size)``) of which 105 were accepted; every accepted body was run as
Python for ``m`` in -100, -6..11, 100 and ``a[i]`` over -3..9 (sizes 4, 5, 9 for the reads):
none indexed out of range. No GPU used (PTX read, NVVM 2.0 / cc 9.0). Nothing in simtsafe/
changed.

=============================================================================================
FINDINGS: two ways to get a Tier-1 kernel accepted whose GPU code indexes a tuple out of
range (an ``IndexError`` exit) or reads an input out of bounds, or skips a block barrier, for
some threads. Neither is in the span arithmetic itself (which held: see HELD): both come from
the analysed copy being *optimized differently* from what NVVM compiles.
=============================================================================================

Root cause (both findings). ``lowering/_irform._normalize`` runs LLVM 22's ``instcombine``
(llvmlite 0.50) over the analysed copy. Numba puts ``nsw`` on every signed ``+ - *``, and
instcombine folds through it -- overflow is poison, so it may assume none. The analysis then
reads the folded copy: a condition folded to ``true``/``false`` becomes ``br i1 true``, which
``_irform._instr`` gives one target, and an index folded to a constant is a constant
``switch`` (``_feasible`` drops the default). docs/safety.md says the ``nsw``/``nuw`` flags
"are never trusted"; the proofs in ``verify/_ranges`` indeed never read them, but the
normalization does, before any proof runs. NVVM compiles the original IR: it folds only what
its own (older) optimizer folds, and at ``opt=False`` (``-opt=0``, also required by
``debug=True``) it folds nothing. On those GPUs the arithmetic wraps (``add.s64``,
``min.s64``), so a thread whose value overflows takes the branch the analysed copy deleted.
Round 30 compared five such folds with NVVM at the default ``opt=True`` and found NVVM making
each (attacks30 NSW_FOLDS); the ones below it does not make, and at ``-opt=0`` it makes none.

FIXED (both findings): ``lowering/_irform._wrapping`` drops ``nsw``/``nuw``/``exact``/``nneg``/
``disjoint``/``samesign``/``inbounds`` and fast-math flags from the analysed copy before
instcombine, so its folds hold for wrapping arithmetic (tests/ptx/test_attacks31_ptx.py asserts
each finding refused).

FINDING 1 (HIGH: default options; an accepted Tier-1 kernel skips ``block.sum``'s barrier in
some threads -- a hang or undefined behaviour on the GPU -- and reads an input out of bounds).
LLVM 22's instcombine folds ``smin(x +nsw C1, C2)`` into ``smin(x, C2 - C1) +nsw C1`` (and
``smax`` likewise; also ``srem(x *nsw 6, 3)`` to 0); NVVM does not. Minimized
(``int_kernel``; ``a[5] = 2**63 - 1``, every other element small):

* ``fold-min-tuple-index``: ``j = min(x + 7, 5) - min(x, -2) - 7``; ``acc += t[j]``. Analysed
  copy: ``switch i64 0`` (default dropped, accepted). PTX: ``add.s64 %rd15, %rd49, 7; min.s64
  %rd16, %rd15, 5; min.s64 %rd17, %rd49, -2; sub.s64 %rd14, %rd16, %rd17`` then the switch on
  ``%rd14`` (cases 3..10) whose default is ``ret`` -- before ``bar.sync``. For ``x = 2**63 -
  1``: ``x + 7`` wraps to ``-2**63 + 6``, ``j = -2**63 + 1``: thread 5 leaves, the other 63
  wait at the barrier. Simulator (``prepare`` and ``ss.sim.check``, numpy int64 wraps as the
  GPU does): ``IndexError: tuple index out of range`` in thread 5.
* ``fold-min-range-guard`` (with round 30's ``if q < 4: t[q]`` inside ``range(8)``): ``for q
  in range(8): if q < 4 or min(x + 7, 5) != min(x, -2) + 7: acc += t[q]``. The analysed copy
  folds the second disjunct to ``false``, the span proves ``q < 4``. PTX: the same four
  instructions, ``setp.ne.s64 %p2, %rd15, %rd17; @%p2 bra $L__BB0_7`` and ``$L__BB0_7: ret``
  (NVVM hoisted the loop-invariant test and saw ``t[4]`` raise). Simulator: ``IndexError`` in
  thread 5.
* ``fold-min-return``: ``if min(x + 7, 5) == min(x, -2) + 7: acc += 1.0`` / ``else: return``
  before the sum. PTX: ``setp.ne.s64 %p2, %rd15, %rd17; @%p2 bra`` around ``bar.sync``.
  ``ss.sim.check``: thread 5 returns; the simulator words it "block.sum(v) takes a number
  ... got Poison" (a divergent barrier, misnamed).
* ``fold-max-return``: ``max(x - 7, -5) == max(x, 2) - 7`` (``x = -2**63``; PTX ``add.s64
  ..., -7; max.s64 ..., -5; max.s64 ..., 2; add.s64 ..., -7; setp.ne.s64``).
* ``fold-srem-steer``: ``if (x * 6) % 3 == 0:`` around the sum (``x = 2**62``: ``x * 6``
  wraps to ``-2**63``, whose remainder by 3 is 1 -- PTX ``mul.lo.s64 ..., 6; mul.hi.s64 ...,
  6148914691236517206`` ... ``setp.ne.s64 %p3, %rd21, 0; @%p3 bra``).
* ``fold-min-input-read`` (an input read): ``v = a[min(x + 7, 5) - min(x, -2) - 7]`` with
  ``requires=["a.size >= 1"]``, ``if v > 0.5: ss.block.sync()``. The analysed copy reads
  ``a[0]``, inside: the value is trusted as grid-uniform. PTX: the index is ``-2**63 + 1``
  for ``b[i] = 2**63 - 1``; Numba's negative wrap adds ``a.size``, and ``8 * (-2**63)``
  vanishes modulo ``2**64``, so the load is ``a[a.size + 1]``: past the input, in whatever
  array lies there (an output being written), and its value steers ``bar.sync``.
  ``ss.sim.check``: ``out_of_bounds on a[-9223372036854775807]``.

FINDING 2 (HIGH: ``opt=False``, a documented option -- and ``debug=True`` needs it): NVVM at
``-opt=0`` folds nothing, so every fold through ``nsw`` that the analysed copy prunes is live
on the GPU, including those NVVM makes at ``-opt=3`` (round 30's NSW_FOLDS). The C idiom of an
overflow test is one of them:

* ``opt0-overflow-test-return``: ``if x + 1 < x: return`` before ``ss.block.sum``. Analysed
  copy: ``br i1 false``. PTX (opt=False): ``add.s64 %rd54, %rd26, 1; setp.lt.s64 %p2, %rd54,
  %rd26; @%p2 bra $L__BB0_2`` and ``$L__BB0_2`` branches to ``ret``. ``x = 2**63 - 1``
  returns before ``bar.sync``.
* ``opt0-shifted-range-guard`` (round 30's span): ``for q in range(8): if q + x < x + 4: acc
  += t[q]``. instcombine rewrites the compare to ``q < 4`` (both sides ``nsw``); the span
  proves ``t[q]``. PTX (opt=False): ``add.s64 %rd141, %rd35, %rd28; add.s64 %rd142, %rd28, 4;
  setp.lt.s64 %p1, %rd141, %rd142`` then the tuple switch whose default goes to ``ret``. For
  ``x = 2**63 - 5``, ``q = 5``: ``q + x`` wraps below ``x + 4``, ``t[5]``, thread 5 leaves.
  Simulator: ``IndexError: tuple index out of range`` in thread 5.

Fix direction: the analysed copy must not assume what the GPU code does not: drop the
poison-generating flags (``nsw``, ``nuw``, ``exact``, and the ones instcombine infers --
``nneg``, ``disjoint``, ``samesign`` -- are then its own proofs) from Numba's IR before
``instcombine`` in ``_normalize``, so that every fold holds with wrapping arithmetic, which is
what the analysis already assumes and what ``add.s64`` computes. Wrap-valid folds (masks,
``lshr`` for ``sdiv`` under a sign fact) stay. Then pin FINDINGS here (strict xfails in
tests/ptx/test_attacks31_ptx.py) as refused. A caveat the fix leaves: at ``-opt=3`` NVVM
still folds through ``nsw`` where it can (round 30's NSW_FOLDS), so for an overflowing input
the GPU may take a path the wrapping analysis deems impossible; none was found that turns a
wrapping proof of an index or a uniform branch false.

Simulator notes (LOW, values only, no verdict): on the simulator range variables are Python
ints, so (1) ``t[np.int8(q + 256)]`` in ``range(4)`` (accepted: LLVM folds it to ``t[q]``)
raises ``OverflowError: Python integer 256 out of bounds for int8`` where the GPU truncates
(docs/checker.md "Values, not bits" speaks of wrap only); (2) Numba's trip count wraps:
``range(2**63 - 2, -2**63 + 2)`` runs 4 trips on the GPU (``stop - start`` wraps to 4) and
none in Python (the wrapping-count shapes below). ``ss.sim.check`` of ``fold-min-return`` reports the skipped
barrier as "block.sum(v) takes a number ... got Poison" rather than as a divergent barrier.

=============================================================================================
HELD (HELD_KERNELS: unsafe, refused with the block-collective message)
=============================================================================================

The span arithmetic held against every unsafe shape tried: widths and wraps (``t[np.int8(q +
124)]``, ``t[np.uint8(q - 1)]``, ``range(np.uint64(5))``, ``range(np.int16(5))``), huge steps
(``range(0, 2**63 - 1, 2**62)``: ``q = 2**62`` on the second trip), a trip count that wraps
(``range(2**63 - 2, -2**63 + 2)``: 4 trips on the GPU from ``2**63 - 2``; the span does not
fit the width), facts that do not hold at the use (``if q < 4:`` then ``t[q]`` after it, a
``continue`` under ``q >= 5``), ``C - x`` with ``x`` negative (``t[3 - q]`` over
``range(-2, 4)``, ``t[3 - min(q, 3)]``), ``max(min(q, 3), q - 4)`` over ``range(9)``, a
thread-dependent ``min(int(a[i]), 4) + 1``, the index after one loop as another's count, the
index reassigned ``q + 1``, ``t[q + 1]`` after a ``break``, ``q * q`` and ``q << 1`` over
``range(3)``, a step of 2 in a nested count, a mask count ``& 15`` shifted, a count
``-min(m, 4) - 2`` with a negative step, a ``while True`` counter, ``enumerate(u)`` indexing
``t``. Why: ``_trips`` is exact on the compiled form (``p + s * c`` invariant modulo
``2**width``, the counter moving only from a positive value by -1, a decrement outside a
signed ``c > 0`` guard or a second decrement per step breaks the pairing), ``_span`` refuses
any span that does not fit the width, every rule of ``upper`` is a wrapping bound, and facts
are used only where ``fresh`` (the same SSA values, not recomputed since the edge).

=============================================================================================
ACCEPTED (sound: every index in range by arithmetic; none raised on the simulator)
=============================================================================================

``range(np.uint8(4))``, ``range(np.uint64(4))``, ``range(np.int16(4))``, steps of ``2**30``
in int32 and ``+-2**62`` in int64 (one trip), ``max(min(m, 4), 0)`` and ``m & 7`` counts
(``t[q >> 1]``), the value after ``range(3)`` plus 1, after ``range(min(m, 4))``, after a
``break`` (``t[3 - q]``), ``continue`` then ``t[3 - q]``, ``q = 3 - q``, a clamped
reassignment, ``q * q`` over ``range(2)``, a thread-dependent count with ``t[3 - q]``, an inner
loop shadowing ``q``, a ``for`` over a tuple of positions, ``range(p + 2)`` with ``q >> 1``
for ``p`` up to 6, ``if q >= 1 and q <= 4: t[q - 1]``, ``if q <= 3``, a negative start
guarded ``0 <= q < 4``.

=============================================================================================
FALSE_REFUSALS (safe, still refused with the block-collective message)
=============================================================================================

* ``while c > 0: ... q += 1; c -= 1`` with ``c = 4``: instcombine rotates the guard into the
  latch as ``c > 1`` (on ``c``, not ``c - 1``), so the decrement is not under a ``c > 0`` fact.
* ``t[np.uint8(q)]``, ``t[np.uint8(3 - q)]``: instcombine narrows the tuple switch to ``i8``;
  ``_feasible`` asks ``_ranges`` about 64-bit switches only.
* ``range(np.int8(120), np.int8(124))`` with ``t[q - 120]``; ``range(2, min(m, 6), 2)`` with
  ``t[q - 2]`` (the count is ``lshr(smin(m, 6) - 2, 1) + (smin & 1)``: no bound on the sum);
  ``t[q - (2**63 - 2)]`` over the wrapping ``range(2**63 - 2, -2**63 + 2)``: no rule for
  ``x - C`` (only ``C - x``).
* ``for q in range(p, 4)`` (a start that is not a constant), ``t[q + p]`` in ``range(4 - p)``
  and ``t[p - q]`` (no rule relates two loop variables), ``r = 3; ... t[r]; r -= 1`` (a
  second variable stepped with the loop: not the counter's partner).
* ``t[np.int8(q + 252)]`` (-4..-1, Numba's negative positions; the proof wants ``0 <= k``).
"""

from __future__ import annotations

from tests.kernels.attacks29 import NOT_UNIFORM, loop_kernel

__all__ = [
    "ACCEPTED",
    "FALSE_REFUSALS",
    "FINDINGS",
    "HELD_KERNELS",
    "NOT_UNIFORM",
    "NVVM_KEEPS",
    "SIM_NOTES",
    "int_kernel",
]

_INT_BASE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64)OPTIONS)
def k(out: DisjointSlice[np.float64], a: In[np.int64]) -> None:
    i = thread.index_1d()
    x = a[i]
    t = (1.0, 2.0, 3.0, 4.0)
    acc = 0.0
BODY
    out[i] = ss.block.sum(acc)
"""


def int_kernel(body: str, options: str = "") -> str:
    """``body`` (lines separated by ``\\n``) after ``x = a[i]`` (an int64 input) and a 4-tuple
    ``t``, before a block sum; ``options`` are extra ``ss.kernel`` keywords (``", opt=False"``)."""
    lines = "\n".join("    " + line for line in body.split("\n"))
    return _INT_BASE.replace("OPTIONS", options).replace("BODY", lines)


_INPUT_READ = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["a.size >= 1"]))
def k(out: DisjointSlice[np.float64], a: In[np.float64], b: In[np.int64]) -> None:
    i = thread.index_1d()
    x = b[i]
    v = a[min(x + 7, 5) - min(x, -2) - 7]
    if v > 0.5:
        ss.block.sync()
    out[i] = v
"""

#: Accepted and unsafe: (source, the fragment of the refusal it should get, the value of
#: ``a[5]`` -- ``b[5]`` for the input read -- that makes thread 5 leave or read out of bounds)
FINDINGS: dict[str, tuple[str, str, int]] = {
    # FINDING 1: LLVM 22 folds smin/smax(x +nsw C1, C2), srem(x *nsw 6, 3); NVVM does not
    "fold-min-tuple-index": (
        int_kernel("j = min(x + 7, 5) - min(x, -2) - 7\nacc += t[j]"),
        NOT_UNIFORM,
        2**63 - 1,
    ),
    "fold-min-range-guard": (
        int_kernel(
            "for q in range(8):\n"
            "    if q < 4 or min(x + 7, 5) != min(x, -2) + 7:\n"
            "        acc += t[q]"
        ),
        NOT_UNIFORM,
        2**63 - 1,
    ),
    "fold-min-return": (
        int_kernel("if min(x + 7, 5) == min(x, -2) + 7:\n    acc += 1.0\nelse:\n    return"),
        NOT_UNIFORM,
        2**63 - 1,
    ),
    "fold-max-return": (
        int_kernel("if max(x - 7, -5) == max(x, 2) - 7:\n    acc += 1.0\nelse:\n    return"),
        NOT_UNIFORM,
        -(2**63),
    ),
    "fold-srem-steer": (
        int_kernel("if (x * 6) % 3 == 0:\n    acc += 1.0\nelse:\n    return"),
        NOT_UNIFORM,
        2**62,
    ),
    "fold-min-input-read": (
        _INPUT_READ,
        "`block.sync` needs every thread of the block to reach it",
        2**63 - 1,
    ),
    # FINDING 2: opt=False -- NVVM at -opt=0 folds nothing
    "opt0-overflow-test-return": (
        int_kernel("if x + 1 < x:\n    return", ", opt=False"),
        NOT_UNIFORM,
        2**63 - 1,
    ),
    "opt0-shifted-range-guard": (
        int_kernel("for q in range(8):\n    if q + x < x + 4:\n        acc += t[q]", ", opt=False"),
        NOT_UNIFORM,
        2**63 - 5,
    ),
}

#: The mechanism of the findings without simtsafe: a plain numba-cuda kernel whose
#: ``out[i]`` is the folded condition (``cuda.compile_ptx``): (source of ``f(out, a)``, NVVM
#: ``opt``, what the PTX still computes). The analysed copy folds each condition to a
#: constant; NVVM keeps the compare, in wrapping arithmetic.
NVVM_KEEPS: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "smin-add-nsw": (
        "out[i] = min(a[i] + 7, 5) == min(a[i], -2) + 7",
        True,
        ("add.s64", "min.s64", "setp.eq.s64"),
    ),
    "smax-add-nsw": (
        "out[i] = max(a[i] - 7, -5) == max(a[i], 2) - 7",
        True,
        ("add.s64", "max.s64", "setp.eq.s64"),
    ),
    "add-one-less-opt0": ("out[i] = a[i] + 1 < a[i]", False, ("add.s64", "setp.lt.s64")),
}

_HELD_BODIES = {
    "int8-cast-124": "for q in range(4):\n    acc += t[np.int8(q + 124)]",
    "uint8-minus-1": "for q in range(4):\n    acc += t[np.uint8(q - 1)]",
    "uint64-range-5": "for q in range(np.uint64(5)):\n    acc += t[q]",
    "int16-range-5": "for q in range(np.int16(5)):\n    acc += t[q]",
    "huge-step-two-trips": "for q in range(0, 2**63 - 1, 2**62):\n    acc += t[q]",
    "wrapping-count": "for q in range(2**63 - 2, -2**63 + 2):\n    acc += t[q]",
    "fact-not-at-use": "for q in range(8):\n    if q < 4:\n        acc += 1.0\n    acc += t[q]",
    "select-9": "for q in range(8):\n    j = q if q < 4 else 9\n    acc += t[j]",
    "continue-below-5": "for q in range(8):\n    if q >= 5:\n        continue\n    acc += t[q]",
    "three-minus-negative-start": "for q in range(-2, 4):\n    acc += t[3 - q]",
    "three-minus-min-negative": "for q in range(-2, 4):\n    acc += t[3 - min(q, 3)]",
    "max-min-range-9": "for q in range(9):\n    acc += t[max(min(q, 3), q - 4)]",
    "thread-count-plus-1": "for q in range(min(int(a[i]), 4) + 1):\n    acc += t[q]",
    "after-loop-as-count": "q = 0\nfor q in range(4):\n    acc += 1.0\nfor r in range(q + 2):\n"
    "    acc += t[r]",
    "reassigned-plus-1": "for q in range(4):\n    q = q + 1\n    acc += t[q]",
    "after-break-plus-1": "q = 0\nfor q in range(4):\n    if a[i] > q:\n        break\nacc += t[q + 1]",
    "q-squared-range-3": "for q in range(3):\n    acc += t[q * q]",
    "q-shifted-range-3": "for q in range(3):\n    acc += t[q << 1]",
    "nested-step-count": "for p in range(0, 8, 2):\n    for q in range(p // 2 + 1):\n"
    "        acc += t[q + 1]",
    "mask-15-shifted": "for q in range(int(a[i]) & 15):\n    acc += t[q >> 1]",
    "negative-step-count": "for q in range(3, -min(m, 4) - 2, -1):\n    acc += t[q]",
    "four-minus-q-spelled": "for q in range(4):\n    acc += t[3 - (q - 1)]",
    "while-true-counter": "q = 0\nwhile True:\n    acc += t[q]\n    q += 1\n    if q > 4:\n"
    "        break",
    # enumerate-u-three-minus (3 - q for q in 0..4) was held here as unsafe, but -1 is
    # Python's t[-1]: safe, accepted since round 33 (tests/kernels/positions33.py)
}

#: Refused and unsafe: some thread indexes outside the tuple before the block sum.
HELD_KERNELS: dict[str, tuple[str, str]] = {
    name: (loop_kernel(body), NOT_UNIFORM) for name, body in _HELD_BODIES.items()
}

_ACCEPTED_BODIES = {
    "uint8-range": "for q in range(np.uint8(4)):\n    acc += t[q]",
    "uint64-range": "for q in range(np.uint64(4)):\n    acc += t[q]",
    "int16-range": "for q in range(np.int16(4)):\n    acc += t[q]",
    "int32-huge-step": "for q in range(np.int32(0), np.int32(4), np.int32(2**30)):\n    acc += t[q]",
    "int64-huge-step": "for q in range(0, 4, 2**62):\n    acc += t[q]",
    "int64-huge-negative-step": "for q in range(3, -1, -(2**62)):\n    acc += t[q]",
    "max-min-count": "for q in range(max(min(m, 4), 0)):\n    acc += t[q]",
    "mask-param-count-shifted": "for q in range(m & 7):\n    acc += t[q >> 1]",
    "after-range-3-plus-1": "q = 0\nfor q in range(3):\n    acc += 1.0\nacc += t[q + 1]",
    "after-min-m-4": "q = 0\nfor q in range(min(m, 4)):\n    acc += 1.0\nacc += t[q]",
    "after-break-three-minus": "q = 0\nfor q in range(4):\n    if a[i] > q:\n        break\n"
    "acc += t[3 - q]",
    "continue-three-minus": "for q in range(4):\n    if a[i] > q:\n        continue\n"
    "    acc += t[3 - q]",
    "reassigned-three-minus": "for q in range(4):\n    q = 3 - q\n    acc += t[q]",
    "reassigned-clamped": "for q in range(4):\n    if a[i] > 2.0:\n        q = 4\n"
    "    acc += t[min(q, 3)]",
    "q-squared-range-2": "for q in range(2):\n    acc += t[q * q]",
    "thread-count-three-minus": "for q in range(min(int(a[i]), 4)):\n    acc += t[3 - q]",
    "inner-shadows-q": "for q in range(4):\n    for q in range(q):\n        acc += t[q]",
    "for-over-positions": "for q in (0, 1, 2, 3):\n    acc += t[q]",
    "inner-p-plus-2-shifted": "for p in range(2, 7):\n    for q in range(p + 2):\n"
    "        acc += t[q >> 1]",
    "between-1-and-4": "for q in range(8):\n    if q >= 1 and q <= 4:\n        acc += t[q - 1]",
    "at-most-3": "for q in range(8):\n    if q <= 3:\n        acc += t[q]",
    "negative-start-guarded": "for q in range(-4, 8):\n    if q < 4 and q >= 0:\n"
    "        acc += t[q]",
}

#: Accepted and sound.
ACCEPTED: dict[str, str] = {name: loop_kernel(body) for name, body in _ACCEPTED_BODIES.items()}

_FALSE_BODIES = {
    "while-counter": "q = 0\nc = 4\nwhile c > 0:\n    acc += t[q]\n    q += 1\n    c -= 1",
    "uint8-index": "for q in range(4):\n    acc += t[np.uint8(q)]",
    "uint8-three-minus": "for q in range(4):\n    acc += t[np.uint8(3 - q)]",
    "int8-range-120": "for q in range(np.int8(120), np.int8(124)):\n    acc += t[q - 120]",
    "step-2-min-count": "for q in range(2, min(m, 6), 2):\n    acc += t[q - 2]",
    "wrapping-count-offset": "for q in range(2**63 - 2, -2**63 + 2):\n    acc += t[q - (2**63 - 2)]",
    "inner-from-p": "for p in range(4):\n    for q in range(p, 4):\n        acc += t[q]",
    "inner-four-minus-p": "for p in range(4):\n    for q in range(4 - p):\n        acc += t[q + p]",
    # inner-difference: fixed in round 33 (tests/kernels/positions33.py: p - q in -3..3)
    "second-variable": "r = 3\nfor q in range(4):\n    acc += t[r]\n    r -= 1",
    "int8-negative-positions": "for q in range(4):\n    acc += t[np.int8(q + 252)]",
}

#: Safe, refused (message: NOT_UNIFORM).
FALSE_REFUSALS: dict[str, str] = {name: loop_kernel(body) for name, body in _FALSE_BODIES.items()}

#: Accepted or refused alike, values differ between the simulator and the GPU (no verdict).
SIM_NOTES: dict[str, str] = {
    # accepted; the simulator raises OverflowError, the GPU computes t[q]
    "int8-cast-plus-256": loop_kernel("for q in range(4):\n    acc += t[np.int8(q + 256)]"),
}
