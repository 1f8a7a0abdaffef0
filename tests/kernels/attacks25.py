r"""Attack round 25 (an outside helper): chunked row walks (``thread.block_row_chunks(s)``,
``thread.warp_row_chunks(s)``) -- the witness ``RowChunk[space]`` with ``.row``, ``.col``,
``.chunk``, ``.valid``, and the compiled-form proof that the trip count is uniform.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``); each
source here starts with ``from simtsafe import BlockRow, WarpRow`` (the HEADER does not
import them). Scratch harness: /tmp/a25 in the session (``load(src)`` =
``load_kernel_module(tempdir, src)``; ``k.ptx(cc=(9, 0))`` on the CUDA target; the simulator
runs with ``NUMBA_ENABLE_CUDASIM=1``, ``k.prepare(grid=..., block=...)(...)`` and
``ss.sim.check``).

Summary: the chunked walk itself held everywhere I looked. The trip count is
``select(w > 0, (w - 1) udiv ntid.x + 1, 0)`` of the walked array's own ``shape[1]``, the
witness is ``(ctaid.x | warp row, tid.x + k * ntid.x | lane + 32 k)`` and every access
through it compares both indices unsigned with the addressed array's own shape (PTX:
``setp.ge.u64`` row and column, ``or.pred``, branch over the load / store). The divergence
analysis refused every divergent spelling tried (the list in HELD), both on the CUDA target
and on the simulator (which runs the same compiled-form check). What broke is one value the
simulator gives the witness: ``.valid`` is a Python ``bool`` there and a Numba boolean on
the device, and ``~`` differs between them (FINDING 1). Two natural kernels are refused
(FALSE_REFUSALS).

=============================================================================================
FINDING 1 (LOW-MEDIUM: the simulator and the GPU give different results for an accepted
Tier-1 kernel; sim.check replays the simulator's value and reports nothing): ``c.valid`` is
a Python ``bool`` on the simulator (lowering/_rows_sim.SimRowChunk: ``r < rows and c <
cols``), a Numba ``boolean`` in compiled code. Numba follows numpy for ``~`` on a boolean
(logical not: ``numba.njit(lambda b: ~b)(True) is False``); Python gives ``~True == -2``
and ``~False == -1``, both truthy. So ``pad = ~c.valid`` -- the numpy idiom for negating a
mask -- is "not valid" on the GPU and always true on the simulator.
=============================================================================================

``invert-valid`` (a row max with a neutral value for the padding columns, then out = x - max)
at x = arange(80).reshape(2, 40), grid 2, block 32:

  simulator, ``k.prepare(grid=2, block=32)`` and ``ss.sim.check`` (ok=True, no findings):
      out[:, :4] = [[inf, inf, inf, inf], [inf, inf, inf, inf]]     (v = -inf in every thread)
  CUDA target, ``k.ptx(cc=(9, 0))`` (accepted) -- v is -inf exactly where the witness is
  not valid, the load otherwise::

        setp.ge.u64   %p5, %rd16, %rd100      col >= x.shape[1]
        setp.ge.u64   %p6, %rd9, %rd99        row >= x.shape[0]
        or.pred       %p7, %p6, %p5           not valid  (= ~c.valid, Numba's semantics)
        mov.f32       %f69, %f29              %f29 = 0fFF800000 (-inf)
        @%p7 bra      $L__BB0_7
        ... ld.global.f32 %f69, [%rd115]      x[c]
    -> the GPU computes x - rowmax: out[:, :4] = [[-39, -38, -37, -36], [-39, -38, -37, -36]]
       (the same expression under numba.njit on the CPU gives exactly these values).

Broken promise: docs/safety.md "When a check runs" / the simulator section -- the simulator
runs the kernel with the device's semantics (the witness "carries the row, column and chunk
the device's do", tests/sim/test_row_chunks_sim.py), and ``sim.check`` is the test-time
tool for the kernel that then runs on the GPU. Here a kernel tested on the simulator gives
other values on the GPU, with nothing reported. ``w.in_bounds(s)`` on the simulator
(lowering/_sim.SimWitness.in_bounds) returns a Python ``bool`` too, so ``~w.in_bounds(out)``
has the same difference (older than this round; the chunk's ``.valid`` is the flag the new
docs tell every kernel to test). Fix direction (not applied): give ``.valid`` (and
``in_bounds``) as ``np.bool_`` on the simulator (``~np.bool_(True)`` is ``False``, as in
Numba), or refuse ``~`` on a boolean in the decoration.
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

_IMPORT = "from simtsafe import BlockRow, WarpRow\n\n\n"

FINDINGS: dict[str, str] = {
    # FINDING 1: `~c.valid` is `not valid` on the GPU (Numba: numpy semantics for ~bool) and
    # -2 / -1 (always true) on the simulator (Python bool). Launch: grid 2, block 32,
    # x = arange(80).reshape(2, 40). Simulator (prepare and sim.check, no findings): out =
    # inf everywhere. GPU (PTX above: v = -inf only under `or.pred row>=rows, col>=cols`):
    # out = x - rowmax (row 0: -39, -38, ...).
    "invert-valid": _IMPORT
    + """@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for c in thread.block_row_chunks(x):
        pad = ~c.valid
        v = np.float32(-np.inf) if pad else x[c]
        m = max(m, ss.block.max(v))
    for c in thread.block_row_chunks(out):
        out[c] = x[c] - m
""",
}

HELD: dict[str, str] = {
    "witness-after-the-loop": "`for c in block_row_chunks(x): pass` then `out[c] = 1` (and the "
    "`for ... else: out[c] = 1` form, and `p = c` kept from the first chunk under a flag) are "
    "refused on both targets by lowering/_unbound ('may be unbound ... Numba gives ... the value "
    "0'): with x of width 0 and out wider, the zero witness would have been (0, 0) in every "
    "thread of every block",
    "spellings": "ss.thread.block_row_chunks, `from simtsafe.thread import block_row_chunks as "
    "brc`, `import simtsafe.thread as tt` all expand; enumerate/zip/iter/next/genexp over it "
    "are refused ('only as the iterable of a for loop'); `for x in block_row_chunks(x)` "
    "(target shadows the walked array) and `c = 0` before the loop compile to the right walk; "
    "RowChunk and ThreadIndex of one space in one name: Numba's 'Cannot unify', a SafetyError (now in words: 'one variable holds ...'); "
    "`c.valid = True` refused (unsafe region); __ss_ names cannot be written",
    "walked-array-choice": "chunk loop over x[:, :threadIdx.x], over x[:, :int(x[0, tid])], over "
    "(x, y)[tid % 2], over an array chosen in a loop-carried branch (s = y under tid == 0 after "
    "the first pass), over x[:, :n] with n carried the same way, over y[:, :c.col] nested in "
    "another chunk loop: each refused at the collective (compiled form: the exit depends on "
    "tid / on the branch); a helper returning one of two arrays is a Numba error (SafetyError)",
    "warp-vs-block-uniform": "warp_row_chunks with `if c.row % 2 == 0: ss.block.sum(...)`, and a "
    "warp_row_chunks walk of x[:, :ss.warp.sum(...)] around ss.block.sum, are refused "
    "('warp-uniform' control for a block collective); the same with ss.warp.* (block=64) is "
    "accepted and right on the simulator",
    "exits-in-the-loop": "raise after the collective under x[c] > 2 (the next chunk's collective "
    "is skipped), `while True: block.sum; if c.valid: break`, `range(0, 4, c.col)` (step 0 in "
    "thread 0), tuple index t[c.col % 4], `c.valid and helper_with_block_sum(...)`, "
    "`block.sum(...) if c.valid else 0`, `range(int(c.valid) + 1)` around a collective: refused",
    "uniform-exits-accepted": "break on a block.sum result, `if c.chunk == 0:` around a "
    "collective, `if c.row % 2 == 0:` (block_row_chunks), `return` when c.row >= x.shape[0] "
    "(block_row_chunks), nested chunk loops with collectives in both, a while loop to c.chunk, "
    "grid.sync inside (cooperative; the trip count is grid-uniform): accepted, and the "
    "simulator's values are right",
    "shared-tile-per-chunk": "a tile written per chunk, block.sync, read by index, no barrier "
    "before the next chunk's write: refused by the phase check (read/fill with no barrier on "
    "some path); with a block.sum between the read and the loop's back edge: accepted "
    "(the collective's bar.sync orders every read before the next write)",
    "launch-shape": "domain=1 with block (32, 2, 1) is refused by the contract; max_threads=64 "
    "with block (32, 2) and grid (2, 2) are DomainMismatch; without a contract a 2D block or "
    "grid makes every chunk witness invalid (nothing written, sim.check clean); outputs must be "
    "C-contiguous (no self-overlapping rows); 1D / 3D arrays for a BlockRow output or an In2D "
    "are ArgumentTypeError; width 0 and 0 rows run and write nothing",
    "rank-and-space": "RowChunk[BlockRow] reading a 1D or 3D input: 'addresses 2D elements'; "
    "writing a WarpRow output, walking a WarpRow output with block_row_chunks, walking a scalar "
    "or a tuple of arrays: refused; simtsafe.random draws take Index1D/2D/3D witnesses only (a "
    "RowChunk's (blockIdx.x, col) would have been linearized onto another thread's state)",
    "bounds": "every store through a chunk witness is under `setp.ge.u64` of row and column "
    "against the stored array's own shape (record fields, bf16, 2D outputs narrower or shorter "
    "than the walked array); reads past the end give 0 (sums over a 40-wide row in 32-thread "
    "blocks: 32 then 8)",
    "partial-warps": "warp_row_chunks at block 48: rows of the partial warps are written in "
    "their lanes' columns only and their warp.scan carries over 16 lanes (documented; covers= "
    "refuses it; sim.check clean)",
    "natural-kernels": "online softmax (max and rescaled sum in one chunk pass), two-pass "
    "LayerNorm with gamma/beta read at c.col under `if c.valid`, argmax via block.max + "
    "block.min of candidate columns, exclusive scan, an int stream-compaction offset scan, a "
    "collective in a @ss.device helper called in the loop, a chunk loop inside a helper, "
    "block.broadcast per chunk, warp.scan in block_row_chunks (block=32), the max under "
    "`if c.valid` before one block.max after the loop: accepted, simulator values match numpy",
    "sim-check-divergence-message": "(diagnostic only) sim.check of the loop-carried divergent "
    "walks above (which prepare refuses) stops with 'block.sum(v) takes a number ...; got "
    "Poison' rather than naming the divergent collective",
    "valid-vs-other-output": "(documentation) `.valid` is relative to the WALKED array: a kernel "
    "walking x and writing out with more rows/columns writes where c.valid is False (its own "
    "element, in bounds: no race), so the table's '(c.valid False: ... writes do nothing)' holds "
    "only for the walked array",
    "huge-width-empty-rows": "(observation) the trip count ignores the row (it must, for "
    "warp_row_chunks): an input of shape (0, 2**40) -- 0 bytes -- makes every thread run "
    "2**40 / blockDim.x chunks with their barriers; block_row_chunks could stop at once when "
    "blockIdx.x >= shape[0] (a block-uniform test), as block_row's extent does",
}

# Fixed, each with a rejected twin: break-when-not-valid-after-the-collectives (left refused, with advice) -- tests/kernels/fixed_refusals.py.
FALSE_REFUSALS: dict[str, str] = {
    # warp_row_chunks: the warp-per-row form's natural guard for warps past the last row
    "warp-row-early-exit-domain1": _IMPORT
    + """@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    m = np.float32(-np.inf)
    for c in thread.warp_row_chunks(x):
        if c.row >= x.shape[0]:
            return
        m = max(m, ss.warp.max(x[c] if c.valid else np.float32(-np.inf)))
    for c in thread.warp_row_chunks(out):
        out[c] = x[c] - m
""",
    # why: refused at ss.warp.max ('the loop whose exit is at line .. runs a different number
    # of times ... depends on the thread's index'). c.row = blockIdx.x * ceil(ntid.x / 32) +
    # tid.x // 32 is the same in every lane of a warp in EVERY 1D block (a warp is 32
    # consecutive tid.x when ntid.y = ntid.z = 1, partial warps included), and domain=1
    # proves the block 1D. verify/_divergence.warp_uniform_axes(block) already says "x" when
    # by * bz == 1, but it is given block=None unless the contract pins an exact block, so
    # the same kernel with LaunchContract(domain=1, block=128) is accepted. Also refused with
    # domain=1: `if c.row < x.shape[0]: m = max(m, ss.warp.max(...))`, and a top-of-kernel
    # `if blockIdx.x * (blockDim.x // 32) + threadIdx.x // 32 >= x.shape[0]: return` before a
    # warp_row_chunks scan. Fix direction: warp_uniform_axes((None, 1, 1)) -> "x" when the
    # domain is proven 1D.
    "break-when-not-valid-after-the-collectives": _IMPORT
    + """@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    carry = np.float32(0)
    for c in thread.block_row_chunks(out):
        v = x[c]
        out[c] = ss.block.scan(v) + carry
        carry += ss.block.sum(v)
        if not c.valid:
            break
""",
    # why: refused at block.scan (thread-dependent loop exit). Sound: in block_row_chunks,
    # c.valid is False only (a) in the LAST chunk (columns past the end: no chunk follows) or
    # (b) in every chunk of every thread of the block (blockIdx.x >= rows: all leave at
    # chunk 0 together). So the break never skips a collective some other thread of the block
    # reaches. Lower priority than the first: docs/cooperation.md names the flag form
    # (`done = ...; if not done: out[c] = s`) as the accepted spelling, and the analysis
    # would need the fact that `col < w` fails only at k = ceil(w / step) - 1.
}
