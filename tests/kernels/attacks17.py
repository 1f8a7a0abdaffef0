r"""Attack round 17 (an outside helper): ownership won by atomics, row/column spaces, vec access,
the uniformity analysis, BoundLaunch/graphs and ``covers`` with output tiles.

One finding (several routes), then the probes that held. Kernels are module bodies for
``tests.kernels.load_kernel_module`` (kernel ``k``; one block of 64 threads, ``out`` and ``a``
64 float32, ``a = arange(64)``).

How each was run (the scratch harness only loads the body with ``load_kernel_module`` and calls
``k.ptx(cc=(9, 0))``; on the simulator ``k.prepare(grid=1, block=64)(out, a)`` and
``simtsafe.sim.check(k, 1, 64, out, a)``)::

    cd /work/wt-att17 && PYTHONPATH=/work/wt-att17 .venv/bin/python -c "
    import pathlib, tempfile
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks17 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['tile-record-field-race'])
    print(m.k.ptx(cc=(9, 0)))" | grep -n 'st.shared\|bar.sync\|ld.shared'

    # the simulator (race visible in the result, sim.check silent):
    cd /work/wt-att17 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-att17 .venv/bin/python -c "
    import pathlib, tempfile, numpy as np
    from numba import cuda
    from simtsafe import sim
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks17 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()),
                           FINDINGS['tile-record-field-race-subscript'])
    o, a = np.zeros(64, np.float32), np.arange(64, dtype=np.float32)
    r = sim.check(m.k, 1, 64, o, a); print(r.ok, r.outputs['out'])      # True, [63. 63. ...]
    d = cuda.to_device(o); m.k.prepare(grid=1, block=64)(d, cuda.to_device(a))
    print(d.copy_to_host())"                                              # [63. 63. ...]

=============================================================================================
FINDING 1 (HIGH): a record element of a shared tile (or of a raw shared array) whose dtype has
an ARRAY FIELD is a writable, unchecked view of shared memory. Tier 1 (no unsafe region).
=============================================================================================

What it does. ``t = ss.shared.tile(n, REC)`` with ``REC = np.dtype([("f", np.float32, (4,))])``
is accepted. ``e = t[0]`` is a tile read by index (read phase) and gives Numba's record, which
is a REFERENCE to the tile's bytes; ``e.f`` (an attribute READ, which the decoration allows on
records) is Numba's nested array over those bytes, mutable and not bounds-checked, and
``e.f[j] = v`` / ``e["f"][j] = v`` is a plain ``setitem`` on an array -- not a record store
(so neither the decoration's "attribute stores only on out[w].field" rule nor the typing rule
refusing ``r["x"] = v`` / ``r[0] = v`` on records applies), not a tile store (so the tile's
witness typing never sees it).

Promises broken (docs/safety.md):
  * "No two threads write the same output element" / the phase rule "between two barriers a
    shared tile is either filled (one writer per element) or read (nobody writes)": in
    ``tile-record-field-race`` all 64 threads store to ``t[0].f[0]``.
  * "no write lands outside its [array]": in ``tile-record-field-oob`` thread ``x`` stores at
    byte ``4 * x`` of a 64-byte tile (threads 16..63 write past it, into whatever shared object
    follows); ``dynamic-tile-record-field-oob`` writes past the launch's dynamic shared memory.
  * In a fill phase, ``t[lw].f[4]`` is the NEXT thread's element (``fill-phase-neighbour``):
    odd thread x and even thread x+1 both write ``t[x+1].f[0]``; thread 63 writes past the tile.
  * "A raw value obtained inside a region may be used only inside unsafe regions, whatever
    route it takes": ``raw-shared-record-escape`` -- "an element read from a raw array is a
    plain value again" (decoration/_taint.py) is false for such a record: it carries the
    shared array out of the region and is written outside every region.
  * simulator vs compiled / sim.check: ``sim.check`` reports NO finding for the race
    (``tile-record-field-race-subscript``; writes through a record field's view are not
    recorded), while the replay's result shows it (``out`` is 63 in every element: every
    thread's store landed on one element, the last writer won). The attribute spelling
    (``e.f``) fails on the simulator (``numpy.void`` has no attribute ``f``: SafetyError
    rule="simulator") yet compiles and runs on the GPU; the out-of-range index raises
    IndexError on the simulator (numpy bounds-checks) but is an unguarded store on the GPU.

How demonstrated:
  * PTX (every body below): accepted; e.g. ``tile-record-field-race`` compiles to an
    unconditional ``st.shared.f32 [_simtsafe_tile_L14_1], %f5;`` executed by every thread
    (no predicate on %tid), then ``bar.sync 0; ld.shared.f32 %f4, [_simtsafe_tile_L14_1];``.
    ``tile-record-field-oob``: ``mul.wide.u32 %rd11, %r1(tid.x), 4; add.s64 %rd13,
    _simtsafe_tile_L13_1, %rd11; st.shared.f32 [%rd13]`` with ``.shared .align 16 .b8
    _simtsafe_tile_L13_1[64]`` -- no compare.
  * Simulator (``tile-record-field-race-subscript``), NUMBA_ENABLE_CUDASIM=1:
    ``k.prepare(grid=1, block=64)(out, a)`` -> ``out == [63.0] * 64`` (a = arange(64): a
    correct kernel would give out == a), and ``sim.check(k, 1, 64, out, a)`` -> "no findings",
    ``report.outputs["out"] == [63.0] * 64``.

Why the checks missed it (compiled form): the write is a ``store float`` through a GEP off the
tile's ``addrspace(3)`` global that no witness tag marks; the compiled-form tile-phase check
(verify/_tilephases.py) only refuses a write that shares an interval with a read, an atomic,
a witness store or another fill -- it leaves "is this store allowed at all" to the typing,
and the typing never sees a store into a tile: what Numba types is ``setitem(array(float32,
1d, C), int, float32)`` on the nested-array field, an ordinary mutable array. The parameter
rule that refuses array-field records (decoration/_params.py ``_subarray_field``: In,
DisjointSlice, AppendBuffer, HashValues, Accumulate, nested records too) is not applied to
``shared.tile`` / ``shared.dynamic_tile`` dtypes, nor to ``cuda.shared/local.array`` (raw) or
a ``@simtsafe.device`` parameter annotated with such a record.

Fix direction (not applied here): refuse array-field record dtypes for tiles / dynamic tiles
(and raw arrays, or keep their elements raw in the taint analysis), or refuse ``getattr`` of an
array-typed record field (and ``getitem(record, "f")``) while a simtsafe kernel is typed.
"""

from __future__ import annotations

__all__ = ["FINDINGS", "HELD", "FALSE_REFUSALS"]

#: name -> kernel module body (each was ACCEPTED by ``k.ptx(cc=(9, 0))``; fixed: refused at typing
#: by name, and by the compiled-form check ``lowering/_recordfields.py`` -- tests/ptx/test_attacks17_ptx.py)
FINDINGS: dict[str, str] = {
    # Tier 1: every thread stores to t[0].f[0] (write-write race in one shared element).
    "tile-record-field-race": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(4, REC)
    e = t[0]  # a read by index: a record REFERENCE into the tile
    e.f[0] = a[w]  # every thread stores to the same shared element
    ss.block.sync()
    out[w] = t[0].f[0]
""",
    # The same by subscript: also runs on the simulator, where out == [63] * 64 and
    # sim.check reports no finding.
    "tile-record-field-race-subscript": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(4, REC)
    e = t[0]  # a read by index: a record REFERENCE into the tile
    e["f"][0] = a[w]  # every thread stores to the same shared element
    ss.block.sync()
    out[w] = t[0]["f"][0]
""",
    # Tier 1: thread x stores at byte 4x of a 64-byte tile (out of bounds from x = 16).
    "tile-record-field-oob": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(4, REC)  # 64 bytes
    t[0].f[cuda.threadIdx.x] = a[w]  # bytes 0 .. 255: threads 16..63 write past the tile
    ss.block.sync()
    out[w] = t[0].f[0]
""",
    # Fill phase: the own element's f[4] is the next element's f[0] (write-write race; thread
    # 63 past the tile).
    "fill-phase-neighbour": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, REC)
    lw = thread.local_index()
    # the thread's own element, but f[4] is the NEXT element's f[0]: odd thread x writes
    # t[x + 1].f[0], which even thread x + 1 writes too (thread 63: past the tile)
    t[lw].f[4 * (cuda.threadIdx.x % 2)] = a[w]
    ss.block.sync()
    out[w] = t[cuda.threadIdx.x].f[0]
""",
    # Through a helper: the tile element is passed (a "read" at the call), the helper writes.
    "helper-writes-tile-record": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.device
def put(r: REC, j: int, v: np.float32) -> None:
    r.f[j] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(4, REC)
    put(t[0], cuda.threadIdx.x, a[w])  # a tile "read" at the call; the helper writes
    ss.block.sync()
    out[w] = t[0].f[0]
""",
    # A dynamic tile: past the launch's dynamic shared memory.
    "dynamic-tile-record-field-oob": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, dynamic_shared=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.dynamic_tile(REC)  # 64 bytes: 4 records
    t[0].f[cuda.threadIdx.x] = a[w]  # up to byte 255: past the launch's dynamic shared memory
    ss.block.sync()
    out[w] = t[0].f[0]
""",
    # Tier 2 kernel, but the store is OUTSIDE every unsafe region: the record element of a raw
    # shared array is taken for a plain value by the taint analysis.
    "raw-shared-record-escape": """
REC = np.dtype([("f", np.float32, (4,))])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    with ss.unsafe("SAFETY: only makes the array; nothing is written here"):
        s = cuda.shared.array(4, REC)
        e = s[0]  # "an element of a raw array is a plain value": leaves the region
    e.f[cuda.threadIdx.x] = a[w]  # outside every region: racing, out-of-bounds shared store
    out[w] = e.f[0]
""",
}

#: Probes that HELD (refused, or reviewed and found sound): name -> what was tried and the result.
HELD: dict[str, str] = {
    "match-capture-of-raw": "`match t: case s:` inside a region binding a raw shared array "
    "-> refused at decoration (`match` is not supported in kernels)",
    "in-nested-record-array-field": "In[REC] with REC = {inner: {f: float32[4]}, g} -> refused "
    "(record field 'inner.f' is an array); AppendBuffer / HashValues / Accumulate of an "
    "array-field record -> refused the same way",
    "generic-typevar-bound-to-record": "In[T] with an unconstrained TypeVar, launched with a "
    "record array -> ArgumentTypeError (T=void128: name the record dtype); instantiate(T=REC) "
    "-> refused at decoration",
    "tile-slices": "t[0:2], t[:], t[...] of a shared tile then a store -> refused at typing "
    "(tiles have no slices)",
    "raw-2d-row-escape": "cuda.shared.array(N) with N = (4, 16) a module constant, shape=(N, 16) by "
    "keyword, (N,) + (16,): `row = t[0]` kept raw -> UnsafeRegionRequired when used outside",
    "uniform-2d-input-load": "a2[r, c] under `c < a2.shape[1]` steering block.sync -> refused "
    "(2D input not proven)",
    "uniform-ldcg": "cuda.ldcg(a, c) under `0 <= c < a.size` -> accepted (in range: sound); "
    "without `0 <=` -> refused",
    "uniform-reversed-or-offset-view": "b = a[::-1] / a[c:] / a[1:] then b[c] under a guard on "
    "b.size -> refused (conservative, see FALSE_REFUSALS); since fixed for a constant start "
    "(a[1:], a[3:]): accepted, b = a[::-1] / a[c:] / a[1:n] still refused "
    "(tests/ptx/test_attacks17_ptx.py)",
    "warp-reduce-user-op": "review of lowering/_coop.py: a user op (not trusted commutative) "
    "uses the down tree + shfl.idx broadcast, not the xor butterfly, so every lane gets lane "
    "0's value; builtin float max/min use fmax/fmin (NaN-ignoring, commutative)",
    "append-claim": "review of lowering/_append.py: activemask/lanemask_lt inline asm is "
    "convergent+sideeffect, one leader atomic of popc(mask), shfl with that mask; the slot is "
    "bounds-selected to the sentinel; block_claim: ballot over geo.mask, 33-slot exchange, "
    "keep cast to i1 only from a Boolean type",
    "hash-insert": "review of lowering/_hash.py: EMPTY test after the key's conversion to the "
    "table type; witness only on the path whose cmpxchg returned EMPTY",
    "columns": "out[row, w]: _column_witness takes (Integer, witness) only, row and column both "
    "compared unsigned with the output's shape",
    "vec": "review of lowering/_vec.py: run index compared before the multiply; 2D rows "
    "checked; vec.store only on an OutTile, store_at only on raw (Tier 2)",
    "bound-launch": "review of host/_bound.py + _launch.py: the memo (what BoundLaunch skips "
    "checks with) is taken only for exact DeviceNDArray (stable) or CuPy/PyTorch with a "
    "fingerprint; other CAI objects are never memoized; on the simulator nothing is memoized, "
    "so a bound call re-runs every check; inside simtsafe.graph() a bound call is recorded "
    "through the full check",
    "covers-tile-sizes": "review of decoration/_rewrite._note_out_tile: sizes only from int "
    "literals / scope constants by parameter name (positional or keyword); *args, other names, "
    "bools, values < 1 -> no entry (covers counts one element a thread: the safe side); the "
    "contract's domain defaults to 1, so covers always runs with a proven launch rank",
}

#: Safe, natural code refused (secondary). Both fixed since: accepted by the compiled-form
#: range proof (verify/_ranges.py: a slice of an input at a proven start, the conjuncts of a
#: branch on ``x and y``, a vec.load run), their thread-dependent and wrongly guarded twins
#: refused (tests/ptx/test_attacks17_ptx.py; values on the simulator:
#: tests/sim/test_attacks17_sim.py).
FALSE_REFUSALS: dict[str, str] = {
    "uniform-read-of-an-input-slice": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], c: np.int64) -> None:
    w = thread.index_1d()
    b = a[1:]
    v = np.float32(0)
    if 0 <= c < b.size:
        v = b[c]  # in range of b (so of a): refused as 'not proven in range'
    if v > 0:
        ss.block.sync()
    out[w] = v
""",
    "uniform-vec-load": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], c: np.int64) -> None:
    w = thread.index_1d()
    v = np.float32(0)
    if 0 <= c < a.size:
        v = ss.vec.load(a, c, 2)[0]  # vec.load is guarded element-wise: refused anyway
    if v > 0:
        ss.block.sync()
    out[w] = v
""",
}
