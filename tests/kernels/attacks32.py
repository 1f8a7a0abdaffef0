r"""Attack round 32 (an outside helper): today's two relaxations.

1. 32e02e2 ``verify/_feasible._fold_constant_joins`` / ``_Joins``: after the switch-default
   pruning, a two-way ``br`` on an ``i1`` that is one constant over the edges still feasible (a
   phi of ``i1`` constants, its incoming pairs read by ``_INCOMING_RE`` from the phi's text,
   kept only from reachable blocks whose successors still hold the phi's block; or ``xor`` of
   one with ``true``) takes one edge, to a fixpoint. What it is for: an inlined ``@ss.device``
   helper that indexes a tuple returns its ``IndexError`` status through ``phi i1 [ true,
   %switch.else.i ], [ false, %switch.end.i ]``; with the default dropped, the caller's ``ret``
   on it goes too, so ``pick(t, k)`` returning ``t[k & 3]`` under ``if cuda.laneid < n:`` before
   ``warp.sum`` is accepted.
2. 0cd9b54 (msgs20) ``host/_tilecover.py``: ``covers`` counts what ``mma.out_tile`` /
   ``wgmma.out_tile`` own -- ``(grid.y*BM, grid.x*BN)`` with a whole warp (warpgroup) for every
   rectangle (64 rows), else the corner block ``(0, 0)``'s whole warps own, nothing with
   ``grid.z > 1`` or sizes the decorator cannot read (``decoration/_rewrite._note_out_tile``).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness (/tmp/a32 in the session): ``tryk(name, src)`` = ``simtsafe.check_kernel`` of the
loaded kernel with ``lowering._irform._normalize`` wrapped to keep the analysed IR; covers
launches through ``prepare`` under ``NUMBA_ENABLE_CUDASIM=1`` on NaN-filled outputs; PTX read
with NVVM for sm_90. No GPU used. Nothing in simtsafe/ changed.

=============================================================================================
FINDINGS: none reachable from kernel source. One LOW latent parser hazard (below), shown on
synthetic IR only.
=============================================================================================

FINDING 1 (LOW, latent: no Python source found that reaches it). ``_Joins.constant`` reads a
phi's incoming pairs with its own ``_INCOMING_RE`` = ``\[\s*([^,\]]+?)\s*,\s*(%[^\]\s]+)\s*\]``
instead of the form's ``Instr.incoming`` (parsed by ``_irform._PHI_RE``, which spells a block
name as LLVM does: ``_LOCAL``). A pair the regex does not match is not "an edge no execution
takes", yet it is left out exactly like one, so the phi looks constant over the pairs left and
the branch loses an edge that executions take (the unsound direction):

* ``joins-quoted-block-space`` / ``joins-quoted-block-bracket``: a predecessor named
  ``%"a b"`` or ``%"a]"`` (LLVM quotes such names): ``%[^\]\s]+`` stops at the space or the
  bracket, the pair's block ``%"a`` is not reachable, the pair is dropped;
* ``joins-constexpr-incoming``: an incoming value that is a constant expression with commas
  (``trunc (i64 ptrtoint (ptr getelementptr (i8, ptr @g, i64 1) to i64) to i1)``): no match at
  that ``[``, the pair is skipped;
* ``joins-unnamed-entry``: an entry block without a label -- ``_irform._parse`` names it
  ``%entry``, LLVM's phis name it ``%0`` -- the pair from the entry is dropped.

In each, ``feasible_successors`` gives ``%j -> (%y,)`` where ``%a -> %j`` carries ``true`` (or
an unknown value): every analysis of ``verify/_divergence`` then sees ``%x`` as dead. Why it is
latent: Numba and simtsafe name every block ``B<n>``, ``B<n>.endif``, ``switch.<i>``,
``ss.probe.*`` and the inliner adds ``.i`` / ``<mangled callee>.exit`` (mangled names are
``[A-Za-z0-9_]``): no name is quoted with a space or a bracket; the root's entry is always
``entry:``; and LLVM 22 (llvmlite 0.50) has no ``icmp`` constant expression, so an ``i1``
constant expression does not reach a phi (instcombine keeps ``icmp ne (and (ptrtoint (gep
@g, 1)), 1), 0`` an instruction, checked). ``value_range``'s ``_PHI_VALUE_RE`` (and
``_irform._PHI_RE``, hence ``Instr.incoming``) skip a constant-expression incoming value the
same way -- a phi's range then misses a value -- equally unreached (an integer constant
expression needs a global's address as an integer; no Tier-1 spelling was found that
puts one in a phi). Fix
direction: split the phi's operands with ``split_operands`` (nesting-aware) and return None
when a pair is not a plain constant or local, or when fewer pairs parse than there are; read
block names with ``_LOCAL``; name an unlabeled entry by its slot number. tests/ptx pins the
four as strict xfails asserting both edges stay.

=============================================================================================
HELD (HELD_KERNELS, refused with the fragment given; RANGE_HELD through a helper)
=============================================================================================

The fold is sound given its inputs: an edge leaves the graph only when (a) the parse gives a
``br i1 true|false`` one target, (b) ``_targets`` proves a switch default unreachable
(``value_range`` or ``_Counted.below``), or (c) an earlier round of the fold dropped it; a phi
is a constant only over predecessors still reachable whose successors still hold it; ``seen``
gives None on any phi met twice (a loop's cycle, a diamond of phis), ``select``/``load``/
``icmp``/parameters are None, ``xor`` only as ``xor i1 %x, true``. InstCombine already replaces
a phi's operand on the dead edge of a ``br i1 true|false`` by poison, so (a) adds nothing new;
only the switch defaults (b) make new constants, and those are what round 26-30 attacked. So
the search was: make Numba's status phi a constant while some thread raises.

* an explicit ``raise`` in the helper under a thread-dependent (or a uniform, but inside the
  lane branch) condition beside the masked index, ``raise IndexError(...)`` spelled by hand,
  ``assert`` (active: its ``AssertionError`` is an exit), an inner helper that raises, two
  calls of which one is unmasked, an unmasked index after a loop that returns early, a
  ``uint8`` mask that keeps 8 values of a 4-tuple, a negative offset past ``-4``, a tuple of
  tuples indexed at 4 positions of 2, a helper's returned 2-tuple indexed at ``x & 3``: the
  raise's ``true`` comes from a reachable block -- refused ("`warp.sum` needs every thread of
  the warp to reach it");
* every unsafe range-loop twin of rounds 29 and 30 (``range(1, 5)``, ``range(3, -6, -1)``,
  ``4 - q``, ``min(q, 4)``, ``np.int32(q + 2**31)``, ``carried j = q + 2``, ``range(m, 4)``,
  ``range(int(a[i]) & 7)``...) with the tuple index moved into ``get(t, q)``: 47 shapes, all
  refused (13 pinned in RANGE_HELD);
* a helper's own loop ``for q in range(k)`` or ``range(min(k, 5))`` over a 4-tuple: refused;
* ``raise StopIteration()`` in the helper (another status code): refused, also called in a
  range loop; ``try``/``except`` around the helper (would catch the status) and the bare
  ``raise StopIteration``: refused at decoration; recursion: refused at decoration (a raw value), opaque anyway (an ``i32``
  status, never folded);
* infinite loops under the lane branch (the pruned graph could leave a loop without an exit):
  ``while True: pass`` refused; ``while True: acc += pick(...)`` does not compile (Numba's
  liveness error, ``SS-internal``).

=============================================================================================
ACCEPTED (ACCEPTED, sound): the status phi is one constant because every position is proven
=============================================================================================

``t[k & 3]``, ``t[(k & 7) - 4]``, ``t[min(k & 7, 3)]``, ``t[np.int32(k) & np.int32(3)]``, a
range(4) loop of the caller or of the helper (``range(min(k, 4))``), a ``while`` counter masked
``q & 3``, ``enumerate(t)`` with ``t[(j + k) & 3]``, a tuple of tuples at ``[k & 1][k & 3]``, a
helper's returned 2-tuple at ``x & 1``, two calls, one level of nesting, an early ``return
t[0]``, integer and float division by a thread-dependent value (numba-cuda's error model: no
``ZeroDivisionError`` exit), a helper's ``bool`` result negated, a ``break`` after
the call, and the 22 round 30 range-loop bodies with the index in the helper (6 pinned in
RANGE_ACCEPTED).
Each compiles for sm_90 with one ``ret`` in the kernel, after the last ``shfl.sync`` of the
warp sum (NVVM drops the ``IndexError`` default too: no early exit in the PTX). On the
simulator, ``ss.sim.check`` replays FOLD_SIM clean (n = 0, 5, 32: lanes on both sides of the
branch) and the launch gives the Python reference's warp sums.

=============================================================================================
covers of tensor-core tiles: HELD
=============================================================================================

The capacity was replayed element by element on the simulator (NaN-filled outputs, each
kernel storing every ``(mi, ni)`` of its warp's rectangle / its warpgroup's accumulator):
``mma.out_tile`` 16x16/16x16, 32x32/16x16, 32x32/32x8, 64x32/16x32 with blocks of 31, 32, 33,
64, 96, 100, 128 threads and 2D blocks ``(16, 2)``, ``(16, 4)``, ``(32, 2)``, ``(32, 3)``,
``(16, 8)``, ``(8, 2, 2)``, ``(4, 4, 8)``; ``wgmma.out_tile`` 64x64, 128x64, 192x128 with 128,
192, 256, 384, 400 threads and ``(64, 2)``, ``(32, 4)``, ``(32, 8)``, ``(96, 4)``; grids
``(1, 1)``, ``(2, 1)``, ``(1, 2)``, ``(3, 2)``; shapes exact, one short, one long, ragged
(``bn - 1``, ``bm - 1``), one band, one rectangle, ``(1, 1)``; ``domain=3`` kernels (2D output,
``grid.z`` 1 and 2, blocks with ``z = 2``) and ``domain=1`` ones. 1095 launches (661 run, 434
refused with ``CoverageError``; 134 more stopped by ``DomainMismatch``): every launch that ran
left no NaN. tests/sim replays the capacity itself at its exact extent and one row / column
past it (refused) for 7 tile and block pairs, and pins 15 odd-block launches. No launch path computes another capacity: ``_capacity``
reads ``kernel._freeze().analysis.out_tiles``, the sizes of the frozen scope (a module constant
rebound before the first compile counts as rebound; a constant defined below the kernel is
read at the freeze), ``domain=2`` forbids ``grid.z``/``block.z`` > 1 at ``prepare``, and the
device's ``linear_tid`` numbers warps as the capacity does. The routes to a second owner are
refused at decoration (COVERS_ROUTES: two tiles of one output in one body or two branches,
``mma`` and ``wgmma`` of one output, ``mma`` and ``tile_2d``, a witness beside the tile, an
alias before or after, a rebinding, a name swap, ``out.unchecked`` in a region, the output to
a helper, a tile in a helper, ``out=`` by keyword) or at compile (a tile of an ``In2D``, sizes
by ``*SIZES``). Size spellings: keywords in any order, ``from simtsafe.mma import out_tile``, a
closure's constant are recorded as the typing takes them; an ``int`` subclass or numpy integer
constant is not a literal to Numba's typing (``maybe_literal`` keys by exact type): refused at
compile.

=============================================================================================
FALSE REFUSALS (FALSE_REFUSALS, COVERS_FALSE_REFUSALS: safe, refused)
=============================================================================================

* ``nested-two-calls``: ``pick(t, k)`` = ``inner(t, k & 3) + inner(t, (k >> 2) & 3)`` under the
  lane branch: ``pick``'s own status is ``phi i32 [ %inner1.status, ... ], [ %inner2.status,
  ... ], [ 0, ... ]`` and the caller branches on ``icmp eq i32 %s, 0``: ``_Joins`` reads only
  ``i1`` phis, so nothing folds (one inner call or the same helper at the top level:
  accepted);
* ``inner-in-loop``: ``pick`` sums ``inner(t, q)`` over ``range(4)``: refused, and the message
  blames "a loop that threads leave at different iterations (the exit ... in helper pick)";
* covers of ``mma.out_tile(c, bm, bm, 16, 16)`` with a local ``bm = 32`` or a size ``16 * 2``:
  the typing takes both (literals), the decorator reads neither, covers counts nothing and every
  launch is refused ("whose sizes are not int literals or module constants the decorator can
  read" -- the page says so; the fix is a module constant).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ACCEPTED",
    "COVERS_FALSE_REFUSALS",
    "COVERS_LAUNCHES",
    "COVERS_ROUTES",
    "FALSE_REFUSALS",
    "FINDINGS",
    "FOLD_SIM",
    "HELD_KERNELS",
    "JOIN_CONTROLS",
    "RANGE_ACCEPTED",
    "RANGE_HELD",
    "helper_kernel",
    "helperize",
    "mma_fill",
    "wgmma_fill",
]

NOT_UNIFORM = "`warp.sum` needs every thread of the warp to reach it"
NOT_UNIFORM_BLOCK = "`block.sum` needs every thread of the block to reach it"

_BASE = """
HELPERS

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(y: DisjointSlice[np.float32, PerWarp], a: In[np.float32], n: np.int64, m: np.int64) -> None:
    i = thread.index_1d()
    acc = np.float32(0)
    t = ss.vec.load(a, i.index, 4)
    x = i.index
    if cuda.laneid < n:
BODY
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


def helper_kernel(helpers: str, body: str) -> str:
    """``helpers`` beside a kernel that runs ``body`` (lines separated by ``\\n``) under the
    lane-dependent ``if cuda.laneid < n:`` before a warp sum (``t`` a 4-tuple, ``x`` the
    thread's index, ``m`` a uniform scalar)."""
    lines = "\n".join("        " + line for line in body.split("\n"))
    return _BASE.replace("HELPERS", helpers.strip("\n")).replace("BODY", lines)


def helperize(body: str) -> str:
    """``t[EXPR]`` -> ``get(t, EXPR)`` (attacks29's ``get`` helper) in a loop body."""
    out, i = "", 0
    while i < len(body):
        if body.startswith("t[", i) and (i == 0 or not body[i - 1].isalnum()):
            depth, j = 0, i + 1
            while True:
                depth += {"[": 1, "]": -1}.get(body[j], 0)
                if depth == 0:
                    break
                j += 1
            out += f"get(t, {body[i + 2 : j]})"
            i = j + 1
        else:
            out += body[i]
            i += 1
    return out


_PICK = """
@ss.device
def pick(t, k):
    return INDEX
"""


def _pick(index: str) -> str:
    return _PICK.replace("INDEX", index)


_GET = """
@ss.device
def pick(t, k):
    return t[k]
"""

_INNER = """
@ss.device
def inner(t, k):
    return t[k]

"""

# =============================================================================================
# FINDINGS: synthetic IR (the parser hazard of _Joins; not reached from kernel source)
# =============================================================================================

_JOIN_IR = """define void @k(i1 %c) {
ENTRY  br i1 %c, label PRED, label %b

LABEL:
  br label %j

b:
  br label %j

j:
  %r = phi i1 [ VALUE, PRED ], [ false, %b ]
  br i1 %r, label %x, label %y

x:
  ret void

y:
  ret void
}
"""


def _join_ir(
    pred: str = "%a", label: str = "a", value: str = "true", entry: str = "entry:\n"
) -> str:
    return (
        _JOIN_IR.replace("ENTRY", entry)
        .replace("PRED", pred)
        .replace("LABEL", label)
        .replace("VALUE", value)
    )


#: FINDING 1: ``%a -> %j`` is taken (``%c`` true) and carries ``true`` (or an unknown value),
#: yet ``feasible_successors`` drops ``%j -> %x``.
FINDINGS: dict[str, str] = {
    "joins-quoted-block-space": _join_ir('%"a b"', '"a b"'),
    "joins-quoted-block-bracket": _join_ir('%"a]"', '"a]"'),
    "joins-constexpr-incoming": _join_ir(
        value="trunc (i64 ptrtoint (ptr getelementptr (i8, ptr @g, i64 1) to i64) to i1)"
    ),
    # no label: LLVM numbers the entry %0; _irform._parse names it %entry
    "joins-unnamed-entry": _join_ir("%0", "a", entry=""),
}

#: Sound synthetic shapes: name -> (IR, the successors ``feasible_successors`` must give %j).
JOIN_CONTROLS: dict[str, tuple[str, tuple[str, ...]]] = {
    # both edges feasible, two constants: no fold
    "plain": (_join_ir(), ("%x", "%y")),
    # a quoted name without a space or a bracket parses (the form's own spelling)
    "quoted-comma": (_join_ir('%"a,b"', '"a,b"'), ("%x", "%y")),
    # the entry goes to %b only (a constant branch): %a is dead, the phi is false over %b
    "dead-pred": (
        _join_ir().replace("br i1 %c, label %a, label %b", "br i1 false, label %a, label %b"),
        ("%y",),
    ),
    # a non-constant incoming value: no fold
    "value-unknown": (_join_ir(value="%c"), ("%x", "%y")),
    # a cycle: the phi is its own incoming value on the back edge
    "loop-cycle": (
        """define void @k(i1 %c) {
entry:
  br label %h

h:
  %p = phi i1 [ false, %entry ], [ %q, %h ]
  %q = xor i1 %p, true
  br i1 %p, label %x, label %h

x:
  ret void
}
""",
        (),
    ),
}

# =============================================================================================
# HELD: unsafe, refused (source, message fragment)
# =============================================================================================

HELD_KERNELS: dict[str, tuple[str, str]] = {
    "raise-under-thread-condition": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    if k > 40:
        raise ValueError("x")
    return t[k & 3]
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "raise-under-uniform-condition": (
        helper_kernel(
            """
@ss.device
def pick(t, k, m):
    if m > 40:
        raise ValueError("x")
    return t[k & 3]
""",
            "acc += pick(t, x, m)",
        ),
        NOT_UNIFORM,
    ),
    "index-error-by-hand": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    if k > 40:
        raise IndexError("tuple index out of range")
    return t[k & 3]
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "assert-beside-index": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    assert k < 40
    return t[k & 3]
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "inner-helper-raises": (
        helper_kernel(
            """
@ss.device
def inner(t, k):
    if k > 10:
        raise ValueError()
    return t[k & 3]

@ss.device
def pick(t, k):
    return inner(t, k)
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "nested-one-unmasked": (
        helper_kernel(
            _INNER
            + """
@ss.device
def pick(t, k):
    return inner(t, k & 3) + inner(t, (k >> 2) & 7)
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "two-calls-one-unmasked": (
        helper_kernel(_GET, "acc += pick(t, x & 3)\nacc += pick(t, x & 4)"),
        NOT_UNIFORM,
    ),
    "caller-loop-plus-1": (
        helper_kernel(_GET, "for q in range(4):\n    acc += pick(t, q + 1)"),
        NOT_UNIFORM,
    ),
    "helper-loop-to-k": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    s = np.float32(0)
    for q in range(k):
        s += t[q]
    return s
""",
            "acc += pick(t, x & 7)",
        ),
        NOT_UNIFORM,
    ),
    "helper-loop-min-5": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    s = np.float32(0)
    for q in range(min(k, 5)):
        s += t[q]
    return s
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "unmasked-after-early-return-loop": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    for q in range(4):
        if q == k:
            return t[q]
    return t[k]
""",
            "acc += pick(t, x & 7)",
        ),
        NOT_UNIFORM,
    ),
    "negative-past-minus-4": (
        helper_kernel(_pick("t[(k & 7) - 5]"), "acc += pick(t, x)"),
        NOT_UNIFORM,
    ),
    "uint8-mask-7": (
        helper_kernel(_pick("t[np.uint8(k) & np.uint8(7)]"), "acc += pick(t, x)"),
        NOT_UNIFORM,
    ),
    "tuple-of-tuples-outer-3": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    u = (t, t)
    return u[k & 3][k & 3]
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "returned-pair-at-3": (
        helper_kernel(_pick("(t[k & 3], t[(k + 1) & 3])"), "p = pick(t, x)\nacc += p[x & 3]"),
        NOT_UNIFORM,
    ),
    "stop-iteration-in-loop": (
        helper_kernel(
            """
@ss.device
def pick(t, k):
    if k > 40:
        raise StopIteration()
    return t[k & 3]
""",
            "for q in range(4):\n    acc += pick(t, x + q)",
        ),
        NOT_UNIFORM,
    ),
    "infinite-loop-under-lane-branch": (
        helper_kernel("", "while True:\n    pass"),
        NOT_UNIFORM,
    ),
}

#: rounds 29/30's unsafe range-loop bodies with the index moved into ``get(t, q)``, under
#: attacks29's ``if a[i] > 0.5:`` before ``block.sum`` (tests build them with
#: ``attacks29.loop_kernel(helperize(body))``)
RANGE_HELD: dict[str, str] = {
    "range-1-5": "for q in range(1, 5):\n    acc += t[q]",
    "range-3-down-to-minus-5": "for q in range(3, -6, -1):\n    acc += t[q]",
    "range-0-5-2": "for q in range(0, 5, 2):\n    acc += t[q]",
    "four-minus-q": "for q in range(4):\n    acc += t[4 - q]",
    "three-minus-q-range-9": "for q in range(9):\n    acc += t[3 - q]",
    "min-q-4": "for q in range(6):\n    acc += t[min(q, 4)]",
    "range-int8-5": "for q in range(np.int8(5)):\n    acc += t[q]",
    "index-int32-wrapped": "for q in range(4):\n    acc += t[np.int32(q + 2**31)]",
    "carried-plus-2": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q + 2",
    "range-mask-7": "for q in range(int(a[i]) & 7):\n    acc += t[q]",
    "nested-sum-4-steps": "for p in range(0, 4, 2):\n    for q in range(3):\n        acc += t[p + q]",
    "range-param-start": "for q in range(m, 4):\n    acc += t[q]",
    "if-below-4-negative-start": "for q in range(-8, 8):\n    if q < 4:\n        acc += t[q]",
}

#: and their safe twins, accepted through the helper as in the kernel
RANGE_ACCEPTED: dict[str, str] = {
    "range-1-4": "for q in range(1, 4):\n    acc += t[q]",
    "three-minus-q": "for q in range(4):\n    acc += t[3 - q]",
    "min-q-3": "for q in range(6):\n    acc += t[min(q, 3)]",
    "range-3-down-2": "for q in range(3, -1, -2):\n    acc += t[q]",
    "index-int32": "for q in range(4):\n    acc += t[np.int32(q)]",
    "nested-sum-3": "for p in range(3):\n    for q in range(2):\n        acc += t[p + q]",
}

# =============================================================================================
# ACCEPTED: sound, accepted
# =============================================================================================

ACCEPTED: dict[str, str] = {
    "mask-3": helper_kernel(_pick("t[k & 3]"), "acc += pick(t, x)"),
    "negative-offset-4": helper_kernel(_pick("t[(k & 7) - 4]"), "acc += pick(t, x)"),
    "min-of-mask": helper_kernel(_pick("t[min(k & 7, 3)]"), "acc += pick(t, x)"),
    "int32-mask": helper_kernel(_pick("t[np.int32(k) & np.int32(3)]"), "acc += pick(t, x)"),
    "caller-range-4": helper_kernel(_GET, "for q in range(4):\n    acc += pick(t, q)"),
    "caller-range-4-two-calls": helper_kernel(
        _GET, "for q in range(4):\n    acc += pick(t, q) * pick(t, 3 - q)"
    ),
    "helper-range-min-4": helper_kernel(
        """
@ss.device
def pick(t, k):
    s = np.float32(0)
    for q in range(min(k, 4)):
        s += t[q]
    return s
""",
        "acc += pick(t, x)",
    ),
    "helper-while-masked": helper_kernel(
        """
@ss.device
def pick(t, k):
    q = 0
    s = np.float32(0)
    while q < k:
        s += t[q & 3]
        q += 1
    return s
""",
        "acc += pick(t, x & 7)",
    ),
    "helper-enumerate": helper_kernel(
        """
@ss.device
def pick(t, k):
    s = np.float32(0)
    for j, v in enumerate(t):
        s += v * t[(j + k) & 3]
    return s
""",
        "acc += pick(t, x)",
    ),
    "tuple-of-tuples": helper_kernel(
        """
@ss.device
def pick(t, k):
    u = (t, t)
    return u[k & 1][k & 3]
""",
        "acc += pick(t, x)",
    ),
    "returned-pair-at-1": helper_kernel(
        _pick("(t[k & 3], t[(k + 1) & 3])"), "p = pick(t, x)\nacc += p[x & 1]"
    ),
    "two-tuples": helper_kernel(
        """
@ss.device
def pick(t, u, k):
    return t[k & 3] * u[(k >> 1) & 1]
""",
        "acc += pick(t, (t[0], t[1]), x)",
    ),
    "two-calls": helper_kernel(_GET, "acc += pick(t, x & 3)\nacc += pick(t, (x >> 2) & 3)"),
    "nested-one-call": helper_kernel(
        _INNER
        + """
@ss.device
def pick(t, k):
    return inner(t, k & 3)
""",
        "acc += pick(t, x)",
    ),
    "early-return": helper_kernel(
        """
@ss.device
def pick(t, k):
    if k > 5:
        return t[0]
    return t[k & 3]
""",
        "acc += pick(t, x)",
    ),
    "int-division-by-thread-value": helper_kernel(
        _pick("t[k & 3] + np.float32(7 // (k - 3))"), "acc += pick(t, x)"
    ),
    "float-division-by-thread-value": helper_kernel(
        _pick("t[k & 3] / np.float32(k - 3)"), "acc += pick(t, x)"
    ),
    "bool-result-negated": helper_kernel(_pick("t[k & 3] > 0"), "if not pick(t, x):\n    acc += 1"),
    "break-after-call": helper_kernel(
        _pick("t[k & 3]"),
        "for q in range(x & 7):\n    acc += pick(t, q)\n    if acc > 3:\n        break",
    ),
}

#: accepted kernels replayed by ``ss.sim.check`` (tests/sim)
FOLD_SIM = ("mask-3", "caller-range-4", "helper-while-masked", "negative-offset-4")

# =============================================================================================
# FALSE REFUSALS: safe, refused (source, message fragment)
# =============================================================================================

FALSE_REFUSALS: dict[str, tuple[str, str]] = {
    "nested-two-calls": (
        helper_kernel(
            _INNER
            + """
@ss.device
def pick(t, k):
    return inner(t, k & 3) + inner(t, (k >> 2) & 3)
""",
            "acc += pick(t, x)",
        ),
        NOT_UNIFORM,
    ),
    "inner-in-loop": (
        helper_kernel(
            _INNER
            + """
@ss.device
def pick(t, k):
    s = np.float32(0)
    for q in range(4):
        s += inner(t, q)
    return s
""",
            "acc += pick(t, x)",
        ),
        "depends on a value computed in a loop that threads leave at different iterations",
    ),
}

# =============================================================================================
# covers of tensor-core tiles (tests/sim)
# =============================================================================================


def mma_fill(bm: int, bn: int, wm: int, wn: int) -> str:
    """A kernel whose every warp stores every accumulator of its rectangle (zeros)."""
    return f"""
@ss.kernel(contract=ss.LaunchContract(domain=2, max_threads=1024, covers="c"))
def k(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.mma.out_tile(c, {bm}, {bn}, {wm}, {wn})
    for mi in range({wm // 16}):
        for ni in range({wn // 8}):
            ss.mma.store(o, mi, ni, ss.mma.zeros())
"""


def wgmma_fill(bm: int, bn: int) -> str:
    """A kernel whose every warpgroup stores its whole 64 x BN accumulator (zeros)."""
    return f"""
@ss.kernel(contract=ss.LaunchContract(domain=2, max_threads=1024, covers="c"))
def k(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.wgmma.out_tile(c, {bm}, {bn})
    ss.wgmma.store(o, ss.wgmma.zeros({bn}))
"""


#: (tile, block, grid, c's shape) -> None: accepted, every element written; or the refusal's
#: fragment. ``tile`` keys ``mma_fill`` ("mma", BM, BN, WM, WN) or ``wgmma_fill`` ("wgmma",
#: BM, BN).
COVERS_LAUNCHES: dict[
    tuple[tuple[Any, ...], tuple[int, ...], tuple[int, ...], tuple[int, int]], str | None
] = {
    # whole: 4 warps for 4 rectangles, as a 2D block
    (("mma", 32, 32, 16, 16), (32, 4, 1), (3, 2, 1), (64, 96)): None,
    (("mma", 32, 32, 16, 16), (16, 8, 1), (2, 1, 1), (31, 61)): None,
    # 3 whole warps and a partial one: the first band only, every column of the grid
    (("mma", 32, 32, 16, 16), (100, 1, 1), (2, 2, 1), (16, 64)): None,
    (("mma", 32, 32, 16, 16), (100, 1, 1), (2, 2, 1), (17, 64)): "the launch owns 16 along "
    "axis 0 and 'c' has 17",
    # a 2D block of 3 warps (32 x 3): the same band
    (("mma", 32, 32, 16, 16), (32, 3, 1), (2, 1, 1), (16, 64)): None,
    (("mma", 32, 32, 16, 16), (32, 3, 1), (1, 2, 1), (32, 32)): "but a block of 96 threads has "
    "3 whole warps of the 4 the tile needs",
    # one warp of the 4 rectangles across one band (32 x 8): block (0, 0)'s corner
    (("mma", 32, 32, 32, 8), (32, 1, 1), (2, 2, 1), (32, 8)): None,
    (("mma", 32, 32, 32, 8), (32, 1, 1), (2, 2, 1), (32, 9)): "the launch owns 8 along axis 1",
    # a partial warp alone owns nothing whole
    (("mma", 16, 16, 16, 16), (31, 1, 1), (1, 1, 1), (1, 1)): "the launch owns 0 along axis 0",
    (("mma", 16, 16, 16, 16), (33, 1, 1), (1, 1, 1), (16, 16)): None,
    # wgmma: 1.5 warpgroups for 2: 64 rows; 2 whole ones: the grid of tiles
    (("wgmma", 128, 64), (192, 1, 1), (2, 1, 1), (64, 128)): None,
    (("wgmma", 128, 64), (192, 1, 1), (2, 1, 1), (65, 128)): "of the 2 the tile needs",
    (("wgmma", 128, 64), (32, 8, 1), (1, 2, 1), (256, 63)): None,
    (("wgmma", 64, 64), (96, 4, 1), (1, 1, 1), (64, 64)): None,
    (("wgmma", 64, 64), (64, 1, 1), (1, 1, 1), (1, 1)): "the launch owns 0 along axis 0",
}

_ROUTES_HEAD = """
SIZES = (32, 32, 16, 16)


@ss.device
def h(x):
    pass


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1), covers="c"))
def k(c: DisjointSlice2D[np.float32], d: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
"""
_TILE = "    o = ss.mma.out_tile(c, 32, 32, 16, 16)\n    ss.mma.store(o, 0, 0, ss.mma.zeros())\n"
_SECOND = "another output tile of it is made here"
_VALUE = "`c` is also used here as a value"

#: a second owner of a covered output: refused at decoration (source, fragment)
COVERS_ROUTES: dict[str, tuple[str, str]] = {
    "two-tiles": (_ROUTES_HEAD + _TILE + "    p = ss.mma.out_tile(c, 64, 64, 16, 16)\n", _SECOND),
    "two-tiles-in-branches": (
        _ROUTES_HEAD
        + "    if cuda.blockIdx.x == 0:\n        o = ss.mma.out_tile(c, 32, 32, 16, 16)\n"
        "        ss.mma.store(o, 0, 0, ss.mma.zeros())\n    else:\n"
        "        p = ss.mma.out_tile(c, 64, 64, 16, 16)\n"
        "        ss.mma.store(p, 0, 0, ss.mma.zeros())\n",
        _SECOND,
    ),
    "mma-and-wgmma": (_ROUTES_HEAD + _TILE + "    p = ss.wgmma.out_tile(c, 64, 64)\n", _SECOND),
    "mma-and-tile-2d": (_ROUTES_HEAD + _TILE + "    q = thread.tile_2d(c, 2, 2)\n", _SECOND),
    "mma-and-witness": (
        _ROUTES_HEAD + _TILE + "    w = thread.index_2d()\n    c[w] = np.float32(1)\n",
        "and is also written by index here",
    ),
    "alias-before": (
        _ROUTES_HEAD + "    e = c\n    o = ss.mma.out_tile(e, 32, 32, 16, 16)\n"
        "    ss.mma.store(o, 0, 0, ss.mma.zeros())\n",
        "takes one of the kernel's output parameters by its name",
    ),
    "alias-after": (_ROUTES_HEAD + _TILE + "    e = c\n", _VALUE),
    "rebind-after": (_ROUTES_HEAD + _TILE + "    c = d\n", _VALUE),
    "swap-names": (_ROUTES_HEAD + "    c, d = d, c\n" + _TILE, _VALUE),
    "unchecked-in-region": (
        _ROUTES_HEAD + _TILE + "    with ss.unsafe('SAFETY: test'):\n"
        "        c.unchecked[0, 0] = np.float32(1)\n",
        _VALUE,
    ),
    "to-a-helper": (_ROUTES_HEAD + _TILE + "    h(c)\n", _VALUE),
    "out-by-keyword": (
        _ROUTES_HEAD + "    o = ss.mma.out_tile(out=c, bm=32, bn=32, wm=16, wn=16)\n",
        "got `nothing`",
    ),
    "tile-in-a-helper": (
        """
@ss.device
def hm(x):
    o = ss.mma.out_tile(x, 32, 32, 16, 16)
    ss.mma.store(o, 0, 0, ss.mma.zeros())
""",
        "is made in a kernel's own body, not in a @simtsafe.device helper",
    ),
}

#: safe, refused at the launch: sizes the typing takes and the decorator does not read
COVERS_FALSE_REFUSALS: dict[str, str] = {
    "local-size": """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1), covers="c"))
def k(c: DisjointSlice2D[np.float32]) -> None:
    bm = 32
    o = ss.mma.out_tile(c, bm, bm, 16, 16)
    for mi in range(1):
        for ni in range(2):
            ss.mma.store(o, mi, ni, ss.mma.zeros())
""",
    "product-size": """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1), covers="c"))
def k(c: DisjointSlice2D[np.float32]) -> None:
    o = ss.mma.out_tile(c, 16 * 2, 32, 16, 16)
    for mi in range(1):
        for ni in range(2):
            ss.mma.store(o, mi, ni, ss.mma.zeros())
""",
}
COVERS_NO_SIZES = "whose sizes are not int literals or module constants the decorator can read"
