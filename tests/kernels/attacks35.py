r"""Attack round 35 (an outside helper): the day's relaxations and mechanisms --
``max_threads`` bounding the thread-index reads through ``!range`` (e22751a, 90b7fc8), the
carried-copy twin of a range loop's index (1556cfb, a4cd50a: ``verify/_ranges._twins``,
``_stepped_together``, ``_offsets``), NVVM compiling the wrapping form (a7d1616,
``lowering/_nvvminput``), and libdevice by function identity (831934f, 4fa4f66).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), compiled
for sm_90 by tests/ptx/test_attacks35_ptx.py (NVVM from the cu13 wheels, no GPU). Loop
kernels are attacks29's ``loop_kernel`` (a 4-tuple ``t`` of ``a[i]``, a 5-tuple ``u``, the
loop under a thread-dependent ``if a[i] > 0.5`` before ``ss.block.sum``; ``twin_kernel``
adds two helpers ``inc(q) = q + 1`` and ``inc2(q) = q + 2``).

=============================================================================================
FINDING 1 (LOW-MEDIUM: needs an unchecked launch of the kernel first; fixed)
=============================================================================================

The launch path's Numba dispatcher (``Kernel._get_dispatcher``) is one object for the
checked launches (``specialize``: ``disp.compile(argtypes)`` inside ``simtsafe_typing``) and
for ``kernel.unchecked[grid, block](...)``, which calls the dispatcher's launcher directly:
Numba compiles the overload for the arguments' types *then*, outside ``simtsafe_typing``, so
``lowering/_nvvminput``'s hook leaves ``CUDACodeLibrary.llvm_strs`` as Numba's own text
(``add nsw``, ``shl`` by any amount) and NVVM compiles that. A later ``prepare()`` of the same
argument types (the ABI's plain array types are what ``typeof`` gives a device array) gets
that overload back from ``disp.compile`` and ``_verify`` accepts it: the analysis reads the
wrapping form of whatever text it is given, so its proof is about a program NVVM did not
compile. Minimized: attacks34's ``nsw-add-identity`` (``poison_kernel``)::

    c1 = (v + 1) > v
    c2 = v != 9223372036854775807
    if c1 != c2:
        return
    s = ss.block.sum(np.float32(1))

launched once with ``k.unchecked[1, 128](...)`` inside ``ss.unsafe(...)``, then
``k.prepare(grid=1, block=128)(...)``: the checked launch runs the default-level PTX of round
34's finding (``setp.eq.s64 %p2, %rd11, 9223372036854775807; @%p2 bra $L__BB0_6`` -- the
``ret`` past ``bar.sync``): a thread whose ``a[i]`` is ``2**63 - 1`` leaves before the block
sum. At ``-opt=0`` (``opt=False``) NVVM folds nothing and the PTX computes both halves (no
exit), as round 34 showed. ``nsw-sub-identity`` and ``shl-amount-identity`` likewise. Shown
without a GPU (Numba's launch with its device steps stubbed: the dispatcher compiles exactly
as a launch does): before the fix the specialization's PTX matched ``FINDING_EXITS``.

Fix (``_compose``): the unchecked launcher calls Numba's launcher inside
``simtsafe_typing()``, so whatever the dispatcher compiles is the wrapping form; and
``Kernel._verify`` refuses texts that are not the wrapping form (``WRAPPING_MARK``) -- an
overload compiled outside simtsafe's compile by any other route (a raw launch of the compiled
function) -- with "its compiled code was not made by simtsafe's compile". Decided on the
compiled text, not on how it was spelled.

Severity: the unchecked launch is Tier 3 and needs an ``unsafe`` region, but the kernel's
*checked* launches afterwards are Tier 1 and were unsound, in any process that launched it
unchecked once (a benchmark's raw launch beside the checked one, say), and only where the
kernel compares a value with an identity's other half (round 34's LOW shapes).

=============================================================================================
HELD
=============================================================================================

Carried-copy twins (``TWINS_REFUSED``, 15 unsafe shapes, each refused at the tuple index):
a copy set to ``q + 2`` on some paths (under ``if``, before ``continue``), ``j`` read after
the loop or after a ``break`` (4), a copy carried across an inner loop into the next outer
trip (``nested-inner``, ``nested-outer-read``: 4 on the second outer trip), a copy of the
*outer* loop's ``p + 1`` read in the inner loop, a swap ``j, w = w + 2, q + 1``, a helper's
``q + 2``, ``range(5)``, ``range(0, 6, 2)`` with ``q + 2``, ``j = q + 1`` then ``j += 1`` on
a path, a reset to 4 on a path, a start from the parameter ``m``, ``q`` rebound to ``q + 1``
before ``j = q + 1``. Why: ``_twins`` needs one constant offset on every entry edge and, on
every path back, both moved by one constant or both set from the index with the same
difference (``_offsets`` follows only ``x + C`` and non-header phis; a header phi of another
loop is not followed).

Accepted and safe (``TWINS_ACCEPTED``, 7): ``j, w = q + 1, j`` (w is dead), a helper's
``q + 1`` (inlined: ``add i64 %q, 1``), ``range(0, 4, 2)`` with ``q + 2`` (0, 2), a reset to
3 on a path (a phi of 3 and the twin, both in range), a ``while`` copy ``j = q`` after
``q += 1``, ``range(3, -1, -1)`` with ``j = q - 1`` (3..0 in the loop; -1 after it is
Numba's ``t[-1]``, in range).

Safe, still refused (``TWINS_STILL_REFUSED``, 6; conservative): a copy stepped on some paths
only (``j <= q`` always: not a constant offset), updated after a ``continue`` or after an
early thread-dependent ``continue``, started at 1 (offset 1 on entry, 0 on the back edge),
a second loop reading the first's copy minus 1, a ``while`` counter stepped twice on a path.

``max_threads`` (``MAX_THREADS_ACCEPTED``, 8, safe): under ``domain=2, max_threads=64``
``threadIdx.y // 32 > 1`` never holds (``y <= 63``); branches on ``blockDim`` products are
block-uniform whatever they fold to; ``cuda.laneid > 40`` never holds; ``max_threads=1``
makes ``threadIdx.x > 0`` and ``blockDim.x > 1`` false; ``max_threads=1025`` folds
``threadIdx.x // 32 > 32`` (1024 is the hardware's maximum anyway); ``max_threads=2**32 +
64`` is truncated to 64 by both the ``!range`` and the ``.maxntid 64, 1, 1`` stamp, so the
driver and prepare's function check (``attrs.maxthreads``) refuse a larger block -- the bound
the proof used is the one enforced. (``max_threads=2**32`` and ``2**33`` make NVVM fail with
``ERROR_INVALID_IR`` (an empty ``!range [0, 0)``): refused, with an unhelpful message; left to
the contract's validation, not a soundness issue.)

Refused (``MAX_THREADS_REFUSED``, 7): ``threadIdx.y // 32 > 0`` under 64 (``(1, 64)``
blocks), ``threadIdx.x + threadIdx.y >= 64``, a product of the two, a helper's
``threadIdx.x`` (the helper is compiled without the kernel's bound: its read has no range),
``gridDim`` with the thread index, ``// 32 > 0`` under 33; ``threadIdx.z > 0`` under
``domain=1`` (safe: prepare keeps ``block.z == 1``, but the range is the bound's, not the
domain's; conservative). The disk cache's key has the declaration's fingerprint, contract
included, and the rewritten AST with its ``__ss_bound_block(M)`` prologue: a kernel compiled
under another contract is not served (read, not tested).

libdevice by identity (``LIBDEVICE_REFUSED``, 2): ``libdevice.float_as_int`` rebound on the
real ``numba.cuda.libdevice`` module after decoration (to a ``cuda.jit`` device function, or
to another libdevice function under the old name) is refused at compile: the identity table
is consulted against the function the chain reaches then.

Complex tiles stored and loaded as one integer (5b56024; ``COMPLEX_TILES_REFUSED``, 5): a
neighbour's element (whole, or its ``.real``) read in the fill interval, complex64 and
complex128, 1D and a padded 2D tile, stay refused; a write at a neighbour's position is not
a witness store. Accepted and safe (``COMPLEX_TILES_ACCEPTED``, 4): the thread's own
read-modify-write (1D complex128, 2D with ``pad=3``), padded 2D complex64/complex128 fills;
the PTX reads and writes an element as one ``.v2.u64``/``.u64`` access, and every tile
(static, or in the ``tile_shared`` window at an offset rounded to 16 even after an 8-byte
tile) is ``.align 16``, so the 16-byte accesses are aligned.

Not attacked for lack of time: records with complex fields, swizzled complex tiles (refused
by the swizzle's dtype rule), the wrapping form's
well-formedness on vector types / ``i128`` / constant expressions, LTO (``get_ltoir``) and
debug builds (``"g"``: NVVM compiles each text apart -- each is wrapped, as the kernel's
library's ``llvm_strs`` is one list), and ``inbounds``/``!range``/``llvm.assume`` left in the
text NVVM compiles.
"""

from __future__ import annotations

__all__ = [
    "COMPLEX_TILES_ACCEPTED",
    "COMPLEX_TILES_REFUSED",
    "LIBDEVICE_REFUSED",
    "MAX_THREADS_ACCEPTED",
    "MAX_THREADS_REFUSED",
    "NOT_UNIFORM_SYNC",
    "TUPLE_INDEX",
    "TWINS_ACCEPTED",
    "TWINS_REFUSED",
    "TWINS_STILL_REFUSED",
    "bound_kernel",
    "complex_tile_kernel",
    "twin_kernel",
]

from .attacks29 import loop_kernel
from .attacks34 import TUPLE_INDEX

#: the refusal of a barrier some thread may skip
NOT_UNIFORM_SYNC = "`block.sync` needs every thread of the block to reach it"

_HELPERS = """
@ss.device
def inc(q):
    return q + 1


@ss.device
def inc2(q):
    return q + 2


@ss.device
def get(t, q):"""


def twin_kernel(body: str) -> str:
    """attacks29's ``loop_kernel`` with the helpers ``inc`` and ``inc2`` beside ``get``."""
    return loop_kernel(body).replace("\n@ss.device\ndef get(t, q):", _HELPERS, 1)


# --------------------------------------------------------------------------- carried copies

#: name -> loop body: unsafe (some run reads ``t`` at 4 or more), refused with TUPLE_INDEX
TWINS_REFUSED: dict[str, str] = {
    # a path sets the copy two ahead: t[5] on the next trip
    "some-paths-plus2": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    if a[i] > 0.7:\n        j = q + 2\n"
        "    else:\n        j = q + 1"
    ),
    "continue-plus2": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    if a[i] > 0.7:\n        j = q + 2\n"
        "        continue\n    j = q + 1"
    ),
    # the copy after the loop is 4
    "after-loop": "j = 0\nfor q in range(4):\n    j = q + 1\nacc += t[j]",
    "after-break": (
        "j = 0\nfor q in range(4):\n    j = q + 1\n    if a[i] > 0.7:\n        break\nacc += t[j]"
    ),
    # carried out of an inner loop into the next outer trip: 4 there
    "nested-inner": (
        "j = 0\nfor p in range(2):\n    for q in range(4):\n        acc += t[j]\n        j = q + 1"
    ),
    "nested-outer-read": (
        "j = 0\nfor p in range(2):\n    acc += t[j]\n    for q in range(4):\n        j = q + 1"
    ),
    # a copy of the outer loop's index read in the inner loop: 4 when p = 3
    "other-loop": (
        "j = 0\nfor p in range(4):\n    for q in range(4):\n        acc += t[j]\n        j = p + 1"
    ),
    # a swap through a second copy: up to 6
    "swap-plus2": (
        "j = 0\nw = 0\nfor q in range(4):\n    acc += t[j] + t[w]\n    j, w = w + 2, q + 1"
    ),
    "helper-plus2": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = inc2(q)",
    "range-5": "j = 0\nfor q in range(5):\n    acc += t[j]\n    j = q + 1",
    "step-2-to-6": "j = 0\nfor q in range(0, 6, 2):\n    acc += t[j]\n    j = q + 2",
    "extra-step-on-a-path": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = q + 1\n    if a[i] > 0.7:\n        j += 1"
    ),
    "reset-to-4-on-a-path": (
        "j = 0\nfor q in range(4):\n    if a[i] > 0.7:\n        j = 4\n    acc += t[j]\n    j = q + 1"
    ),
    "start-from-param": "j = m\nfor q in range(4):\n    acc += t[j]\n    j = q + 1",
    "index-rebound-first": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    q = q + 1\n    j = q + 1"
    ),
}

#: name -> loop body: safe (every read in range), accepted
TWINS_ACCEPTED: dict[str, str] = {
    "swap-dead-second": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j, w = q + 1, j",
    "helper-plus1": "j = 0\nfor q in range(4):\n    acc += t[j]\n    j = inc(q)",
    "step-2-to-4": "j = 0\nfor q in range(0, 4, 2):\n    acc += t[j]\n    j = q + 2",
    "reset-to-3-on-a-path": (
        "j = 0\nfor q in range(4):\n    if a[i] > 0.7:\n        j = 3\n    acc += t[j]\n    j = q + 1"
    ),
    "while-copy": "j = 0\nq = 0\nwhile q < 4:\n    acc += t[j]\n    q += 1\n    j = q",
    "down": "j = 3\nfor q in range(3, -1, -1):\n    acc += t[j]\n    j = q - 1",
    # -1 after the loop: Numba's t[-1], inside the tuple
    "down-read-after": (
        "j = 3\nfor q in range(3, -1, -1):\n    acc += t[j - 1 + 1]\n    j = q - 1\nacc += t[j]"
    ),
}

#: name -> (loop body, fragment): safe, refused (conservative)
TWINS_STILL_REFUSED: dict[str, tuple[str, str]] = {
    "stepped-on-some-paths": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    if a[i] > 0.7:\n        j = q + 1",
        TUPLE_INDEX,
    ),
    "continue-before-step": (
        "j = 0\nfor q in range(4):\n    acc += t[j]\n    if a[i] > 0.7:\n        continue\n"
        "    j = q + 1",
        TUPLE_INDEX,
    ),
    "early-continue": (
        "j = 0\nfor q in range(4):\n    if a[i] > 0.7:\n        continue\n    acc += t[j]\n"
        "    j = q + 1",
        TUPLE_INDEX,
    ),
    "start-1": ("j = 1\nfor q in range(4):\n    acc += t[j]\n    j = q + 1", TUPLE_INDEX),
    "second-loop-minus-1": (
        "j = 0\nfor q in range(4):\n    j = q + 1\nfor r in range(4):\n    acc += t[j - 1]\n"
        "    j = r + 1",
        TUPLE_INDEX,
    ),
    "while-stepped-twice": (
        "j = 0\nq = 0\nwhile q < 4:\n    acc += t[j]\n    j = q + 1\n    q += 1\n"
        "    if a[i] > 0.7:\n        q += 1",
        # the loop's thread-dependent count leads to the tuple index's IndexError (j = 4):
        # named since the eighteenth session (was the generic "the branch at line")
        TUPLE_INDEX,
    ),
}

# --------------------------------------------------------------------------- max_threads

_BOUND = """
@ss.device
def tid():
    return cuda.threadIdx.x


@ss.kernel(contract=ss.LaunchContract(domain=DOM, max_threads=MAX))
def k(out: DisjointSliceND[np.float32], a: InND[np.float32], n: int) -> None:
    i = thread.index_ND()
    x = 1
    if COND:
        return
    ss.block.sync()
    out[i] = np.float32(x)
"""


def bound_kernel(domain: int, most: int, cond: str) -> str:
    """A kernel of ``domain`` whose threads leave on ``cond`` before a block barrier, under
    ``max_threads=most``."""
    nd = {1: ("", "", "1d"), 2: ("2D", "2D", "2d")}[domain]
    return (
        _BOUND.replace("DisjointSliceND", "DisjointSlice" + nd[0])
        .replace("InND", "In" + nd[1])
        .replace("index_ND", "index_" + nd[2])
        .replace("DOM", str(domain))
        .replace("MAX", str(most))
        .replace("COND", cond)
    )


#: name -> (domain, max_threads, condition): no thread leaves, or the whole block does
MAX_THREADS_ACCEPTED: dict[str, tuple[int, int, str]] = {
    "y-warp-above-1-of-64": (2, 64, "cuda.threadIdx.y // 32 > 1"),
    "block-dims-product-above-64": (2, 64, "cuda.blockDim.x * cuda.blockDim.y > 64"),
    "block-dims-product-above-32": (2, 64, "cuda.blockDim.x * cuda.blockDim.y > 32"),
    "laneid-above-40": (1, 64, "cuda.laneid > 40"),
    "one-thread-tid": (1, 1, "cuda.threadIdx.x > 0"),
    "one-thread-block-dim": (1, 1, "cuda.blockDim.x > 1"),
    "max-1024": (1, 1024, "cuda.threadIdx.x // 32 > 31"),
}

#: max_threads past a CUDA block's 1024 threads: refused by the contract (2**32 + 64 was
#: truncated to 64 in .maxntid and !range alike, 2**32 made NVVM fail with ERROR_INVALID_IR)
MAX_THREADS_PAST_A_BLOCK = (1025, 2**32, 2**32 + 64, 2**33)

#: name -> (domain, max_threads, condition, fragment): some thread leaves
MAX_THREADS_REFUSED: dict[str, tuple[int, int, str, str]] = {
    "y-warp-above-0-of-64": (2, 64, "cuda.threadIdx.y // 32 > 0", "thread-dependent"),
    "x-plus-y-of-64": (2, 64, "cuda.threadIdx.x + cuda.threadIdx.y >= 64", "thread-dependent"),
    "x-times-y-of-64": (
        2,
        64,
        "cuda.threadIdx.x * cuda.threadIdx.y >= 16 and cuda.threadIdx.x // 32 > 0",
        "thread-dependent",
    ),
    "helper-tid-of-64": (1, 64, "tid() // 32 > 2", "warp-uniform"),
    "grid-dim-and-tid": (1, 64, "cuda.gridDim.x > 64 and cuda.threadIdx.x > 3", "thread-dependent"),
    "warp-above-0-of-33": (1, 33, "cuda.threadIdx.x // 32 > 0", "warp-uniform"),
    # safe (domain=1 keeps block.z == 1), refused: the range is max_threads', not the domain's
    "z-in-1d": (1, 64, "cuda.threadIdx.z > 0", "warp-uniform"),
}

# --------------------------------------------------------------------------- libdevice

_LIBDEVICE = """
from numba.cuda import libdevice
import numba.cuda.libdevice as LD


@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i] if i.in_bounds(a) else np.float32(0)
    w = CALL(v)
    if w > 5:
        return
    s = ss.block.sum(np.float32(1))
    out[i] = s
"""

#: name -> (source, the attribute the test restores on numba.cuda.libdevice, fragment)
LIBDEVICE_REFUSED: dict[str, tuple[str, str, str]] = {
    # the real module's attribute rebound after decoration, to a plain device function
    "rebound-to-device-function": (
        _LIBDEVICE.replace("CALL", "libdevice.float_as_int")
        + "\n\n@cuda.jit(device=True)\ndef _other(v):\n    return np.int32(0)\n\n\n"
        "libdevice.float_as_int = _other\n",
        "float_as_int",
        "`libdevice.float_as_int` is not numba-cuda's libdevice function",
    ),
    # ... to another libdevice function under the old name
    "rebound-to-other-libdevice": (
        _LIBDEVICE.replace("CALL", "LD.float_as_int") + "\n\nLD.float_as_int = LD.float2int_rz\n",
        "float_as_int",
        "`LD.float_as_int` is not numba-cuda's libdevice function",
    ),
}

# --------------------------------------------------------------------------- complex tiles

_COMPLEX_1D = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.CT], x: In[np.CT]) -> None:
    i = thread.index_1d()
    a = ss.shared.tile(64, np.CT)
    t = thread.local_index()
    a[t] = x[i] if i.in_bounds(x) else np.CT(0)
    BODY
    ss.block.sync()
    out[i] = a[63 - t.index]
"""

_COMPLEX_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8)))
def k(out: DisjointSlice2D[np.CT], x: In2D[np.CT]) -> None:
    i = thread.index_2d()
    a = ss.shared.tile((8, 16), np.CT, pad=PAD)
    v = thread.local_index_2d()
    a[v] = x[i] if i.in_bounds(x) else np.CT(0)
    BODY
    ss.block.sync()
    out[i] = a[7 - cuda.threadIdx.y, 15 - cuda.threadIdx.x]
"""


def complex_tile_kernel(dims: int, dtype: str, pad: int, body: str) -> str:
    """A complex tile filled through the thread's witness, ``body`` in the fill interval,
    then read after a barrier (``dims``: 1, or 2 with ``pad``)."""
    src = _COMPLEX_1D if dims == 1 else _COMPLEX_2D
    return src.replace("CT", dtype).replace("PAD", str(pad)).replace("BODY", body)


_READ_IN_FILL = "is read by index at line"

#: name -> (dims, dtype, pad, body, fragment): another thread's element in the fill interval
COMPLEX_TILES_REFUSED: dict[str, tuple[int, str, int, str, str]] = {
    "c128-neighbour-read": (
        1,
        "complex128",
        0,
        "s = a[(t.index + 1) % 64]\n    out[i] = s",
        _READ_IN_FILL,
    ),
    "c64-neighbour-read": (
        1,
        "complex64",
        0,
        "s = a[(t.index + 1) % 64]\n    out[i] = s",
        _READ_IN_FILL,
    ),
    "c128-neighbour-real-part": (
        1,
        "complex128",
        0,
        "s = a[(t.index + 1) % 64].real\n    out[i] = np.complex128(s)",
        _READ_IN_FILL,
    ),
    "c128-neighbour-write": (
        1,
        "complex128",
        0,
        "a[(t.index + 1) % 64] = np.complex128(1)",
        "is filled only through a block-local witness of its space",
    ),
    "2d-c128-pad1-neighbour-read": (
        2,
        "complex128",
        1,
        "s = a[7 - cuda.threadIdx.y, 15 - cuda.threadIdx.x]\n    out[i] = s",
        _READ_IN_FILL,
    ),
}

#: name -> (dims, dtype, pad, body, the PTX access): safe -- the thread's own element, the
#: element read as one integer at an address aligned to it (tiles are .align 16, a padded
#: row keeps complex128 elements 16-aligned, complex64 ones 8-aligned)
COMPLEX_TILES_ACCEPTED: dict[str, tuple[int, str, int, str, str]] = {
    "c128-own-read-modify-write": (
        1,
        "complex128",
        0,
        "a[t] = a[t] * np.complex128(2j)",
        "st.shared.v2.u64",
    ),
    "2d-c64-pad1": (2, "complex64", 1, "pass", "st.shared.u64"),
    "2d-c128-pad1": (2, "complex128", 1, "pass", "st.shared.v2.u64"),
    "2d-c128-pad3-own-read-modify-write": (
        2,
        "complex128",
        3,
        "a[v] = a[v] + np.complex128(1)",
        "ld.shared.v2.u64",
    ),
}
