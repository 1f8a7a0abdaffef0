r"""Attack round 24 (an outside helper): tuple states in ``block.reduce(state, op)`` and
``warp.reduce(state, op)``.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). The
module-level constants below are plain ``str``; scratch harness: /tmp/a24 in the session
(``load(src)`` = ``load_kernel_module(tempdir, src)``; ``k.ptx(cc=(9, 0))``; simulator runs
with ``NUMBA_ENABLE_CUDASIM=1``).

Summary: the compiled form held everywhere it was pushed (below, HELD); every finding is a
broken promise of the docs, the simulator, or a message.

=============================================================================================
FINDING 1 (MEDIUM: the simulator hangs forever on a kernel the compiled form accepts): an op
holding a barrier or a collective is ACCEPTED with an exact block of whole warps, and the
simulator deadlocks on it.
=============================================================================================
docs/cooperation.md ("op of reduce"): "A helper op must compute its result from its two
arguments alone: one holding a barrier or collective, raising, asserting, or reading
threadIdx, a lane id, a witness or memory is refused at decoration (rule="uniformity")".
Nothing refuses it at decoration; the compiled-form check refuses it only where the down tree
has the per-lane ``if ok`` branch (a partial warp, or no exact block: block=48, max_threads=128
are refused, "helper op needs every thread of the block"). With ``block=64`` (or 32, 128...)
the tree is unconditional, so every thread calls the op 5 times plus nwarps - 1 times in the
fold, and ``k.ptx(cc=(9, 0))`` accepts:

    block.reduce, op with ss.block.sync():    accepted, 9 bar.sync (block=128)
    block.reduce, op with ss.block.sum(x[0]): accepted, 17 bar.sync
    block.reduce, op with ss.warp.sum / warp.scan / warp.broadcast: accepted
    warp.reduce,  op with ss.block.sync():    accepted, 5 bar.sync
    warp.reduce,  op with ss.warp.sum(x[0]):  accepted

(On the GPU the barrier counts are the same in every thread, so the compiled code itself is
not the problem; the result is marked thread-dependent because the op holds a convergent call.)

The simulator (lowering/_coop_sim._once) computes a collective's result ONCE, in the first
thread past the exchange, for every participant, while the other threads wait on the memo's
lock: the op's block.sync / warp.sum in that one thread waits for threads that never come.

    cd /work/wt-att24 && NUMBA_ENABLE_CUDASIM=1 SIMTSAFE_CACHE_DIR=$(mktemp -d) \
    PYTHONPATH=/work/wt-att24 timeout 120 .venv/bin/python -c "
    import pathlib, tempfile, numpy as np
    from numba import cuda
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks24 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['op-with-barrier-sim-hang'])
    out = cuda.to_device(np.zeros(64, np.float32)); a = cuda.to_device(np.ones(64, np.float32))
    m.k.prepare(grid=1, block=64)(out, a, 64); print(out.copy_to_host())"
  -> nothing printed, rc 124 after 120 s (the same kernel with `return (x[0] + y[0], x[1])`
     alone: 2.8 s, every thread 66.0). 'op-with-warp-collective-sim-hang' (block=32): the
     same, rc 124 after 60 s.

Broken promises: the decoration refusal the docs describe; docs/safety.md "When a check
runs" (the simulator and the GPU agree -- the GPU runs it, the simulator never returns).
Fix direction (not applied): refuse a barrier/collective in a reduce op at decoration as the
docs say (or on the compiled form: a convergent call among the site's callees), and make the
simulator raise rather than hang if it is ever reached.

=============================================================================================
FINDING 2 (LOW-MEDIUM: "the same bits in every participating thread" is false, and the
simulator disagrees with the GPU): an op reading threadIdx is ACCEPTED.
=============================================================================================
The same docs sentence says an op reading threadIdx is refused at decoration; it is accepted
(scalar form too: `return a + b + np.float32(cuda.threadIdx.x)` with block.reduce). The
compiled-form check does follow it (the site purity makes each field thread-dependent, so it
cannot steer a barrier: tests/ptx/test_tuple_reduce_ptx.py pins that), but the values break
the promise "The result is a tuple of the state's types, the same bits in every participating
thread", and the simulator gives other values than the GPU.

PTX (block=64, ``op-reading-threadidx``), after the one bar.sync every thread folds the two
warp states itself and adds ITS OWN tid:
    ld.shared.v2.f32 {%f32, %f33}, [__ss_coop_0]
    ld.shared.v2.f32 {%f36, %f37}, [__ss_coop_0+8]
    add.f32 %f40, %f33, %f37
    cvt.rn.f32.s32 %f3, %r1          (%r1 = tid.x; %r30 = %r1 >> 5 is the warp)
    add.f32 %f7, %f40, %f3           -> o2[i]
GPU values (a = ones, emulating that PTX: down tree per warp, each combine adding the calling
lane's tid, then the fold adding the reader's tid): o2 = 1366, 1367, ..., 1429 (thread j:
1366 + j), out = 64 everywhere.
Simulator (launch grid 1, block 64, a = ones): out = 64 everywhere and o2 one value in EVERY
thread, 64 + 63 t where t is whichever simulated thread reached _coop_sim._once first (it runs
all 63 op calls with its own threadIdx and hands the result to all): two runs gave o2 = 127.0
(t = 1) and o2 = 64.0 (t = 0) -- not even the same from run to run.

Fix direction: refuse such an op as documented (the compiled form already knows: site
purity > the scope), or drop the promise and make the simulator run the fold per thread.

=============================================================================================
FINDING 3 (LOW: simulator/compiled value disagreement): the simulator runs the op on numpy
scalars of the fields' dtypes, so the op's arithmetic follows numpy, not Numba's typing.
=============================================================================================
docs/cooperation.md: "The simulator computes in the same order and types, so integer results
match the GPU's exactly and float results too, except where NVVM fuses ... into one fma".
    * ``sim-f32-plus-python-float`` (warp.reduce, block 32, a = default_rng(14)
      .standard_normal(32) as float32): op `(x[0] + y[0] + 0.1, x[1])`. Numba types
      float32 + 0.1 as float64 (PTX: cvt.f64.f32; add.f64 %fd, %fd, 0d3FB999999999999A;
      cvt.rn.f32.f64 at each of the 5 steps); numpy 2.4 (NEP 50) keeps float32 and adds
      0.1f. Simulator: out = 4.04161167 (float32 4.0416117) in every thread; the PTX's
      arithmetic over the same down tree gives float32 4.041611.
    * ``sim-float-to-unsigned`` (warp.reduce, block 32, default_rng(1)): state
      (np.uint32(abs(v) * 100), v), op `(x[0] * 1.0 - y[0], x[1])`: the float64 result is
      converted to uint32 with cvt.rzi.u32.f64 (saturating: a negative difference is 0; the
      tree gives 0); the simulator's _cast wraps like numpy (-> 238).
    * ``sim-bool-subtract`` (warp.reduce, block 32): state (v, v > 0), op
      `(x[0] + y[0], x[1] - y[1])`: k.ptx accepts (Numba computes bools as int64 and
      converts back), the simulator refuses: "TypeError in the kernel's code on the
      simulator: numpy boolean subtract, the `-` operator, is not supported" (the fields
      reach the op as np.bool_).

=============================================================================================
FINDING 4 (LOW: raw ptxas/driver error instead of a simtsafe message): the block form's
exchange buffers are static shared memory that nothing adds up.
=============================================================================================
With an exact block a tuple block.reduce site costs 2 x 32 states (8 float64 fields: 4096
bytes). ``tile-plus-tuple-reduce-over-48k`` (a 11776-float32 tile, 47104 bytes, under the
48 KiB the docs quote for static tiles, plus one 8-field float64 block.reduce) is accepted by
k.ptx(cc=(9, 0)); ptxas -arch=sm_90 (CUDA 13.0, PTX .version patched 9.5 -> 9.0):
    ptxas error : Entry function '...' uses too much shared data (0xc800 bytes, 0xc000 max)
The same tile with a scalar block.sum (47616 bytes) assembles. (A static tile alone past
48 KiB, 12289 floats, is accepted by k.ptx too: the sum is never checked at compile; the
tuple form makes each collective's share 16x bigger, 13 eight-field sites alone exceed it.)

=============================================================================================
FINDING 5 (LOW: message): an op that cannot be typed for a reason other than a TypingError
is reported as "Numba cannot type `__ss_block_reduce(Tuple(float32, Literal[int](1)),
type(CUDADispatcher(<function op ...>)))`" -- e.g. `return [x[0], x[1]]` (the op's own
compile fails with NumbaRuntimeError "NRT required but not enabled"; _coop._resolve_state_op
catches only errors.TypingError, so the state_op_refused text is never built).

=============================================================================================
FALSE REFUSALS: see FALSE_REFUSALS below (an op defined after the kernel; the documented
parameter name `state=`).
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

FINDINGS: dict[str, str] = {
    # FINDING 1: accepted by k.ptx(cc=(9, 0)) (9 bar.sync at block=128; block=64 likewise);
    # NUMBA_ENABLE_CUDASIM=1, grid 1, block 64, a = ones: hangs (timeout 120 s, rc 124).
    "op-with-barrier-sim-hang": """
@ss.device
def op(x, y):
    ss.block.sync()
    return (x[0] + y[0], x[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    s, t = ss.block.reduce((v, np.float32(2)), op)
    out[i] = s + t
""",
    # FINDING 1, warp form: accepted (0 bar.sync, the op's warp.sum inlined 5 times); on the
    # simulator (grid 1, block 32, a = ones) it hangs (timeout 60 s, rc 124).
    "op-with-warp-collective-sim-hang": """
@ss.device
def op(x, y):
    z = ss.warp.sum(x[0])
    return (x[0] + y[0], x[1] + z)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    s, t = ss.warp.reduce((v, np.float32(2)), op)
    out[i] = s + t
""",
    # FINDING 2: accepted; GPU (per the PTX) o2[j] = 1366 + j, simulator o2 = 127 or 64 (run to
    # run) in every thread (grid 1, block 64, a = ones).
    "op-reading-threadidx": """
@ss.device
def add2_lane(a, b):
    return (a[0] + b[0], a[1] + b[1] + np.float32(cuda.threadIdx.x))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], o2: DisjointSlice[np.float32], a: In[np.float32],
      n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    s, t = ss.block.reduce((v, v), add2_lane)
    out[i] = s
    o2[i] = t
""",
    # FINDING 3: grid 1, block 32, a = default_rng(14).standard_normal(32).astype(float32):
    # simulator out = 4.0416117 (float32 arithmetic); the PTX's float64 add gives 4.041611.
    "sim-f32-plus-python-float": """
@ss.device
def op(x, y):
    return (x[0] + y[0] + 0.1, x[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[np.float64], a: In[np.float32],
      n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    r = ss.warp.reduce((v, v), op)
    out[i] = r[0]
    o2[i] = r[1]
""",
    # FINDING 3: a = default_rng(1).standard_normal(32).astype(float32): simulator out = 238;
    # the PTX converts with cvt.rzi.u32.f64 (negative -> 0), which gives 0.
    "sim-float-to-unsigned": """
@ss.device
def op(x, y):
    return (x[0] * 1.0 - y[0], x[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[np.float64], a: In[np.float32],
      n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    r = ss.warp.reduce((np.uint32(abs(v) * 100), v), op)
    out[i] = r[0]
    o2[i] = r[1]
""",
    # FINDING 3: k.ptx accepts; the simulator raises SafetyError(TypeError: numpy boolean
    # subtract ... is not supported).
    "sim-bool-subtract": """
@ss.device
def op(x, y):
    return (x[0] + y[0], x[1] - y[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[np.float64], a: In[np.float32],
      n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    r = ss.warp.reduce((v, v > 0), op)
    out[i] = r[0]
    o2[i] = r[1]
""",
    # FINDING 4: k.ptx accepts; ptxas -arch=sm_90: "uses too much shared data (0xc800 bytes,
    # 0xc000 max)" (47104 tile + 2 x 32 x 64 exchange = 51200 bytes).
    "tile-plus-tuple-reduce-over-48k": """
N = 11776


@ss.device
def op8(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5],
            a[6] + b[6], a[7] + b[7])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float64], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = np.float64(a[i])
    t = ss.shared.tile(N, np.float32)
    for w in thread.block_stride(t):
        t[w] = np.float32(1)
    ss.block.sync()
    r = ss.block.reduce((v, v, v, v, v, v, v, v), op8)
    out[i] = r[0] + t[0]
""",
    # FINDING 5: SafetyError "Numba cannot type `__ss_block_reduce(Tuple(float32,
    # Literal[int](1)), type(CUDADispatcher(...)))`" -- no word of the op's list result.
    "op-returning-list-message": """
@ss.device
def op(x, y):
    return [x[0], x[1]]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = a[i]
    r = ss.block.reduce((v, 1), op)
    out[i] = np.float32(r[0])
""",
}

HELD: dict[str, str] = {
    "op-purity-steering": "an op reading threadIdx makes every field thread-dependent "
    "(site purity): `if r[1] > 0: block.sync()` refused; also when the op was compiled first "
    "for a direct call, for another kernel of the module, or used at a warp site before",
    "op-barrier-partial-warps": "an op with block.sync/block.sum/warp.* at block=48 or "
    "max_threads (per-lane `if ok` in the down tree) is refused (helper op needs every "
    "thread); a warp.reduce whose op holds block.sync/block.sum under a warp-uniform "
    "`if threadIdx.x // 32 == 0` is refused",
    "op-implicit-raises": "ops that may raise for some lanes' values are refused on the "
    "compiled form (the status check after the op call is untagged): explicit raise, assert, "
    "a runtime tuple index, range() with a state-valued step; int //, % by zero, int ** and "
    "data-dependent while loops are accepted and never exit early (no raise path)",
    "divergent-routes": "tuple reduce after a thread-dependent `return`, after a tuple index "
    "that may fail, in a loop left by a thread-dependent `break`, in a loop bounded by a "
    "warp.reduce field, under a warp.reduce-steered branch, inside a helper called under a "
    "thread branch: all refused",
    "uniform-result-uses": "a block.reduce field steering block.sync directly, through a "
    "runtime index r[j], through a helper, as a loop bound, in a `while True ... break` on "
    "the result, `max(r)`, `r == (..)`, reduce of a reduce, warp.reduce then block.reduce: "
    "all accepted (no false refusal)",
    "word-split": "64-bit fields shuffle both words (lo = trunc, hi = trunc(lshr 32)): "
    "(uint64, int8) is 15 shfl.down in the block form, 18 in the warp form (15 + 3 idx); "
    "bool fields are zext/trunc i1 (one word); literal fields widen (v, 1) -> (f32, i64)",
    "geometries": "block 1, 33, 1024 exact and max_threads=1024, a reduce twice in a row and "
    "in a loop: compiled (1 bar.sync per site with an exact block: alternating copies with "
    "the parity register; 2 without), no local memory; with a 1-thread block the tree's "
    "shuffles are clamped at lane 0 and the op never runs on absent lanes",
    "op-result-conversions": "op results of other types convert field by field (float16 -> "
    "f32, bool/int -> float, int -> bool, (0, 0.0) literals); a complex, None, a 3-field or "
    "scalar result is refused with the state_op_refused text",
    "state-misuse": "None, str, nested fields refused naming the field; `(x,) * 8` is Numba's "
    "own refusal (tuple repeat is not typed on CUDA) before the reduce",
}

# Fixed, each with a rejected twin: state-keyword -- tests/kernels/fixed_refusals.py.
FALSE_REFUSALS: dict[str, str] = {
    "op-defined-after-kernel": "a @ss.device op defined below the kernel in the module "
    "(scalar or tuple form) is refused at decoration: 'the `op` of block.reduce must be one of "
    "operator.add, ... or a @simtsafe.device function of two values; got `add2`' "
    "(decoration/_rewrite._check_reduce_op resolves the name when the kernel is decorated), "
    "while a direct call `add2((v, v), (v, v))` of the same helper defined after the kernel "
    "is accepted and compiles",
    "state-keyword": "docs/cooperation.md spells the call `block.reduce(state, op)`; "
    "`ss.block.reduce(state=(v, v), op=add2)` is refused: 'block.reduce takes 2 arguments, as "
    "`block.reduce(v, op)`; got 0 positional and keyword state, op (it has no parameter "
    "'state')' (`op=` alone is accepted)",
}
