"""Attack round 14 (an outside helper): ``shared.fill_async`` of a fixed-shape tile -- which
runs are one ``cp.async`` and which are zero-filled through the ignore-src predicate
(``_asyncfill._Source.whole_runs``, ``_Fill.copies`` / ``lined_up``).

Method (no GPU): each kernel compiled to PTX (``k.ptx(cc=(9, 0), layouts=...)``), every
thread's fill EMULATED by a small PTX interpreter (tests/ptx/fill_emu.py, driven by
tests/ptx/fill_emu_driver.py, swept by tests/ptx/test_fill_emulation.py): each
``cp.async``'s bytes read are compared with the input's rows, each tile byte with numpy's
``t[i, j] = a[r0 + i, c0 + j]`` (0 outside), and every tile byte must be written once.

Kernels are module bodies for ``tests.kernels.load_kernel_module``.

RECORD_RUNS  -- finding 1 (latent OUT-OF-BOUNDS-READ / shared overflow, masked by an
                unrelated refusal): a tile of 12-byte (or 6-, 3-byte) records was cut into
                runs of 16 (8, 4) bytes of ONE element each. Fixed: a run holds whole
                elements (``_fillrule.run_bytes``), so these are refused at typing.
CONST_ADDRESS -- finding 2 (FALSE-REFUSAL): a pinned block in which one run's tile address
                is a constant (one thread, or a last round of runs that only thread 0 has)
                was refused by the compiled-form tile-phase check as two fills of the tile.
                Fixed: the fill's marker and its write are matched by a constant address
                too (``verify._tilephases._Finder._fill_labels``).
"""

from __future__ import annotations

__all__ = ["CONST_ADDRESS", "RECORD_RUNS"]

# --------------------------------------------------------------------------------------------
# Finding 1. _asyncfill._type_fill / _fillrule.run_bytes accept an element type whose size
# does not divide the run: a record of three float32 (itemsize 12). A (2, 4) tile's rows are
# 48 bytes, a multiple of 16, so run_bytes gives 16, and _Fill takes n = 16 // 12 = 1
# element per run: 4 runs a row of 16 bytes each, at element (12-byte) steps. The whole-runs
# test checks only a[0, 0]'s, a[0, c0]'s, a[0, cols]'s addresses and the pitch (all
# 16-aligned for c0 = 0, cols = 4), so every run is one 16-byte cp.async:
#   * misaligned cp.async (src and dst at +12, +24, +36: cp.async.cg needs 16-byte alignment),
#   * the last run of each row reads [row + 36, row + 52): 4 bytes past the row (past the
#     input on its last row, e.g. a 1D input of 4 records: a[3] lies at 36..48, read 36..52),
#   * 16-byte writes at 12-byte steps overlap (bytes written twice) and the last run of the
#     tile writes 4 bytes past the tile's 96 bytes (into the next shared object).
# The kernel was refused, but only because the fallback's record stores are split by LLVM
# and lose their fill label ("filled asynchronously ... and written at line N in the same
# barrier interval"): an unrelated check. Now typing refuses a run that is not a whole
# number of elements (itemsize 3, 6, 12, 24 ...). (That unrelated refusal was itself false,
# and refused 8- and 16-byte record tiles too; the per-element path now copies a record as
# one integer, marked as the fill's: tests/ptx/test_fill_emulation.py.)
# --------------------------------------------------------------------------------------------
RECORD_RUNS_2D = """
rec = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=4))
def k(out: DisjointSlice[np.float32], a: In2D[rec], r0: np.int64, c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((2, 4), rec)
    ss.shared.fill_async(t, a, (r0, c0))
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = 0
"""

RECORD_RUNS_1D = """
rec = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=4))
def k(out: DisjointSlice[np.float32], a: In[rec], c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(4, rec)
    ss.shared.fill_async(t, a, c0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = 0
"""

# --------------------------------------------------------------------------------------------
# Finding 2. A 1D tile of 20 float32 (5 runs of 16 bytes) with a pinned block of 4 threads:
# run 4 belongs to thread 0 alone (k = tid + 4 < 5), so LLVM folds that run's tile address
# to a constant; verify._tilephases._Finder._fill_labels takes a cp.async's address only
# where its operand names exactly one local value, so the constant-address copy has no fill
# label and clashes with the fill's other copies: "filled asynchronously (cp.async) at line
# 12 and filled asynchronously (cp.async) at line 12 in the same barrier interval ... two
# threads may write one element". One fill, one writer per element (the emulated copies
# are numpy's values, tests/ptx/test_fill_emulation.py). Same for every (runs, T) with runs % T == 1
# and runs > T (e.g. a (4, 16) float32 tile, block 15), and for block 1.
# --------------------------------------------------------------------------------------------
CONST_ADDRESS_1D = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=4))
def k(out: DisjointSlice[np.float32], a: In[np.float32], c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(20, np.float32)
    ss.shared.fill_async(t, a, c0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[cuda.threadIdx.x]
"""

CONST_ADDRESS_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=15))
def k(out: DisjointSlice[np.float32], a: In2D[np.float32], r0: np.int64, c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((4, 16), np.float32)
    ss.shared.fill_async(t, a, (r0, c0))
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[0, cuda.threadIdx.x]
"""

CONST_ADDRESS_ONE_THREAD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=1))
def k(out: DisjointSlice[np.uint8], a: In[np.uint8], c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(16, np.uint8)
    ss.shared.fill_async(t, a, c0)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[0]
"""

#: name -> kernel module body
RECORD_RUNS: dict[str, str] = {
    "fill-async-record12-2d": RECORD_RUNS_2D,
    "fill-async-record12-1d": RECORD_RUNS_1D,
}
CONST_ADDRESS: dict[str, str] = {
    "fill-async-last-run-thread0-1d": CONST_ADDRESS_1D,
    "fill-async-last-run-thread0-2d": CONST_ADDRESS_2D,
    "fill-async-one-thread": CONST_ADDRESS_ONE_THREAD,
}
