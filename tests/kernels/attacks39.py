r"""Attack round 39 (an outside helper): sync dependence needs two successors of a branch
to reach the phi (2f16c64), on top of the values rule (a3adcc9) and its temporal fixes
(9765582, 213a14b).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), checked on
the compiled form in tests/ptx/test_attacks39_ptx.py and replayed by ``simtsafe.sim.check`` at
grid 1, block 64 in tests/sim/test_attacks39_sim.py (``launch_args`` gives the arguments).

No unsafe kernel was accepted. Why the two-successor rule cannot lose a divergence: if only
one successor S1 of a branch B reaches the phi's block J, a thread that takes the other one
never reaches J again (nor B: B would lead it to S1 and J), so every thread at J took S1 at
every execution of B; the phi's value then reaches a thread that left by the other side only
through a loop that it left (J and B in a loop L, the other side leaving L), where every use
outside L, as a phi operand (9765582) or through private memory (213a14b), takes the level of
L's exits, B among them. A use inside L is under control dependent on B. A branch that delays
threads (a ``continue`` that skips a uniform exit test, an inner loop re-entered by an outer
one) has both successors reaching J and separates.

=============================================================================================
MESSAGE 1 (LOW, 2f16c64's ``_tuple_index_inside``): a tuple index blamed for another exit
=============================================================================================

Where the cause of a refusal is a thread-dependent branch whose region holds a run-time tuple
index, the message names the tuple index ("the tuple index at line L, which only the threads
taking the thread-dependent branch at line B reach, ... may raise IndexError ... Index with a
bounded position") whatever else the region holds: a collective *inside* the branch with the
tuple index on the other side (TUPLE_IN_ELSE), or a ``return`` next to the tuple index
(TUPLE_BESIDE_RETURN). Bounding the index does not help there. Fix (tested on a copy): name the
tuple index only where every exit reached from the branch without passing the site is a tuple
index's default edge.

MESSAGE 3 (LOW, pre-existing): the loop exit a message names depends on PYTHONHASHSEED: a value
computed in a loop with two thread-dependent exits (OUTER_REENTERS_INNER: the inner ``for``'s
own test, thread-dependent since the outer loop re-enters it, and the ``break``) is explained
by the first exit of ``Loop.exits`` whose level is highest, and ``Graph._natural_loops`` builds
that tuple by iterating a ``set`` of block names (seed 6 names the ``for`` line, seed 8 the
``break``). Fix: build ``exits`` in reverse post-order (tested: deterministic; it then names the
``for`` line, so prefer among equal exits one whose condition is not itself a loop phi's).

MESSAGE 2 (LOW, pre-existing): a ``continue`` that skips a uniform exit test
(CONTINUE_SKIPS_EXIT_TEST) is explained by the uniform-looking test (``if j == 3``: thread-
dependent only because the ``continue`` re-enters the loop through a header of its own), not
by the ``continue``'s branch.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ACCEPTED", "MESSAGES", "REFUSED", "launch_args"]

_HEAD = (
    '@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))\n'
    "def k(out: DisjointSlice[np.float32], x: In[np.float32], n: np.int32) -> None:\n"
    "    t = thread.local_index()\n"
)
_TAIL = """    acc = np.float32(0)
    for s in range(v):
        acc += ss.block.sum(np.float32(s))  # SYNC
    for i in thread.grid_stride(out):
        out[i] = acc + x[i]
"""

# a thread-dependent `continue` delays the uniform exit tests (the EXIT line is the cause;
# the message names the JOIN line: MESSAGE 2)
CONTINUE_SKIPS_EXIT_TEST = (
    _HEAD
    + """    v = 0
    j = 0
    while True:
        j += 1
        if x[t] == np.float32(j):  # EXIT
            continue
        if j == 3:  # JOIN
            v = 1
            break
        if j >= 7:
            v = 2
            break
"""
    + _TAIL
)

# a value set by a uniform test inside an inner loop with a thread-dependent break
INNER_BREAK_OUTER_LOOP = (
    _HEAD
    + """    v = 0
    for o in range(3):
        j = 0
        while True:
            j += 1
            if j == 2:
                v = o
            if j * (t.index + 1) >= 8:  # EXIT
                break
"""
    + _TAIL
)

# the other side of the thread branch returns; the phi's uniform test is on the loop side
RETURN_IN_LOOP = (
    _HEAD
    + """    v = 0
    for j in range(8):
        if j == n:
            v = j
        if x[t] > np.float32(100):  # EXIT
            return
"""
    + _TAIL
)

# the inner loop's thread-dependent break re-enters it through the outer loop
OUTER_REENTERS_INNER = (
    _HEAD
    + """    v = 0
    for o in range(4):
        for j in range(8):  # INNER
            if j * (t.index + 1) > 16:  # EXIT
                break
            if j == o:
                v = v + 1
"""
    + _TAIL
)

# a helper's early returns in a loop (one thread-dependent, one uniform)
HELPER_RETURN_IN_LOOP = (
    """@ss.device
def find(x, i, n):
    for j in range(8):
        if x[i] > np.float32(j * 8):  # EXIT
            return 7
        if j == n:
            return j
    return 7


"""
    + _HEAD
    + "    v = find(x, t, n)\n"
    + _TAIL
)

# two phis: a flag the thread branch decides, a value a uniform test decides; chosen by the flag
FLAG_AND_VALUE = (
    _HEAD
    + """    f = 0
    w = 0
    for j in range(8):
        if j == n:
            w = j
        if x[t] > np.float32(j * 8):  # EXIT
            f = 1
            break
    v = w if f == 0 else 3
"""
    + _TAIL
)

# for/else: the inner loop's thread-dependent break skips the outer `continue`
FOR_ELSE_CONTINUE = (
    _HEAD
    + """    v = 0
    for o in range(3):
        for j in range(4):
            if x[t] > np.float32(j * 16):  # EXIT
                break
            v = j
        else:
            continue
        v = v + 2
"""
    + _TAIL
)

#: held, refused: name -> (source, markers of the lines the message may name: for
#: OUTER_REENTERS_INNER which of the inner loop's two exits is named depends on
#: PYTHONHASHSEED, MESSAGE 3)
REFUSED = {
    "continue-skips-exit-test": (CONTINUE_SKIPS_EXIT_TEST, "# JOIN"),
    "inner-break-outer-loop": (INNER_BREAK_OUTER_LOOP, "# EXIT"),
    "return-in-loop": (RETURN_IN_LOOP, "# EXIT"),
    "outer-reenters-inner": (OUTER_REENTERS_INNER, "# EXIT", "# INNER"),
    "helper-return-in-loop": (HELPER_RETURN_IN_LOOP, "# EXIT"),
    "flag-and-value": (FLAG_AND_VALUE, "# EXIT"),
    "for-else-continue": (FOR_ELSE_CONTINUE, "# EXIT"),
}

#: the refused shapes that diverge at the arguments of ``launch_args``
DIVERGE = sorted(set(REFUSED) - {"return-in-loop"})

_TUPLE_HEAD = _HEAD + "    tt = (1.0, 2.0, 3.0, 4.0)\n    acc = np.float32(0)\n"
_OUT = """    for i in thread.grid_stride(out):
        out[i] = acc + x[i]
"""

# MESSAGE 1: the collective is inside the thread branch; the tuple index on the other side
TUPLE_IN_ELSE = (
    _TUPLE_HEAD
    + """    if t.index < 5:  # EXIT
        acc = ss.block.sum(np.float32(1))  # SYNC
    else:
        acc = np.float32(tt[n])  # INDEX
"""
    + _OUT
)

# MESSAGE 1: a `return` beside the tuple index
TUPLE_BESIDE_RETURN = (
    _TUPLE_HEAD
    + """    if t.index < 5:  # EXIT
        acc = np.float32(tt[n])  # INDEX
        return
    acc += ss.block.sum(np.float32(1))  # SYNC
"""
    + _OUT
)

MESSAGES = {
    "tuple-in-else": TUPLE_IN_ELSE,
    "tuple-beside-return": TUPLE_BESIDE_RETURN,
}

# held, accepted: a warp-uniform break; the other side's count chosen by a uniform test
WARP_BREAK_UNIFORM_CHOICE = (
    _HEAD
    + """    acc = np.float32(0)
    for j in range(8):
        if cuda.threadIdx.x // 32 == 1:  # EXIT
            break
        if n > 3:
            v = 2
        else:
            v = 3
        for s in range(v):
            acc += ss.warp.sum(np.float32(s))  # SYNC
    for i in thread.grid_stride(out):
        out[i] = acc + x[i]
"""
)

ACCEPTED = {"warp-break-uniform-choice": WARP_BREAK_UNIFORM_CHOICE}


def launch_args(name: str) -> tuple[object, ...]:
    """The arguments after grid 1, block 64 (``x[t] = t``, ``n = 0``)."""
    del name
    return (np.zeros(64, np.float32), np.arange(64, dtype=np.float32), np.int32(0))
