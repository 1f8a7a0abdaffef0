r"""Attack round 23 (an outside helper): Tier-1 constant memory (``cuda.const.array_like``).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``), except
where a finding needs a second user module (``HELPER_MODULES`` below: write it as
``<name>.py`` on ``sys.path`` first). Scratch harness: /tmp/a23 in the session
(``ptx(src)`` = ``load_kernel_module(tempdir, src).k.ptx(cc=(9, 0))``; simulator runs with
``NUMBA_ENABLE_CUDASIM=1`` and ``k.prepare(grid=1, block=...)``). Nothing in simtsafe/ was
changed.

Summary: every write route tried is refused (typing at the user's line; the compiled-form
check was never reached from source), reads are bounds-checked for every index type tried
on both targets, and the snapshot is taken once per build on both targets. The holes found
are around the constant array rather than in it: a helper reached through a user module's
attribute (``hm.helper(...)``) is invisible to ``Declared._reachable()``, which both the
compile-cache key and the compiled form's list of unsafe regions are built from.

=============================================================================================
FINDING 1 (MEDIUM: cache-key collision -- a stale constant array, and stale helper code,
served from the on-disk cache): ``_compose._cache_key`` describes ``self._reachable()``, and
``_declaration.Declared._reachable`` follows only ``analysis.globals_used``. A helper
called through a user module (``import hm; ... hm.bias(r)``) is classified with
``substitute=True`` (``decoration/_policy.py``: "the chain passes through a module Numba would
not resolve the same way") and lands in ``analysis.substitutes`` instead, so neither the
helper's source nor its constant-array snapshot is part of the kernel's key (``ptx``,
``kernel`` for GPU launches, ``simulator-verdict``).
=============================================================================================

Setup: HELPER_MODULES["hm23"] as /tmp/pk/hm23.py; the kernel FINDINGS["module-helper-cache-
key"] as /tmp/pk/km23.py (it has ``cache=True``); one cache dir for both processes::

    export SIMTSAFE_CACHE_DIR=$(mktemp -d)
    for m in 1 7; do MUL=$m .venv/bin/python -c "
    import sys, re; sys.path[:0] = ['/tmp/pk', '/work/wt-att23']
    import km23; p = km23.k.ptx(cc=(9, 0))
    print([f.name for f in km23.k._reachable()], re.findall(r'_cudapy_cmem\[24\] = [^\n]*', p))"
    done
  -> ['k'] ['_cudapy_cmem[24] = {10, 0, ..., 20, 0, ..., 30};']
     ['k'] ['_cudapy_cmem[24] = {10, 0, ..., 20, 0, ..., 30};']   <- BIAS is [70, 140, 210] now
  with a fresh cache dir and MUL=7: {70, ..., 140, ..., 210}. The same with the helper's SOURCE
  edited between the two processes (``return b[r] + 12345``): the second process gets the
  first one's PTX (no 12345 in it); a fresh cache has it.
  ``from hm23 import bias`` (globals_used) instead: reachable ['k', 'bias'], the second process
  gets {70, 140, 210} -- held; a helper called by a helper (``h1 -> h2``) is followed too.

Broken promise: docs/safety.md "Writes into constant memory" row / "Constant arrays": "the
copy's bytes are part of the compile-cache key"; "Fixed at the first compile ... on the GPU
and the simulator alike" (a GPU launch with ``cache=True`` runs the cached cubin with the old
table while the simulator, which caches only its verdict, runs the new one).

Fix direction (not applied): ``_reachable`` should follow every ``Declared`` value of
``analysis.substitutes`` too (as ``_api_closure`` already does).

=============================================================================================
FINDING 2 (MEDIUM: Tier-1 barrier steered by memory an unsafe region may write; same root
cause): ``_compose.Kernel._source_info`` collects the unsafe regions the compiled-form
checks know of from ``self._reachable()``. A helper reached as ``hm.poke(...)`` is not in it,
so its ``with ss.unsafe(...)`` region is unknown to the compiled form:
=============================================================================================

* FINDINGS["module-helper-unsafe-trusts-memory"] (HELPER_MODULES["hm23u"]): the helper does
  ``out.unchecked[k] = v`` in a region; the kernel steers ``ss.block.sum`` by ``x[0]``.
  ``k.ptx(cc=(9, 0))`` ACCEPTS it (bar.sync present). The same kernel with ``from hm23u
  import poke`` is REFUSED: "`block.sum` needs every thread of the block to reach it ... the
  branch at line 13 depends on a read of input 'x' ... which simtsafe does not prove in range
  (a read past the end may see what other threads write)". docs/safety.md (Uniformity): "A
  kernel with an unsafe region trusts no memory (an out-of-bounds `unchecked` store there
  may land in any array), so in such a kernel no load is uniform" -- broken for regions in
  helpers reached through a module attribute. The gate agrees with the compile: ``python -m
  simtsafe check km.py`` gives "0 finding(s) ... 1 kernel(s) compiled to PTX" for the
  ``hm23u.poke`` spelling and "SS-uniformity kernel 'k': `block.sum` needs every thread ..."
  for the ``from hm23u import poke`` spelling. The simulator too: ``k.prepare(grid=1,
  block=64)(out, x, kk)`` (x = ones, kk = arange) runs the ``hm23u.poke`` kernel (out = 64.0
  everywhere) and refuses the from-import one with the same uniformity message.
* The other face (a false refusal, FALSE_REFUSALS["module-helper-barrier-in-region"]): a
  helper ``hm.h`` whose region holds ``cuda.syncthreads()`` makes ``k.ptx`` fail with "the
  compiled code has a barrier or warp operation (__ss.nvvm.barrier0) that is neither one of
  simtsafe's collectives nor inside a `simtsafe.unsafe` region ... This is a simtsafe bug";
  ``from hm import h`` compiles (bar.sync).

=============================================================================================
FINDING 3 (LOW, unverified on a GPU: constant memory trusted beside a wild unchecked store):
=============================================================================================
FINDINGS["const-trusted-beside-unchecked-store"] is accepted (``ld.const.f32 [%rd28+16]``
then ``bar.sync 0``); the same kernel steering by ``x[0]`` (an In read, in range by
``requires``) is refused because "a read past the end may see what other threads write".
The analysis trusts constant memory because "no write can reach it (the compiled form
refuses one)" -- but ``_constmem`` only sees writes whose pointer derives from the
``addrspace(4)`` global. A ``__constant__`` variable's bytes live in device memory that also
has a global address (``cudaGetSymbolAddress`` / ``cuModuleGetGlobal`` return it for
constant symbols; host copies write it there), so the out-of-bounds ``out.unchecked[kk[i]]``
store that makes the analysis distrust every input may as well land in the table, and the
constant caches are not kept coherent with such a write. Either the same premise ("may land
in any array") applies to constant memory, or the docs should say why it cannot.

=============================================================================================
FINDING 4 (LOW: raw Numba error instead of simtsafe's decoration refusal): ``np.longdouble``
(float128) and ``np.clongdouble`` arrays pass ``_construle.refused_array`` (kind 'f'/'c',
dtype class from numpy.dtypes), so decoration accepts them; the first compile then fails
with SafetyError rule="typing", no line: "Numba cannot compile this line: Untyped global
name '__ss_ref0': Unsupported array dtype: float128" -- an internal name, not the
``const-array`` message docs/safety.md promises at decoration ("bool, integers, floats or
complex numbers ... refused at decoration, rule="const-array", with the fix"). The simulator
gives the same compile error (its compile worker), so the targets agree.
=============================================================================================

=============================================================================================
FINDING 5 (LOW, contrived: the 64 KiB limit is checked on the user's object, not on the
snapshot): ``refused_array`` reads ``value.nbytes`` (and ``dtype``/``ndim``) from the object
the name denotes; ``_rewrite._const_array`` then compiles ``np.array(value, ...)``. An ndarray
subclass whose ``nbytes`` property says 16 over 20000 float32 (FINDINGS["lying-nbytes"]) is
accepted; the PTX declares ``.const .align 4 .b8 _cudapy_cmem[80000]`` and ptxas (sm_90, PTX
.version lowered to 8.5 for the local ptxas 12.x) fails: "File uses too much global constant
data (0x13880 bytes, 0x10000 max)" -- a raw ptxas error at the first GPU launch instead of
const-array's message. ``ndim`` is backstopped by ``_constarrays.const_array`` (a 0-d copy is
refused there); ``nbytes`` has no backstop. Fix direction: run the checks on the snapshot.
=============================================================================================
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD", "HELPER_MODULES"]

#: Second user modules some findings import (module name -> source).
HELPER_MODULES: dict[str, str] = {
    "hm23": """
import os
import numpy as np
from numba import cuda
import simtsafe as ss

BIAS = np.array([10, 20, 30], dtype=np.int64) * int(os.environ.get("MUL", "1"))


@ss.device
def bias(r):
    b = cuda.const.array_like(BIAS)
    return b[r]
""",
    "hm23u": """
import numpy as np
from numba import cuda
import simtsafe as ss


@ss.device
def poke(out, k, v):
    with ss.unsafe("SAFETY: attack round 23: an unchecked store at a computed index"):
        out.unchecked[k] = v
    return v
""",
}

FINDINGS: dict[str, str] = {
    # FINDING 1: the helper's constant array (and source) is not in the kernel's cache key
    # when the helper is called as `hm23.bias`. Two processes, one SIMTSAFE_CACHE_DIR, MUL=1
    # then MUL=7: the second k.ptx() returns the first's table {10, 20, 30}.
    "module-helper-cache-key": """
import hm23


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64), cache=True)
def k(out: DisjointSlice[np.int64], r: In[np.int32]) -> None:
    i = thread.index_1d()
    out[i] = hm23.bias(r[i])
""",
    # FINDING 2: the helper's unsafe region (an unchecked store at a computed index) is
    # unknown to the compiled form, which then trusts x[0] to steer block.sum. Accepted
    # (bar.sync in the PTX); `from hm23u import poke` + `poke(...)`: refused.
    "module-helper-unsafe-trusts-memory": """
import hm23u


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size >= 1"]))
def k(out: DisjointSlice[np.float32], x: In[np.float32], kk: In[np.int64]) -> None:
    i = thread.index_1d()
    v = np.float32(1)
    if i.in_bounds(kk):
        hm23u.poke(out, kk[i], v)
    if x[0] > 0:
        s = ss.block.sum(v)
        out[i] = s
""",
    # FINDING 3: constant memory stays trusted beside an out-of-bounds-capable unchecked
    # store (accepted: ld.const.f32 [%rd28+16]; bar.sync 0). With `if x[0] > 0:` (and
    # requires x.size >= 1) the same kernel is refused.
    "const-trusted-beside-unchecked-store": """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def k(out: DisjointSlice[np.float32], x: In[np.float32], kk: In[np.int64], c: np.int64) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
    v = x[i] if i.in_bounds(x) else np.float32(0)
    if i.in_bounds(kk):
        with ss.unsafe("SAFETY: attack round 23: the author believes kk[i] is in range"):
            out.unchecked[kk[i]] = v
    if t[1, c] > 0:
        s = ss.block.sum(v)
        out[i] = s
    else:
        out[i] = v
""",
    # FINDING 4: decoration accepts a float128 table; the compile fails with Numba's
    # "Untyped global name '__ss_ref0': Unsupported array dtype: float128" (rule typing).
    "longdouble-table": """
A = np.ones(4, np.longdouble)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], r: In[np.int32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(A)
    out[i] = np.float32(t[r[i]])
""",
    # FINDING 5: an ndarray subclass lying about nbytes passes the 64 KiB check; the
    # snapshot (80000 bytes) is compiled and ptxas refuses the module.
    "lying-nbytes": """
class Lying(np.ndarray):
    @property
    def nbytes(self):
        return 16


A = np.arange(20000, dtype=np.float32).view(Lying)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], r: In[np.int32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(A)
    out[i] = t[r[i]]
""",
}

HELD: dict[str, str] = {
    # writes
    "store-spellings": "t[0, 1] = v, t[0, 1] += v, `t[0,0], t[0,1] = 1.0, 2.0`, an alias, a tuple "
    "holding t (`tup = (t, 1); tup[0][0, 0] = v`), helpers (positional and keyword), inside and "
    "outside `with ss.unsafe`: typing's READ_ONLY at the user's line",
    "intrinsics": "cuda.atomic.add/cas/exch (in a region): READ_ONLY; cuda.stcg/stcs/ldcg/ldca/"
    "ldcs/ldlu/ldcv: Numba cannot type ...(ConstArray...); cuda.ldg not allowed; shfl_sync of t: "
    "cannot type",
    "simtsafe-apis": "vec.store_at/vec.load/vec.load_runs, shared.fill_async/fill_transposed "
    "(would be cp.async from a const address), hashing.find (int32 1D table too), "
    "thread.grid_stride/block_row/warp_row, w.in_bounds(t), block.sum(t): each refused naming "
    "ConstArray",
    "array-methods": ".fill/.flat/.view/.T/.reshape/.copy/.ctypes/.data refused at decoration; "
    "`t += 1`, max(t) cannot type; sum/np.sum/np.copyto not on the allow-list; ufunc out= refused",
    "escape": "helper returning t, (t, 1), ((t, 1), 2), Optional (return t / None), a helper "
    "making and returning (const, 0): 'a device helper may not return ...'; `*tup` into a helper "
    "refused; `out[i] = t`: cannot store ConstArray",
    "private-names": "`__ss_ref0[0, 0]` in kernel code: 'the name __ss_ref0 is reserved'",
    "other-spellings": "`from numba import cuda as nc; nc.const.array_like(A)` is not rewritten but "
    "needs a region, and in a region `A` is refused as a global array (no raw Numba const array "
    "reachable); `from numba.cuda import const` refused; a module-level "
    "`array_like = cuda.const.array_like` alias is rewritten to the Tier-1 ConstArray (bounds "
    "checks in PTX, store refused)",
    # reads
    "index-types": "uint64 (0, 7, 8, 2**63, 2**64-1, 2**64-8, 2**32), int8 (-1, -128, 127, 8), "
    "uint8/int16 tuple, a tuple variable, literal -1 / 5 / 2**64-1 / -2**63: 0 out of range on the "
    "simulator, and in the PTX every ld.const sits behind an unsigned compare (setp.gt.u64 %rd, 7; "
    "int8: setp.gt.u16 on the sign-extended value); bool and np.bool_ indices, one int for a 2D "
    "table, t[r][c]: refused ('read with 2 ints; it has no slices')",
    "shape-corners": "empty (0,) and (3, 0) tables compile (reads fold to 0); a (1,)*32 table; "
    "exactly 65536 bytes (ptxas sm_90 accepts the PTX after lowering .version); 0-d, >64 KiB, "
    "records, tuples, bf16, timedelta: refused at decoration with const-array",
    "dtype-corners": "float16 (ld.const.u16), bool, complex64 (ld.const.v2.f32), int8, uint64, "
    "float64, big-endian '>f4' (snapshot native), np.matrix, a negative-stride view (snapshot "
    "C-ordered): compile; the simulator matches numpy for float16/complex64/len/size/ndim/shape",
    # uniformity
    "uniformity-routes": "a thread-dependent choice between two constant arrays (if / conditional "
    "expression / tuple[threadIdx % 2]) read at a uniform index then steering block.sum: refused "
    "(sync dependence); t[1, threadIdx.x % 4]: refused; a helper choosing the array cannot return it",
    # snapshot / cache key
    "snapshot-timing": "simulator: a host write to ARR after decoration and before the first launch "
    "is seen, later writes and rebinding the module global are not (kernel and its helper alike)",
    "cache-key-values": "closure-made kernels with arange*1, arange*10 and an int32 table of the same "
    "bytes, cache=True, one process: three different _cudapy_cmem initialisers; from-imported "
    "helper and a helper-of-a-helper: the snapshot is in the key (values change across processes)",
    "unsafe-region-rules": "a constant array made inside a region and read outside it, and an element "
    "read inside a region used outside: accepted, as docs/unsafe.md says (Tier 1 in a region or not)",
    "known-sim-arithmetic": "uint8 table [200, 1]: np.int64(t[0] + t[0]) is 400 in the PTX "
    "(mov.u64 %rd9, 400) and 144 on the simulator (numpy wraps); the same for In[uint8] -- "
    "documented for sim.check in docs/checker.md ('Values, not bits'), not specific to constant "
    "memory, though the 'Constant arrays' section says 'The simulator gives the same values'",
    "ptxas-sum": "two call sites of a 64 KiB table: ptxas 'File uses too much global constant data "
    "(0x20000 bytes, 0x10000 max)' -- documented (one copy per call site, the sum is not checked)",
}

# Fixed, each with a rejected twin: alias-module-const and in-bounds-of-table -- tests/kernels/fixed_refusals.py.
FALSE_REFUSALS: dict[str, str] = {
    "module-helper-barrier-in-region": "a helper called as `hm.h(v)` whose `with ss.unsafe(...)` "
    "holds cuda.syncthreads(): k.ptx() fails with 'the compiled code has a barrier or warp "
    "operation (__ss.nvvm.barrier0) that is neither one of simtsafe's collectives nor inside a "
    "`simtsafe.unsafe` region ... This is a simtsafe bug'; `from hm import h; h(v)` compiles "
    "(FINDING 2's root cause: _source_info builds the region list from _reachable())",
    "alias-module-const": "`from numba import cuda as nc` then `nc.const.array_like(A)`: refused "
    "outside a region ('allowed only inside simtsafe.unsafe') and inside one ('`A` is a global "
    "array ... read a small numpy table through `cuda.const.array_like(NAME)`'), while "
    "`cuda.const.array_like(A)` -- the same function -- is Tier 1; the rewrite matches the "
    "spelling `cuda.const.array_like` only",
    "in-bounds-of-table": "`if i.in_bounds(t): out[i] = t[i.index]` for a 1D table: 'w.in_bounds() "
    "takes a DisjointSlice or an input array, got ConstArray[int32, 1d]' (the read is checked "
    "anyway; `i.index < len(t)` is accepted)",
}
