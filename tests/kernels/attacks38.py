r"""Attack round 38 (an outside helper): sync dependence refined by the values on the edges
(a3adcc9) and its fix for loop exits (9765582: a phi's operand is read at the phi's block too).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), checked on
the compiled form in tests/ptx/test_attacks38_ptx.py and replayed by ``simtsafe.sim.check`` at
grid 1, block 64 in tests/sim/test_attacks38_sim.py (``launch_args`` gives the arguments).

=============================================================================================
FINDING 1 (HIGH: an iteration count stored in a ``cuda.local.array``; a regression of a3adcc9)
=============================================================================================

Since a3adcc9 a loop's counter is uniform *inside* its loop when the loop's thread-dependent
exit does not separate two values at the header phi (``[0, %pre], [%it.next, %latch]``: from
the exit branch only the latch edge is reached). That is the usual notion ("uniform among the
threads still in the loop"), sound only if every use *after* the loop applies temporal
divergence (``_Solver.use_level``). ``_Solver.private_level`` does not: a load of a Tier-1
``cuda.local.array`` takes ``d.levels`` of every store's operands, the value's level where it
is defined, not where it is stored::

    it = 0
    for j in range(64):
        if x[t] < np.float32(j):  # thread-dependent break
            break
        it += 1
    a[n & 3] = it          # store i64 %it.2.0 (the header phi itself: it dominates the exit)
    ...
    v = a[0]               # load: "as uniform as every store into a": GRID
    for s in range(v):
        acc += ss.block.sum(np.float32(s))

The store sits after the loop (not control dependent on its exit), its value is the loop's
header phi, so the load is grid-uniform and bounds a loop of collectives. Threads left at
different iterations: ``sim.check`` reports ``barrier_divergence`` (``warp_mask`` with
``ss.warp.sum``). The same with a ``while True`` count stored after the loop, and with the
store in the ``break`` block itself (outside the natural loop; it post-dominates the loop, so
it is not control dependent on the exit either). At a3adcc9^ every one was refused (the
header phi took ``edge_level(latch)``: thread-dependent). A value the store *computes* after
the loop (a ``trunc`` into an ``int32`` array, an address ``a[m & 3]``) is read with
``use_level`` and is refused; so is a count that reaches the store through a phi after the
loop (the helper's return). Fix: in ``private_level`` read each store operand with
``self.use_level(operand, blk)`` (the store's block), as every other use does.

=============================================================================================
FALSE REFUSAL (LOW, pre-existing: ``private_level`` counts the store blocks' control)
=============================================================================================

The same value ``n`` stored at the same place on both sides of a thread-dependent ``if`` is
refused: the stores' blocks are thread-dependent, whatever they store (the phi rule would see
one value).

Held (see the tests): a phi of a phi of a thread-dependent join (refused, the inner branch
named), a conditional expression (refused at its line), a tuple of one constant indexed by the
thread (its ``switch`` joins one value: accepted) and of two constants (refused), a local
array filled differently on the two sides of a thread branch (refused), a ``continue`` that
skips the assignment (refused), an inner loop's count merged by a uniform ``if`` with the same
name on both sides in an outer loop (refused: temporal divergence), a ``while True`` count
stored after the loop at a computed address ``a[m & 3]`` (refused), a count returned by a
helper and stored (refused), a nested loop's count reset per outer iteration (refused), a
helper with a loop inlined twice (refused where the second call's loop is thread-dependent,
accepted where both are uniform), a helper whose thread branch raises on both sides under a
uniform condition (every thread leaves: accepted).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ACCEPTED",
    "FALSE_REFUSAL",
    "REFUSED",
    "UNSAFE_ACCEPTED",
    "launch_args",
]

_HEAD = (
    '@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))\n'
    "def k(out: DisjointSlice[np.float32], x: In[np.float32], n: np.int32) -> None:\n"
    "    t = thread.local_index()\n"
)
# `if n > 100` puts the load in another block than the store (no store-to-load forwarding)
_LOAD = """    acc = np.float32(0)
    if n > 100:
        acc = np.float32(1)
    v = a[0]
"""
_TAIL = """    for s in range(v):
        acc += ss.block.sum(np.float32(s))  # SYNC
    for i in thread.grid_stride(out):
        out[i] = acc + x[i]
"""
_TAIL_PLAIN = "    acc = np.float32(0)\n" + _TAIL

# FINDING 1: a `for` loop's count before a thread-dependent break, stored in a local array
PRIVATE_FOR_BREAK = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    it = 0
    for j in range(64):
        if x[t] < np.float32(j):  # EXIT
            break
        it += 1
    a[n & 3] = it
"""
    + _LOAD
    + _TAIL
)

# FINDING 1: a `while True` count stored after the loop
PRIVATE_WHILE = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    m = 0
    while True:
        m += 1
        if m * (t.index + 1) >= 40:  # EXIT
            break
    a[n & 3] = m
"""
    + _LOAD
    + _TAIL
)

# FINDING 1: the store in the break block itself (it post-dominates the loop)
PRIVATE_IN_BREAK = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    m = 0
    while True:
        m += 1
        if m * (t.index + 1) >= 40:  # EXIT
            a[n & 3] = m
            break
"""
    + _LOAD
    + _TAIL
)

# FINDING 1: the warp collective
PRIVATE_WHILE_WARP = PRIVATE_WHILE.replace("ss.block.sum(", "ss.warp.sum(")

UNSAFE_ACCEPTED = {
    "private-for-break": PRIVATE_FOR_BREAK,
    "private-while": PRIVATE_WHILE,
    "private-in-break": PRIVATE_IN_BREAK,
    "private-while-warp": PRIVATE_WHILE_WARP,
}

# safe (the same value on both sides), refused: private_level counts the stores' control
FALSE_REFUSAL = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    if t.index < 5:  # EXIT
        a[n & 3] = n
    else:
        a[n & 3] = n
"""
    + _LOAD
    + _TAIL
)

# held, refused: (source, marker of the line the message names as the deciding branch/exit)
PHI_OF_PHI = (
    _HEAD
    + """    u = 0
    if t.index < 10:  # EXIT
        u = n
    if n > 3:
        v = u
    else:
        v = u + 0
"""
    + _TAIL_PLAIN
)

CONDITIONAL_EXPRESSION = _HEAD + "    v = n if t.index < 5 else n + 1  # EXIT\n" + _TAIL_PLAIN

TUPLE_TWO_VALUES = (
    _HEAD
    + """    tt = (3, 3, 3, 4)
    v = tt[t.index & 3]  # EXIT
"""
    + _TAIL_PLAIN
)

PRIVATE_TWO_VALUES = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    if t.index < 5:  # EXIT
        a[n & 3] = 1
    else:
        a[n & 3] = 2
"""
    + _LOAD
    + _TAIL
)

CONTINUE_SKIPS = (
    _HEAD
    + """    v = 0
    for j in range(n):
        if x[t] < np.float32(j):  # EXIT
            continue
        v = j
"""
    + _TAIL_PLAIN
)

INNER_SAME_NAME = (
    _HEAD
    + """    v = 0
    for o in range(n):
        m = 0
        while True:
            m += 1
            if m * (t.index + 1) >= 40:  # EXIT
                break
        if n > 2:
            v = m
        else:
            v = m
"""
    + _TAIL_PLAIN
)

NESTED_RESET_PRIVATE = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    for o in range(4):
        m = 0
        while True:
            m += 1
            if m * (t.index + 1) >= 40:  # EXIT
                break
        a[o] = m
"""
    + _LOAD.replace("a[0]", "a[n & 3]")
    + _TAIL
)

PRIVATE_COMPUTED_ADDRESS = (
    _HEAD
    + """    a = cuda.local.array(4, np.int64)
    m = 0
    while True:
        m += 1
        if m * (t.index + 1) >= 40:  # EXIT
            a[m & 3] = 7
            break
"""
    + _LOAD.replace("a[0]", "a[n & 3]")
    + _TAIL
)

PRIVATE_INT32_TRUNC = PRIVATE_WHILE.replace(
    "cuda.local.array(4, np.int64)", "cuda.local.array(4, np.int32)"
)

PRIVATE_FROM_HELPER = (
    """@ss.device
def count_below(x, i, lim):
    c = 0
    for j in range(lim):
        if x[i] < np.float32(j):  # EXIT
            break
        c += 1
    return c


"""
    + _HEAD
    + """    a = cuda.local.array(2, np.int64)
    a[n & 1] = count_below(x, t, 64)
"""
    + _LOAD
    + _TAIL
)

_STEPS = """@ss.device
def steps(t, lim):
    m = 0
    while True:
        m += 1
        if m * (t + 1) >= lim:  # EXIT
            break
    return m


"""
HELPER_TWICE = _STEPS + _HEAD + "    v = steps(0, n) + steps(t.index, 40)\n" + _TAIL_PLAIN

REFUSED = {
    "phi-of-phi": PHI_OF_PHI,
    "conditional-expression": CONDITIONAL_EXPRESSION,
    "tuple-two-values": TUPLE_TWO_VALUES,
    "private-two-values": PRIVATE_TWO_VALUES,
    "continue-skips": CONTINUE_SKIPS,
    "inner-same-name": INNER_SAME_NAME,
    "nested-reset-private": NESTED_RESET_PRIVATE,
    "private-computed-address": PRIVATE_COMPUTED_ADDRESS,
    "private-int32-trunc": PRIVATE_INT32_TRUNC,
    "private-from-helper": PRIVATE_FROM_HELPER,
    "helper-twice": HELPER_TWICE,
}

TUPLE_ONE_VALUE = (
    _HEAD
    + """    tt = (3, 3, 3, 3)
    v = tt[t.index & 3]
"""
    + _TAIL_PLAIN
)

HELPER_TWICE_UNIFORM = _STEPS + _HEAD + "    v = steps(0, n) + steps(n, 40)\n" + _TAIL_PLAIN

RAISE_BOTH_SIDES = (
    """@ss.device
def h(v, i, d):
    if d > 0:
        if i % 2 == 0:
            raise ValueError("a")
        raise ValueError("b")
    return v + 1


"""
    + _HEAD
    + "    v = h(n, t.index, n - 5)\n"
    + _TAIL_PLAIN
)

ACCEPTED = {
    "tuple-one-value": TUPLE_ONE_VALUE,
    "helper-twice-uniform": HELPER_TWICE_UNIFORM,
    "raise-both-sides": RAISE_BOTH_SIDES,
}


def launch_args(name: str) -> tuple[object, ...]:
    """The arguments after grid 1, block 64 for the kernel ``name`` of UNSAFE_ACCEPTED
    (``x[t] = t``; ``n = 0``: the store and the load are at element 0)."""
    return (np.zeros(64, np.float32), np.arange(64, dtype=np.float32), np.int32(0))
