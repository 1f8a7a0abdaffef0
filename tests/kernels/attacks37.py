r"""Attack round 37 (an outside helper): sync dependence refined by the values on the edges
(a3adcc9: ``verify/_divergence._Solver.join_branches`` and ``_separates``).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), checked on
the compiled form in tests/ptx/test_attacks37_ptx.py and replayed by ``simtsafe.sim.check`` at
grid 1, block 64 in tests/sim/test_attacks37_sim.py (``launch_args`` gives the arguments).

=============================================================================================
FINDING 1 (HIGH: a convergence loop whose iteration count escapes; a regression of a3adcc9)
=============================================================================================

A ``while`` loop whose first test is uniform (a residual that starts at a constant, a counter
that starts at 0) and whose later tests depend on the thread::

    r = np.float32(1.0)
    it = 0
    while it < maxit and r > tol:
        r = r * v          # v differs between threads
        it += 1
    for s in range(it):
        acc += ss.block.sum(r)

is compiled (3.11 and 3.12 alike) with its tests at the bottom of the loop, and the loop's
exits go straight from the blocks inside the loop to the block after it, where a phi merges
``it`` from the guards in front of the loop (0) with the counter from the exits (``%.144`` on
both exit edges)::

    B470:  %it.3.0 = phi i64 [ %.144, %B458 ], [ %.144, %B206.endif ], [ 0, %B194 ], [ 0, %B0 ]

Before a3adcc9 the phi took the level of every incoming edge (``edge_level(pred)``): the
thread-dependent exits made it thread-dependent. Now an exit branch counts only if the edges
into the phi reachable from it carry two values; from an exit, the only edge into the phi is
an exit edge carrying ``%.144`` (the other way goes round the loop and back to the exit), so
no exit branch counts. The guards in front of the loop do separate 0 from ``%.144``, but they
are uniform. The operand ``%.144`` is read with ``use_level(value, pred)`` where ``pred`` is
*inside* the loop, so no temporal divergence either: the counter, uniform among the threads
still in the loop, is taken as uniform after it, although threads left at different
iterations. ``it`` bounds a loop of ``ss.block.sum``: threads reach it a different number of
times (sim.check: ``barrier_divergence``; with a warp collective ``warp_mask``). The same in a
helper that returns the count, and with a guard that folds to ``true`` (``m * (t + 1) < 40``
at ``m = 0``: one exit, ``[ %.62, %B154 ], [ poison, %B0 ]``). Every one of them was refused
at a3adcc9^. The gap: a phi's operand coming along an edge that leaves loops is a use *after*
those loops (the phi's block), and the exits of the loops left are branches that decide which
instance of the value arrives, whatever its name.

=============================================================================================
FINDING 2 (LOW: false refusal, pre-existing; path-insensitive)
=============================================================================================

``return v / d + v`` on one side of a thread-dependent branch and ``return v / d - v`` on the
other (complex by float: ZeroDivisionError where ``d == 0``) is refused: the status phi
carries the error behind both sides and 0 behind both, so the branch "chooses" between the
error and 0, although both sides raise exactly where the uniform ``d`` is 0. (The rule's own
test ``pick_late`` divides on one side only, and is rightly refused.)

Held (see the tests): a ``for`` loop's thread-dependent ``break`` and a ``while True`` whose
``break`` leaves through a block of its own (the value is read outside the loop: temporal
divergence), a loop whose first test is already thread-dependent, an inner loop that carries
its count round an outer loop, the same value on three sides of an if/elif chain (accepted)
and a different one on the last (refused, naming the first branch), a nested uniform choice
between the same value under a thread-dependent one (refused, naming the outer branch), a
variable bound under a uniform ``if`` only (Numba reads 0 elsewhere: accepted), an element of
a ``cuda.local.array`` stored under a uniform ``if`` only (simtsafe's lowering zero-fills it:
no reachable ``poison``, the phis' ``poison`` edges are the folded bounds checks; accepted),
``match``
(refused at decoration).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ACCEPTED",
    "FALSE_REFUSAL",
    "MATCH",
    "REFUSED",
    "UNSAFE_ACCEPTED",
    "launch_args",
]

_CONTRACT = '@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))\n'
_SIG_ITER = (
    "def k(out: DisjointSlice[np.float32], x: In[np.float32], maxit: np.int32, "
    "tol: np.float32) -> None:\n"
)
_SIG_N = "def k(out: DisjointSlice[np.float32], x: In[np.float32], n: np.int32) -> None:\n"
_TAIL = """    for i in thread.grid_stride(out):
        out[i] = acc + x[i]
"""

# FINDING 1: a Newton-style iteration, residual from a constant, count used as a loop bound
NEWTON_BLOCK = (
    _CONTRACT
    + _SIG_ITER
    + """    t = thread.local_index()
    v = np.float32(0.5) + np.float32(t.index) / np.float32(130)
    r = np.float32(1.0)
    it = 0
    while it < maxit and r > tol:  # LOOP
        r = r * v
        it += 1
    acc = np.float32(0)
    for s in range(it):
        acc += ss.block.sum(r)  # SYNC
"""
    + _TAIL
)

# FINDING 1: the same loop in a helper that returns the count
NEWTON_HELPER = (
    """@ss.device
def steps(v, tol, maxit):
    r = np.float32(1.0)
    it = 0
    while it < maxit and r > tol:  # LOOP
        r = r * v
        it += 1
    return it


"""
    + _CONTRACT
    + _SIG_ITER
    + """    t = thread.local_index()
    v = np.float32(0.5) + np.float32(t.index) / np.float32(130)
    it = steps(v, tol, maxit)
    acc = np.float32(0)
    for s in range(it):
        acc += ss.block.sum(v)  # SYNC
"""
    + _TAIL
)

# FINDING 1: the warp collective (lanes of one warp leave at different iterations)
NEWTON_WARP = NEWTON_BLOCK.replace("ss.block.sum(r)", "ss.warp.sum(r)")

# FINDING 1: one exit; the guard `0 * (t + 1) < 40` folds to true (poison on its edge)
FOLDED_GUARD = (
    _CONTRACT
    + _SIG_N
    + """    t = cuda.threadIdx.x
    m = 0
    while m * (t + 1) < 40:  # LOOP
        m += 1
    acc = np.float32(0)
    for s in range(m):
        acc += ss.block.sum(np.float32(s))  # SYNC
"""
    + _TAIL
)

UNSAFE_ACCEPTED = {
    "newton-block": NEWTON_BLOCK,
    "newton-helper": NEWTON_HELPER,
    "newton-warp": NEWTON_WARP,
    "folded-guard": FOLDED_GUARD,
}

# FINDING 2: both sides divide by the uniform d (raise together), refused
FALSE_REFUSAL = """@ss.device
def pick(v, i, d):
    if i % 2 == 0:  # PICK
        return v / d + v
    return v / d - v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, covers="out"))
def k(out: DisjointSlice[np.complex64], x: In[np.complex64], d: np.float32) -> None:
    a = ss.shared.tile(64, np.complex64)
    t = thread.local_index()
    v = np.complex64(t.index)
    for s in range(3):
        a[t] = pick(v, t.index, d)
        ss.block.sync()  # SYNC
        v = a[63 - t.index]
        ss.block.sync()
    for i in thread.grid_stride(out):
        out[i] = v + x[i]
"""

# held, refused: (source, marker of the line the message names as the deciding branch/exit)
FOR_BREAK = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    it = 0
    for j in range(n):
        if x[t] < np.float32(j):  # EXIT
            break
        it += 1
    acc = np.float32(0)
    for s in range(it):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)

WHILE_TRUE_BREAK = (
    _CONTRACT
    + _SIG_N
    + """    t = cuda.threadIdx.x
    m = 0
    if n > 0:
        while True:
            m += 1
            if t < m * 8 or m >= 8:  # EXIT
                break
    acc = np.float32(0)
    for s in range(m):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)

THREAD_GUARD = (
    _CONTRACT
    + _SIG_ITER
    + """    t = thread.local_index()
    it = 0
    while it < maxit and x[t.index] > np.float32(it):  # EXIT
        it += 1
    acc = np.float32(0)
    for s in range(it):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)

NESTED_CARRY = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    total = 0
    for o in range(n):
        it = 0
        while it * (t.index + 1) < 64:  # EXIT
            it += 1
        total += it
    acc = np.float32(0)
    for s in range(total):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)

_CHAIN = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    m = n + 1
    if t.index % 3 == 0:  # EXIT
        v = m
    elif t.index % 3 == 1:
        v = m
    else:
        v = LAST
    acc = np.float32(0)
    for s in range(v):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)
CHAIN_SAME = _CHAIN.replace("LAST", "m")
CHAIN_DIFFERENT = _CHAIN.replace("LAST", "n")

NESTED_SAME = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    v = 0
    if t.index < 10:  # EXIT
        if n > 3:
            v = 1
        else:
            v = 1
    acc = np.float32(0)
    for s in range(v):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)

REFUSED = {
    "for-break": FOR_BREAK,
    "while-true-break": WHILE_TRUE_BREAK,
    "thread-guard": THREAD_GUARD,
    "nested-carry": NESTED_CARRY,
    "chain-different": CHAIN_DIFFERENT,
    "nested-same": NESTED_SAME,
}

UNBOUND_UNDER_UNIFORM = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    if n > 3:
        m = n
    acc = np.float32(0)
    for s in range(m):
        acc += ss.block.sum(np.float32(t.index))
"""
    + _TAIL
)

LOCAL_UNDER_UNIFORM = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    a = cuda.local.array(4, np.int32)
    if n > 2:
        a[1] = n
    v = a[1]
    acc = np.float32(0)
    for s in range(v):
        acc += ss.block.sum(np.float32(t.index))
"""
    + _TAIL
)

ACCEPTED = {
    "chain-same": CHAIN_SAME,
    "local-under-uniform": LOCAL_UNDER_UNIFORM,
    "unbound-under-uniform": UNBOUND_UNDER_UNIFORM,
}

MATCH = (
    _CONTRACT
    + _SIG_N
    + """    t = thread.local_index()
    v = 0
    match t.index % 3:
        case 0:
            v = n
        case _:
            v = n
    acc = np.float32(0)
    for s in range(v):
        acc += ss.block.sum(np.float32(s))
"""
    + _TAIL
)


def launch_args(name: str) -> tuple[object, ...]:
    """The arguments after grid 1, block 64 for the kernel ``name`` of UNSAFE_ACCEPTED."""
    out, x = np.zeros(64, np.float32), np.ones(64, np.float32)
    if name == "folded-guard":
        return (out, x, np.int32(1))
    return (out, x, np.int32(100), np.float32(0.1))
