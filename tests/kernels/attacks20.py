r"""Attack round 20 (an outside helper): today's record paths -- ``_cuda.guarded_record``,
``_tilebase.holder_store`` (records of 1/2/4/8/16 bytes stored as one integer), the nested
field chain of ``_rewrite._own_record_field`` (``out[w].inner.x = v``), record tiles.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness (compile to PTX with NVVM, no GPU)::

    cd /work/wt-att20 && SIMTSAFE_CACHE_DIR=$(mktemp -d) PYTHONPATH=/work/wt-att20 \
    .venv/bin/python -c "
    import pathlib, tempfile
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks20 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['nested-aligned-own-store'])
    p = m.k.ptx(cc=(9, 0)); print('\n'.join(l for l in p.splitlines() if 'f64' in l or '17' in l))"

=============================================================================================
FINDING 1 (MEDIUM-HIGH: misaligned 8-byte loads and stores in Tier 1 -> "misaligned address"
fault on the device; the simulator runs the same launch and gives values): a record dtype
that nests an ALIGNED record (``np.dtype([...], align=True)``) inside a PACKED one puts the
inner record at an unaligned offset, but Numba types the inner record ``aligned=True`` and
reads/writes its fields with their natural alignment (``record_getattr`` / setattr:
``align = None if typ.aligned else 1``). Numba's ``sentry_record_alignment`` only checks
offsets inside one record ("assumes offset starts from a properly aligned location").
=============================================================================================

    INNER = np.dtype([("x", np.float64), ("y", np.float64)], align=True)   # 16 B, align 8
    REC = np.dtype([("c", np.uint8), ("inner", INNER)])                    # 17 B, inner at 1

PTX (``k.ptx(cc=(9, 0))``):
  nested-aligned-own-store   ``out[w].inner.x = b[w] + a[w].inner.y`` (today's nested own
                             field store, commit 8a345ed):
                               mul.lo.s64 %rd21, %rd2, 17; add.s64 %rd22, a, %rd21;
                               selp.b64 %rd23, %rd22, <scratch>, %p2; ld.f64 %fd4, [%rd23+9];
                               add.s64 %rd24, out, %rd21; selp.b64 %rd25, %rd24, <scratch>;
                               st.f64 [%rd25+1], %fd5;
                             address 17 w + 1 (store) / 17 w + 9 (load): 8-byte aligned only
                             for w = 7 mod 8. The zero scratch records (``.local .align 1 .b8
                             __local_depot0[34]``, at 0 and 17) are misaligned too, so even an
                             out-of-range thread's read ``ld.f64 [scratch + 9]`` is.
  nested-aligned-local       Tier-1 ``cuda.local.array(4, REC)``: ``ld.local.f64 [%rd3+1]``
                             with %rd3 = depot + 17 n (depot ``.align 4``).
PTX ISA (ld/st): the address must be naturally aligned to the access size, else undefined
(on sm_90: CUDA_ERROR_MISALIGNED_ADDRESS, a sticky error that kills the context).

Broken promises:
  * docs/safety.md "Record fields" row and docs/typing.md "Record dtypes": records with
    scalar / nested-record fields are accepted, ``out[w].inner.x = v`` is a supported write
    of the thread's own element; the compiled form is what is sound. Here the compiled form
    is undefined behaviour for every well-formed numpy array of that dtype (fresh, aligned
    allocations -- no user-made misaligned view needed).
  * The commit 8045aa8 message names exactly this hazard for the new integer stores ("an
    aligned u64 store there could fault") and lowers them to alignment 1 -- but the field
    paths (Numba's own) keep the inner record's natural alignment.
  * docs/safety.md, "When a check runs": the simulator and the GPU agree -- here the
    simulator runs the launch and gives the right values (command below), the GPU faults.

Simulator values (``NUMBA_ENABLE_CUDASIM=1``; a['inner']['y'] = i + 0.5, b = 100 i)::

    cd /work/wt-att20 && NUMBA_ENABLE_CUDASIM=1 SIMTSAFE_CACHE_DIR=$(mktemp -d) \
    PYTHONPATH=/work/wt-att20 .venv/bin/python -c "
    import pathlib, tempfile, numpy as np
    from numba import cuda
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks20 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['nested-aligned-own-store'])
    a = np.zeros(32, m.REC); a['inner']['y'] = np.arange(32) + 0.5
    b = np.arange(32, dtype=np.float64) * 100; o = cuda.to_device(np.zeros(32, m.REC))
    m.k.prepare(grid=1, block=32)(o, cuda.to_device(a), cuda.to_device(b))
    print(o.copy_to_host()['inner']['x'][:6])"
  -> [0.5 101.5 202.5 303.5 404.5 505.5] on the simulator; the compiled code stores with
     st.f64 at odd addresses.

Fix direction (not applied): refuse (at the annotation / dtype_of) a record whose nested
aligned record lies at an offset not a multiple of its alignment -- or a record whose
itemsize is not a multiple of a nested record's alignment, for arrays of it -- or lower
every record field access with alignment 1 (as the new integer stores are).
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

_NESTED = (
    'INNER = np.dtype([("x", np.float64), ("y", np.float64)], align=True)\n'
    'REC = np.dtype([("c", np.uint8), ("inner", INNER)])\n'
)

FINDINGS: dict[str, str] = {
    # FINDING 1: the thread's own nested field store (st.f64 [out + 17 w + 1]) and an input's
    # nested field read (ld.f64 [a + 17 w + 9]). Launch: grid 1, block 32, (out, a, b).
    "nested-aligned-own-store": _NESTED
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[REC], b: In[np.float64]) -> None:
    w = thread.index_1d()
    out[w].inner.x = b[w] + a[w].inner.y
""",
    # FINDING 1: a Tier-1 thread-private array of such records: ld.local.f64 [depot + 17 n + 1].
    "nested-aligned-local": _NESTED
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[REC], b: In[np.float64]) -> None:
    w = thread.index_1d()
    l = cuda.local.array(4, REC)
    l[w.index % 4] = a[w]
    out[w] = l[(w.index + 1) % 4]
    out[w].inner.y = l[w.index % 4].inner.x
""",
}

HELD: dict[str, str] = {
    "record-reference-semantics-sim-vs-compiled": "r = l[n]; l[n] = b[w]; out[w] = r.x (local "
    "array), r = ot[0]; ot[0] = b[w] (output tile), q = o2[w]; o2[w] = a[w] (own output), and "
    "r = t[31 - tid] / block.sync / t[lw] = b[w] / block.sync / r.x (tile): the simulator and "
    "the compiled code both give reference semantics (b's values; the tile load is emitted "
    "after the last barrier and the phase check accepts it correctly)",
    "tile-window-record-strides": "tile_shared=4096 window, 2D tiles (4, 8) pad=1 of a 2-byte "
    "and a 16-byte record: st.shared.u16 at tile + 2 (9 r + c), st.shared.v2.u64 at tile + 80 + "
    "16 (9 r + c) (the second tile at window offset 80, a multiple of 16): aligned, right "
    "stride, the reads use the same scales",
    "local-aligned-record-placement": "Tier-1 local arrays of align=True records (u1+f8, "
    "u1+u2) beside 3-byte record arrays: LLVM places them at aligned depot offsets (16, 12); "
    "integer stores at alignment 1 (st.local.u8); field loads aligned",
    "helper-nested-own-field-store": "@ss.device h(o: DisjointSlice[REC], w, v): "
    "o[w].inner.x = v -> refused at decoration ('writes through a reference')",
    "dynamic-tile-record-count": "the simulator's dynamic tile has dynsize // itemsize records "
    "(numba's FakeCUDAShared), as the compiled bound %dynamic_smem_size // itemsize",
    "input-int-index-record-read": "a[n + 7].x on an In[REC]: no upper bound test in the PTX, "
    "but documented (docs/safety.md 'Reads by plain int are not bounds-checked')",
}

FALSE_REFUSALS: dict[str, str] = {
    "record-tile-over-16-bytes-alignment": "ss.shared.tile(32, REC24) (REC24 = three float64; "
    "also 20-, 40-, 48-byte records) and ss.shared.dynamic_tile(REC24) -- even one only read, "
    "d[n].x -- fail with cuda.bindings.nvvm.nvvmError ERROR_INVALID_IR (6) from "
    "k.ptx(cc=(9, 0)); on the simulator the compile worker reports 'LLVM IR parsing error ... "
    "alignment is not a power of two'. Cause (now; attack round 19 blamed the i192 store, "
    "which no longer exists): lowering/_tiles._tile_alignment and _shared_dynamic_tile use "
    "max(16, dtype.bitwidth // 8), and a numba Record's bitwidth is 8 * its size, so a "
    "24-byte record asks for .align 24. With the alignment patched to 16 (monkeypatch, not "
    "committed) the witness-filled tile gets the intended SafetyError ('written through a "
    "witness at line 15 and written at line 15 in the same barrier interval').",
}
