"""Attack round 13 (an outside helper, 2026-12-07): whole-tile fills (``shared.fill_async``
and kin), the run-aligned ("C16") input specialization, compiled-form routes around the
phase rules.

Kernels are module bodies for ``tests.kernels.load_kernel_module``.

ROW_START -- the round's one finding, fixed: accepted kernels whose fills gave 0 where the
             input has data on the GPU (memory-safe; the simulator gave numpy's values).
             tests/ptx/test_attacks13_ptx.py checks the fixed test in the PTX,
             tests/gpu/test_async_fill_gpu.py the values on a GPU, tests/sim the simulator.
NOTES     -- probes that held (kept so that a later round need not repeat them).
"""

from __future__ import annotations

__all__ = ["NOTES", "ROW_START"]

# --------------------------------------------------------------------------------------------
# fill_async of a fixed-shape tile from an input whose data pointer is NOT run-aligned
#    (a view at an element offset: layout "C", the general code), with a negative origin:
#    the alignment test (_asyncfill._Source.whole_runs) checks only a[r0, c0]'s address and
#    a[r0, cols]'s address (and the pitch), never the row's START. With ptr = base + 4,
#    cols = 15 and c0 = -1, a[-1] = base and a[15] = base + 64 are both 16-aligned, so the
#    test passes and every run is ONE cp.async whose ignore-src predicate is
#    "first column outside the input" (_Fill.copies: gc < cols, unsigned). Run 0 covers
#    columns -1, 0, 1, 2: its first column is outside, so the hardware zero-fills all 16
#    bytes, and t[1..3] read 0 instead of a[0..2]. The documented result is
#    ``t[j] = a[c0 + j], 0 outside a`` (docs/cooperation.md), which the simulator computes.
#    Memory-safe (nothing outside the input is read or written), but accepted code gave
#    wrong values on the GPU, and the simulator (numpy's values) disagreed with the GPU.
#    Fixed: the test also requires the row's start (a[r, 0]'s address) run-aligned; such an
#    input takes the per-run path (a run starting before the row is copied element by element).
# --------------------------------------------------------------------------------------------
FILL_NEGATIVE_ORIGIN_MISALIGNED_VIEW = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=4))
def k(out: DisjointSlice[np.float32], a: In[np.float32], o: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(16, np.float32)
    ss.shared.fill_async(t, a, o)
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[cuda.threadIdx.x]
"""

# The same on a 2D input of one row whose start is off by one element: base[0:1, 1:16] of a
# (2, 16) float32 array (shape (1, 15), row stride 64: a one-row array is C-contiguous
# whatever its row stride), a 2-row tile: the test is (pitch | &a[0, -1] | &a[0, 15]) & 15.
FILL_NEGATIVE_ORIGIN_MISALIGNED_VIEW_2D = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=8))
def k(out: DisjointSlice[np.float32], a: In2D[np.float32], o: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((2, 16), np.float32)
    ss.shared.fill_async(t, a, (0, o))
    ss.shared.wait_all()
    ss.block.sync()
    out[w] = t[0, cuda.threadIdx.x]
"""

#: name -> (kernel module body, its input's rank)
ROW_START: dict[str, tuple[str, int]] = {
    "fill-async-negative-origin-misaligned-view": (FILL_NEGATIVE_ORIGIN_MISALIGNED_VIEW, 1),
    "fill-async-negative-origin-misaligned-view-2d": (FILL_NEGATIVE_ORIGIN_MISALIGNED_VIEW_2D, 2),
}

#: probes that held: name -> what was tried (see ATTACK13.md for the verdicts)
NOTES: dict[str, str] = {
    "commits-in-loop-may-run-zero": "fill; commit; `for i in range(n): commit`; "
    "wait_group(1); sync; read -> refused (compiled form alone too)",
    "commit-in-branch": "an extra commit under `if n > 0` before wait_group(1) -> refused",
    "wait-in-loop-may-run-zero": "wait_all only inside `for i in range(n)` -> refused",
    "fill-in-loop-commit-wait1": "loop: fill; commit; wait_group(1); sync; read -> refused",
    "refill-after-break": "fill in flight on the `break` path, refilled after the loop -> "
    "refused (fillstart)",
    "wait-skipped-by-continue": "`continue` skips the wait, the next iteration refills -> refused",
    "wait-in-thread-dependent-branch": "wait_all under threadIdx.x > 0 -> refused",
    "raise-skips-wait": "thread-dependent raise before wait/sync -> refused (uniformity)",
    "helper-maybe-sync": "barrier in a helper under a uniform branch -> refused",
    "helper-wait-maybe": "wait_all in a helper under a uniform branch -> refused",
    "helper-commit-then-wait1": "an extra commit in a helper (n > 0 only) -> refused",
    "sync-in-while-cond / ternary / or": "a collective in a short-circuited operand -> refused",
    "helper-dynamic-tile": "dynamic_tile made in a helper (two dtypes over one memory) -> "
    "refused at decoration",
    "tile-window-plus-dynamic-tile": "tile_shared and dynamic_shared together -> refused by "
    "the contract",
    "tile-window-offsets": "two tiles in the tile_shared window: distinct .extern symbols, "
    "the second at +256 bytes in every access (PTX)",
    "c16-input-layout": "host._argfacts.input_layout over fake CAI facts: one-row inputs "
    "with odd/negative/zero row strides, zero rows/cols, last axis of 1 with an odd stride, "
    "3D: every C16 verdict makes the three llvm.assume facts true of the packed values",
}
