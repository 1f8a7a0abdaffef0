"""Kernels of attack round 8 (tensor cores, asynchronous tile fills), as module sources for
``tests.kernels.load_kernel_module``. Each refused kernel marks the line of its refusal with
``# BAD``; each has an accepted twin that does the same work safely.

Unless said otherwise a kernel is 1D, one block of 64 threads: ``k(out, a, n)`` with a
float32 output and input of 64 (or more) elements and an int64 ``n`` (0 in the tests).
"""

from __future__ import annotations

__all__ = [
    "AUG_ASYNC",
    "AUG_ASYNC_TWIN",
    "AUG_TRANSPOSED",
    "CHAINED_ASYNC",
    "CHAINED_ASYNC_TWIN",
    "CHAINED_BARRIER",
    "CHAINED_BARRIER_TWIN",
    "CHAINED_THREAD_DEPENDENT",
    "DEAD_AFTER_IF_ELSE",
    "DEAD_AFTER_RAISE",
    "DEAD_AFTER_RETURN",
    "DEAD_TWIN",
    "FOR_TARGET",
    "FOR_TARGET_TWIN",
    "PARAM_WITNESS",
    "PARAM_WITNESS_TWIN",
]


def _k(body: str, helpers: str = "") -> str:
    return (
        helpers + "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))\n"
        "def k(out: DisjointSlice[np.float32], a: In[np.float32], n: np.int64) -> None:\n"
        "    w = thread.index_1d()\n"
        "    t = ss.shared.tile(64, np.float32)\n"
        + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    )


_FILL = "for v in thread.block_stride(t):\n    t[v] = a[v.index]\n"

# 1. A barrier in a later operand of a chained comparison: `n < 0 < block.sum(..)` runs the
#    block.sum (and its barrier) only when n < 0 (a uniform branch: the compiled form is
#    content). The phase analysis counted the barrier as crossed on every path, so the read
#    of t[tid + 1] raced with the fill by thread tid + 1 (sim.check: race on shared[1]).
CHAINED_BARRIER = _k(
    _FILL + "c = n < 0 < ss.block.sum(np.float32(1.0))\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64] + np.float32(c)  # BAD\n"
)
CHAINED_BARRIER_TWIN = _k(
    _FILL + "s = ss.block.sum(np.float32(1.0))\n"
    "c = n < 0 < s\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64] + np.float32(c)\n"
)
# The same route for the wait of an asynchronous fill: the wait_all runs only when n < 0,
# so the read after the barrier may read the tile before its copy landed.
CHAINED_ASYNC = _k(
    "ss.shared.fill_async(t, a, 0)\n"
    "ss.shared.commit_group()\n"
    "c = n < 0 < (ss.shared.wait_all() is None)\n"
    "ss.block.sync()\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64] + np.float32(c)  # BAD\n"
)
CHAINED_ASYNC_TWIN = CHAINED_ASYNC.replace(
    "c = n < 0 < (ss.shared.wait_all() is None)", "c = (ss.shared.wait_all() is None) < n < 0"
).replace("  # BAD", "")
# The source-level uniformity analysis (the simulator's fallback verdict) read a chained
# comparison's operands as all evaluated; the later one runs only for some threads here.
CHAINED_THREAD_DEPENDENT = _k(
    "c = cuda.threadIdx.x < 5 < ss.block.sum(np.float32(1.0))  # BAD\nout[w] = np.float32(c)\n"
)

# 2. A barrier in code that never runs: after `return` / `raise` (or an `if` whose branches
#    both end so) Python drops the statements, but the phase analysis walked them with the
#    returning thread's state, so the dead barrier ended the interval of thread 0's fill and
#    the other threads' read of t[0] raced with it (sim.check: a race on shared[0]).
_THREAD0_FILL = (
    "if cuda.threadIdx.x == 0:\n"
    "    for v in thread.block_stride(t):\n"
    "        t[v] = a[v.index]\n"
    "    {end}\n"
    "    ss.block.sync()\n"
    "out[w] = t[0]  # BAD\n"
)
DEAD_AFTER_RETURN = _k(_THREAD0_FILL.format(end="return"))
DEAD_AFTER_RAISE = _k(_THREAD0_FILL.format(end="raise ValueError('thread 0 stops here')"))
DEAD_AFTER_IF_ELSE = _k(
    _THREAD0_FILL.format(end="if n > 0:\n        return\n    else:\n        return")
)
DEAD_TWIN = _k(
    "if cuda.threadIdx.x == 0:\n"
    "    for v in thread.block_stride(t):\n"
    "        t[v] = a[v.index]\n"
    "ss.block.sync()\n"
    "out[w] = t[0]\n"
)

# 3. `t[lw] += block.sum(x)`: Python reads t[lw] BEFORE it evaluates the value (and the
#    barrier in it), then stores. The phase analysis took the value first, so the read of
#    the thread's "own" element fell after the barrier; but an asynchronous (or transposed)
#    fill gives element tid to thread tid // 4, whose copy may not have landed (sim.check:
#    the read of shared[1] races with thread 0's copy landing at its wait).
AUG_ASYNC = _k(
    "ss.shared.fill_async(t, a, 0)\n"
    "ss.shared.commit_group()\n"
    "ss.shared.wait_all()\n"
    "lw = thread.local_index()\n"
    "t[lw] += ss.block.sum(np.float32(1.0))  # BAD\n"
    "ss.block.sync()\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64]\n"
)
AUG_ASYNC_TWIN = AUG_ASYNC.replace(
    "    ss.shared.wait_all()\n", "    ss.shared.wait_all()\n    ss.block.sync()\n"
).replace("  # BAD", "")
AUG_TRANSPOSED = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))\n"
    "def k(out: DisjointSlice[np.float32], a: In2D[np.float32]) -> None:\n"
    "    w = thread.index_1d()\n"
    "    t = ss.shared.tile((8, 8), np.float32)\n"
    "    ss.shared.fill_transposed(t, a, (0, 0))\n"
    "    lw = thread.local_index_2d()\n"
    "    t[lw] += ss.block.sum(np.float32(1.0))  # BAD\n"
    "    ss.block.sync()\n"
    "    out[w] = t[cuda.threadIdx.x % 8, cuda.threadIdx.x // 8]\n"
)

# 4. A `for` target that is an element: `for t[lw] in range(3)` stores into t[lw] at every
#    iteration. The phase analysis never walked a loop's target, so this write in the read
#    phase went unseen (sim.check: the write of t[1] races with thread 0's read of it).
FOR_TARGET = _k(
    _FILL + "ss.block.sync()\n"
    "lw = thread.local_index()\n"
    "for t[lw] in range(3):\n"
    "    pass\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64]  # BAD\n"
)
FOR_TARGET_TWIN = _k(
    "lw = thread.local_index()\n"
    "for t[lw] in range(3):\n"
    "    pass\n"
    "ss.block.sync()\n"
    "out[w] = t[(cuda.threadIdx.x + 1) % 64]\n"
)

# 5. A parameter that shares its name with a block-local witness bound later: `t[n]` reads
#    the element the int parameter n names (another thread's) in the fill phase, but the
#    phase analysis took `n` for the witness bound below it (Numba types each binding
#    apart) and counted the read as one of the thread's own element (sim.check: a race on
#    shared[5] with n = 5).
PARAM_WITNESS = _k(_FILL + "x = t[n]  # BAD\nn = thread.local_index()\nout[w] = x + t[n]\n")
PARAM_WITNESS_TWIN = _k(
    _FILL + "ss.block.sync()\nx = t[n]\nn = thread.local_index()\nout[w] = x + t[n]\n"
)
