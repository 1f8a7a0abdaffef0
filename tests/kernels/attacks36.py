r"""Attack round 36 (an outside helper): sim.check's collectives that some threads skip
(eb64f75: ``lowering/_coop_sim._Arrived``, ``_exchange_block``, ``_exchange_warp``,
``_arrived``), with a look at the race differential's ``race:dead``, the wrapping-form guard
of ``_compose.Kernel._verify`` (0016fad) and the half-precision truth tests.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), with the
generated race kernels' parameters (``tests.kernels.generated_races.SIGNATURE``), replayed by
``simtsafe.sim.check`` at grid 1, block 64 (tests/sim/test_attacks36_sim.py).

=============================================================================================
FINDING 1 (LOW: synthetic, two collectives on one line under a thread-dependent choice; fixed)
=============================================================================================

A collective's exchange and the barrier its threads meet at were keyed by the call's
(file, line) (``_coop_sim._site``). Two block collectives on one line::

    x = ss.block.sum(np.int64(1)) if cuda.threadIdx.x < 32 else ss.block.max(np.int64(1))

are two call sites on the GPU (each with its own scratch and barriers: warps 0 and 1 meet at
different barriers, and each reads a scratch half of which nobody wrote), but on the replay
they were one: one exchange array, one barrier site, all 64 threads arrive, no finding, and
the first thread past the barrier computed the result for everybody (the warp that called
``block.max`` got the sum). The same two calls on two lines are a ``barrier_divergence``.
Fixed: the site carries the instruction on the line (``frame.f_lasti``, as
``_tiles_sim._caller_site`` keys tiles), so the two calls are two barriers.

=============================================================================================
FINDING 2 (LOW: synthetic, half a warp at one warp collective and half at another; fixed)
=============================================================================================

``_exchange_warp`` met at ``_simrt.warp_sync(mask, site)``, which sim.check's runtime turns
into a ``syncwarp`` with the full mask; ``_warp_release`` compares the waiting lanes' ops
and masks, not their sites (plain ``syncwarp`` calls at two lines do meet on sm_70+). So
even lanes at ``ss.warp.sum`` and odd lanes at ``ss.warp.max`` (two lines, or one ternary)
were released together, each read its own exchange array whose other lanes were unwritten
(filled with the first arrived lane's value) and no ``warp_mask`` was reported --
docs/checker.md: "a warp collective ... whose mask names a lane that does not make the same
call ... waits elsewhere". Fixed with FINDING 4: the lanes meet at
``_simrt.warp_exchange(mask, api, site)``, an op named by the API whose lanes must be at one
call (``_sync._warp_release``, ``_warp.is_exchange``).

=============================================================================================
FINDING 4 (MEDIUM: a plausible warp-synchronous pattern in Tier-2 code; fixed)
=============================================================================================

docs/checker.md: "a shuffle or vote exchanges values but orders no memory, so lane A writing
shared memory and lane B reading it after only a shuffle is a race". ``ss.warp.sum/max/min/
reduce/scan/broadcast`` compile to ``shfl.sync`` only (``lowering/_coop``: no
``bar.warp.sync``), but the replay met their lanes at a ``syncwarp``, whose vector clocks are
joined (``_sync._warp_release``): a lane's write of a shared array before ``ss.warp.sum`` and
its neighbour's read after it were ordered, and sim.check reported nothing (``WARP_ORDERS``,
Tier 2: a raw ``cuda.shared.array`` in ``unsafe`` regions; also a Tier-1 tile read by the
race differential's replay of a kernel its static checks refuse, which the differential
counted as replayed clean -- a false refusal). Fixed: ``_simrt.warp_exchange`` (Numba's
simulator: a ``syncwarp`` as before) is a warp op that joins nothing; the exchange's own
slots are written and read as ``exch`` atomics, which never race. Twin: ``cuda.syncwarp()``
in place of the collective is clean.

=============================================================================================
FINDING 3 (LOW: a leak, only in replays that have a finding already; fixed)
=============================================================================================

``_once`` frees an exchange's memo when its ``parties``-th thread is done with it, and the
callers passed the block's (warp's) size; since eb64f75 the threads that skipped the
collective never call it, so the memo of every such exchange -- holding the recorded
exchange array and the result -- stayed in ``_coop_sim._MEMO`` for the life of the process
(the race and uniformity differentials replay thousands of kernels in one process; a
later test asserting ``not _MEMO`` failed after one of these). Fixed: ``_arrived`` counts
the written slots into ``place.parties`` and the collectives (and ``block_claim``) pass that.
Left: a straggler that reaches the same site's k-th exchange after a divergent release
(it waited at another barrier) counts the earlier episode's slots too.

=============================================================================================
FINDING 6 (LOW: a leak; pre-existing, seen in a full tests/sim run; fixed)
=============================================================================================

On Numba's simulator a collective whose computation raises (a complex value given to
``block.sum``: tests/sim/test_port21_sim.py's refusal without the compile worker) aborts the
launch at the first thread's exception; the others never call ``_once``, so the cell stayed
in ``_MEMO`` and ``test_tuple_reduce_sim.py::test_sim_check_replays_tuple_reductions``
(``assert not _coop_sim._MEMO``) failed after it in a full ``tests/sim`` run (main too).
Fixed: a raise frees the cell at once (every later thread computes and raises in turn).

=============================================================================================

By reading (not attacked with a kernel): the disk cache (``_diskcache``: the key holds a hash
of simtsafe's source, so an entry an older simtsafe wrote from Numba's own text is never
found; a loaded kernel is trusted, not re-verified, by design); ``kernel.unchecked`` compiles
inside ``simtsafe_typing`` whatever the signature; a text that starts with
``WRAPPING_MARK`` is taken as wrapped (``_irform``) -- only simtsafe writes that mark.
The race differential's ``race:dead`` (``CompiledAccesses.reads_at``): no counterexample
found; GVN merging a later read into an earlier one at another line needs no barrier
between them, and then a write racing the later read races the earlier one too (reported
at the earlier line, ``race:shared``) -- except where the replay orders what the GPU does
not, which FINDING 4 was (a warp collective: shuffles are not memory clobbers for LLVM, so
a load after ``ss.warp.sum`` can merge into one before it); store-to-load forwarding
removes a read at its line but the thread's own store still races (a write is never judged
dead). A stricter rule: dead only when the analysed IR has no shared read at the line *and*
no shared read of the same object at any line of the same barrier interval before it.

Half-precision truth tests and heap objects (``TRUTH_ACCEPTED``, ``HEAP_REFUSED``,
tests/ptx/test_attacks36_ptx.py): ``if h``, ``np.bool_(h)``, ``bool(bf16)``, ``while h`` compile
to ``and.b16 .., 32767`` (-0.0 false; NaN, subnormals true: the magnitude bits), ``not h``
to ``setp.eq.f32`` of the exact f32 conversion (the same truth); a list as an assignment
target is accepted; a set literal and a dict's ``get`` are refused with the heap message.
A starred target (``p, *q = t`` or ``[p, *q] = t``) gave Numba's raw
``UnsupportedBytecodeError`` (UNPACK_EX): FINDING 5 (LOW, a message), fixed: refused at
decoration (``_rewrite._Checker.generic_visit``, rule ``statement``) with the spelling that works.

Collectives some threads skip (``SKIPPED_REPORTED``, each reported with the kind and words
asserted): an early return before ``block.sum``; a thread-dependent trip count around
``block.max``; a collective in a helper after a return; a tuple-state ``block.reduce`` after
a return; ``block.scan`` and ``block.broadcast`` after a return; ``warp.sum`` in a loop of
thread-dependent trip count; a ``continue`` that skips the first trip's ``block.sum`` (the
first exchange pairs trips 0 and 1 of the two halves, the extra call of the others is
reported at the end). Correct kernels (``CORRECT``, no finding): a helper's collective
called from two branches on two lines (one call site in the helper: on the GPU one function's
barriers and scratch, as the replay has it), a collective in a uniform loop, a uniform
ternary of two collectives. Undefined argument: a shared tile element nobody wrote passed to
``block.sum`` is ``uninitialized``.
"""

from __future__ import annotations

from tests.kernels.generated_races import SIGNATURE

_HEAD = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k({SIGNATURE}) -> None:
    i = thread.index_1d()
"""

_HELPER = """
@ss.device
def red(v: np.int64) -> np.int64:
    return ss.block.sum(v)

"""

#: FINDING 1: two block collectives on one line, warps 0 and 1 taking one each. Expected:
#: barrier_divergence (was: no finding, the block.max warp given the sum).
TERNARY_SUM_MAX = (
    _HEAD
    + """    x = ss.block.sum(np.int64(1)) if cuda.threadIdx.x < 32 else ss.block.max(np.int64(1))
    out[i] = np.float32(x)
"""
)
#: FINDING 1's twin on one line: the same collective twice, a divergent pair of barriers.
TERNARY_SUM_SUM = TERNARY_SUM_MAX.replace("ss.block.max(", "ss.block.sum(")
#: FINDING 1's accepted twin: the choice is uniform (every thread takes the same call).
TERNARY_UNIFORM = TERNARY_SUM_MAX.replace("cuda.threadIdx.x < 32", "n > 0")

#: FINDING 2: even lanes at warp.sum, odd lanes at warp.max (two lines). Expected: warp_mask.
WARP_TWO_SITES = (
    _HEAD
    + """    if cuda.threadIdx.x % 2 == 0:
        x = ss.warp.sum(np.int64(1))
    else:
        x = ss.warp.max(np.int64(1))
    out[i] = np.float32(x)
"""
)
#: FINDING 2 on one line.
WARP_TERNARY = (
    _HEAD
    + """    x = ss.warp.sum(np.int64(1)) if cuda.threadIdx.x % 2 == 0 else ss.warp.max(np.int64(1))
    out[i] = np.float32(x)
"""
)

#: Held: threads skipping a collective are reported (kind, words in the message).
SKIPPED_REPORTED = {
    # an early return of warp 1 before block.sum
    "return-before-sum": (
        _HEAD
        + """    if cuda.threadIdx.x >= 32:
        return
    x = ss.block.sum(np.int64(1))
    out[i] = np.float32(x)
""",
        "barrier_divergence",
        "exited (line",
    ),
    # a thread-dependent trip count around block.max
    "trip-count-max": (
        _HEAD
        + """    x = n
    for q in range(cuda.threadIdx.x % 2 + 1):
        x = x + ss.block.max(np.int64(q))
    out[i] = np.float32(x)
""",
        "barrier_divergence",
        "exited (line",
    ),
    # the collective in a helper, after a return of half the block
    "helper-after-return": (
        _HELPER
        + _HEAD
        + """    if cuda.threadIdx.x % 2 == 1:
        return
    out[i] = np.float32(red(np.int64(1)))
""",
        "barrier_divergence",
        "exited (line",
    ),
    # a tuple-state reduce after a return
    "tuple-reduce-after-return": (
        "from tests.kernels.generated_race_helpers import h_pair\n\n"
        + _HEAD
        + """    if cuda.threadIdx.x < 16:
        return
    p0, p1 = ss.block.reduce((np.int64(n), np.int64(1)), h_pair)
    out[i] = np.float32(p0 + p1)
""",
        "barrier_divergence",
        "exited (line",
    ),
    # a scan after a return
    "scan-after-return": (
        _HEAD
        + """    if cuda.threadIdx.x == 5:
        return
    out[i] = np.float32(ss.block.scan(np.int64(1)))
""",
        "barrier_divergence",
        "exited (line",
    ),
    # a broadcast whose source (thread 0) left
    "broadcast-source-left": (
        _HEAD
        + """    if cuda.threadIdx.x == 0:
        return
    out[i] = np.float32(ss.block.broadcast(np.int64(7)))
""",
        "barrier_divergence",
        "exited (line",
    ),
    # warp.sum in a loop of thread-dependent trip count
    "warp-loop-trips": (
        _HEAD
        + """    x = n
    for q in range(cuda.threadIdx.x % 3):
        x = x + ss.warp.sum(np.int64(q))
    out[i] = np.float32(x)
""",
        "warp_mask",
        "has already exited",
    ),
    # warp 1 skips trip 0's block.sum: the first exchange pairs trip 0 of warp 0 with trip 1
    # of warp 1 (one site, one barrier); warp 0's second call is left alone at the end
    "continue-skips-first-trip": (
        _HEAD
        + """    x = n
    for q in range(2):
        if q == 0 and cuda.threadIdx.x >= 32:
            continue
        x = x + ss.block.sum(np.int64(q))
    out[i] = np.float32(x)
""",
        "barrier_divergence",
        "exited (line",
    ),
}

#: Held: correct kernels, no finding.
CORRECT = {
    # a helper's collective from two branches on two lines: one call site (the helper's)
    "helper-two-branches": (
        _HELPER
        + _HEAD
        + """    if cuda.threadIdx.x < 32:
        x = red(np.int64(1))
    else:
        x = red(np.int64(2))
    out[i] = np.float32(x)
"""
    ),
    # a collective in a uniform loop
    "uniform-loop": (
        _HEAD
        + """    x = n
    for q in range(n + 2):
        x = x + ss.block.sum(np.int64(q))
    out[i] = np.float32(x)
"""
    ),
    "uniform-ternary": TERNARY_UNIFORM,
}

#: Held: a tile element nobody wrote passed to block.sum: uninitialized.
UNDEFINED_ARGUMENT = (
    _HEAD
    + """    T = ss.shared.tile(64, np.int32)
    ss.block.sync()
    x = ss.block.sum(T[(cuda.threadIdx.x + 1) % 64])
    out[i] = np.float32(x)
"""
)

#: FINDING 4: a lane writes its element of a raw shared array, the warp meets at warp.sum (shuffles
#: on the GPU: no memory order), the lane reads its neighbour's. Expected: race.
WARP_ORDERS = (
    _HEAD
    + """    with ss.unsafe("SAFETY: each thread writes its own element of s"):
        s = cuda.shared.array(64, np.int32)
        s[cuda.threadIdx.x] = np.int32(cuda.threadIdx.x)
    w = ss.warp.sum(np.int64(1))
    with ss.unsafe("SAFETY: the neighbour's element, written before the collective"):
        x = s[cuda.threadIdx.x ^ 1]
    out[i] = np.float32(x + w)
"""
)
#: FINDING 4's twin: a syncwarp orders the lanes' accesses. Expected: clean.
WARP_ORDERS_SYNCWARP = WARP_ORDERS.replace(
    "    w = ss.warp.sum(np.int64(1))\n",
    '    with ss.unsafe("SAFETY: every lane of the warp meets"):\n'
    "        cuda.syncwarp()\n"
    "    w = 1\n",
)


# ----------------------------------------------------------------------------- compile side

_BODY_HEAD = (
    _HEAD
    + """    if not i.in_bounds(out):
        return
"""
)

#: Accepted; the PTX tests the magnitude bits (``and.b16 %rs, %rs, 32767``) or, for
#: ``not h``, compares the exact f32 conversion with 0 (``setp.eq.f32``): the same truth.
TRUTH_ACCEPTED = {
    "if-h": (
        """    h = np.float16(a[cuda.threadIdx.x])
    if h:
        out[i] = np.float32(1)
""",
        "and.b16",
    ),
    "np-bool-h": (
        "    out[i] = np.float32(np.bool_(np.float16(a[cuda.threadIdx.x])))\n",
        "and.b16",
    ),
    "bool-bf16": ("    out[i] = np.float32(bool(ss.bfloat16(a[cuda.threadIdx.x])))\n", "and.b16"),
    "while-h": (
        """    h = np.float16(a[cuda.threadIdx.x])
    while h:
        h = np.float16(0)
    out[i] = np.float32(h)
""",
        "and.b16",
    ),
    "not-h": ("    out[i] = np.float32(not np.float16(a[cuda.threadIdx.x]))\n", "setp.eq.f32"),
    # a list as an assignment target: no list is built
    "list-target": (
        """    [p, q] = (a[cuda.threadIdx.x], n)
    out[i] = np.float32(p + q)
""",
        "",
    ),
}

#: Refused at decoration with the heap-object message.
HEAP_REFUSED = {
    "set-literal": "    out[i] = np.float32(a[cuda.threadIdx.x] in {1, 2})\n",
    "dict-get": "    out[i] = np.float32({1: 2}.get(a[cuda.threadIdx.x], 0))\n",
}
HEAP_MESSAGE = "a list, dict or set needs Numba's runtime, which CUDA kernels do not have"

#: FINDING 5: a starred target: Numba's raw UnsupportedBytecodeError (UNPACK_EX).
STARRED_TARGETS = {
    "tuple-star": "    p, *q = (a[cuda.threadIdx.x], n, n)\n    out[i] = np.float32(p)\n",
    "list-star": "    [p, *q] = (a[cuda.threadIdx.x], n, n)\n    out[i] = np.float32(p)\n",
}


def body_kernel(body: str) -> str:
    """A kernel of the generated races' parameters whose thread past ``out`` returns."""
    return _BODY_HEAD + body
