r"""Attack round 33 (an outside helper): ownership won by atomics, row chunks and columns, the
analysed copy's poison, and host-side aliasing.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness (/tmp/a33 in the session): ``tryk(name, src)`` = ``k.ptx(cc=(9, 0))`` of the loaded
kernel (NVVM from the cu13 wheels, no GPU), ``lowering._irform._normalize`` wrapped to keep the
texts handed to the analysis; host attacks launched through ``prepare`` under
``NUMBA_ENABLE_CUDASIM=1`` (tests/sim/test_attacks33_sim.py).

=============================================================================================
FINDINGS (all three fixed in lowering/_irform._wrapping; each kernel below is now refused)
=============================================================================================

Root cause: the analysed copy still held instructions that LLVM makes *poison* where the GPU
computes a definite value, and ``_normalize``'s instcombine folds through poison (a phi or a
select with a poison arm becomes its other arm; ``br`` on poison loses an edge). Round 31
dropped the poison *flags* and clamped shifts by a run-time amount; three other poison sources
were left. NVVM compiles the original: at ``-opt=0`` (``opt=False``, and every ``debug=True``
build, which needs it) it folds nothing and emits the PTX below, which computes a value per
thread; at the default level it folds the poison itself (a compile-time, uniform choice).

FINDING 1 (LOW: synthetic spelling, real at ``opt=False``): a shift by a *literal* amount of
the width or more. ``_SHIFT_RE`` matched only a local amount (``%"x"``); Numba emits a literal
for ``v >> 70`` (``ashr i64 %".128", 70``). Minimized (``shift-literal-exit``): ``if (v >> 70)
!= 0: return`` before ``ss.block.sum`` -- accepted (the branch on poison folded away); PTX at
``-opt=0``: ``shr.s64 %rd59, %rd24, 70; setp.ne.s64 %p4, %rd59, 0`` and a branch to the
kernel's ``ret`` past ``bar.sync``: PTX clamps the amount, a negative ``v`` gives -1 and its
thread leaves while the others wait at the barrier. ``shl`` / ``lshr`` by 64 likewise (0 on the
GPU, poison in the copy; ``shift-literal-select``).

FINDING 2 (LOW: synthetic, real at ``opt=False``): a 64-bit shift reads its amount's low 32
bits. PTX's ``shl.b64 d, a, b`` takes ``b`` as ``.u32``: NVVM truncates an i64 amount
(``cvt.u32.u64``, at ``-opt=0`` and by default) and then the hardware clamps; round 31's
``_clamped_shift`` compared the whole 64-bit amount with 64. ``v << (n | 2**32)``: the copy
says ``0`` for every ``n`` (``icmp ult (n | 2**32), 64`` folds to false), the GPU shifts by
``n``; with ``n = 0`` every thread with ``v != 0`` left before the barrier
(``shift-amount-high-bits``). A literal amount is truncated the same way (``v << 4294967300``
is ``shl.b64 %rd, %rd, 4`` at ``-opt=0``).

FINDING 3 (LOW: synthetic, real at ``opt=False``): a float-to-integer conversion out of range.
LLVM's ``fptosi``/``fptoui`` give poison for NaN, infinities and values outside the integer's
range; PTX's ``cvt.rzi`` saturates (NaN to 0). ``w = np.int64(np.float64(1e300)) if v > 0 else
np.int64(0); if w != 0: return`` -- the copy folds the phi to 0 and drops the exit, the GPU
(``cvt.rzi.s64.f64``) gives ``2**63 - 1`` to threads with ``v > 0``, which leave
(``fptosi-out-of-range``, ``int-of-inf``).

The fix (one place, the analysed copy; NVVM still compiles the original): a literal shift is
rewritten to what PTX computes (the amount's low 32 bits for an i64 shift, then 0 or the sign
past the width); a run-time i64 amount is masked to its low 32 bits before the clamp; every
``fptosi``/``fptoui`` becomes ``llvm.fpto[su]i.sat`` (saturating, NaN to 0: ``cvt.rzi``), which
``verify._divergence`` reads as pure and, for the warp-index rule, as the conversion it stands
for. Twins that are uniform on the GPU stay accepted (``SAFE_TWINS``): ``(v << 64) != 0`` is 0
in every thread, ``np.uint32(np.float32(-1.0))`` and ``np.int32(np.float32(np.nan))`` are 0.

=============================================================================================
HELD (refused with the fragment given)
=============================================================================================

* Ownership won by atomics (``APPEND_HELD``, ``HASH_HELD``): a claimed slot written on the
  other buffer through a helper that swaps its parameters, a helper that claims on one and
  writes the other, a buffer or a witness chosen by a data-dependent ``if`` (Numba cannot unify
  ``AppendBuffer[..., out]`` with ``..., out2``), an ``Optional`` witness, a witness stored
  into a thread-private array, passed through ``block.broadcast``, used on a ``DisjointSlice``,
  its ``.index`` used as a position, a witness bound in a loop and used after it; a hash
  witness on the other table's values, ``insert_or_find``'s int as a values position,
  ``find`` on a table being inserted into.
* ``block_claim`` uniformity (``BLOCK_CLAIM_HELD``): steered by a ``claim()`` result, by its
  own slot (``.index``, ``in_bounds``), by the slot's value read back, by an input read at the
  slot, by a ``while`` / ``break`` on the slot, by a warp collective, by a helper's branch, and
  a ``keep`` computed through a run-time tuple index; a hash insert's ``in_bounds`` before a
  block collective, also with a grid-uniform key (the probe loop runs on data).
* Row chunks (``ROWS_HELD``): a chunk loop left on ``c.valid`` or continued on data before a
  collective, a ``block_row`` (not chunked) walk holding one, a chunk witness used after the
  loop, a return after the loop on ``threadIdx`` before a barrier, a chunk walk over an array
  chosen by a run-time tuple index (the count then reads a 2D input: not trusted).
* Columns: a witness of another space on a ``Columns`` output, a column witness as a 1D index.
* Input reads steering a barrier (``READ_HELD``): a uniform position under ``m < n`` only
  (negative ``m`` wraps past the start), ``a[-3]``, ``a[m % 4]``, ``a[n - 1]``, ``uint64`` and
  truncated positions.
* Host (tests/sim): an input view overlapping the output by one element, negative-stride and
  stride-2 views overlapping it, two outputs overlapping or the same, bytes of an input viewed
  as the output, a reshape of the output passed as input; a prepared launch, its memoized fast
  path, and a graph's ``rebind`` (one step and two) given overlapping arrays: all
  ``AliasingError``. Accepted and disjoint: a negative-stride view of the other half, a
  ``uint8`` view of bytes past the output, a zero-size output.

=============================================================================================
ACCEPTED (sound; ``ACCEPTED`` with why)
=============================================================================================

A claim carried through a tuple, a loop-carried phi, a ``while``/``break``, a ``select`` of two
of the thread's own claims, a run-time tuple index over two claims (an ``IndexError`` exit
needs no uniformity here), a helper writing the thread's own slot; ``block_claim`` in a
block-uniform loop, in a helper called uniformly, after a ``block.sum`` / a ``broadcast`` of a
slot (uniform), after a thread-dependent ``while`` that ends before it; chunk loops with a
uniform ``break``, rebinding the walked name inside, over another input, nested, inside a
``while`` on a shape, ``warp_row_chunks`` with a *block* collective (the same count in every
warp); a ``Columns`` row read back from the output, a negative row (writes nothing), a tuple
``(row, w)`` index.

Also tried (notes, no test): a CAI stride of ``2**64 - 256`` would be a positive Python int to
the host's byte ranges and ``-256`` to the device's int64 -- a hand-written interface only
(docs/safety.md "An array object's own description of itself"), not reachable from Numba,
CuPy or PyTorch arrays; not launched (no GPU).
"""

from __future__ import annotations

import sys

__all__ = [
    "ACCEPTED",
    "APPEND_HELD",
    "BLOCK_CLAIM_HELD",
    "FINDINGS",
    "HASH_HELD",
    "NOT_UNIFORM_BLOCK",
    "READ_HELD",
    "ROWS_HELD",
    "SAFE_TWINS",
    "poison_kernel",
]

from .append_rules import source as _append
from .block_claim_rules import UNIFORM_LOOP
from .hash_rules import source as _hash
from .row_chunk_rules import _BR, _BR2, _C1, _WR
from .row_chunk_rules import source as _rows

NOT_UNIFORM_BLOCK = "`block.sum` needs every thread of the block to reach it"
_BC = "`AppendBuffer.block_claim` needs every thread of the block to reach it"

_POISON = """
@ss.kernel(OPTIONS contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32], a: In[np.int64], n: np.int64) -> None:
    i = thread.index_1d()
    v = a[i] if i.in_bounds(a) else 0
    s = np.float32(0)
BODY
    s = ss.block.sum(np.float32(1))
    out[i] = s
"""


def poison_kernel(body: str, options: str = "") -> str:
    """``body`` (indented 4) before a ``block.sum`` every thread must reach; ``options`` are
    keyword arguments of ``ss.kernel`` ending with a comma (``"opt=False, "``)."""
    return _POISON.replace("OPTIONS ", options).replace("BODY", body.strip("\n"))


#: name -> body of ``poison_kernel``: accepted before the fix, a thread-dependent exit before
#: the collective on the GPU (PTX at -opt=0); refused now with NOT_UNIFORM_BLOCK.
FINDINGS: dict[str, str] = {
    # FINDING 1: shr.s64 %rd, %rd, 70 is the sign on the GPU; poison in the copy
    "shift-literal-exit": "    if (v >> 70) != 0:\n        return",
    "shift-literal-64": "    if (v >> 64) != 0:\n        return",
    "shift-literal-select": "    w = (v << 64) if v > 0 else np.int64(1)\n    if w == 0:\n        return",
    # FINDING 2: cvt.u32.u64 of the amount, then shl.b64: n | 2**32 shifts by n
    "shift-amount-high-bits": "    w = v << (n | 4294967296)\n    if w != 0:\n        return",
    # FINDING 3: cvt.rzi saturates; LLVM's fptosi of 1e300 / inf is poison
    "fptosi-out-of-range": (
        "    w = np.int64(np.float64(1e300)) if v > 0 else np.int64(0)\n"
        "    if w != 0:\n        return"
    ),
    "fptosi-out-of-range-and": (
        "    w = np.int64(np.float64(1e300))\n    if w != 0 and v > 0:\n        return"
    ),
    "int-of-inf": "    w = int(np.float32(np.inf)) if v > 0 else 0\n    if w != 0:\n        return",
}

#: name -> body of ``poison_kernel``: the same shapes where the GPU's value is one constant in
#: every thread -- accepted, before and after the fix.
SAFE_TWINS: dict[str, str] = {
    "shl-64-is-zero": "    if (v << 64) != 0:\n        s = ss.block.sum(np.float32(1))",
    "shl-64-return-all": "    if (v << 64) == 0 and n > 0:\n        return",
    "lshr-u64-by-64": ("    if (np.uint64(v) >> np.uint64(64)) != np.uint64(0):\n        return"),
    "fptoui-negative-is-zero": (
        "    w = np.uint32(np.float32(-1.0)) if v > 0 else np.uint32(0)\n"
        "    if w != np.uint32(0):\n        return"
    ),
    "fptosi-nan-is-zero": (
        "    w = np.int32(np.float32(np.nan)) if v > 0 else np.int32(0)\n"
        "    if w != np.int32(0):\n        return"
    ),
    "u32-high-word-is-zero": (
        "    hi = np.uint32(v) >> np.uint32(32)\n    if hi != np.uint32(0):\n        return"
    ),
    "uniform-shift-past-width": "    if (n >> 70) != 0:\n        return",
    # was a FINDING before fcf4698 (poison index); with the shift clamped it is the sign, -1
    # or 0, and the position 0 or 1 of the 2-tuple (-opt=0: `shr.s64 %rd, %rd, 70` then
    # cases 0 and 1; the default level folds the read away): refused at 42f0c58, accepted
    # since unif33 (1556cfb's tuple positions) was merged, a98f1d1 (attack round 34): safe
    "shift-literal-tuple": "    t = (1.0, 2.0)\n    s = np.float32(t[(v >> 70) + 1])",
}


def _bc(body: str) -> str:
    """``body`` (indented 4: inside the loop) in block_claim_rules' block-uniform loop."""
    return _append(UNIFORM_LOOP.replace("{body}", body.strip("\n")))


def _bc_helper(helper: str, body: str) -> str:
    return _bc(body).replace("@ss.kernel", helper + "\n\n\n@ss.kernel", 1)


#: case -> (kernel source, fragment of the refusal)
APPEND_HELD: dict[str, tuple[str, str]] = {
    "helper-swaps-buffers": (
        _append(
            "s = out.claim()\nput(out2, out, s)",
            before="@ss.device\ndef put(a, b, s):\n    a[s] = np.float32(1)\n\n\n",
        ),
        "a ThreadIndex[Appended[out]] witness cannot write the AppendBuffer 'out2'",
    ),
    "helper-claims-one-writes-other": (
        _append(
            "put(out, out2)",
            before="@ss.device\ndef put(a, b):\n    s = a.claim()\n    b[s] = np.float32(1)\n\n\n",
        ),
        "a ThreadIndex[Appended[out]] witness cannot write the AppendBuffer 'out2'",
    ),
    "buffer-chosen-by-data": (
        _append("b = out if x[0] > 0 else out2\ns = b.claim()\nb[s] = np.float32(1)"),
        "one variable holds `AppendBuffer[",
    ),
    "witness-chosen-by-data": (
        _append("s = out.claim() if x[0] > 0 else out2.claim()\nout[s] = np.float32(1)"),
        # Python 3.11 merges the two claims in a phi Numba cannot type; 3.12 types the
        # conditional expression apart and the store is refused
        "one variable holds `ThreadIndex[Appended[out]]` on one path and "
        "`ThreadIndex[Appended[out2]]` on another"
        if sys.version_info < (3, 12)
        else "a ThreadIndex[Appended[out2]] witness cannot write the AppendBuffer 'out'",
    ),
    "optional-witness": (
        _append("s = out.claim() if x[0] > 0 else None\nout[s] = np.float32(1)"),
        "got an index of type OptionalType(ThreadIndex[Appended[out]])",
    ),
    "witness-into-local-array": (
        _append("arr = cuda.local.array(2, np.int64)\ns = out.claim()\narr[0] = s"),
        "cannot store a value of type ThreadIndex[Appended[out]]",
    ),
    "witness-on-disjoint-slice": (
        _append("s = out.claim()\no[s] = np.float32(1)"),
        "a ThreadIndex[Appended[out]] witness cannot write a DisjointSlice of space Index1D",
    ),
    "slot-number-as-position": (
        _append("s = out.claim()\no[s.index] = np.float32(1)"),
        "a DisjointSlice is written only through a ThreadIndex witness of its space",
    ),
    "witness-through-broadcast": (
        _append("s = out.claim()\nt = ss.block.broadcast(s)\nout[t] = np.float32(1)"),
        "block.broadcast(v) takes a number",
    ),
    "witness-after-its-loop": (
        _append("for w in thread.grid_stride(x):\n    s = out.claim()\nout[s] = np.float32(1)"),
        "may be unbound where it is used",
    ),
}

HASH_HELD: dict[str, tuple[str, str]] = {
    "witness-on-other-tables-values": (
        _hash("s = keys.insert(q[0])\nvals2[s] = x[0]"),
        "a ThreadIndex[Inserted[keys]] witness cannot write the values of the hash table 'keys2'",
    ),
    "insert-or-find-as-values-position": (
        _hash("s = keys.insert_or_find(q[0])\nvals[s] = x[0]"),
        "a HashValues is written only at a slot whose key this thread inserted",
    ),
    "find-on-a-table-being-inserted": (
        _hash("f = ss.hashing.find(keys, q[0])\no[thread.index_1d()] = vals[f]"),
        "reads a table that no thread is inserting into",
    ),
    "collective-after-insert-branch": (
        _hash(
            "s = keys.insert(q[0])\nif s.in_bounds(vals):\n"
            "    t = ss.block.sum(np.float32(1))\n    vals[s] = t"
        ),
        NOT_UNIFORM_BLOCK,
    ),
    "collective-after-insert-of-a-uniform-key": (
        _hash(
            "s = keys.insert(np.uint32(7))\nif s.in_bounds(vals):\n"
            "    t = ss.block.sum(np.float32(1))\n    vals[s] = t"
        ),
        NOT_UNIFORM_BLOCK,
    ),
}

BLOCK_CLAIM_HELD: dict[str, tuple[str, str]] = {
    "after-a-claim-branch": (
        _bc(
            "    c = out2.claim()\n    if c.in_bounds(out2):\n"
            "        s = out.block_claim(v > 0)\n        out[s] = v"
        ),
        "the result of an atomic",
    ),
    "on-its-own-slot-index": (
        _bc(
            "    s = out.block_claim(v > 0)\n    out[s] = v\n    if s.index > 3:\n"
            "        t = out.block_claim(v > 0)\n        out[t] = v"
        ),
        _BC,
    ),
    "on-its-own-in-bounds": (
        _bc(
            "    s = out.block_claim(v > 0)\n    out[s] = v\n    if s.in_bounds(out):\n"
            "        t = out.block_claim(v > 0)\n        out[t] = v"
        ),
        _BC,
    ),
    "on-the-slot-read-back": (
        _bc(
            "    s = out.block_claim(v > 0)\n    out[s] = v\n    if out[s] > 0:\n"
            "        t = out2.block_claim(v > 0)\n        out2[t] = v"
        ),
        _BC,
    ),
    "on-an-input-at-the-slot": (
        _bc(
            "    s = out.block_claim(v > 0)\n    out[s] = v\n    if x[s] > 0:\n"
            "        t = out2.block_claim(v > 0)\n        out2[t] = v"
        ),
        _BC,
    ),
    "in-a-while-on-the-slot": (
        _bc(
            "    s = out.block_claim(v > 0)\n    out[s] = v\n    j = s.index\n    while j > 0:\n"
            "        j -= 1000\n        t = out2.block_claim(v > 0)\n        out2[t] = v"
        ),
        _BC,
    ),
    "break-on-the-slot": (
        _bc("    s = out.block_claim(v > 0)\n    out[s] = v\n    if s.index == 0:\n        break"),
        _BC,
    ),
    "on-a-warp-sum": (
        _bc("    if ss.warp.sum(v) > 0:\n        s = out.block_claim(v > 0)\n        out[s] = v"),
        "control flow here is warp-uniform",
    ),
    "helper-under-a-branch": (
        _bc_helper(
            "@ss.device\ndef put(b, v):\n    s = b.block_claim(True)\n    b[s] = v",
            "    if v > 0:\n        put(out, v)",
        ),
        "`helper put` needs every thread of the block to reach it",
    ),
    "keep-through-a-tuple-index": (
        _bc("    tt = (v, v, v)\n    s = out.block_claim(tt[int(v) & 3] > 0)\n    out[s] = v"),
        "Numba raises IndexError there",
    ),
}

_B = _C1 + _BR

ROWS_HELD: dict[str, tuple[str, str]] = {
    "chunk-loop-left-on-valid": (
        _rows(
            _B,
            "for c in thread.block_row_chunks(out):\n    if not c.valid:\n        break\n"
            "    out[c] = ss.block.sum(x[c])",
        ),
        NOT_UNIFORM_BLOCK,
    ),
    "chunk-continue-on-data": (
        _rows(
            _B,
            "for c in thread.block_row_chunks(out):\n    if x[c] > 0:\n        continue\n"
            "    out[c] = ss.block.sum(x[c])",
        ),
        NOT_UNIFORM_BLOCK,
    ),
    "return-on-valid-inside": (
        _rows(
            _B,
            "for c in thread.block_row_chunks(out):\n    out[c] = ss.block.sum(x[c])\n"
            "    if not c.valid:\n        return",
        ),
        NOT_UNIFORM_BLOCK,
    ),
    "plain-row-walk-collective": (
        _rows(_B, "for w in thread.block_row(out):\n    out[w] = ss.block.sum(x[w])"),
        NOT_UNIFORM_BLOCK,
    ),
    "chunk-witness-after-the-loop": (
        _rows(
            _B,
            "for c in thread.block_row_chunks(out):\n    v = x[c]\nout[c] = np.float32(1)",
        ),
        "may be unbound where it is used",
    ),
    "walk-over-a-tuple-pick": (
        _rows(
            _C1 + _BR2,
            "p = (x, y)\nfor c in thread.block_row_chunks(p[int(x[0, 0]) & 1]):\n"
            "    out[c] = ss.block.sum(x[c])",
        ),
        NOT_UNIFORM_BLOCK,
    ),
}

_READ = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, requires=[REQ]))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: np.int64, m: np.int64) -> None:
    i = thread.index_1d()
    s = np.float32(0)
BODY
    out[i] = s
"""


def _read(req: str, body: str) -> str:
    return _READ.replace("REQ", repr(req)).replace("BODY", body.strip("\n"))


_SUM = "        s = ss.block.sum(np.float32(1))"
READ_HELD: dict[str, tuple[str, str]] = {
    "below-a-bound-but-negative": (
        _read("a.size >= n", f"    if m < n:\n        if a[m] > 0:\n    {_SUM}"),
        "which simtsafe does not prove in range",
    ),
    "negative-constant": (
        _read("a.size >= 4", f"    if a[-3] > 0:\n{_SUM}"),
        "which simtsafe does not prove in range",
    ),
    "signed-modulo": (
        _read("a.size >= 4", f"    if a[m % 4] > 0:\n{_SUM}"),
        "which simtsafe does not prove in range",
    ),
    "bound-minus-one": (
        _read("a.size >= n", f"    if n > 0:\n        if a[n - 1] > 0:\n    {_SUM}"),
        "which simtsafe does not prove in range",
    ),
    "truncated-position": (
        _read(
            "a.size >= n", f"    if m < n and m >= 0:\n        if a[np.int32(m)] > 0:\n    {_SUM}"
        ),
        "which simtsafe does not prove in range",
    ),
}

#: name -> kernel source: sound, accepted (tests/ptx compiles each).
ACCEPTED: dict[str, str] = {
    # claims: each slot is the thread's own, whatever the route
    "claim-through-a-tuple": _append(
        "t = (out.claim(), 1)\nfor w in thread.grid_stride(x):\n    if x[w] > 0:\n"
        "        t = (out.claim(), 2)\n    out[t[0]] = x[w]"
    ),
    "claim-loop-carried": _append(
        "s = out.claim()\nfor w in thread.grid_stride(x):\n    out[s] = x[w]\n    s = out.claim()"
    ),
    "claim-select-of-own": _append(
        "a = out.claim()\nb = out.claim()\ns = a if x[0] > 0 else b\nout[s] = np.float32(1)"
    ),
    "claim-run-time-tuple-index": _append(
        "p = (out.claim(), out.claim())\nk = int(x[0])\nout[p[k]] = np.float32(1)"
    ),
    "claim-helper-writes-own": _append(
        "s = out.claim()\nput(out, s, np.float32(1))",
        before="@ss.device\ndef put(b, s, v):\n    b[s] = v\n\n\n",
    ),
    "hash-witness-reused": _hash(
        "s = keys.insert(q[0])\nfor w in thread.grid_stride(q):\n    vals[s] = x[w]"
    ),
    # block claims under block-uniform control
    "block-claim-uniform-loop": _bc("    s = out.block_claim(v > 0)\n    out[s] = v"),
    "block-claim-after-broadcast-of-slot": _bc(
        "    s = out.block_claim(v > 0)\n    out[s] = v\n    b = ss.block.broadcast(s.index)\n"
        "    if b > 3:\n        t = out2.block_claim(v > 0)\n        out2[t] = v"
    ),
    "block-claim-after-block-sum": _bc(
        "    if ss.block.sum(v) > 0:\n        s = out.block_claim(v > 0)\n        out[s] = v"
    ),
    "block-claim-after-thread-loop": _bc(
        "    c = out2.claim()\n    j = 0\n    while j < c.index:\n        j += 1\n"
        "    s = out.block_claim(v > 0)\n    out[s] = v"
    ),
    "block-claim-in-helper": _bc_helper(
        "@ss.device\ndef put(b, v):\n    s = b.block_claim(v > 0)\n    b[s] = v",
        "    put(out, v)",
    ),
    # row chunks
    "chunks-uniform-break": _rows(
        _B,
        "for c in thread.block_row_chunks(out):\n    s = ss.block.sum(x[c])\n    if s > 0:\n"
        "        break\n    out[c] = s",
    ),
    "chunks-walked-name-rebound": _rows(
        _C1 + _BR2,
        "s = x\nfor c in thread.block_row_chunks(s):\n    s = y\n    out[c] = ss.block.sum(x[c])",
    ),
    "chunks-nested": _rows(
        _C1 + _BR2,
        "for c in thread.block_row_chunks(y):\n    for d in thread.block_row_chunks(x):\n"
        "        out[d] = ss.block.sum(x[d]) + y[c]",
    ),
    "warp-chunks-block-collective": _rows(
        _C1 + _WR, "for c in thread.warp_row_chunks(out):\n    out[c] = ss.block.sum(x[c])"
    ),
    "chunks-in-a-while-on-a-shape": _rows(
        _B,
        "j = 0\nwhile j < x.shape[0]:\n    for c in thread.block_row_chunks(out):\n"
        "        out[c] = ss.block.sum(x[c])\n    j += 1",
    ),
    # uniform input read: masked position
    "read-masked-position": _read("a.size >= 4", f"    if a[m & 3] > 0:\n{_SUM}"),
    "read-bounded-nonnegative": _read(
        "a.size >= n", f"    if m < n and m >= 0:\n        if a[m] > 0:\n    {_SUM}"
    ),
}
