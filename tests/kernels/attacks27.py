r"""Attack round 27 (an outside helper): the relaxations of branch falserefusals15 --
thread-private memory followed by the divergence analysis (``verify/_private``), a masked
``switch`` default dropped (``verify/_feasible``), ``numba.cuda`` by identity under any alias
(``decoration/_policy.resolve_chain``), reduction ops through user modules and the
``state=`` keyword (``decoration/_rewrite``), helper field reads by inferred type
(``lowering/_fieldreads``), ``thread.block_stride`` over a 1D shared accumulator.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness: /tmp/a27 in the session (``tryk(name, src)`` = ``load_kernel_module(tempdir,
src).k.ptx(cc=(9, 0))``; ``check_kernel_ir`` wrapped to keep the IR texts, dumped with
``compiled_form`` and the levels of ``verify._divergence.analyze``). No GPU used; values on
the simulator (``NUMBA_ENABLE_CUDASIM=1``, ``simtsafe.sim.check``). Nothing in simtsafe/
was changed.

The private-memory rule held against every route tried (HELD below): a store at a
thread-dependent index, under a loop with a thread-dependent trip count or ``break``, via a
helper, through a tuple, in a 2D array's row, of a ``warp.scan`` value, after a raise some
threads take, and a value carried out of a loop with a thread-dependent exit (the loop's
values are thread-dependent there already: its header phi's incoming edge comes from a
block control dependent on the exit). The findings are on the simulator's side.

=============================================================================================
FINDING 1 (LOW-MEDIUM: simulator and compiled code disagree, and the documented report is
missing): a Tier-1 ``cuda.local.array`` read before it is written. docs/safety.md ("Reads of
thread-private elements never written", rewritten on this branch) says the alloca is
zero-filled where the function starts, not where the array is made -- made in a loop it
holds the previous iteration's values on the GPU, the simulator gives 0 at each make -- and
"``simtsafe.sim.check`` reports each use as ``uninitialized``". It does not for a Tier-1
array: ``lowering/_tiles_sim.SimLocalArray`` is a plain ``np.zeros`` with no shadow, so the
read is a defined 0. ``local-array-made-in-loop`` is accepted; its compiled form (dumped)
stores the four zeros in ``%entry`` only and the loop body loads ``%__ss.lmem[j & 3]``
then stores 1.0 there, so on the GPU ``out[i] = 0 + 1 + 1 = 2.0``. ``sim.check(k, 1, 32,
zeros(32), zeros(32), 1)``: ``no findings``, ``out = 0.0``. ``local-array-never-written``
(one read, no loop) also gives ``no findings``. A raw ``@cuda.jit`` kernel with the same bug
is reported (docs/checker.md's ``local_uninit_bug``).
=============================================================================================

Fix direction (not applied): give SimLocalArray the same shadow as shared tiles (undefined
until stored, per element), so the read is reported as ``uninitialized`` at its use; or
zero-fill it once per thread where the function starts, as Numba does, if the simulator is
to match the GPU's values.

=============================================================================================
FINDING 2 (LOW-MEDIUM: simulator and compiled code disagree): a record field named like an
attribute kernels are allowed (``size``, ``ndim``, ``shape``, ``dtype``, ``real``,
``imag``, ``max``, ``min``). Such names are in the rewrite's attribute table, so
``r[w].size`` is not given on as ``__ss_field`` (the new ``lowering/_fieldreads`` route for
``mean``, ``T``...): on the compiled target Numba reads the field (PTX of
``record-field-named-size``: ``ld.global.u8 [%rd11]`` ... ``[%rd11+7]`` for ``size`` at
offset 0 and ``[%rd11+16..23]`` for ``ndim``, then ``fma.rn.f64 %fd3, %fd1, 100, %fd2``:
``3 + 100 * 7 = 703``), while the simulator's record element is a numpy record whose
``.size`` is 1 and ``.ndim`` 0: ``out = 1.0`` (no finding). The same in a helper
(``r[w].size`` with ``r`` unannotated) and in the kernel body. With a field ``real``
(``record-field-named-real``) the simulator returns the whole record for ``.real`` and the
launch fails with numpy's raw ``UFuncTypeError: ufunc 'multiply' did not contain a loop with
signature matching types (dtype('float64'), dtype((numpy.record, ...)))`` -- not a
simtsafe error; the compiled kernel reads the field.
=============================================================================================

Fix direction: route every record attribute read through the field table on the simulator
(``_sim._field_read`` already does so for the ``__ss_field`` names), or refuse field names
that collide with an allowed array attribute (as ``view``/``fill``... are refused on arrays).

=============================================================================================
FALSE REFUSALS and HELD: see the dicts below.
=============================================================================================
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD", "HELD_KERNELS"]

FINDINGS: dict[str, str] = {
    # FINDING 1: made in a loop, the array keeps the previous iteration's 1.0 on the GPU
    # (zeros stored in %entry only): out = 2.0. The simulator: out = 0.0, "no findings".
    "local-array-made-in-loop": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    i = thread.index_1d()
    s = 0.0
    for q in range(3):
        t = cuda.local.array(4, np.float64)
        s += t[j & 3]
        t[j & 3] = 1.0
    if i.in_bounds(out):
        out[i] = s
""",
    # FINDING 1: an element never written stored to the output: "no findings" on the
    # simulator (docs/safety.md: sim.check reports each use as `uninitialized`).
    "local-array-never-written": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    i = thread.index_1d()
    t = cuda.local.array(4, np.float64)
    if i.in_bounds(out):
        out[i] = t[j & 3]
""",
    # FINDING 2: the compiled kernel reads the fields (3 + 100 * 7 = 703); the simulator
    # numpy's record attributes (.size 1, .ndim 0): 1.0.
    "record-field-named-size": """
REC = np.dtype([("size", np.float64), ("real", np.float64), ("ndim", np.float64)])


@ss.device
def h(r, w):
    return r[w].size + 100.0 * r[w].ndim


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.in_bounds(a):
        out[i] = h(a, i) + a[i].size
""",
    # FINDING 2: `.real` of the simulator's record is the record: numpy's raw UFuncTypeError.
    "record-field-named-real": """
REC = np.dtype([("size", np.float64), ("real", np.float64), ("ndim", np.float64)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.in_bounds(a):
        out[i] = 10.0 * a[i].real
""",
}

_B = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    i = thread.index_1d()
{body}
    if i.in_bounds(out):
        out[i] = 1.0
"""


def _k(body: str, pre: str = "") -> str:
    lines = body.strip("\n").split("\n")
    return pre + _B.format(body="\n".join("    " + line for line in lines))


_SYNC = "if t[j & 3] > 0:\n    ss.block.sync()"
_DIVERGENT = "needs every thread of the block to reach it"
_UNSAFE = "is allowed only inside `with simtsafe.unsafe("
_IMPURE = "must combine its two values from them alone"
_TUPLE_OP = """
TT = (1.0, 2.0, 3.0, 4.0)


@ss.device
def op(x, y):
    return x + y + TT[{expr}]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    v = 0.0
    if i.in_bounds(a):
        v = a[i]
    s = ss.block.reduce(v, op)
    if s > 3:
        ss.block.sync()
    if i.in_bounds(out):
        out[i] = s
"""
_OPS = """
@ss.device
def op(x, y):
    return x + y


@ss.device
def op_tid(x, y):
    return x + y + cuda.threadIdx.x


"""

#: Refused attacks: name -> (kernel source, a fragment of the refusal).
HELD_KERNELS: dict[str, tuple[str, str]] = {
    # --- 1. private memory (verify/_private) ---
    "local-store-thread-index": (
        _k("t = cuda.local.array(4, np.float64)\nt[i.index & 3] = 1.0\n" + _SYNC),
        _DIVERGENT,
    ),
    "local-store-thread-index-read-const": (
        _k(
            "t = cuda.local.array(4, np.float64)\nt[i.index & 3] = 1.0\n"
            "if t[0] > 0:\n    ss.block.sync()"
        ),
        _DIVERGENT,
    ),
    "local-store-thread-trip-loop": (
        _k(
            "t = cuda.local.array(4, np.float64)\nn = 0\nif i.in_bounds(a):\n    n = int(a[i])\n"
            "for q in range(n):\n    t[j & 3] = 1.0\n" + _SYNC
        ),
        _DIVERGENT,
    ),
    "local-store-loop-break": (
        _k(
            "t = cuda.local.array(4, np.float64)\nfor q in range(4):\n    if i.index == q:\n"
            "        break\n    t[(j + q) & 3] = 2.0\n" + _SYNC
        ),
        _DIVERGENT,
    ),
    "local-store-via-helper": (
        "@ss.device\ndef put(t, k, v):\n    t[k] = v\n\n"
        + _k("t = cuda.local.array(4, np.float64)\nput(t, j & 3, float(i.index))\n" + _SYNC),
        _DIVERGENT,
    ),
    "local-store-through-tuple": (
        _k(
            "t = cuda.local.array(4, np.float64)\npair = (t, 1)\n"
            "pair[0][j & 3] = float(i.index)\n" + _SYNC
        ),
        _DIVERGENT,
    ),
    "local-2d-thread-row": (
        _k(
            "t = cuda.local.array((2, 4), np.float64)\nt[i.index & 1, j & 3] = 1.0\n"
            "if t[0, j & 3] > 0:\n    ss.block.sync()"
        ),
        _DIVERGENT,
    ),
    "local-store-warp-scan": (
        _k(
            "t = cuda.local.array(4, np.float64)\nt[j & 3] = ss.warp.scan(1.0)\n"
            "if t[j & 3] > 3.0:\n    ss.warp.sum(1.0)"
        ),
        "needs every thread of the warp to reach it",
    ),
    "local-store-after-raise": (
        _k(
            "t = cuda.local.array(4, np.float64)\nTT = (1.0, 2.0, 3.0, 4.0)\n"
            "t[j & 3] = TT[i.index]\n" + _SYNC
        ),
        _DIVERGENT,
    ),
    "local-store-after-divergent-loop": (
        _k(
            "t = cuda.local.array(4, np.float64)\nn = 0.0\nif i.in_bounds(a):\n    n = a[i]\n"
            "x = 1.0\nwhile True:\n    x = x * 1.5 + 0.25\n    if x > n:\n        break\n"
            "t[j & 3] = x\n" + _SYNC
        ),
        _DIVERGENT,
    ),
    # --- 2. masked switch defaults (verify/_feasible) ---
    "tuple-op-mask-7": (_TUPLE_OP.format(expr="int(x) & 7"), "needs every thread"),
    "tuple-op-mask-minus-1": (_TUPLE_OP.format(expr="int(x) & -1"), "needs every thread"),
    "tuple-op-mask-minus-4": (_TUPLE_OP.format(expr="int(x) & -4"), "needs every thread"),
    # --- 3. numba.cuda by identity (decoration/_policy.resolve_chain) ---
    "alias-nc-syncthreads": (_k("nc.syncthreads()", "from numba import cuda as nc\n"), _UNSAFE),
    "alias-c2-syncthreads": (_k("c2.syncthreads()", "import numba.cuda as c2\n"), _UNSAFE),
    "alias-numba-cuda-syncthreads": (_k("numba.cuda.syncthreads()", "import numba\n"), _UNSAFE),
    "alias-nc-atomic": (_k("nc.atomic.add(a, 0, 1.0)", "from numba import cuda as nc\n"), _UNSAFE),
    "alias-nc-shfl": (
        _k("v = nc.shfl_sync(0xffffffff, 1.0, 0)", "from numba import cuda as nc\n"),
        _UNSAFE,
    ),
    "alias-nc-cg-grid": (
        _k("g = nc.cg.this_grid()\ng.sync()", "from numba import cuda as nc\n"),
        _UNSAFE,
    ),
    "alias-nc-activemask": (_k("m = nc.activemask()", "from numba import cuda as nc\n"), _UNSAFE),
    "alias-from-syncthreads": (
        _k("st()", "from numba.cuda import syncthreads as st\n"),
        _UNSAFE,
    ),
    "alias-from-local": (
        _k("t = local.array(4, np.float64)\nt[j] = 1.0", "from numba.cuda import local\n"),
        "kernels may follow attributes of modules only",
    ),
    "alias-module-as-value": (_k("m = cuda\nm.syncthreads()"), "is a module used as a value"),
    "alias-nc-threadidx-steers-sync": (
        _k("if nc.threadIdx.x > 3:\n    ss.block.sync()", "from numba import cuda as nc\n"),
        _DIVERGENT,
    ),
    "alias-nc-local-thread-value": (
        _k(
            "t = nc.local.array(4, np.float64)\nt[j & 3] = float(i.index)\n" + _SYNC,
            "from numba import cuda as nc\n",
        ),
        _DIVERGENT,
    ),
    # --- 4. reduce(state=, op=), ops, field reads, accumulator walks ---
    "reduce-op-keyword-reads-tid": (
        _k("s = ss.block.reduce(1.0, op=op_tid)\nif s > 3:\n    ss.block.sync()", _OPS),
        _IMPURE,
    ),
    "reduce-state-keyword-reads-tid": (
        _k("s = ss.block.reduce(state=1.0, op=op_tid)\nif s > 3:\n    ss.block.sync()", _OPS),
        _IMPURE,
    ),
    "reduce-state-and-v": (
        _k("s = ss.block.reduce(v=1.0, state=2.0, op=op)", _OPS),
        "it has no parameter 'state'",
    ),
    "field-mean-on-input": (
        "@ss.device\ndef h(r, w):\n    return r.mean\n\n"
        + _B.format(body="").replace("out[i] = 1.0", "out[i] = h(a, i)"),
        "attribute `.mean` is not allowed in kernels on a value of type readonly array",
    ),
    "field-T-on-input": (
        "@ss.device\ndef h(r, w):\n    return r.T[0]\n\n"
        + _B.format(body="").replace("out[i] = 1.0", "out[i] = h(a, i)"),
        "attribute `.T` is not allowed in kernels on a value of type readonly array",
    ),
    "field-flat-on-local-array": (
        "@ss.device\ndef h(r, w):\n    t = cuda.local.array(4, np.float64)\n"
        "    return t.flat[0]\n\n" + _B.format(body="").replace("out[i] = 1.0", "out[i] = h(a, i)"),
        "attribute `.flat` is not allowed in kernels on a value of type LocalArray",
    ),
    "field-T-on-tuple": (
        "@ss.device\ndef h(r, w):\n    return r.T\n\n"
        + _B.format(body="").replace("out[i] = 1.0", "out[i] = h((1.0, 2.0), i)"),
        "attribute `.T` is not allowed in kernels on a value of type UniTuple",
    ),
    "field-absent-on-record": (
        'REC = np.dtype([("mean", np.float64), ("T", np.float64)])\n\n'
        "@ss.device\ndef h(r, w):\n    return r[w].var\n\n"
        + _B.format(body="")
        .replace("a: In[np.float64]", "a: In[REC]")
        .replace("out[i] = 1.0", "out[i] = h(a, i)"),
        "attribute `.var` is not allowed in kernels on a value of type Record",
    ),
    "acc-walk-update-phase": (
        _k(
            "bins = ss.shared.accumulator(256, np.float64)\nbins.add(i.index & 255, 1.0)\n"
            "s = 0.0\nfor w in thread.block_stride(bins):\n    s += bins[w]"
        ),
        "with no block barrier between them",
    ),
    "acc-walk-before-updates": (
        _k(
            "bins = ss.shared.accumulator(256, np.float64)\ns = 0.0\n"
            "for w in thread.block_stride(bins):\n    s += bins[w]\n"
            "bins.add(i.index & 255, 1.0)\nss.block.sync()"
        ),
        "with no block barrier between them",
    ),
    "acc-walk-next-iteration-update": (
        _k(
            "bins = ss.shared.accumulator(256, np.float64)\ns = 0.0\nfor it in range(2):\n"
            "    bins.add((i.index + it) & 255, 1.0)\n    ss.block.sync()\n"
            "    for w in thread.block_stride(bins):\n        s += bins[w]"
        ),
        "with no block barrier between them",
    ),
    "acc-walk-remade-in-loop": (
        _k(
            "s = 0.0\nfor it in range(2):\n    bins = ss.shared.accumulator(256, np.float64)\n"
            "    bins.add((i.index + it) & 255, 1.0)\n    ss.block.sync()\n"
            "    for w in thread.block_stride(bins):\n        s += bins[w]"
        ),
        "cleared (made again, zero-filled)",
    ),
    "acc-walk-write-through-witness": (
        _k(
            "bins = ss.shared.accumulator(256, np.float64)\nss.block.sync()\n"
            "for w in thread.block_stride(bins):\n    bins[w] = 1.0"
        ),
        "an accumulator is not written with `acc[i] = v`",
    ),
    "acc-walk-2d": (
        _k(
            "bins = ss.shared.accumulator((16, 16), np.float64)\nss.block.sync()\n"
            "for w in thread.block_stride(bins):\n    s = bins[w]"
        ),
        "thread.block_stride() walks a 1D shared accumulator",
    ),
    "acc-walk-witness-writes-output": (
        _k(
            "bins = ss.shared.accumulator(512, np.float64)\nss.block.sync()\n"
            "for w in thread.block_stride(bins):\n    out[w] = bins[w]"
        ),
        "witness cannot write a DisjointSlice",
    ),
}

#: Accepted twins (sound): each must keep compiling with its barrier.
ACCEPTED: dict[str, str] = {
    "local-uniform-store": _k(
        "t = cuda.local.array(4, np.float64)\nt[j & 3] = 1.0\n"
        "if t[(j + 1) & 3] > 0:\n    ss.block.sync()"
    ),
    "local-block-sum-store": _k(
        "t = cuda.local.array(4, np.float64)\nt[j & 3] = ss.block.sum(1.0)\n" + _SYNC
    ),
    "local-uniform-via-helper": "@ss.device\ndef put(t, k, v):\n    t[k] = v\n\n"
    + _k("t = cuda.local.array(4, np.float64)\nput(t, j & 3, 2.0)\n" + _SYNC),
    "op-local-state-partly-written": """
@ss.device
def op(x, y):
    t = cuda.local.array(4, np.float64)
    if x > y:
        t[int(x) & 3] = x
    return x + y + t[int(y) & 3]

"""
    + _k("s = ss.block.reduce(1.0, op)\nif s > 3:\n    ss.block.sync()"),
    "tuple-op-mask-3": _TUPLE_OP.format(expr="int(x) & 3"),
    "tuple-op-mask-3-minus-1": _TUPLE_OP.format(expr="(int(x) & 3) - 1"),
    "reduce-state-keyword-thread-value": _k(
        "s = ss.block.reduce(state=float(i.index), op=op)\nif s > 3:\n    ss.block.sync()", _OPS
    ),
}

HELD: dict[str, str] = {
    **{name: fragment for name, (_src, fragment) in HELD_KERNELS.items()},
    "op-local-state-partly-written": "an op whose scratch array is written only when x > y "
    "(t zero-filled at the op's entry, so the read is 0 or x): pure, accepted -- correct, the "
    "result is a function of (x, y) alone",
    "local-array-beside-unsafe": "any store in an unsafe region (stores_in_unsafe) turns the "
    "private-memory rule off (trust=False): an unchecked raw local array cannot overwrite a "
    "followed one",
    "tuple-op-mask-3-minus-1": "`TT[(int(x) & 3) - 1]`: accepted, sound (-1..2 are positions "
    "of a 4-tuple; LLVM folds the switch)",
    "module-op-routes": "ss.block.reduce(v, hm.op_tid) / hm.op_sync / op=hm.op_tid: refused "
    "as impure; hm.NOTFN (a float): refused ('must be one of operator.add ...'); hm.cuda."
    "syncthreads() and hm.c2.shared.array(...) through a user module's numba.cuda: gated "
    "(UnsafeRegionRequired), as the direct spelling",
    "alias-nc-local-oob": "`t = nc.local.array(4, f8); t[j] = 1.0` outside unsafe: the "
    "Tier-1 bounds-checked array (rewritten as cuda.local.array is)",
}

FALSE_REFUSALS: dict[str, str] = {
    # tuple-op-masked-other-shapes: fixed (verify/_feasible value ranges), moved to
    # tests/kernels/fixed_refusals.py (op-tuple-index-bounded-shapes and its twins)
    # const-table-through-user-module: fixed (decoration/_rewrite._const_array through
    # modules), moved to tests/kernels/fixed_refusals.py (and its rejected twins)
}
