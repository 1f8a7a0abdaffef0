r"""Attack round 26 (an outside helper): the day's new rules -- impure reduction ops, the
static shared memory sum, constant memory trust beside unsafe stores, helper record fields by
annotation, module-attribute helpers.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness: /tmp/a26 in the session (``tryk(name, src)`` = ``load_kernel_module(tempdir,
src).k.ptx(cc=(9, 0))``; ``check_kernel_ir`` wrapped to keep the IR texts and look at
``compiled_form``). PTX checked with the local ``ptxas -arch=sm_90 -v`` (its PTX ISA is 9.0:
the ``.version 9.5`` line was lowered to 8.0, nothing else changed). No GPU used. Nothing in
simtsafe/ was changed.

=============================================================================================
FINDING 1 (MEDIUM: Tier-1 barrier steered by constant memory beside an unsafe region that
writes): ``verify/_verdict._stores_in_unsafe`` counts ``store``/``atomicrmw``/``cmpxchg``
instructions and writing inline asm only. A float atomic is a CALL in the compiled form
(``__ss.nvvm.atomic.load.add.f64.p0f64`` for ``cuda.atomic.add`` on float64, Numba's
``___numba_atomic_double_max`` CAS loop for ``cuda.atomic.max``), which
``_divergence.written_by`` knows as a write (ATOMIC_CALLS) but ``_stores_in_unsafe`` does
not. So ``trust_const`` stays True and ``c[j & 15]`` of a constant array steers
``ss.block.sync()``. The same kernel with an int64 atomic (an ``atomicrmw``) or a plain
``out.unchecked[j] = 1.0`` is REFUSED ("depends on a value loaded from memory ..."), as
round 23 made it.
=============================================================================================

PTX (``k.ptx(cc=(9, 0))``, accepted) of ``unsafe-float-atomic-trusts-const``::

    atom.global.add.f64  %fd1, [%rd9], 0d3FF0000000000000;   <- unchecked index j
    ld.const.f64  %fd2, [%rd13];                               <- c[j & 15]
    setp.leu.f64  %p1, %fd2, 0d0000000000000000;
    @%p1 bra  $L__BB0_2;
    bar.sync  0;

``cuda.atomic.max`` (``unsafe-float-atomic-max``): ``atom.global.cas.b64`` loop, then the same
``ld.const.f64`` / ``setp`` / ``@%p bra`` / ``bar.sync 0``.

Broken promise: docs/safety.md / round 23: "constant memory is not trusted beside an unsafe
region that stores (its unchecked address may land there)"; the atomic's address is as
unchecked as a store's. Fix direction (not applied): make ``_stores_in_unsafe`` use
``written_by(ins, ...)`` (non-empty) instead of its own opcode list.

=============================================================================================
FINDING 2 (MEDIUM, same rule, another route): stores of an unsafe region whose debug location
is lost. ``out.unchecked[j] = a[0]`` of a 16-byte record (align=True {f8, i8}) is, in the
compiled form, 16 ``store i8`` instructions made by SROA from the aggregate copy, every one
with ``loc is None`` (dumped from ``compiled_form``: ``store i8 %.90.unpack, ptr %.89`` ...
``loc None``). ``info.in_unsafe(None)`` is False, so none counts and constant memory stays
trusted: ``record-copy-in-unsafe-trusts-const`` is ACCEPTED (PTX: 16 ``st.global.u8
[%rd11+k]``, ``ld.const.f64 %fd1``, ``setp.leu.f64``, ``@%p1 bra``, ``bar.sync 0``).
=============================================================================================

Fix direction: a store with no location of its own takes its nearest located predecessor's
(``_Locator.loc_of``, as the verdict already does for messages), or any unlocated write in a
kernel that has unsafe regions counts.

=============================================================================================
FINDING 3 (LOW-MEDIUM: the reduction op's purity trusts constant memory unconditionally):
``verify.check_kernel_ir`` computes ``purity(compiled_form(texts, callee))`` -> ``analyze(form)``
with the default ``trust_const=True`` whatever the kernel's unsafe regions do. An op reading
``cuda.const.array_like(TABLE)[int(x) & 15]`` runs in every thread's final fold of the warp
totals; its result is declared block-uniform and steers ``ss.block.sync()`` although the kernel
has an unsafe region that stores (``out.unchecked[j] = 1.0``) -- the kernel-level analysis
refuses the very same read in the kernel body (round 23). Accepted; PTX: eight
``ld.const.f64`` in the fold, then ``setp.leu.f64 %p12, %fd47, 0d0...; @%p12 bra; bar.sync 0``.
If the unchecked store lands in the table mid-launch, threads that fold before and after it
combine differently: the "same bits in every thread" promise of block.reduce, and the barrier.
=============================================================================================

Fix direction: pass the kernel's ``trust_const`` (``not _stores_in_unsafe(form, info)``) into
``purity`` (``analyze(form, trust_const=...)``).

=============================================================================================
FINDING 4 (LOW: ptxas' raw error at the first launch, the failure round 22 fixed): the static
shared sum (``lowering/_irform.static_shared_globals`` + ``verify/_sharedsize``) adds the
objects' sizes but not their alignment padding. Every tile is ``.shared .align 16``; a 1-byte
tile and a 49144-byte tile sum to 49145 <= 49152 and are ACCEPTED, but ptxas lays them out at
0 and 16::

    .shared .align 16 .b8 _simtsafe_tile_L10_1[1];
    .shared .align 16 .b8 _simtsafe_tile_L11_2[49144];
    $ ptxas -arch=sm_90 -v pad.ptx   ->  rc 255
    ptxas error : Entry function '...' uses too much shared data (0xc008 bytes, 0xc000 max)
    ptxas info  : Used 18 registers, used 1 barriers, 49160 bytes smem

The simulator runs the same launch (grid 1, block 256: out = 3.0 everywhere): its
``_simrt.check_static_shared`` sums the same way. With tile 2 at 6144 float64 (49153 summed)
both refuse. Fix direction: sum with each object rounded up to its alignment (or to 16, what
simtsafe's tiles and accumulators use), in both.
=============================================================================================

=============================================================================================
FALSE REFUSALS and HELD: see the dicts below.
=============================================================================================
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

_TABLE = """
TABLE = np.arange(16, dtype=np.float64)
"""

FINDINGS: dict[str, str] = {
    # FINDING 1: a float atomic in an unsafe region (a call, not an atomicrmw) does not make
    # constant memory untrusted; c[j & 15] steers block.sync. Accepted (PTX above). With
    # `out: DisjointSlice[np.int64]` and `cuda.atomic.add(out.unchecked, j, 1)`: refused.
    "unsafe-float-atomic-trusts-const": _TABLE
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    with ss.unsafe("SAFETY: j is in range by the caller"):
        cuda.atomic.add(out.unchecked, j, 1.0)
    c = cuda.const.array_like(TABLE)
    if c[j & 15] > 0:
        ss.block.sync()
""",
    # FINDING 1, cuda.atomic.max on float64 (Numba's ___numba_atomic_double_max CAS loop).
    "unsafe-float-atomic-max": _TABLE
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    with ss.unsafe("SAFETY: j is in range by the caller"):
        cuda.atomic.max(out.unchecked, j, 1.0)
    c = cuda.const.array_like(TABLE)
    if c[j & 15] > 0:
        ss.block.sync()
""",
    # FINDING 2: a record copy through out.unchecked: 16 `store i8` with no debug location.
    "record-copy-in-unsafe-trusts-const": _TABLE
    + """
REC = np.dtype([("x", np.float64), ("n", np.int64)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[REC], a: In[REC], j: int) -> None:
    with ss.unsafe("SAFETY: j is in range by the caller"):
        out.unchecked[j] = a[0]
    c = cuda.const.array_like(TABLE)
    if c[j & 15] > 0:
        ss.block.sync()
""",
    # FINDING 3: the op reads constant memory in every thread's fold; its purity is computed
    # with constant memory trusted although the kernel's unsafe region stores. Accepted.
    # (`if c[j & 15] > 0: ss.block.sync()` in the kernel body instead: refused.)
    "reduce-op-const-beside-unsafe-store": _TABLE
    + """

@ss.device
def op(x, y):
    c = cuda.const.array_like(TABLE)
    return x + y + c[int(x) & 15]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    with ss.unsafe("SAFETY: j is in range by the caller"):
        out.unchecked[j] = 1.0
    s = ss.block.reduce(0.0, op)
    if s > 0:
        ss.block.sync()
""",
    # FINDING 4: 1 + 49144 = 49145 bytes summed (accepted on both targets); ptxas: 49160
    # bytes smem, "uses too much shared data (0xc008 bytes, 0xc000 max)".
    "static-shared-alignment-padding": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    t1 = ss.shared.tile(1, np.uint8)
    t2 = ss.shared.tile(6143, np.float64)
    for w in thread.block_stride(t1):
        t1[w] = 1
    for w in thread.block_stride(t2):
        t2[w] = 2.0
    ss.block.sync()
    i = thread.index_1d()
    if i.in_bounds(out):
        out[i] = t1[0] + t2[6142]
""",
}

HELD: dict[str, str] = {
    "op-reads-thread-identity": "ops reading cuda.grid(1) through a nested helper, "
    "cuda.threadIdx via a raw @cuda.jit op (refused: 'raw numba.cuda.jit function'), "
    "cuda.activemask (unsafe-only), a thread-private array at a computed index: refused "
    "(impure op / unsafe-region-required)",
    "op-pure-routes": "ops with branches (x if x > y else y; if/return), a bounded while loop, "
    "math.sqrt, fastmath=True, cuda.const.array_like read at an arg-derived index (also "
    "steering a branch inside the op): accepted, uniform result steers block.sync",
    "op-undefined-values": "a Python name bound only on one path in the op is Numba's zero "
    "(deterministic); an uninitialized cuda.local.array element at a constant index is folded "
    "by LLVM to the constant 0.0 in the op's PTX (add.f64 ..., 0d0000000000000000) -- no "
    "per-thread garbage; at a computed index the read is a load and is refused (note: "
    "`if t[1] > 0: ss.block.sync()` in a kernel body with t[1] never written is accepted "
    "although docs/safety.md says such a value 'counts as thread-dependent'; the compiled "
    "code folds it to one constant, so nothing diverges)",
    "global-array-in-op": "a global numpy TABLE read in an op is refused at decoration "
    "('Numba would compile it ... as a mutable constant'; use cuda.const.array_like)",
    "int-atomic-and-plain-store-untrust-const": "an int64 cuda.atomic.add (atomicrmw) or "
    "out.unchecked[j] = v in an unsafe region: a constant read steering block.sync is refused",
    "unsafe-local-array-scratch": "an unsafe region whose only stores are to a promoted "
    "cuda.local.array (t[0] = 1.0; v = t[0]) does not untrust constant memory (no false refusal)",
    "shared-arrays-in-helpers": "raw cuda.shared.array (40 KiB) in a helper's unsafe region + "
    "40 KiB in the kernel's: refused (81920 bytes, both named), also with the helper in "
    "another user module (each module's _cudapy_smem gets a process-unique name); shared "
    "tiles/accumulators in a helper refused at decoration",
    "tile-shared-window": "tile_shared=131072 with two 64 KiB tiles: accepted (window not "
    "counted); tile_shared=65536 with a 64 KiB tile + a 48000-byte accumulator: accepted",
    "record-field-named-like-method": "helper with r: In[REC], REC fields named view, fill, T, "
    "reshape, flat, sum, base, itemset, unchecked, ctypes: every use of those names on another "
    "array is refused -- In offers only dtype/itemsize/nbytes/ndim/shape/size/strides, "
    "DisjointSlice.fill and LocalArray.view/.fill/.reshape/.itemset do not type, "
    "o.unchecked / b.unchecked outside unsafe -> UnsafeRegionRequired, .data refused by policy",
    "module-attribute-helpers": "pkg.mod.helper(...), `from pkg import mod as pm; "
    "pm.helper(...)`, `import pkg; import pkg.mod; pkg.mod.helper(...)`: in k._reachable() "
    "(cache key); a helper's unsafe store via hm.poke / pkg.mod.poke / pm.poke refuses the "
    "x[0]-steered block.sum like a direct call",
    "helpers-in-tuples-or-as-values": "OPS[0](...), hm.OPS[1](...), a module-level tuple of "
    "helpers: refused at decoration ('a tuple object, which is not on simtsafe's allow-list'); "
    "apply(hm.poke, ...) refused ('a function used as a value')",
}

# Fixed, each with a rejected twin: op-dynamic-tuple-index, op-local-array, op-by-module-attribute and helper-string-annotation-record-defined-later (op-warpsize: tests/ptx/test_attacks26_ptx.py) -- tests/kernels/fixed_refusals.py.
FALSE_REFUSALS: dict[str, str] = {
    "op-dynamic-tuple-index": "`TT = (1.0, 2.0, 3.0, 4.0)`; `def op(x, y): return x + y + "
    "TT[int(x) & 3]` in ss.warp.reduce(v, op) or ss.block.reduce(v, op) (no barrier after "
    'it) is refused: "`warp.reduce` needs every thread of the warp to reach it ... depends '
    "on which way the branch at line N (in helper op) went\". The analysed form keeps Numba's "
    "tuple getitem switch with its out-of-range `switch.else -> ret void` (the & 3 bound is "
    "not folded there), an early exit inside the reduction. The same TT[j & 3] in a kernel "
    "body before ss.block.sum is accepted.",
    "op-local-array": "an op using a thread-private cuda.local.array at a computed index "
    "(t[0..3] = x, y, x, y; return t[int(x) & 3] + t[int(y) & 3]) is refused as an impure op "
    "(an alloca load is 'memory'); pure by construction -- docs/safety.md's 'reads no ... "
    "memory' covers it only by wording",
    "op-warpsize": "`return x + y * cuda.warpsize` refused as an impure op: "
    "llvm.nvvm.read.ptx.sreg.warpsize is not among _divergence._GRID_SREGS (it is 32 in every "
    "thread)",
    "op-by-module-attribute": "ss.block.reduce(v, hm.op) / pkg.mod.op: refused at typing "
    "(\"Numba cannot type `.op of Module(<module 'hm26' ...>)`\") while `from hm import op` "
    "works and mod.helper(x) calls are supported since round 23",
    "helper-string-annotation-record-defined-later": '`def h(r: "In[REC]", w: Index1D)` with '
    "REC defined below the helper: `r[w].mean` refused ('attribute `.mean` is not allowed in "
    "kernels'): annotated_record_fields evaluates annotations at decoration and swallows the "
    'NameError, so the fields add nothing; `r[w]["mean"]` in the same helper is accepted, '
    "and the kernel (frozen later) resolves REC fine",
}
