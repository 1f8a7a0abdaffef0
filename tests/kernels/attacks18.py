r"""Attack round 18 (an outside helper): record array fields and other routes to memory through
records; ``fill_async`` / ``fill_transposed`` of record tiles.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness used for every entry (compile to PTX with NVVM, no GPU)::

    cd /work/wt-att18 && PYTHONPATH=/work/wt-att18 .venv/bin/python -c "
    import pathlib, tempfile
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks18 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['tile-record-int-read-oob'])
    p = m.k.ptx(cc=(9, 0)); i = p.find('bar.sync'); print(p[i:i + 600])"

=============================================================================================
FINDING 1 (HIGH: out-of-bounds and racing reads in Tier 1, five routes): a READ BY INDEX of a
record element of a shared tile, dynamic tile, thread-private array or output tile is NOT
bounds-checked in the compiled code. Tier 1, no unsafe region.
=============================================================================================

Promises broken:
  * docs/cooperation.md, Shared tiles: "Every access is checked against the tile's own shape
    with one unsigned compare per axis: ... a read out of range gives 0 ... No access reaches
    memory outside the tile."
  * docs/cooperation.md, Thread-private arrays: "every a[i] / a[i, j] is bounds-checked (out of
    range, negative included: nothing written, 0 read), so no index reaches another variable's
    memory."
  * docs/cooperation.md, Output tiles: "t[k] / t[r, c] read the thread's own elements (0 out of
    range)"; docs/safety.md "Reads of data another thread writes in the same launch: A Tier-1
    kernel can only read an output through its own witness, so it never sees another thread's
    write."

Compiled-form reason. ``lowering/_tilebase.holder_load`` (shared tiles, dynamic tiles, local
arrays) and ``lowering/_outtiles._load`` (output tiles) read an element as::

    out = alloca(dtype); store(get_constant_null(dtype), out)
    if in_range: store(load_item(ptr), out)
    return load(out)

For a scalar dtype that is "0 out of range". For a RECORD, Numba's value is a POINTER to the
record's bytes (a record is a reference), so the constant null is a NULL POINTER, and the
field read that follows (``t[n].x``) loads through ``phi(null, &t[n])``. A load through null
is undefined behaviour in LLVM's generic address space, so SimplifyCFG drops the null edge
and with it the bounds test: the PTX loads ``t + n * itemsize`` unconditionally. (The
witness read of outputs/inputs, ``_cuda._load``, knows this and selects a zero-filled local
scratch record instead of null; ``holder_load`` and ``_outtiles._load`` do not.)

PTX (``k.ptx(cc=(9, 0))``), after the barrier, for each entry:
  tile-record-int-read-oob        mov.u64 %rd81, _simtsafe_tile_L13_1; add.s64 %rd82, %rd81,
                                  n*8; ld.shared.f32 %f1, [%rd82]   -- no compare of n
  tile-record-witness-read-oob    block 64, tile of 32: ld.shared.f32 [tile + tid.x*8 + 4]
                                  -- threads 32..63 read 256..511 bytes past the tile
  dynamic-tile-record-read-oob    ld.shared.f32 [_simtsafe_dyntile + n*8] -- %dynamic_smem_size
                                  is read for the fill only, never for the read
  local-record-read-oob           ld.local.u8 [%rd1 + n*8] (x4) -- any thread-local byte
  out-tile-record-read-oob        ld.global.u8 [out + (2*gid + n)*8] -- n = 2 reads the element
                                  thread gid+1 is writing in the same launch (a race read);
                                  a large n reads outside ``out``; a thread whose tile is
                                  invalid (past the output) reads at the sentinel origin.
A whole-record copy ``out[w] = t[n]`` keeps a select instead: ``selp.b64 %rd83, %rd82, 0, %p21;
ld.shared.v4.u16 [%rd83]`` -- out of range it reads shared ADDRESS 0 (the first shared object's
first element: another thread's element, possibly in a write phase), not the value 0.

The simulator cannot show it: its tile/out-tile/local-array read of a record gives a
``numpy.void`` (in range: a copy; out of range: a zero void) that has no attribute ``.x``, so
the kernel fails there with ``AttributeError`` (FINDING 3), and for the out tile an in-range
``ot[1].x`` gives the value while ``ot[2].x`` raises. ``sim.check`` raises the same error.

Fix direction (not applied): do what ``_cuda._load`` does for records in ``holder_load`` and
``_outtiles._load`` (a zero scratch record selected when out of range, behind the opaque
``mov``), and give the tile-phase check the scratch's provenance.

=============================================================================================
FINDING 2 (LOW: the simulator accepts what the GPU compile refuses): ``fill_async`` from a
NON-C-CONTIGUOUS 2D input (``d[:, :8]`` of a (4, 16) device array) runs on the simulator
(correct values) while the compiled form refuses it ("the input must be C-contiguous"): the
simulator's ``_asyncfill_sim._check`` tests only ``strides[-1] == itemsize``, not the row
pitch, and the compile worker was not asked for the input's layout ("A").
Promise (docs/safety.md, "When a check runs", simulator): "a kernel passes on the simulator
exactly when it compiles for the GPU (typing rules ... included)".
Demonstrated (see SIM_STRIDED_FILL_DRIVER below): simulator prints the tile rows 0-7, 16-23,
32-39, 48-55; ``k.ptx(cc=(9, 0), layouts=("A",))`` raises SafetyError "must be C-contiguous",
and ``host._argfacts.input_layout`` gives "A" for that view on the GPU.

=============================================================================================
FINDING 3 (LOW/MEDIUM: simulator differs from the compiled code on accepted record code):
  * a FIELD of a record element of a shared tile, dynamic tile or output tile read by index
    (``t[i].x`` after ``fill_async`` of a record tile, i in range) raises ``AttributeError:
    'numpy.void' object has no attribute 'x'`` on the simulator; the GPU compile accepts it
    and reads the field. (The repository's RECORD_TILES tests read whole records only.)
  * a Tier-1 ``cuda.local.array(4, REC)`` written ``l[0] = a[w]`` (a record of an input) fails
    on the simulator ("setting an array element with a sequence"); the GPU compile accepts it.
Both are in FINDINGS as ``sim-record-tile-field-read`` and ``sim-local-record-store``.
Run: ``NUMBA_ENABLE_CUDASIM=1`` with ``k.prepare(grid=1, block=32)(out, a, 3)``.
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD", "SIM_STRIDED_FILL_DRIVER"]

_REC = 'REC = np.dtype([("x", np.float32), ("y", np.float32)])\n'

FINDINGS: dict[str, str] = {
    # FINDING 1: shared tile of records, read by int index n (any int64): no bounds test in PTX.
    # Launch: grid 1, block 32, a = 32 records, n = 40 reads 64 bytes past the 256-byte tile.
    "tile-record-int-read-oob": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    ss.shared.fill_async(t, a, 0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[n].x
""",
    # FINDING 1: the thread's own block-local witness on a tile smaller than the block:
    # threads 32..63 read past the tile (the witness is out of range: promised 0).
    "tile-record-witness-read-oob": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    ss.shared.fill_async(t, a, 0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[thread.local_index()].y
""",
    # FINDING 1: the dynamic tile: read past the launch's dynamic shared memory.
    "dynamic-tile-record-read-oob": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, dynamic_shared=256))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    d = ss.shared.dynamic_tile(REC)
    ss.shared.fill_async(d, a, 0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = d[n].x
""",
    # FINDING 1: a Tier-1 thread-private array of records: ld.local at l + n*8, unchecked.
    "local-record-read-oob": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    l = cuda.local.array(4, REC)
    l[0] = a[w]
    l[1] = a[w]
    l[2] = a[w]
    l[3] = a[w]
    out[w] = l[n].x
""",
    # FINDING 1: an output tile of records: ot[n] with n = 2 is thread gid+1's element 0
    # (written by it in this launch: a racing read), large n reads outside `out`.
    "out-tile-record-read-oob": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], o2: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    ot = thread.tile_1d(out, 2)
    ot[0] = a[w]
    o2[w] = ot[n].x
""",
    # FINDING 2: accepted on the simulator with a strided input; refused by the GPU compile.
    "sim-fill-strided-input": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In2D[np.float32], r0: np.int64, c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((4, 8), np.float32)
    ss.shared.fill_async(t, a, (r0, c0))
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[cuda.threadIdx.x // 8, cuda.threadIdx.x % 8]
""",
    # FINDING 3: in-range field read of a record tile: AttributeError on the simulator only.
    "sim-record-tile-field-read": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    ss.shared.fill_async(t, a, 0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[cuda.threadIdx.x].x
""",
    # FINDING 3: a record stored into a Tier-1 local array: ValueError on the simulator only.
    "sim-local-record-store": _REC
    + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    l = cuda.local.array(1, REC)
    l[0] = a[w]
    out[w] = l[0].x
""",
}

#: FINDING 2's driver (run with NUMBA_ENABLE_CUDASIM=1; the module is FINDINGS[...]).
SIM_STRIDED_FILL_DRIVER = """
big = np.arange(64, dtype=np.float32).reshape(4, 16)
view = cuda.to_device(big)[:, :8]            # strides (64, 4): not C-contiguous
o = cuda.to_device(np.zeros(32, np.float32))
m.k.prepare(grid=1, block=32)(o, view, 0, 0)  # runs; the GPU compile of layout "A" refuses
print(o.copy_to_host())
"""

HELD: dict[str, str] = {
    "helper-field-store-on-input": "@ss.device h(o: DisjointSlice[REC], w: ThreadIndex[Index1D], "
    "v) doing o[w].x = v, called with an In[REC] -> refused at decoration (attribute stores on "
    "records are refused in every helper); since the helper form is accepted "
    "(FALSE_REFUSALS), refused by the compiled form (lowering/_recordstores.py: 'writes a "
    "field of an element of the input')",
    "helper-field-store-int-index": "the same with o[i] (int) -> refused at decoration; since, "
    "refused at typing ('read only through a witness of that space (got int64)')",
    "in-record-field-store": "a[w].x = v on an In[REC] -> refused (view kind 'in'); a rebound "
    "DisjointSlice name loses its own-field right",
    "found-witness-values": "vals[f] with f = hashing.find(...) on a HashValues -> refused at "
    "typing (only the table's Inserted witness reads/writes values); Inserted owns its slot",
    "columns-record-field-store": "out[n, w].x = v on DisjointSlice[REC, Columns] with any n: "
    "the column access selects a scratch record out of range (PTX: setp + selp), held",
    "grid-read-record": "ss.grid.read(out, n).x on a record output -> refused ('grid.read reads "
    "scalar elements')",
    "collective-of-record": "block.broadcast / warp.broadcast of a record -> refused (numbers "
    "only); warp.reduce with a non-device op -> refused",
    "record-reference-across-phases": "e = t[5] (read phase), block.sync, fill_async(t, ...), "
    "then e.x -> refused by the compiled-form tile-phase check (the reference's provenance is "
    "followed to the tile)",
    "record-reference-own-output": "r = out[w]; out[w].x = v; o2[w] = r.x -> reference semantics "
    "on both the simulator and the compiled code (o2 gets v)",
    "subarray-dtype-tile": "ss.shared.tile(4, np.dtype((np.float32, (4,)))) and a local array of "
    "it -> refused (Numba crashes in lowering: 'Invalid store of [1 x i64] to [2 x i64]', an "
    "unfriendly message but no code)",
    "fill-async-record-emulation": "tests/ptx/fill_emu_driver.emulate over 3843 cases: 8/16-byte "
    "records, 1D/2D, pad 0/1/3, pinned and unpinned blocks, data pointers at ODD byte offsets "
    "1..15, row pitches rowbytes+1 / +8 / +16, origins negative, inside, past, 2**62 and "
    "2**62-1 -> 0 problems (every tile byte written once with numpy's bytes, no read outside)",
    "fill-transposed-record-emulation": "a transposed variant of the emulator (t[c, r] = a[r0 + r, "
    "c0 + c]) over 8- and 16-byte records, pad 0/1, shapes (4,4) (2,6) (2,4) (1,4) (3,3) (1,5), "
    "byte offsets 0/1/4/5/8/16, pitches +3/+16, edge and far origins -> 0 problems (4- and "
    "2-byte records not emulated: the interpreter lacks prmt.b32)",
    "record-write-during-fill": "a plain write into a record tile during its fill: t[lw] = a[w] "
    "is refused (even outside a fill: see FALSE_REFUSALS), t[lw].x = v refused at decoration, a "
    "helper gets a read-only tile",
}

FALSE_REFUSALS: dict[str, str] = {
    "record-tile-witness-store": "t = ss.shared.tile(32, REC); t[thread.local_index()] = a[w] "
    "(a record of an In[REC]), then block.sync and reads: refused by the compiled-form "
    "tile-phase check, 'written through a witness at line N and written at line N in the same "
    "barrier interval' -- the witness store of a record is split by LLVM into byte stores that "
    "lose the !ss.own tag (the same cause the fills' fix removed for fill_async). For 4-, 8- and "
    "16-byte records alike; no way to fill a record tile by witness.",
    "helper-own-field-store": "@ss.device h(o: DisjointSlice[REC], w: ThreadIndex[Index1D], v): "
    "o[w].x = v -> refused at decoration (the kernel form out[w].x = v is accepted). Fixed: "
    "accepted on a parameter annotated DisjointSlice, decided for kernels and helpers alike "
    "by the compiled form (lowering/_recordstores.py); tests/ptx/test_attacks18_ptx.py, "
    "tests/sim/test_attacks18_sim.py",
    "nested-record-field-store": "out[w].inner.x = v on the thread's own output element "
    "(REC = {inner: {x, y}, n}) -> refused at decoration ('writes through a reference')",
    "sim-record-field-reads": "FINDING 3: record tile field reads and local record arrays fail on "
    "the simulator though the GPU compile accepts them",
}
