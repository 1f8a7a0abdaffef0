r"""Attack round 19 (an outside helper): today's record changes -- ``_tilebase.holder_store``
(a record stored as ONE integer iN, N = 8 * itemsize), ``_cuda.guarded_record``, the nested
field chain of ``_rewrite._own_record_field`` and the record path of ``_asyncfill``.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness (compile to PTX with NVVM, no GPU)::

    cd /work/wt-att19 && PYTHONPATH=/work/wt-att19 .venv/bin/python -c "
    import pathlib, tempfile
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks19 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['tile-record12-witness-store'])
    p = m.k.ptx(cc=(9, 0)); i = p.find('bar.sync'); print(p[:200]); print(p[i - 900:i + 500])"

=============================================================================================
FINDING 1 (HIGH: out-of-bounds and mis-placed shared / local STORES in Tier 1): a record
whose size is not a power of two (3, 5, 6, 7, 9-15, 20, ... bytes) is stored into a shared
tile, dynamic tile, 2D/padded tile or thread-private array at the WRONG STRIDE.
=============================================================================================

Compiled-form reason. ``holder_store`` (commit 0bfa423) addresses the element as
``getelementptr iN, iN* data, idx`` with N = 8 * itemsize. A getelementptr strides by the
type's ALLOC SIZE, not its store size. In NVPTX's data layout (no i128 entry; integers wider
than i64 take i64's alignment, narrower ones the next specified width) the alloc size of
i96 is 16, of i80 16, of i40/i48/i56 8, of i24 4, of i160 24. So a 12-byte record is STORED
at ``data + 16 * idx`` while ``holder_load`` (and everything else: the tile's size, the bound,
the simulator) uses ``data + 12 * idx``. The store's bound test is against the element count,
so idx < n still lets the store reach byte 16 * (n - 1) + 12 > 12 * n.

PTX (``k.ptx(cc=(9, 0))``), each entry below:
  tile-record12-witness-store   .shared .align 16 .b8 _simtsafe_tile_L13_1[384];
                                mul.wide.u32 %rd14, %r1, 16; add.s64 %rd16, tile, %rd14;
                                st.shared.u64 [%rd16]; st.shared.u32 [%rd16+8]
                                -- the read after the barrier: mul.wide.u32 %rd40, %r3, 12.
                                Threads 24..31 (block 32) write bytes 384..507: up to 124 bytes
                                past the tile, into whatever shared object follows (a write no
                                phase check sees: it is tagged !ss.own as the thread's element).
  dynamic-tile-record12-store   bound = %dynamic_smem_size / 12 (mul.wide.u32 .., -1431655765),
                                store at ``shl.b64 %rd17, %rd2, 4`` (16 * idx): with
                                dynamic_shared=384 threads 24..31 write past the launch's
                                dynamic shared memory.
  tile2d-record12-pad-store     tile (4, 8) pad=1: storage 4 x 9 x 12 = 432 bytes
                                (``_simtsafe_tile_L12_2[432]``); store at (9r + c) * 16
                                (``mad.lo.s32 %r6, %r3, 9, %r5; mul.wide.u32 %rd21, %r6, 16``), up
                                to byte 556.
  local-record12-store          ``cuda.local.array(4, REC12)`` (Tier 1, no unsafe region):
                                l[n] = b[w] stores at ``shl.b64 %rd47, %rd9, 4`` (16 * n) after
                                ``setp.gt.u64 %p2, %rd9, 3``: n = 3 writes bytes 48..59 of the
                                depot -- the array is bytes 0..47; 48..59 is the zero scratch
                                record of the ``a[w]`` read (another variable's memory). The
                                field read l[1].x (offset 12) is FOLDED TO 0.0 by LLVM (no store
                                at 16 * n can reach bytes 12..15).
  local-record3-store           3-byte records (i24, alloc size 4): s[n] at ``SPL + 4 n`` over a
                                9-byte array; s[2] writes bytes 8..10, 9..10 being the next
                                variable (the scratch record at SPL + 9).

Broken promises:
  * docs/cooperation.md, Shared tiles: "Every access is checked against the tile's own shape
    ... No access reaches memory outside the tile."; Thread-private arrays: "every a[i] is
    bounds-checked ... so no index reaches another variable's memory."
  * docs/safety.md "Record fields" row / DESIGN section 11: the compiled form is what is
    sound; the simulator and GPU disagree on values (below), and a Tier-1 kernel writes
    shared memory it does not own (out-of-bounds shared stores may fault or corrupt another
    tile that another thread writes in the same phase: a write-write race no check sees).

Values (simulator vs compiled), exact command for ``tile-record12-witness-store`` (a =
records x = i+1, y = i+101, z = i+201)::

    cd /work/wt-att19 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-att19 .venv/bin/python -c "
    import pathlib, tempfile, numpy as np
    from numba import cuda
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks19 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['tile-record12-witness-store'])
    a = np.zeros(32, m.REC); a['x'] = np.arange(32) + 1; a['y'] = a['x'] + 100; a['z'] = a['x'] + 200
    o = cuda.device_array(32, np.float32); m.k.prepare(grid=1, block=32)(o, cuda.to_device(a))
    print(o.copy_to_host()[:8])"

  simulator: [32 31 30 29 28 27 26 25] (a[31 - t].x, as promised)
  compiled (from the PTX: records stored at 16 j, field read at 12 i):
             [124 223 0 22 121 220 0 19] -- y/z fields of other records and gap bytes.
  ``local-record12-store`` with n = 1 (out[w] = l[1].x + l[0].y): simulator 1102, 1104, ...
  (b.x + a.y); compiled: l[1].x is the constant 0, so 101, 102, ... .
  (The repository's own tests/sim/test_attacks18_sim.py ``[12]`` case passes on the simulator
  only; tests/gpu/test_records_gpu.py would fail on a device for the 12-byte record.)

Fix direction (not applied): store at the element's BYTE address (getelementptr i8 by
idx * itemsize, or the record's own array type, then bitcast to iN*), or copy as a sequence of
power-of-two words; and keep N in NVVM's supported widths (see FALSE_REFUSALS).
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

_REC12 = 'REC = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])\n'

FINDINGS: dict[str, str] = {
    # FINDING 1: a witness store of a 12-byte record into a shared tile: stride 16, tile 384 B.
    # Demonstrated: PTX (mul.wide.u32 .., 16 before st.shared.u64/u32; the read uses 12);
    # simulator values vs the values the PTX addressing gives (docstring).
    "tile-record12-witness-store": _REC12
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    t[thread.local_index()] = a[w]
    ss.block.sync()
    out[w] = t[31 - cuda.threadIdx.x].x
""",
    # FINDING 1: the dynamic tile: bound dynamic_smem_size // 12, store at 16 * idx.
    "dynamic-tile-record12-store": _REC12
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, dynamic_shared=384))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    d = ss.shared.dynamic_tile(REC)
    d[thread.local_index()] = a[w]
    ss.block.sync()
    out[w] = d[31 - cuda.threadIdx.x].x
""",
    # FINDING 1: a 2D padded tile (storage 4 x 9 records = 432 B): store at (9r + c) * 16.
    "tile2d-record12-pad-store": _REC12
    + """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def k(out: DisjointSlice2D[np.float32], a: In2D[REC]) -> None:
    w = thread.index_2d()
    t = ss.shared.tile((4, 8), REC, pad=1)
    t[thread.local_index_2d()] = a[w]
    ss.block.sync()
    out[w] = t[3 - cuda.threadIdx.y, 7 - cuda.threadIdx.x].x
""",
    # FINDING 1: Tier 1, a thread-private array: l[n] stored at 16 n, read at 12 n; n = 3 writes
    # past the array into the scratch record; l[1].x folded to 0 (n = 1: simulator b.x + a.y,
    # compiled a.y). Launch: grid 1, block 32, (out, a, b, n).
    "local-record12-store": _REC12
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], b: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    l = cuda.local.array(4, REC)
    l[0] = a[w]
    l[n] = b[w]
    out[w] = l[1].x + l[0].y
""",
    # FINDING 1: 3-byte records (i24: alloc size 4) in a thread-private array: s[2] writes
    # bytes 8..10 of a 9-byte array (PTX: st.local.u8 [%rd30+2] with %rd30 = SPL + 4 n).
    "local-record3-store": """
R3 = np.dtype([("x", np.uint8), ("y", np.uint8), ("z", np.uint8)])
REC = np.dtype([("x", np.float64), ("y", np.float64)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC], c: In[R3], n: np.int64, j: np.int64) -> None:
    w = thread.index_1d()
    s = cuda.local.array(3, R3)
    s[n] = c[w]
    l = cuda.local.array(3, REC)
    l[n] = a[w]
    out[w] = l[j].y + np.float64(s[j].x)
""",
}

#: The sizes measured (witness store into a 32-record shared tile, the PTX's store stride):
#: 3 -> 4, 5 -> 8, 6 -> 8, 10 -> 16, 12 -> 16 (wrong); 1, 2, 4, 8, 16 right; 20, 24, 40 ->
#: NVVM ERROR_INVALID_IR (FALSE_REFUSALS).
STRIDES = {3: 4, 5: 8, 6: 8, 10: 16, 12: 16}

HELD: dict[str, str] = {
    "fill-async-odd-records": "fill_async of 3/5/6/12/24-byte record tiles -> refused ('elements "
    "1, 2, 4, 8 or 16 bytes'); 8- and 16-byte record fills: st.shared.u64 / st.shared.v2.u64 at "
    "tile + 8 i / 16 i, tile .align 16 (aligned, right stride)",
    "record-alignment-16": "16-byte record in a local array next to 3-byte ones: the REC16 array "
    "lands at depot offset 16 (st.local.v2.u64 aligned); tile_shared windows round each tile to "
    "16 bytes; dynamic tile .extern .shared .align 16",
    "record-cast-store": "l[n] = a[w] / t[lw] = a[w] with a record of ANOTHER dtype (8 into 16 "
    "bytes: would read 8 bytes past the input) -> refused at typing ('cannot store a value of "
    "type Record(...)'); a float64 into a record array -> refused",
    "nested-whole-record-assign": "out[w].inner = a[w] with a[w] a 16-byte record and inner 8 "
    "bytes -> refused ('Cannot cast Record ... to Record ...')",
    "complex-field-real-store": "out[w].c.real = v (complex64 field, chain accepted at "
    "decoration) -> refused at compile with Numba's raw NotImplementedError ('No definition for "
    "lowering complex64.real = float32'): no code, but not a SafetyError at the user's line",
    "own-read-before-barrier-record": "t[lw] = a[w]; out[w] = t[lw].z without a barrier (12-byte "
    "record) -> refused by the tile-phase check (read and witness write in one interval) -- in "
    "today's compiled code this read (12 lw) DOES overlap other threads' stores (16 j), so the "
    "refusal happens to be right; see FALSE_REFUSALS for the scalar twin",
    "record-field-store-other-views": "field stores on tile / out-tile / local elements "
    "(t[lw].x = v, ot[n].x = v, r = t[n]; r.x = v) -> refused at decoration (not a DisjointSlice "
    "parameter); AppendBuffer[Rec] out[s].i = v writes the claimed slot (append_rules.TYPED)",
}

FALSE_REFUSALS: dict[str, str] = {
    "record-tile-store-over-16-bytes": "t = ss.shared.tile(32, REC24); t[thread.local_index()] = "
    "a[w] with REC24 = (f8, f8, f8) (also 20- and 40-byte records) -> k.ptx(cc=(9, 0)) raises "
    "cuda.bindings.nvvm.nvvmError ERROR_INVALID_IR (6) from NVVM's verifier, not a SafetyError: "
    "holder_store emits a store of i192 / i160 / i320, which NVVM rejects. No way to fill a tile "
    "of records over 16 bytes by witness (local arrays of REC24 happen to compile: LLVM splits "
    "the integer there).",
    "own-element-read-before-barrier-record": "t[lw] = a[w]; out[w] = t[lw].z (same interval, "
    "own element) is refused for a record tile while the float32 twin (t[lw] = a[w]; out[w] = "
    "t[lw]) is accepted. (Today it must stay refused for non-power-of-two records: FINDING 1.)",
}
