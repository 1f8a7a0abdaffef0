r"""Attack round 30 (an outside helper): today's three relaxations.

1. bfca8ba + 8bb11f6: numba-cuda's float16 / bf16 / fp8 C++ shims read as status 0 from the
   source its bindings link (``lowering/_shims.py``); ``lowering/_irform`` renames their calls
   ``__ss.shim.NAME``, gives the status the value 0 (``add i32 0, 0``), ``verify/_divergence``
   takes them as pure (writes: what their pointer operands point to), ``verify/_feasible``
   drops the other edge of ``br i1 true|false``.
2. 59d2baf: ``LaunchContract(vec_alignment="any")`` runs a launch whose ``vec.load`` input is
   misaligned (its runs read element by element) instead of refusing it.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness: /tmp/a30 in the session (``tryk(name, src)`` = ``load_kernel_module(tempdir,
src).k.ptx(cc=(9, 0))`` with ``lowering._irform._normalize`` wrapped to keep the analysed
IR; ``ss.sim.check`` and ``prepare`` launches under ``NUMBA_ENABLE_CUDASIM=1``; the PTX
emulator of attack round 14, ``tests/ptx/fill_emu.py``, on ``vec.load`` kernels). No GPU
used. Nothing in simtsafe/ changed.

What was read: every shim numba-cuda 0.30's bindings can write (cuda_fp16 157, cuda_bf16 298,
cuda_fp8 118). ``_shims._parse`` takes 528 of them; the 45 it leaves are the shuffles (a warp
collective: ``sync`` in the body) and the loads, stores and atomicAdds that take a ``T **``.
Each taken body is one ``retval = f(*a, ...); return 0;`` (or a placement ``new``): its status
is 0 on the one path, and it writes ``retval`` (a reference to the ``alloca`` Numba made for
the result, of the same size: ``__half &`` -> i16, ``bool &`` -> i8, ``long long &`` -> i64,
``float2 &`` -> float32x2, checked for every fp16 and bf16 shim) and, for ``operator+=`` and
kin, ``*lh``, which is the ``alloca`` copy the binding stores its argument into. Every pointer
operand of a shim call in the analysed IR is such an ``alloca`` (no binding passes an array
element's or a tile's address; the 60 shim calls in this round's kernels checked), so
"writes its operands' memory" writes no tile, accumulator, input or private array; and since
the result is read back through that escaped ``alloca``, a shim's *value* stays
thread-dependent in the analysis whatever its operands (hence the false refusals below).
``np.float16(int)``, ``int(float16)`` and float16 <-> float32 are inline ``cvt`` (level of
their operand, as for ``f16_warp_id_steer``), not shims.

=============================================================================================
FINDINGS: none against docs/safety.md's promises. One LOW value finding (FINDINGS below).
=============================================================================================

FINDING 1 (LOW: values differ between the GPU and the simulator; pre-existing in numba-cuda,
reachable in more Tier-1 kernels since today's commits accept fp16 arithmetic before
collectives). ``int(h)``, ``np.int32(h)``, ``np.int64(h)`` of a float16 ``h`` is numba-cuda's
``lower_cast(float16, Integer)``: inline ``cvt.rni.s64.f16`` -- round to nearest, ties to
even -- while the same cast of a float32 is ``fptosi`` (``cvt.rzi``: truncation), as Python,
numpy and the simulator do. ``fp16-to-int-rounds``: for ``x = [1.7, 2.5, 3.5, -1.7, 0.6,
7.9, -0.6, 100.4]`` the simulator stores ``int(x)*1000 + int(float32(x))*10 +
np.int32(x)`` = ``[1011, 2022, 3033, -1011, 0, 7077, 0, 101100]``; the PTX
(``cvt.rni.s64.f16``, ``cvt.rzi.s64.f32``, ``cvt.rni.s32.f16``) gives ``2012, 2022, 4034,
-2012, 1001, 8078, -1001, 101100`` (1.7 -> 2, 3.5 -> 4, 0.6 -> 1; 2.5 and 100.375 agree).
Unsigned targets saturate (``np.uint8(h)`` is ``cvt.rni.u8.f16``: -1.0 gives 0 on the GPU,
255 in numpy and on the simulator).
No safety proof reads these values (the analysis treats the ``cvt`` as opaque and keeps its
operand's level; every proof about indices is on integer instructions), so no barrier,
collective, tile or accumulator promise breaks; but a Python-correct guard such as ``if h <
np.float16(a.size): v = a[int(h)]`` reads one past ``a`` on the GPU (a read by plain int:
not bounds-checked, documented) and not on the simulator, and a kernel checked against numpy
on the simulator gives other numbers on the GPU. docs/checker.md "Values, not bits" and
port20's DOC_GAPS ``simulator_narrow_int_wraps`` cover integer wrap only.

FIXED (lowering/_halfcasts.py: the cast registered again after numba-cuda's, ``cvt.rzi``;
tests/ptx/test_attacks30_ptx.py, tests/sim/test_fp16_casts_sim.py). Fix direction was: lower
``float16 -> Integer`` in simtsafe's own cast table (as ``lowering/_bf16``
does for bf16) with ``cvt.rzi`` (truncation: what the simulator, numpy and the float32 cast
do), or refuse it with the spelling ``int(np.float32(h))``; and say it in docs/checker.md.

=============================================================================================
HELD (HELD_KERNELS, refused with the fragment given):
=============================================================================================

* a float16 / bf16 value deciding a branch, a loop or an exit before a collective, in every
  spelling: ``if h * h > 2: return``, ``while h > 1: ... block.sum`` inside, ``if np.isnan(h):
  return``, ``raise`` under an fp16 compare, a bf16 compare steering ``block.sum``, ``for q in
  range(int(h)): block.sum``, a grid sync under an fp16 compare. The shim's *status* is 0; its
  value comes back through memory the analysis does not trust.
* ``t[int(h * h)]`` on a 4-tuple (``IndexError`` for some threads): the tuple-index message.
* shared tiles of float16 / bf16 filled with fp16 arithmetic and read by index with no barrier,
  an fp16 product of another thread's element stored back in the same phase, a bf16 tile read
  by index in its fill phase; ``vec.load`` of a tile in its fill phase: ``rule="tile-phase"``.
* a ``@ss.device`` helper named ``_ZmlRK6__halfS1__nbst`` (the fp16 multiply's shim) that
  raises for some threads: Numba mangles it (``_ZN...``), the rename takes only undefined
  names matched whole (``@NAME`` followed by a space or ``(``), so its raise stays an exit.
  ``_irform._name_status_zero_shims`` was also run on synthetic IR (tests/ptx): a defined
  function of a shim's name, ``@NAME_caller``, ``@"NAME.1"`` are left alone.
* float16 accumulators (``Accumulate[np.float16]``, ``shared.accumulator(n, np.float16)``),
  whose atomic would be the ``__half **`` shim: refused at compile.
* ``vec.load`` of an Accumulate, a local array, an output, a constant array, a
  shared accumulator: refused (the source and the typing).

The constant branches ``verify/_feasible`` (and ``_irform._instr``, since 87f206c) prune: the
analysed copy differs from what NVVM compiles only in simtsafe's own renames (opaque markers,
writable constants: less folding) and the shim status 0 (true of the linked code). LLVM 22's
instcombine folds compares through ``nsw``/poison (``t + 1 > t``, ``(1 << t) != 0``, ``t * t
>= 0``, ``(t * C) // C == t`` with ``t`` a wrapping multiple of ``threadIdx.x``): NSW_FOLDS
are accepted, and NVVM folds each the same way -- the PTX has no compare before the barrier
but the reduction's lane test (tests/ptx). No fold was found that NVVM does not make. (Note:
the new edge drop in ``_feasible._targets`` never runs: ``_irform._instr`` already leaves one
target on a ``br i1 true|false``, so ``len(term.targets) == 2`` is false there.)

``vec_alignment="any"``: the device code never depended on the launch check (it was a speed
check). The PTX of ``vec.load`` (1D, 2D at rows ``r0 + tid // 4``, ``vec.load_runs`` of two
runs) for int8 runs of 4 and 8, uint16/int16 runs of 2, 4, 8, uint32/int32 runs of 2 and 4,
int64 runs of 2, was emulated thread by thread (tests/ptx/fill_emu.py) on inputs at element
offsets 0..15 from a 16-byte boundary, ragged rows (``cols`` 0, 1, 3, n + 1, 2n - 1, 5n + 3,
17...), run indices -9, -1, 0..3, the tail, 2**62, -2**62, rows -1, 0, last, past, 2**62: 480
cases (seed 31; 120 in tests/ptx, seed 30), every thread's hash of its run equal to numpy's
(0 outside), no load outside the input, 129 vector loads issued (32 in the CI sweep), none
misaligned; with the alignment mask in the PTX zeroed (a mutation) the sweep reports
misaligned vector loads. On the simulator, a misaligned view (``d[3:70]`` of int8, runs of 8)
gives numpy's values under ``"any"`` and the launch refusal under ``"required"``. bf16 and
fp16 runs take the 2-byte memory path emulated here (only the element conversion after the
merge differs). ``vec.store`` was not changed by the commit (its misaligned output tile was
already the element path).

Simulator agreement: the ACCEPTED kernels with tiles, local arrays, broadcasts and helpers
replay clean under ``ss.sim.check`` (1 block of 64 threads): f16_block_stride_fill,
f16_local_array, f16_shim_under_branch_then_coll, bcast_bf16_widened, f16_input0_steer,
bf16_tile, f16_warp_id_steer, f16_helper_arith, tile_f16_iadd_own, f16_index_tuple,
f16_loop_trip_before_coll, f16_while_exit, f16_math_sin, f16_div_zero, f16_floordiv, f16_pow.
(Values were not compared with a GPU; FINDING 1 is the one difference the PTX shows.)

=============================================================================================
FALSE REFUSALS (FALSE_REFUSALS, safe, refused): a shim's result is read back from the
``alloca`` it was written to, which escapes to the call, so it is thread-dependent even of
uniform operands: ``n * n > 2`` of a float16 parameter, ``np.float16(n) * 2 > 3``,
``x[0] > np.float16(1)`` with ``x[0]`` proven in range (the same through ``np.float32(x[0])``
is accepted) -- each refused with "a value loaded from memory (written during the launch, or
at a thread-dependent address)", which names neither the fp16 operation nor the fix, and
where it names a helper it is numba-cuda's ``_ZgtRK6__halfS1__nbst_caller`` at a line of
whichever kernel first compiled it (port20's BAD_ERRORS ``opaque_call_uniformity_message``);
a ``block.reduce`` op over float32 that adds in float16 inside is refused as impure; and
``block.broadcast`` takes no float16 and no bf16 scalar, so docs/safety.md's advice
``if ss.block.broadcast(a[k]) > 0`` has no fp16 / bf16 spelling but widening first.
"""

from __future__ import annotations

__all__ = [
    "ACCEPTED",
    "FALSE_REFUSALS",
    "FINDINGS",
    "HELD_KERNELS",
    "NOT_UNIFORM",
    "NSW_FOLDS",
    "VEC_SOURCES",
]

NOT_UNIFORM = "`block.sum` needs every thread of the block to reach it"
_TILE_PHASE = "shared tile `t` is read by index at line"
_LOADED = "depends on a value loaded from memory"
_VEC_SOURCE = "vec.load reads an In[...] input array or a shared tile"

# =============================================================================================
# FINDINGS
# =============================================================================================

FINDINGS: dict[str, str] = {
    # FINDING 1: int() of a float16 rounds on the GPU (cvt.rni), truncates on the simulator
    "fp16-to-int-rounds": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=8))
def k(out: DisjointSlice[np.int64], x: In[np.float16], y: In[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(x):
        out[w] = np.int64(int(x[w]) * 1000 + int(y[w.index]) * 10 + np.int64(np.int32(x[w])))
""",
}

# =============================================================================================
# HELD: unsafe, refused (source, message fragment)
# =============================================================================================

HELD_KERNELS: dict[str, tuple[str, str]] = {
    "f16-product-steers-return": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    v = x[w]
    if v * v > np.float16(2):
        return
    out[w] = ss.block.sum(np.float32(v))
""",
        NOT_UNIFORM,
    ),
    "f16-isnan-return": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w]
    if np.isnan(h):
        return
    out[w] = ss.block.sum(np.float32(h))
""",
        NOT_UNIFORM,
    ),
    "f16-raise-under-compare": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] * x[w]
    if h > np.float16(100):
        raise ValueError("big")
    out[w] = ss.block.sum(np.float32(h))
""",
        NOT_UNIFORM,
    ),
    "f16-while-collective-inside": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w]
    acc = np.float32(0)
    while h > np.float16(1):
        h = h * np.float16(0.5)
        acc += ss.block.sum(np.float32(1))
    out[w] = acc
""",
        NOT_UNIFORM,
    ),
    "f16-range-trip-collective-inside": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    acc = np.float32(0)
    for q in range(int(x[w])):
        acc += ss.block.sum(np.float32(q))
    out[w] = acc
""",
        NOT_UNIFORM,
    ),
    "bf16-compare-steers-collective": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    h = m[cuda.threadIdx.x % m.shape[0]]
    v = np.float32(0)
    if h > m[0]:
        v = ss.block.sum(np.float32(1))
    out[w] = v
""",
        NOT_UNIFORM,
    ),
    "f16-compare-steers-grid-sync": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, cooperative=True))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] * x[w]
    if h > np.float16(1):
        ss.grid.sync()
    out[w] = np.float32(h)
""",
        "`grid.sync` needs every thread of the grid to reach it",
    ),
    "f16-tuple-index-unmasked": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = (1.0, 2.0, 3.0, 4.0)
    v = t[int(x[w] * x[w])]
    out[w] = ss.block.sum(np.float32(v))
""",
        "the tuple index at line",
    ),
    "helper-named-like-a-shim-raises": (
        """
@ss.device
def _ZmlRK6__halfS1__nbst(v: np.float32) -> np.float32:
    if v > np.float32(0.5):
        raise ValueError("x")
    return v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] * x[w]
    out[w] = ss.block.sum(_ZmlRK6__halfS1__nbst(np.float32(h)))
""",
        NOT_UNIFORM,
    ),
    "f16-tile-other-element-same-phase": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float16)
    l = thread.local_index()
    t[l] = x[w]
    h = t[(cuda.threadIdx.x + 1) % 64] * x[w]
    ss.block.sync()
    out[w] = np.float32(h)
""",
        _TILE_PHASE,
    ),
    "f16-tile-fill-arith-read-no-sync": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float16)
    l = thread.local_index()
    t[l] = x[w] * x[w]
    out[w] = np.float32(t[(cuda.threadIdx.x + 1) % 64] + x[w])
""",
        _TILE_PHASE,
    ),
    "f16-tile-read-then-refill-same-phase": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float16)
    l = thread.local_index()
    t[l] = x[w]
    ss.block.sync()
    h = t[(cuda.threadIdx.x + 1) % 64] * t[0]
    t[l] = h
    ss.block.sync()
    out[w] = np.float32(t[l])
""",
        _TILE_PHASE,
    ),
    "bf16-tile-read-in-fill-phase": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, ss.bfloat16)
    l = thread.local_index()
    h = m[cuda.threadIdx.x % m.shape[0]]
    t[l] = h * h
    out[w] = ss.block.sum(t[(cuda.threadIdx.x + 3) % 64])
""",
        _TILE_PHASE,
    ),
    "vec-load-tile-in-fill-phase": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float32)
    t[thread.local_index()] = x[w]
    v = ss.vec.load(t, 1, 4)
    out[w] = v[0]
""",
        _TILE_PHASE,
    ),
    "f16-accumulate-output": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(h: ss.Accumulate[np.float16], x: In[np.float16]) -> None:
    w = thread.index_1d()
    if w.in_bounds(x):
        h.add(0, x[w] * x[w])
""",
        "needs an element type with CUDA atomics",
    ),
    "f16-shared-accumulator": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    bins = ss.shared.accumulator(4, np.float16)
    bins.add(cuda.threadIdx.x % 4, x[w] * x[w])
    ss.block.sync()
    out[w] = np.float32(bins[cuda.threadIdx.x % 4])
""",
        "needs an element type with CUDA atomics",
    ),
    "vec-load-accumulate": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], h: ss.Accumulate[np.float32]) -> None:
    w = thread.index_1d()
    h.add(cuda.threadIdx.x % 4, np.float32(1))
    v = ss.vec.load(h, 0, 4)
    out[w] = v[0] + v[1]
""",
        _VEC_SOURCE,
    ),
    "vec-load-local-array": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    la = cuda.local.array(8, np.float32)
    for q in range(8):
        la[q] = np.float32(q)
    v = ss.vec.load(la, 1, 4)
    out[w] = v[0] + v[1]
""",
        _VEC_SOURCE,
    ),
    "vec-load-output": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    v = ss.vec.load(out, 0, 4)
    out[w] = v[0] + v[1]
""",
        _VEC_SOURCE,
    ),
    "vec-load-const-array": (
        """
TBL = np.arange(16, dtype=np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    c = cuda.const.array_like(TBL)
    v = ss.vec.load(c, 1, 4)
    out[w] = v[0] + v[1]
""",
        _VEC_SOURCE,
    ),
    "vec-load-shared-accumulator": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    bins = ss.shared.accumulator(4, np.float32)
    bins.add(cuda.threadIdx.x % 4, np.float32(1))
    v = ss.vec.load(bins, 0, 4)
    out[w] = v[0] + v[1]
""",
        "`bins` is a shared tile or accumulator",
    ),
}

# =============================================================================================
# ACCEPTED: sound shapes (fp16 / bf16 arithmetic, conversions and calls before barriers and
# collectives, in tiles, local arrays, tuples, records, helpers, branches)
# =============================================================================================

ACCEPTED: dict[str, str] = {
    "tile_f16_iadd_own": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float16)
    l = thread.local_index()
    t[l] = x[w]
    t[l] += x[w] * x[w]
    ss.block.sync()
    out[w] = np.float32(t[(cuda.threadIdx.x + 1) % 64])
""",
    "f16_index_tuple": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = (1.0, 2.0, 3.0, 4.0)
    v = t[int(x[w] * x[w]) & 3]
    out[w] = ss.block.sum(np.float32(v))
""",
    "f16_loop_trip_before_coll": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    acc = np.float16(0)
    for q in range(int(x[w])):
        acc += x[w]
    out[w] = ss.block.sum(np.float32(acc))
""",
    "f16_while_exit": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w]
    while h > np.float16(1):
        h = h * np.float16(0.5)
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_math_sin": """
import math


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = math.sin(x[w])
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_np_sqrt": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = np.sqrt(x[w])
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_div_zero": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] / (x[w] - x[w])
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_floordiv": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] // (x[w] - x[w])
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_mod": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] % (x[w] - x[w])
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_pow": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] ** 2
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_int_conv": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16], a: In[np.int32]) -> None:
    w = thread.index_1d()
    h = np.float16(a[w]) * np.float16(3)
    out[w] = ss.block.sum(np.float32(np.int32(h)))
""",
    "bf16_arith": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    h = m[cuda.threadIdx.x % m.shape[0]]
    g = h * h + h
    out[w] = ss.block.sum(np.float32(g))
""",
    "f16_shim_under_branch_then_coll": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w]
    if cuda.threadIdx.x % 3 == 0:
        h = h * h + np.float16(1)
    out[w] = ss.block.sum(np.float32(h))
""",
    "f16_block_stride_fill": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(128, np.float16)
    for l in thread.block_stride(t):
        h = x[l.index % x.size]
        t[l] = h * h
    ss.block.sync()
    out[w] = np.float32(t[(cuda.threadIdx.x * 2 + 1) % 128] + t[0])
""",
    "f16_local_array": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    la = cuda.local.array(4, np.float16)
    for q in range(4):
        la[q] = x[w] * np.float16(q)
    s = np.float32(0)
    for q in range(4):
        s += np.float32(la[q])
    out[w] = ss.block.sum(s)
""",
    # la[0] is the parameter itself (uniform); la[1] a shim's result
    "f16_local_array_uniform_steer": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16], n: np.float16) -> None:
    w = thread.index_1d()
    la = cuda.local.array(2, np.float16)
    la[0] = n
    la[1] = n * n
    v = np.float32(0)
    if np.float32(la[0]) > np.float32(1):
        v = ss.block.sum(np.float32(x[w]))
    out[w] = v
""",
    "f16_tuple_steer_uniform": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16], n: np.float16) -> None:
    w = thread.index_1d()
    t = (n, n * n)
    v = np.float32(0)
    if np.float32(t[0]) > np.float32(1):
        v = ss.block.sum(np.float32(x[w]))
    out[w] = v
""",
    # the input is trusted again in a kernel with shim calls (they write only their allocas)
    "f16_input0_steer": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size >= 1"]))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    v = np.float32(0)
    if np.float32(x[0]) > np.float32(1):
        v = ss.block.sum(np.float32(x[w] * x[w]))
    out[w] = v
""",
    "bcast_bf16_widened": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    b = ss.block.broadcast(np.float32(m[cuda.threadIdx.x % m.shape[0]]))
    v = np.float32(0)
    if b > np.float32(1):
        v = ss.block.sum(np.float32(1))
    out[w] = v
""",
    # np.float16(int) and int(float16) are inline cvt: the warp's number stays warp-uniform
    "f16_warp_id_steer": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = np.float16(cuda.threadIdx.x // 32)
    v = np.float32(0)
    if int(h) == 0:
        v = ss.warp.sum(np.float32(x[w]))
    out[w] = v
""",
    "f16_helper_arith": """
@ss.device
def sq(h: np.float16) -> np.float16:
    return h * h + h


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    out[w] = ss.block.sum(np.float32(sq(x[w])))
""",
    "f16_record_aligned": """
REC = np.dtype([("a", np.float16), ("b", np.float32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], r: In[REC]) -> None:
    w = thread.index_1d()
    e = r[w]
    h = e.a * e.a
    out[w] = ss.block.sum(np.float32(h) + e.b)
""",
    "bf16_tile": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, ss.bfloat16)
    l = thread.local_index()
    h = m[cuda.threadIdx.x % m.shape[0]]
    t[l] = h * h
    ss.block.sync()
    out[w] = ss.block.sum(t[(cuda.threadIdx.x + 3) % 64])
""",
    "grid_sync_after_f16": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, cooperative=True))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    h = x[w] * x[w]
    ss.grid.sync()
    out[w] = np.float32(h)
""",
}

# =============================================================================================
# FALSE_REFUSALS: safe, refused (source, message fragment)
# =============================================================================================

FALSE_REFUSALS: dict[str, tuple[str, str]] = {
    "f16-param-square-steers": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16], n: np.float16) -> None:
    w = thread.index_1d()
    v = np.float32(0)
    if n * n > np.float16(2):
        v = ss.block.sum(np.float32(x[w]))
    out[w] = v
""",
        _LOADED,
    ),
    "f16-of-int-param-steers": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16], n: np.int32) -> None:
    w = thread.index_1d()
    v = np.float32(0)
    if np.float16(n) * np.float16(2) > np.float16(3):
        v = ss.block.sum(np.float32(x[w]))
    out[w] = v
""",
        _LOADED,
    ),
    "f16-compare-of-input-0": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size >= 1"]))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    v = np.float32(0)
    if x[0] > np.float16(1):
        v = ss.block.sum(np.float32(x[w] * x[w]))
    out[w] = v
""",
        _LOADED,
    ),
    "reduce-op-adds-in-f16": (
        """
@ss.device
def add(a: np.float32, b: np.float32) -> np.float32:
    return np.float32(np.float16(a) + np.float16(b))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    out[w] = ss.block.reduce(np.float32(x[w]), add)
""",
        "must combine its two values from them alone",
    ),
    "broadcast-f16": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    b = ss.block.broadcast(x[w])
    v = np.float32(0)
    if np.float32(b) > np.float32(1):
        v = ss.block.sum(np.float32(1))
    out[w] = v
""",
        "block.broadcast(v) does not take float16",
    ),
    "broadcast-bf16-scalar": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In[ss.bfloat16]) -> None:
    w = thread.index_1d()
    b = ss.block.broadcast(m[cuda.threadIdx.x % m.shape[0]])
    v = np.float32(0)
    if np.float32(b) > np.float32(1):
        v = ss.block.sum(np.float32(1))
    out[w] = v
""",
        "block.broadcast(v) takes a number",
    ),
}

# =============================================================================================
# NSW_FOLDS: compares LLVM 22's instcombine folds to a constant through nsw / poison in the
# analysed copy (a ``br i1 true`` the analysis prunes) -- accepted, and NVVM folds each the
# same way (no compare before the barrier in the PTX but the reduction's lane test)
# =============================================================================================

_FOLD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], s: np.int64) -> None:
    w = thread.index_1d()
    tid = np.int64(cuda.threadIdx.x)
    PRE
    v = np.float32(0)
    if COND:
        v = ss.block.sum(np.float32(1))
    out[w] = v
"""


def _fold(pre: str, cond: str) -> str:
    return _FOLD.replace("PRE", pre).replace("COND", cond)


NSW_FOLDS: dict[str, str] = {
    "add-one-greater": _fold("t = tid * np.int64(0x7FFFFFFFFFFFFFFF)", "t + 1 > t"),
    "one-shifted-nonzero": _fold("t = tid + s", "(np.int64(1) << t) != np.int64(0)"),
    "square-nonnegative": _fold("t = tid * np.int64(3037000500)", "t * t >= 0"),
    "mul-div-identity": _fold(
        "t = tid - np.int64(1)",
        "(t * np.int64(4611686018427387904)) // np.int64(4611686018427387904) == t",
    ),
    "int32-add-one-greater": _fold(
        "t = np.int32(cuda.threadIdx.x) * np.int32(0x7FFFFFFF)", "t + np.int32(1) > t"
    ),
}

# =============================================================================================
# VEC_SOURCES: vec.load kernels emulated from their PTX (tests/ptx/test_attacks30_ptx.py) at
# misaligned data pointers and ragged rows with vec_alignment="any": each of 8 threads hashes
# its run(s) into its own element of a shared tile, then a barrier (the emulator stops there)
# =============================================================================================

_VEC_TAIL = """
    t = ss.shared.tile(8, np.int64)
    t[thread.local_index()] = h
    ss.block.sync()
    out[w] = t[thread.local_index()]
"""

VEC_SOURCES: dict[str, str] = {
    # 1D: thread x reads run j0 + x
    "1d": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=8, vec_alignment="any"))
def k(out: DisjointSlice[np.int64], a: In[DTYPE], j0: np.int64) -> None:
    w = thread.index_1d()
    v = ss.vec.load(a, j0 + np.int64(cuda.threadIdx.x), RUN)
    h = np.int64(0)
    for q in range(RUN):
        h = h * np.int64(1000003) + np.int64(v[q])
"""
    + _VEC_TAIL,
    # 2D: thread x reads run j0 + x % 4 of row r0 + x // 4
    "2d": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=8, vec_alignment="any"))
def k(out: DisjointSlice[np.int64], a: In2D[DTYPE], r0: np.int64, j0: np.int64) -> None:
    w = thread.index_1d()
    x = np.int64(cuda.threadIdx.x)
    v = ss.vec.load(a, (r0 + x // 4, j0 + x % 4), RUN)
    h = np.int64(0)
    for q in range(RUN):
        h = h * np.int64(1000003) + np.int64(v[q])
"""
    + _VEC_TAIL,
    # vec.load_runs: runs j0 + x and j0 - 3x together
    "runs": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=8, vec_alignment="any"))
def k(out: DisjointSlice[np.int64], a: In[DTYPE], j0: np.int64) -> None:
    w = thread.index_1d()
    x = np.int64(cuda.threadIdx.x)
    vs = ss.vec.load_runs(a, (j0 + x, j0 - x * 3), RUN)
    h = np.int64(0)
    for v in vs:
        for q in range(RUN):
            h = h * np.int64(1000003) + np.int64(v[q])
"""
    + _VEC_TAIL,
}
