r"""Attack round 21 (an outside helper): routes by which records -- and, it turns out, any
element wider than a byte -- reach compiled code at an alignment nothing checked.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). The
module-level constants below are plain ``str``; scratch harness: /tmp/a21 in the session
(``load(src)`` = ``load_kernel_module(tempdir, src)``; ``k.ptx(cc=(9, 0))``).

=============================================================================================
FINDING 1 (MEDIUM: "misaligned address" fault on the GPU from Tier-1 code; the simulator runs
the same launch and gives the right values): the launch never checks that an array
argument's DATA POINTER (or its strides) is a multiple of the element's alignment. Numba's
compiled code accesses every element at its natural alignment -- ``ld.global.f64`` for a
float64 input, ``st.global.f64`` for a float64 output, and for a record made with
``align=True`` its fields (``ld.f64 [a + 16 w]`` for ``a[w].x``, ``st.f64`` for
``out[w].x = v``); only packed records (align=False) are accessed bytewise. The one
alignment the launch checks is vec.load's (host/_launch.py ``_check_vec_alignment``, speed
only) and fill_async's C16 layout (host/_argfacts.input_layout).
=============================================================================================

Reaching it with Numba's own arrays (no foreign object): DeviceNDArray.view changes the
dtype of a C-contiguous byte array without looking at its pointer::

    d = cuda.device_array(32 * 16 + 1, np.uint8)[1:].view(REC)   # data pointer = base + 1

The same for float64 (``[1:].view(np.float64)``), a CuPy ``x[1:].view(...)``, or any
``__cuda_array_interface__`` dict with an odd ``data`` pointer or ``strides`` not a multiple
of the itemsize (``misaligned-stride-input``: strides (9,) for float64 -- accepted, compiled
as layout "A": ``mul.lo.s64 %rd9, %rd1(i), %rd5(stride); add; ld.f64 [%rd10]``).

PTX of ``misaligned-base-record`` (``k.ptx(cc=(9, 0))``, accepted):
    ld.f64 %fd1, [%rd23]            a[w].x   (address a + 16 w)
    ld.global.f64 %fd9, [%rd4]      b[w]
    st.global.f64 [%rd28], %fd4     out[w] = ...
    st.f64 [%rd38], %fd10           o2[w].x = b[w]
(the whole-record copy o2[w] = a[w] is 16 ld.u8/st.global.u8: fine at any alignment).
PTX ISA: ld/st addresses must be naturally aligned to the access size; on sm_90 a
misaligned one is CUDA_ERROR_MISALIGNED_ADDRESS (sticky: the context is lost).

Simulator (launch accepted; data pointers at 1, 3, 5, 7 mod 16; values right)::

    cd /work/wt-att21 && NUMBA_ENABLE_CUDASIM=1 SIMTSAFE_CACHE_DIR=$(mktemp -d) \
    PYTHONPATH=/work/wt-att21 .venv/bin/python -c "
    import pathlib, tempfile, numpy as np
    from numba import cuda
    from tests.kernels import load_kernel_module
    from tests.kernels.attacks21 import FINDINGS
    m = load_kernel_module(pathlib.Path(tempfile.mkdtemp()), FINDINGS['misaligned-base-record'])
    N = 32
    def odd(dt, off):
        dt = np.dtype(dt); d = cuda.to_device(np.zeros(N * dt.itemsize + off, np.uint8))
        return d[off:].view(dt)
    out, o2, a, b = odd(np.float64, 1), odd(m.REC, 3), odd(m.REC, 5), odd(np.float64, 7)
    h = np.zeros(N, m.REC); h['x'] = np.arange(N); a.copy_to_device(h)
    b.copy_to_device(np.arange(N) * 100.0)
    print([x._ary.ctypes.data % 16 for x in (out, o2, a, b)])
    m.k.prepare(grid=1, block=32)(out, o2, a, b)
    print(out.copy_to_host()[:5], o2.copy_to_host()['x'][:5])"
  -> [1, 3, 5, 7]; [0. 101. 202. 303. 404.] [0. 100. 200. 300. 400.]  (no ArgumentTypeError)

Broken promises:
  * docs/safety.md row "Device code trusting a fact the launch did not check (an input's
    alignment)": the compiled code of every kernel trusts element alignment of every array
    argument, and the launch does not check it.
  * docs/safety.md, "When a check runs": the simulator and the GPU agree -- the simulator
    runs the launch; the GPU faults.
  * docs/library.md: "A misaligned view (a data pointer not a multiple of 16 bytes) is
    accepted: its runs take fill_async's and vec.store_at's element paths, correctly and
    slower" -- the element paths use natural-alignment loads too (not run here for lib; the
    same element access as above).
  * docs/cooperation.md (vec): "the device code above is sound at any alignment".
  * Round 20 refused nested align=True records at misaligned OFFSETS for exactly this fault
    (st.f64 at an odd address); the top-level align=True record at a misaligned BASE is the
    same access and is accepted.

Fix direction (not applied): at launch (general and generated fast check), refuse an array
whose data pointer or any stride is not a multiple of the element's alignment
(``dtype.alignment``; for a record the largest alignment Numba will assume: that of its
align=True (sub)records and of scalar fields of aligned records; 1 for packed records), as
``misaligned`` does for vec.load; or compile such arguments with Numba's ``aligned=False``
array type (align-1 accesses).

=============================================================================================
FALSE REFUSALS / simulator-only failures (no unsafe code; the GPU compile accepts)
=============================================================================================
See FALSE_REFUSALS below: sim.check cannot replay ``a[w].x``; the simulator drops the fields
of a record array given as a bare ``__cuda_array_interface__``; a bare CAI record array of an
align=True (padded) dtype is refused at launch because numpy's ``descr`` names the padding.
"""

from __future__ import annotations

__all__ = ["FALSE_REFUSALS", "FINDINGS", "HELD"]

FINDINGS: dict[str, str] = {
    # FINDING 1: natural-alignment accesses to argument arrays whose base the launch never
    # checks. Launch: grid 1, block 32, (out, o2, a, b) as Numba views at byte offsets 1/3/5/7.
    "misaligned-base-record": """
REC = np.dtype([("x", np.float64), ("n", np.int32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[REC], a: In[REC], b: In[np.float64]) -> None:
    w = thread.index_1d()
    out[w] = a[w].x + b[w]
    o2[w] = a[w]
    o2[w].x = b[w]
""",
    # FINDING 1, strides: an input whose stride (9 bytes) is no multiple of its itemsize is
    # accepted at launch (host check passes; the simulator then fails only in Numba's own
    # to_device of the non-contiguous host view). k.ptx(cc=(9, 0), layouts=("A",)):
    # ld.f64 [data + 9 i].
    "misaligned-stride-input": """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], b: In[np.float64]) -> None:
    w = thread.index_1d()
    out[w] = b[w] + 1.0
""",
}

HELD: dict[str, str] = {
    "parameter-routes": "every record-typed parameter kind goes through "
    "decoration/_params._element_dtype (array_field + misaligned_record): DisjointSlice of every "
    "space (Columns/BlockRow/WarpRow/PerBlock...), In/In2D/In3D, AppendBuffer, HashValues; "
    "HashTable keys are int32/uint32/int64/uint64 only; Accumulate[REC] refused ('integers or "
    "floats'); Counter is uint64; a record scalar by value (s: REC) refused ('annotation ... "
    "which simtsafe does not know'); generic In[T] with a record refused (round 17)",
    "scratch-record-alignment": "out-of-range record reads select a thread-local zero scratch "
    "record (guarded_record); with 1- and 3-byte packed scratch records beside it, the scratch "
    "of align=True records of 2, 4, 8, 9(->16), 12, 24 bytes lands at depot offsets 4, 4, 8, "
    "16, 4, 8 (depot .align 2/4/8/16): the field loads (ld.u16/ld.f32/ld.f64) stay aligned",
    "local-packed-with-aligned-inner": "Tier-1 cuda.local.array(4, REC) with REC packed = "
    "(u8, inner: align=True {f8, f8}) (offset 8, itemsize 24: not refused) next to a 3-byte "
    "record array: LLVM places it at depot offset 16 (.align 16); ld.local.f64 [.. + 8] aligned",
    "complex-f16-bool-fields": "align=True record (u8, c16, f2, bool, c8): out[w] = a[w], "
    "out[w].z = v * a[w].z, out[w].q/.h/.b = a[w]...: scalar ld.f64/ld.f32/st.u16 at natural "
    "offsets, no vector load or store that assumes more than the field's alignment",
    "append-record-slot": "AppendBuffer[Rec] out[s] is lowering/_cuda._load -> guarded_record "
    "(a slot past the capacity reads/writes the scratch record)",
}

FALSE_REFUSALS: dict[str, str] = {
    "sim-check-record-attribute-read": "sim.check(k, 1, 32, out, a) of `out[w] = a[w].x + 1.0` "
    "(a: In[REC], REC = {x: f8, n: i4} align=True; numpy or simulator device arrays) raises "
    "AttributeError \"'numpy.void' object has no attribute 'x'\" in the replay (sim/_poison.py "
    "__getattr__ does getattr(np.void, 'x')), while k.prepare(...) on the simulator and "
    "k.ptx(cc=(9, 0)) accept it and docs/typing.md names `a[w].x` as the field read; "
    '`a[w]["x"]` replays fine. (Round 18\'s FINDING 3 was tiles / local arrays on the simulator '
    "launch; this is sim.check on a plain In parameter.)",
    "sim-cai-record-fields-dropped": "on the simulator, a record array given as an object with "
    "`.dtype` = REC and a __cuda_array_interface__ (CuPy-like) passes the launch's record check, "
    "but lowering/_launching._host_view rebuilds it from the CAI's typestr only ('|V16'), so "
    '`a[w]["x"]` fails in the simulated threads (IndexError: only integers, slices...); the '
    "GPU compile uses the annotation's record type and would run it.",
    "cai-only-padded-record": "a bare __cuda_array_interface__ object (no .dtype) of an "
    "align=True record with tail padding exports descr = dtype.descr = [('x','<f8'), "
    "('n','<i4'), ('','|V4')]; host/_argfacts.record_dtype takes np.dtype(descr), which names "
    "the padding 'f2', and the launch refuses: 'got the record dtype [..., ('f2', 'V4')]. Pass "
    "an array of exactly that dtype'. The array is exactly that dtype (CuPy itself is not hit: "
    "its .dtype is read first).",
}
