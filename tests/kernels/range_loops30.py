"""Range loops, round 30: false refusals of attack rounds 29 and 28 fixed by numbers for a
range loop's index (``verify/_ranges``: ``_trips``, ``_span``, a number bound in
``_within``), each natural kernel in ``ACCEPTED`` beside the unsafe twins in ``REFUSED``
that the relaxation must still refuse.

The proof, on the compiled form: Numba's range loop is an index phi ``p`` and a counter
``c`` in one loop header, entered with ``p = S`` (a constant) and ``c = N``, and stepped
``p + s`` (one constant ``s``, either sign) with ``c - 1`` computed only where ``c > 0``
(signed). Then ``p + s * c`` keeps its entry value modulo ``2**width`` and ``c`` only goes
down from ``N``, never below 0: where a fact ``c > 0`` still sees this ``p`` and ``c``,
``p = S + s * t`` for ``t`` in ``[0, N - 1]``. With ``N`` at most a number, every value is
known; when they fit the width (no wrap), ``p`` is one of them. Values built from ``p`` are
bounded by ``Ranges.upper`` with the facts of the block they are computed in (``min(q, 3)``,
``3 - q`` for ``q <= 3``, ``np.int32(q)``'s ``shl``/``ashr``, sums), and an index whose
bound ``0 <= k <= U`` has ``U`` below the tuple's length (or the size the contract
guarantees, for an input read) is inside.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), compiled
for sm_90 by tests/ptx/test_range_loops30_ptx.py and run on the simulator against a Python
reference by tests/sim/test_range_loops30_sim.py. The loop kernels are attacks29's
``loop_kernel``: a 4-tuple ``t`` and a 5-tuple ``u`` of ``a[i]``, the loop under a
thread-dependent ``if a[i] > 0.5``, then ``ss.block.sum``; their reference runs the same
body as Python, thread by thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tests.kernels.attacks28 import op_kernel
from tests.kernels.attacks29 import NOT_UNIFORM, loop_kernel
from tests.kernels.fixed_refusals import Case

__all__ = ["ACCEPTED", "REFUSED", "STILL_REFUSED"]

_BLOCK = 64
_M = 3  # the scalar parameter ``m`` of the loop kernels


def _ramp() -> np.ndarray:
    # -1 .. 4.5: threads on both sides of ``a[i] > 0.5``, ``int(a[i]) & 3`` over 0..3
    return np.linspace(-1.0, 4.5, _BLOCK)


def _python_sum(body: str) -> Callable[..., tuple[np.ndarray, ...]]:
    """The expected ``out`` of ``loop_kernel(body)``: the body run as Python for every
    thread, the block's sum of ``acc`` in every element."""
    code = compile("acc = 0.0\nif a[i] > 0.5:\n" + "".join(
        "    " + line + "\n" for line in body.split("\n")
    ), "<reference>", "exec")  # fmt: skip

    def expect(out: np.ndarray, a: np.ndarray, m: Any) -> tuple[np.ndarray, ...]:
        total = 0.0
        for i in range(out.size):
            x = float(a[i])
            scope: dict[str, Any] = {
                "np": np, "a": a, "i": i, "m": m,
                "t": (x, x + 1.0, x + 2.0, x + 3.0), "u": (x,) * 5,
            }  # fmt: skip
            exec(code, scope)
            total += scope["acc"]
        return (np.full(out.size, total),)

    return expect


def _loop_case(body: str) -> Case:
    return Case(
        loop_kernel(body),
        args=lambda: (np.zeros(_BLOCK), _ramp(), np.int64(_M)),
        expect=_python_sum(body),
    )


#: attacks29 FALSE_REFUSALS fixed here, and twins safe by the same arithmetic
_LOOP_BODIES = {
    # attacks29 if-below-4-in-range-8: q >= 0 from the trips, q < 4 from the branch
    "if-below-4-in-range-8": "for q in range(8):\n    if q < 4:\n        acc += t[q]",
    # attacks29 min-q-3: smin(q, 3) with q in [0, 5]
    "min-q-3": "for q in range(6):\n    acc += t[min(q, 3)]",
    # attacks29 three-minus-q: 3 - q with q in [0, 3]
    "three-minus-q": "for q in range(4):\n    acc += t[3 - q]",
    "three-minus-q-range-1-4": "for q in range(1, 4):\n    acc += t[3 - q]",
    "three-minus-q-down": "for q in range(3, -1, -1):\n    acc += t[3 - q]",
    # attacks29 range-1-4, range-0-4-2, range-3-down: a constant start and step
    "range-1-4": "for q in range(1, 4):\n    acc += t[q]",
    "range-2-4": "for q in range(2, 4):\n    acc += t[q]",
    "range-0-4-2": "for q in range(0, 4, 2):\n    acc += t[q]",
    "range-1-4-2": "for q in range(1, 4, 2):\n    acc += t[q]",
    "range-3-down": "for q in range(3, -1, -1):\n    acc += t[q]",
    "range-3-0-down": "for q in range(3, 0, -1):\n    acc += t[q]",
    "range-3-down-2": "for q in range(3, -1, -2):\n    acc += t[q]",
    "after-range-3-down": "q = 0\nfor q in range(3, -1, -1):\n    acc += 1.0\nacc += t[q]",
    # attacks29 range-int8: Numba's 32-bit range loop, sign-extended
    "range-int8": "for q in range(np.int8(4)):\n    acc += t[q]",
    "range-uint32": "for q in range(np.uint32(4)):\n    acc += t[q]",
    "range-int32-1-4": "for q in range(np.int32(1), np.int32(4)):\n    acc += t[q]",
    "range-int8-3-down": "for q in range(np.int8(3), np.int8(-1), np.int8(-1)):\n    acc += t[q]",
    # attacks29 index-int32: trunc + sext (shl 32, ashr 32) of q in [0, 3]
    "index-int32": "for q in range(4):\n    acc += t[np.int32(q)]",
    "index-int16": "for q in range(4):\n    acc += t[np.int16(q)]",
    # attacks29 range-mask-3: a trip count int(x) & 3, at most 3
    "range-mask-3": "for q in range(int(a[i]) & 3):\n    acc += t[q]",
    # attacks29 nested-p-plus-1: the inner count p + 1 <= 4
    "nested-p-plus-1": "for p in range(4):\n    for q in range(p + 1):\n        acc += t[q]",
    # attacks29 nested-sum-3: p <= 2 and q <= 1
    "nested-sum-3": "for p in range(3):\n    for q in range(2):\n        acc += t[p + q]",
}

_OP_TT = (1.0, 2.0, 3.0, 4.0)


def _op_case(index: str, tt_index: int) -> Case:
    """attacks28's op kernel: ``block.reduce(a[i], op)``, ``op`` adding ``TT[index]``;
    ``a`` chosen so that every partial sum indexes ``TT[tt_index]``: a block of 64 values
    is combined 63 times."""
    return Case(
        op_kernel(index),
        args=lambda: (np.zeros(_BLOCK), np.linspace(3.0, 9.0, _BLOCK)),
        expect=lambda out, a: (np.full(out.size, a.sum() + 63 * _OP_TT[tt_index]),),
    )


#: an input read in a range loop, the contract guaranteeing 4 elements
_INPUT_READ = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["a.size >= 4"]))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    s = 0.0
    for q in RANGE:
        s += a[q]
    if s > 0.5:
        ss.block.sync()
    out[i] = s
"""


def _input_case(spelled: str, positions: range) -> Case:
    return Case(
        _INPUT_READ.replace("RANGE", spelled),
        args=lambda: (np.zeros(_BLOCK), np.arange(4, dtype=np.float64) + 0.25),
        expect=lambda out, a: (np.full(out.size, sum(a[q] for q in positions)),),
    )


ACCEPTED: dict[str, Case] = {
    **{name: _loop_case(body) for name, body in _LOOP_BODIES.items()},
    # attacks28 clamped: umin(smax(x, 0), 3) is at most 3 (a number bound, umin)
    "op-clamped": _op_case("min(max(int(x), 0), 3)", 3),
    # attacks28 bool-index: zext of an i1, at most 1
    "op-bool-index": _op_case("int(x > 0)", 1),
    # input reads: the same trips below the 4 elements the contract guarantees
    "input-range-1-4": _input_case("range(1, 4)", range(1, 4)),
    "input-range-3-down": _input_case("range(3, -1, -1)", range(3, -1, -1)),
    "input-range-0-4-2": _input_case("range(0, 4, 2)", range(0, 4, 2)),
}

_UNSAFE_BODIES = {
    "range-1-5": "for q in range(1, 5):\n    acc += t[q]",  # 4
    "range-3-down-to-minus-5": "for q in range(3, -6, -1):\n    acc += t[q]",  # -5
    "range-0-5-2": "for q in range(0, 5, 2):\n    acc += t[q]",  # 4
    "range-1-8-3": "for q in range(1, 8, 3):\n    acc += t[q]",  # 7
    "range-0-7-3": "for q in range(0, 7, 3):\n    acc += t[q]",  # 6
    "range-minus-5-3": "for q in range(-5, 3):\n    acc += t[q]",  # -5
    "four-minus-q": "for q in range(4):\n    acc += t[4 - q]",  # 4
    "three-minus-q-range-9": "for q in range(9):\n    acc += t[3 - q]",  # -5
    "three-minus-q-from-minus-1": "for q in range(3, -2, -1):\n    acc += t[3 - q]",  # 4
    "min-q-4": "for q in range(6):\n    acc += t[min(q, 4)]",  # 4
    "min-q-3-negative-start": "for q in range(-9, 3):\n    acc += t[min(q, 3)]",  # -9
    "range-int8-5": "for q in range(np.int8(5)):\n    acc += t[q]",  # 4
    "index-int32-range-5": "for q in range(5):\n    acc += t[np.int32(q)]",  # 4
    # Numba wraps the int32 conversion: -2**31 + q
    "index-int32-wrapped": "for q in range(4):\n    acc += t[np.int32(q + 2**31)]",
    # index-uint64-wrapped: accepted on the compiled form since round 33 (LLVM computes
    # 2 - q, -1 at the last trip: Numba's case t[-1]; tests/kernels/positions33.py)
    # int32 trips near the top of the width: 3, 4
    "range-int32-near-top": "for q in range(np.int32(2**31 - 3), np.int32(2**31 - 1)):\n"
    "    acc += t[q - np.int32(2**31 - 3) + 3]",
    "if-below-4-negative-start": "for q in range(-8, 8):\n    if q < 4:\n        acc += t[q]",
    "after-range-0-8-2": "q = 0\nfor q in range(0, 8, 2):\n    acc += 1.0\nacc += t[q]",  # 6
    "after-range-down-to-minus-5": "q = 0\nfor q in range(3, -6, -1):\n    acc += 1.0\nacc += t[q]",
    # the previous trip's q + 2: 4 in the last trip
    "carried-plus-2": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q + 2",
    "range-mask-7": "for q in range(int(a[i]) & 7):\n    acc += t[q]",  # up to 6
    "nested-p-plus-2-int8": "for p in range(4):\n    for q in range(np.int8(p + 2)):\n"
    "        acc += t[q]",
    "nested-sum-4-steps": "for p in range(0, 4, 2):\n    for q in range(3):\n        acc += t[p + q]",
    "range-param-start": "for q in range(m, 4):\n    acc += t[q]",  # m < -4
    "range-1-min-param-5": "for q in range(1, min(m, 5)):\n    acc += t[q]",  # 4
    "range-3-param-down": "for q in range(3, m, -1):\n    acc += t[q]",  # m < -5
}

#: Refused and unsafe: some input reaches a value outside the tuple (or the input) before
#: the collective (source, message fragment).
REFUSED: dict[str, tuple[str, str]] = {
    **{name: (loop_kernel(body), NOT_UNIFORM) for name, body in _UNSAFE_BODIES.items()},
    "op-clamped-4": (op_kernel("min(max(int(x), 0), 4)"), "`block.reduce` needs every thread"),
    "input-range-1-5": (
        _INPUT_READ.replace("RANGE", "range(1, 5)"),
        "`block.sync` needs every thread of the block to reach it",
    ),
    "input-range-4-down": (
        _INPUT_READ.replace("RANGE", "range(4, -1, -1)"),
        "`block.sync` needs every thread of the block to reach it",
    ),
    "input-range-0-5-2": (
        _INPUT_READ.replace("RANGE", "range(0, 5, 2)"),
        "`block.sync` needs every thread of the block to reach it",
    ),
}

#: Safe, still refused (message: NOT_UNIFORM): outside what the numbers prove.
STILL_REFUSED: dict[str, str] = {
    # range-3-down-to-minus-1, three-minus-q-range-5 (t[-1]): fixed in round 33
    # (tests/kernels/positions33.py, signed bounds)
    # the count min(m, 4) - 1 is an add of -1, which wraps for the smallest m: no number
    "range-1-min-param-4": loop_kernel("for q in range(1, min(m, 4)):\n    acc += t[q]"),
    # a step that is not a constant
    "range-step-param": loop_kernel("for q in range(0, 4, max(m, 1)):\n    acc += t[q]"),
    # nested-down-difference (p - q): fixed in round 33 (signed bounds: -3..3)
}
