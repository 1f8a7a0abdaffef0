r"""Tuple positions, round 33: false refusals of docs/safety.md ("Not proven (refused, though
safe)") and of the uniformity differential fixed on the compiled form, each natural kernel in
``ACCEPTED`` beside the unsafe twins in ``REFUSED`` that the relaxation must still refuse.

Numba indexes a tuple at a run-time position through a ``switch`` with a case for each
position ``i`` and for its negative twin ``i - n`` (Python's ``t[-1]``), whose default raises
``IndexError`` (``verify/_feasible``). The three shapes and the rules that prove them:

* **Negative positions** (``verify/_ranges.Ranges.signed_span``). ``t[q - 1]`` for ``q`` in
  ``range(4)`` compiles to (the analysed copy, loop_kernel)::

      %B336:  %p = phi i64 [ 0, %pre ], [ %p.next, %switch.end ]
              %c = phi i64 [ 4, %pre ], [ %c.next, %switch.end ]
              %.504 = icmp sgt i64 %c, 0
              br i1 %.504, label %B336.if, label %B336.endif
      %B336.if:     %c.1 = add nsw i64 %c, -1 ; %p.1 = add i64 %p, 1 ; %4 = add i64 %p, -1
      %B336.endif:  %k = phi i64 [ %4, %B336.if ], [ -1, %B336 ]
                    br i1 %.504, label %B338, label %exit
      %B338:  switch i64 %k, label %switch.else [ i64 0, ... i64 -4, ... i64 3, ... i64 -1, ... ]

  The proof gives ``k`` signed bounds, each value exact as the machine computes it: the
  range loop's index by its trips (``p`` in 0..3 where ``c > 0``), ``x + y`` / ``x - y`` while
  every result fits 64 bits, constants, ``smin``/``smax``, selects and the phi over the edges
  a run may take to the switch (the ``-1`` edge contradicts ``%.504`` there). The default goes
  when every value of ``lo..hi`` is a case: ``-n <= lo`` and ``hi < n``.

* **Edges no run takes** (``Ranges._incoming``). ``TT[i.index % 4]`` for a witness ``i``:
  instcombine knows the index is non-negative, so Numba's sign fix-up of Python's ``%``
  folds into branches on constants, and the analysed copy keeps one target of each; the phi
  after them still names the other arm with ``poison``::

      %B310.else:          br i1 true, label %B310.else.if, label %B310.else.endif
      %B310.else.if.else:  %.222 = and i64 %tid, 3
      %B310.else.endif:    %.213.0 = phi i64 [ %.213.1, %B310.else.if.endif ], [ poison, %B310.else ]

  ``%B310.else`` is reached, but its branch never goes to ``%B310.else.endif``: that pair is
  no value. (Before, only a pair from an unreached block was dropped.)

* **Counters stepped together** (``Ranges._twins``). ``for q, e in enumerate(t): u[q]``::

      %B336:  %pos = phi i64 [ 0, %pre ], [ %pos.1, %latch ]      ; the tuple iterator
              %q   = phi i64 [ 0, %pre ], [ %q.1, %latch ]        ; enumerate's count
              %q.1 = add i64 %q, 1
              %.490 = icmp slt i64 %pos, 4
              br i1 %.490, label %B336.if, label %B336.endif       ; t[pos], then pos + 1
      %B336.endif:  %pos.1 = phi i64 [ %pos + 1, %switch.end ], [ %pos, %B336 ]
      ...           br i1 %.490, label %B338, label %exit
      %B338:  switch i64 %q (through phis), ...   ; u[q]

  Both phis enter with 0, and on every path back to the header a run may take (those with
  ``%.490`` true: the ``[ %pos, %B336 ]`` pair contradicts it) both move by 1, so ``q == pos``
  (modulo ``2**64``) and ``pos`` is in 0..3 under ``%.490``. The same rule takes a copy
  carried to the next trip, ``j = 0`` then ``j = q + 1`` in ``range(4)``: ``j`` and ``q`` both
  enter with 0 and both go back as ``q + 1``, so ``j == q``. ``zip(range(4), u)`` was refused
  only for the ``poison`` pair of an edge no run takes (above).

What else compiles to these shapes and is not safe, tried (``REFUSED``): a negative position
past the tuple (``t[q - 5]``, ``range(3, -6, -1)``, ``range(-5, 0)``), a difference whose span
leaves it (``t[q - (v & 7)]``), ``enumerate`` of a longer tuple or from 1, a second counter
moved on one path only (``continue`` before its step, a step under a thread-dependent ``if``),
``% 5`` of the witness index, the signed ``v % 4`` of data (its compiled fix-up ``+ 4`` is
reached for all the analysis knows).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), compiled
for sm_90 by tests/ptx/test_positions33_ptx.py and run on the simulator against a Python
reference by tests/sim/test_positions33_sim.py (the loop kernels: attacks29's
``loop_kernel``, a 4-tuple ``t`` and a 5-tuple ``u`` of ``a[i]``).
"""

from __future__ import annotations

from tests.kernels.attacks29 import NOT_UNIFORM, loop_kernel
from tests.kernels.fixed_refusals import Case
from tests.kernels.range_loops30 import _loop_case

__all__ = ["ACCEPTED", "COMPILED_ONLY", "REFUSED", "STILL_REFUSED", "WITNESS_PROBES"]

_LOOP_BODIES = {
    # negative positions: Numba's cases i - 4
    "minus-1": "for q in range(4):\n    acc += t[q - 1]",  # -1..2
    "range-1-5-minus-1": "for q in range(1, 5):\n    acc += t[q - 1]",  # 0..3
    "range-3-down-to-minus-1": "for q in range(3, -2, -1):\n    acc += t[q]",  # -1..3
    "range-minus-4-0": "for q in range(-4, 0):\n    acc += t[q]",  # -4..-1
    "minus-4": "for q in range(4):\n    acc += t[q - 4]",  # -4..-1
    "three-minus-q-range-5": "for q in range(5):\n    acc += t[3 - q]",  # -1..3
    "minus-mask-1": "for q in range(4):\n    acc += t[q - (int(a[i]) & 1)]",  # -1..3
    "min-q-minus-1": "for q in range(6):\n    acc += t[min(q, 4) - 1]",  # -1..3
    "select-minus": "for q in range(4):\n    j = q - 1 if a[i] > 1.5 else -q\n    acc += t[j]",
    # enumerate's count and the tuple iterator's position, stepped together
    "enumerate-t": "for q, e in enumerate(t):\n    acc += e * t[q]",
    "enumerate-t-index-u": "for q, e in enumerate(t):\n    acc += e * u[q]",
    "enumerate-1-minus-1": "for q, e in enumerate(t, 1):\n    acc += e * t[q - 1]",
    # a copy carried to the next trip: j and q enter with 0 and go back as q + 1 both
    "carried-plus-1": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q + 1",
    "carried-minus-1-from-1": "j = -1\nfor q in range(4):\n    acc += t[j]\n    j = q",  # -1..2
    # pinned as still refused before (attacks29, attacks31, range_loops30): signed bounds
    "nested-down-difference": "for p in range(3, -1, -1):\n    for q in range(p + 1):\n"
    "        acc += t[p - q]",
    "inner-difference": "for p in range(4):\n    for q in range(p + 1):\n        acc += t[p - q]",
    "enumerate-u-three-minus": "for q, v in enumerate(u):\n    acc += t[3 - q] * v",  # -1..3
    "zip-range-4-u": "for q, v in zip(range(4), u):\n    acc += v * t[q]",
    # zip of a range and a tuple of the same length
    "zip-range-4": "for q, e in zip(range(4), t):\n    acc += e * t[q]",
    "zip-range-len": "for q, e in zip(range(len(t)), t):\n    acc += e * t[q]",
}


def _probe(body: str) -> str:
    """tests/ptx/test_port20_ptx.py's TUPLE_PROBE: ``acc += TT[...]`` of a 4-tuple under
    ``if cuda.laneid < n`` before ``ss.warp.sum``, ``x`` the witness' index."""
    return f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(y: DisjointSlice[np.float32, PerWarp], a: In[np.float32], n: np.int64) -> None:
    i = thread.index_1d()
    acc = np.float32(0)
    t = (np.float32(1), np.float32(2), np.float32(3), np.float32(4))
    v = int(a[i])
    x = i.index
    if cuda.laneid < n:
        acc += {body}
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


#: the witness index is never negative: Numba's srem fix-up folds to constants
WITNESS_PROBES = {
    "index-mod-4": _probe("t[x % 4]"),
    "masked-index-mod-4": _probe("t[(x & 255) % 4]"),
}

ACCEPTED: dict[str, Case] = {name: _loop_case(body) for name, body in _LOOP_BODIES.items()}

#: Accepted on the compiled form, not run on the simulator (which runs Python, where it
#: raises): range_loops30's index-uint64-wrapped, ``np.uint64(3) - np.uint64(q + 1)``. LLVM
#: computes it as ``sub i64 2, %q`` (-1 at the last trip, bit for bit the uint64 2**64 - 1)
#: and the switch takes Numba's case -1, ``t[3]``: no thread raises on the GPU.
COMPILED_ONLY: dict[str, str] = {
    "index-uint64-wrapped": loop_kernel(
        "for q in range(4):\n    acc += t[np.uint64(3) - np.uint64(q + 1)]"
    ),
}

_UNSAFE_BODIES = {
    "minus-5": "for q in range(4):\n    acc += t[q - 5]",  # -5
    "range-3-down-to-minus-5": "for q in range(3, -6, -1):\n    acc += t[q]",  # -5
    "range-minus-5-0": "for q in range(-5, 0):\n    acc += t[q]",  # -5
    "range-1-6-minus-1": "for q in range(1, 6):\n    acc += t[q - 1]",  # 4
    "minus-mask-7": "for q in range(4):\n    acc += t[q - (int(a[i]) & 7)]",  # down to -7
    "minus-thread": "for q in range(4):\n    acc += t[q - int(a[i])]",  # any
    "three-minus-q-range-9": "for q in range(9):\n    acc += t[3 - q]",  # -5
    "select-minus-5": "for q in range(4):\n    j = q - 1 if a[i] > 1.5 else -5\n    acc += t[j]",
    "enumerate-u-index-t": "for q, e in enumerate(u):\n    acc += e * t[q]",  # 4
    "enumerate-1": "for q, e in enumerate(t, 1):\n    acc += e * t[q]",  # 4
    "zip-range-5-u": "for q, e in zip(range(5), u):\n    acc += e * t[q]",  # 4
    # a second counter moved on one path only: not stepped with the loop's index
    "counter-continue": "j = 0\nfor q in range(4):\n    acc += t[j]\n    if a[i] > q:\n"
    "        continue\n    j += 2",  # 2, 4
    "counter-thread-step": "j = 0\nfor q, e in enumerate(t):\n    acc += t[j]\n"
    "    if a[i] > q:\n        j += 1\n    j += 1",  # up to 6
    "carried-range-5": "j = 0\nfor q in range(5):\n    acc += t[j]\n    j = q + 1",  # 4
    "carried-plus-2": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q + 2",  # 4
    "carried-from-5": "j = 5\nfor q in range(4):\n    acc += t[j]\n    j = q + 5",  # 5
    "counter-ahead": "j = 1\nfor q, e in enumerate(t):\n    acc += e * t[j]\n    j += 1",  # 4
}

#: Refused and unsafe: some input reaches a value outside the tuple before the collective
#: (source, message fragment).
REFUSED: dict[str, tuple[str, str]] = {
    **{name: (loop_kernel(body), NOT_UNIFORM) for name, body in _UNSAFE_BODIES.items()},
    "index-mod-5": (_probe("t[x % 5]"), "`warp.sum` needs every thread of the warp"),
    "data-mod-4": (_probe("t[v % 4]"), "`warp.sum` needs every thread of the warp"),
}

#: Safe, still refused (message: NOT_UNIFORM): outside what the rules prove.
STILL_REFUSED: dict[str, str] = {
    # j is 0 then q - 1 of the trip before: 0, 0, 1, 2 -- not q plus one constant
    "carried-minus-1": loop_kernel("j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q - 1"),
    # enumerate's count is stepped with the second iterator's position only on the paths
    # where both zip guards held; that the first guard held is a phi of i1 (false on the
    # other edge), a fact the edge pruning does not carry through
    "enumerate-zip": loop_kernel("for q, (e, f) in enumerate(zip(t, t)):\n    acc += e * f * t[q]"),
}
