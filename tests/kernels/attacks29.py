r"""Attack round 29 (an outside helper): the range-loop proof that lets ``verify/_feasible``
drop the ``IndexError`` default of Numba's run-time tuple index (commit 0917235:
``_Counted.below`` asks ``verify/_ranges``' ``Ranges.within`` for ``0 <= k < n`` with a
pseudo-input of ``n`` elements, ``n`` the first non-case of the switch; 64-bit only).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), built by
``loop_kernel``: a 4-tuple ``t`` and a 5-tuple ``u`` of ``a[i]``, the loop under a
thread-dependent ``if a[i] > 0.5`` (so an ``IndexError`` exit there is thread-dependent),
then ``ss.block.sum``. Scratch harness: /tmp/a29 in the session (``_Counted.below`` wrapped
to log each query and its answer; ``k.ptx(cc=(9, 0))``; accepted kernels run on Numba's
simulator, ``NUMBA_ENABLE_CUDASIM=1``, grid 1 x 64, with ``m`` in -5, 0, 1, 3, 4, 5, 100,
2**40 and ``a`` ramps of -24..23.25, 2.5 and 1e6). No GPU used. Nothing in simtsafe/ changed.

=============================================================================================
FINDINGS: none. Every kernel accepted (ACCEPTED, 23 shapes) is in range for every input by
arithmetic, and none raised on the simulator. Every unsafe shape tried (HELD_KERNELS) is
refused with the block-collective message: ``range(5)``, ``range(1, 5)``, ``range(0, 5, 2)``,
``range(4, -1, -1)``, ``range(m)`` with ``m`` a scalar parameter, ``range(min(m, 5))``, a
variable equal to 5 or a select of 4/5, ``range(len(u))`` indexing the shorter ``t``,
``q + 1``, ``q`` after ``range(5)``, ``q`` initialised to 7 before a loop that may not run,
``j = q`` in such a loop, a ``q, r = r, q`` swap, ``enumerate(u)`` / ``zip(range(5), u)``
indexing ``t``, nested loops reaching 4 (``range(p + 2)``, ``p + q``), ``if q < 5``,
``if m < 4`` (``m`` negative), a helper called with ``q + 1``, a select of ``q`` and 4,
``q`` after a thread-dependent ``break`` from ``range(5)``.

Why it holds: the proof is semantic, not a pattern: ``_counted`` needs the index phi from 0
paired with a trip counter from a constant ``N <= n`` stepping +1/-1 together (a start,
step or ``N`` not of that form is no proof); a compare ``k < B`` needs ``B <= n`` and
``k >= 0`` from values (never ``nsw``); a phi needs every live incoming value in range (the
zero Numba stores in a variable before a loop that may not run is a constant 0, in range;
a 7 there is refused). Numba zero-fills a variable first assigned in the loop (``noinit``:
0 on the compiled form; the simulator raises UnboundLocalError there instead --
conservative, not a finding).
=============================================================================================

FALSE REFUSALS (safe, refused; FALSE_REFUSALS). FIXED in round 30 (moved to
tests/kernels/range_loops30.py, accepted and run on the simulator, beside unsafe twins):
a range loop's index now has numbers for bounds, ``S + s * t`` for its trips ``t`` where its
counter is positive, from a constant start ``S`` by a constant step ``s`` of either sign, in
any width (``verify/_ranges``: ``_trips``, ``_span``), and an index with a number bound below
the tuple's length is inside: ``if q < 4: t[q]`` inside ``range(8)``, ``t[min(q, 3)]``,
``t[3 - q]``, ``range(1, 4)``, ``range(0, 4, 2)``, ``range(3, -1, -1)``,
``range(np.int8(4))``, ``range(int(x) & 3)``, ``np.int32(q)``, inner ``range(p + 1)``,
``p + q`` kept below 4.

Still refused (outside that proof): ``t[q - 1]`` (values -1..2, Numba's negative twin: the
proof bounds ``0 <= k``, no lower bound below 0); ``q`` after ``range(4)`` used after the
loop when initialised to 7, or ``j = q`` (the 7 or 9 enters the loop header's phi, the value
after the loop if no trip ran; that the loop runs at least once is not proven); an index
carried from the previous trip (``j`` enters the header as 0 or the last trip's ``q + 1``, up
to 4; that the 4 comes only when the loop exits is not proven); ``enumerate(t)`` and ``zip(range(4), u)`` (the index steps in the header, the
tuple iterator's position is the guarded value: two counters not paired); a manual
``while q < 4`` counter (LLVM compares ``q <u 3`` before the step, and the induction bounds
the back-edge value ``q + 1`` by facts on itself only); a device helper ``get(t, q)`` was
too (its status return after the call: accepted since its join of constants folds,
``verify/_feasible._Joins``); ``q`` after an inner loop
read in the outer one (a cycle of phis through both headers).
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "FALSE_REFUSALS", "FINDINGS", "HELD", "HELD_KERNELS", "loop_kernel"]

_BASE = """
@ss.device
def get(t, q):
    return t[q]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64], m: np.int64) -> None:
    i = thread.index_1d()
    t = (a[i], a[i] + 1.0, a[i] + 2.0, a[i] + 3.0)
    u = (a[i], a[i], a[i], a[i], a[i])
    acc = 0.0
    if a[i] > 0.5:
LOOP
    out[i] = ss.block.sum(acc)
"""


def loop_kernel(body: str) -> str:
    """``body`` (lines separated by ``\\n``) under ``if a[i] > 0.5:`` before a block sum."""
    return _BASE.replace("LOOP", "\n".join("        " + line for line in body.split("\n")))


NOT_UNIFORM = "`block.sum` needs every thread of the block to reach it"

FINDINGS: dict[str, str] = {}

_HELD_BODIES = {
    "range-5": "for q in range(5):\n    acc += t[q]",
    "range-1-5": "for q in range(1, 5):\n    acc += t[q]",
    "range-0-5-2": "for q in range(0, 5, 2):\n    acc += t[q]",
    "range-4-down": "for q in range(4, -1, -1):\n    acc += t[q]",
    "range-param": "for q in range(m):\n    acc += t[q]",
    "range-min-param-5": "for q in range(min(m, 5)):\n    acc += t[q]",
    "range-variable-5": "n4 = 5\nfor q in range(n4):\n    acc += t[q]",
    "range-select-4-or-5": "n4 = 4 if m > 0 else 5\nfor q in range(n4):\n    acc += t[q]",
    "range-len-of-longer": "for q in range(len(u)):\n    acc += t[q]",
    "plus-1": "for q in range(4):\n    acc += t[q + 1]",
    "after-range-5": "q = 0\nfor q in range(5):\n    acc += 1.0\nacc += t[q]",
    "init-7-maybe-no-trip": "q = 7\nfor q in range(min(m, 4)):\n    acc += 1.0\nacc += t[q]",
    "copy-maybe-no-trip": "j = 9\nfor q in range(min(m, 4)):\n    j = q\nacc += t[j]",
    "swap-with-7": "r = 7\nfor q in range(4):\n    q, r = r, q\n    acc += t[q]",
    "enumerate-longer": "for q, v in enumerate(u):\n    acc += v * t[q]",
    "zip-range-5": "for q, v in zip(range(5), u):\n    acc += v * t[q]",
    "nested-p-plus-2": "for p in range(4):\n    for q in range(p + 2):\n        acc += t[q]",
    "nested-sum-4": "for p in range(3):\n    for q in range(3):\n        acc += t[p + q]",
    "if-below-5": "for q in range(8):\n    if q < 5:\n        acc += t[q]",
    "param-below-4-signed": "if m < 4:\n    acc += t[m]",
    "helper-plus-1": "for q in range(4):\n    acc += get(t, q + 1)",
    "select-q-or-4": "for q in range(4):\n    j = q if a[i] > 0 else 4\n    acc += t[j]",
    "break-from-range-5": "q = 0\nfor q in range(5):\n    if a[i] > q:\n        break\nacc += t[q]",
    "thread-min-5": "for q in range(min(int(a[i]), 5)):\n    acc += t[q]",
}

#: Refused and unsafe: some input takes the IndexError default (source, message fragment).
HELD_KERNELS: dict[str, tuple[str, str]] = {
    name: (loop_kernel(body), NOT_UNIFORM) for name, body in _HELD_BODIES.items()
}

_ACCEPTED_BODIES = {
    # a FALSE_REFUSAL of this round, accepted since the analysed copy drops nsw before
    # instcombine (lowering/_irform._wrapping: the guard is no longer rotated to `q <u 3`)
    "while-counter": "q = 0\nwhile q < 4:\n    acc += t[q]\n    q += 1",
    # a FALSE_REFUSAL of this round, accepted since the helper status joins fold
    # (verify/_feasible._Joins: the inlined helper's IndexError status is one constant)
    "helper": "for q in range(4):\n    acc += get(t, q)",
    "range-4": "for q in range(4):\n    acc += t[q]",
    "range-min-param-4": "for q in range(min(m, 4)):\n    acc += t[q]",
    "range-min-thread-4": "for q in range(min(int(a[i]), 4)):\n    acc += t[q]",
    "range-min-three-4": "for q in range(min(int(a[i]), m, 4)):\n    acc += t[q]",
    "range-max-min-4": "for q in range(max(min(m, 4), -3)):\n    acc += t[q]",
    "range-len-t": "for q in range(len(t)):\n    acc += t[q]",
    "range-len-u-minus-1": "for q in range(len(u) - 1):\n    acc += t[q]",
    "range-variable-4": "n4 = 4\nfor q in range(n4):\n    acc += t[q]",
    "range-select-4-or-3": "n4 = 4 if m > 0 else 3\nfor q in range(n4):\n    acc += t[q]",
    "range-uint64": "for q in range(np.uint64(4)):\n    acc += t[q]",
    "index-uint64": "for q in range(4):\n    acc += t[np.uint64(q)]",
    "after-range-4": "q = 0\nfor q in range(4):\n    acc += 1.0\nacc += t[q]",
    "after-no-init": "for q in range(min(m, 4)):\n    acc += 1.0\nacc += t[q]",
    "break": "for q in range(4):\n    if a[i] > q:\n        break\n    acc += t[q]",
    "after-break": "q = 0\nfor q in range(4):\n    if a[i] > q:\n        break\nacc += t[q]",
    "continue": "for q in range(4):\n    if a[i] > q:\n        continue\n    acc += t[q]",
    "guarded": "for q in range(4):\n    if a[i] > q:\n        acc += t[q]",
    "reassigned-plus-minus": "for q in range(4):\n    q = q + 1\n    acc += t[q - 1]",
    "thread-outer-loop": "for p in range(int(a[i]) & 7):\n    for q in range(4):\n        acc += t[q]",
    "two-loops": "for q in range(4):\n    for r in range(4):\n        acc += t[q] * t[r]",
    "select-q-or-3": "for q in range(4):\n    j = q if a[i] > 0 else 3\n    acc += t[j]",
    "param-compared": "if m < 4 and m >= 0:\n    acc += t[m]",
    "zip-tuples": "for v, w in zip(t, u):\n    acc += v * w",
}

#: Accepted and sound (every index in 0..3 by arithmetic; none raised on the simulator).
ACCEPTED: dict[str, str] = {name: loop_kernel(body) for name, body in _ACCEPTED_BODIES.items()}

HELD: dict[str, str] = {
    "tuple-index-range-proof": "start/step/stop forms, parameter and longer-tuple bounds, "
    "values after the loop, reassignments, swaps, nested loops, enumerate/zip, helpers, "
    "selects and breaks: every unsafe shape refused (HELD_KERNELS), every accepted shape in "
    "range (ACCEPTED)",
}

_FALSE_BODIES = {
    # minus-1, enumerate-t and zip-range-4: fixed in round 33 (tests/kernels/positions33.py)
    "init-7-after-range-4": "q = 7\nfor q in range(4):\n    acc += 1.0\nacc += t[q]",
    "copy-after-range-4": "j = 9\nfor q in range(4):\n    j = q\nacc += t[j]",
    # carried: fixed in round 33 too (j == q: both 0 at entry, both q + 1 on the way back)
    "after-inner-in-outer": "for p in range(int(a[i]) & 7):\n    for q in range(4):\n"
    "        acc += t[q]\n    acc += t[q]",
}

#: Safe, refused (message: NOT_UNIFORM).
FALSE_REFUSALS: dict[str, str] = {name: loop_kernel(body) for name, body in _FALSE_BODIES.items()}
