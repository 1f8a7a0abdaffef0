"""Routes around the safety rules, each refused, each with a close legitimate twin accepted.

Shared by tests/sim (``NUMBA_ENABLE_CUDASIM=1``) and tests/ptx (NVVM): a kernel
refused on one path must be refused on the other. An attack may be refused at
decoration (the module import raises) or at the first compile (``ptx()`` on
the CUDA target, ``prepare`` on the simulator); the tests accept either stage
but always assert the rule, the message and the user's line. Grouped by the
classes of issue 8: late binding, modules as values, global arrays, writing
methods of views, Numba internals, mutable kernel state, escapes from unsafe
regions, prefix trust, host escape, dynamic access.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, run_or_compile

F32 = np.float32
SIG = "out: DisjointSlice[np.float32], a: In[np.float32]"


def _compile(kernel: ss.Kernel) -> None:  # type: ignore[type-arg]
    """The first compile: PTX on the CUDA target, prepare on the simulator."""
    if ss.SIMULATOR:
        kernel.prepare(grid=2, block=32)
    else:
        kernel.ptx()


def refused(tmp_path: Path, source: str, rule: str, fragment: str, cls=ss.SafetyError):  # type: ignore[no-untyped-def]
    """Load and compile ``source``; assert it is refused with ``rule``/``fragment`` at `# BAD`."""
    with pytest.raises(cls) as info:
        mod = load_kernel_module(tmp_path, source)
        _compile(mod.k)
    exc = info.value
    assert exc.rule == rule, (exc.rule, str(exc))
    assert fragment in str(exc), str(exc)
    assert "kernel '" in str(exc)
    if "# BAD" in source:
        assert exc.lineno == line_of(tmp_path, "# BAD"), (exc.lineno, str(exc))
        assert exc.filename is not None and exc.filename.endswith(".py")
    return exc


def accepted(tmp_path: Path, source: str) -> ModuleType:
    """Load, compile and (on the simulator) run ``k`` on 40 elements: out = f(a) must be finite."""
    mod = load_kernel_module(tmp_path, source)
    _compile(mod.k)
    n = 40
    a = np.arange(n, dtype=F32)
    res = run_or_compile(mod.k, 2, 32, np.zeros(n, F32), a)
    if res is not None:
        assert np.isfinite(res[0]).all()
        mod.result = res[0]
        mod.input = a
    return mod


# ============================================================== 1. late binding


def test_late_raw_helper_defined_below_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = helper(a[i])  # BAD

        @cuda.jit(device=True)
        def helper(x):
            return x * 2
        """,
        "raw-device-function",
        "`helper` is a raw numba.cuda.jit function",
    )


def test_late_simtsafe_helper_defined_below_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = helper(a[i])

        @ss.device
        def helper(x):
            return x * 2
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 2)


def test_late_gated_alias_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            sync.syncthreads()  # BAD
            out[i] = a[i]

        sync = cuda  # bound after decoration (a module alias: valid on the simulator too)
        """,
        "unsafe-op",
        "is allowed only inside `with simtsafe.unsafe(",
        ss.UnsafeRegionRequired,
    )


def test_late_math_alias_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        import math

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = root(a[i])

        root = math.sqrt
        """,
    )


def test_name_rebound_to_raw_after_decoration_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.device
        def helper(x):
            return x * 2

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = helper(a[i])  # BAD

        @cuda.jit(device=True)
        def helper(x):
            return x * 3
        """,
        "raw-device-function",
        "`helper` is a raw numba.cuda.jit function",
    )


def test_name_rebound_after_compile_keeps_checked_snapshot(tmp_path):  # type: ignore[no-untyped-def]
    """After the first compile the kernel uses the frozen, checked objects only."""
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.device
        def helper(x):
            return x * 2

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = helper(a[i])
        """,
    )
    _compile(mod.k)
    from numba import cuda

    @cuda.jit(device=True)
    def evil(x):  # type: ignore[no-untyped-def]
        return x * 100

    mod.helper = evil
    _compile(mod.k)  # re-checks the frozen scope, not the module's current one
    n = 40
    a = np.arange(n, dtype=F32)
    res = run_or_compile(mod.k, 2, 32, np.zeros(n, F32), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 2)


def test_pending_callee_of_a_helper_is_not_summarised_as_barrier_free(tmp_path):  # type: ignore[no-untyped-def]
    """A helper summary made while its callee was pending must not survive to the compile."""
    refused(
        tmp_path,
        f"""
        @ss.device
        def h1(x):
            h2()
            return x

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k({SIG}) -> None:
            i = thread.index_1d()
            v = a[i]
            if v > 3:
                v = h1(v)  # BAD
            out[i] = v

        @ss.device
        def h2():
            ss.block.sync()
        """,
        "uniformity",
        "`helper h1` needs every thread of the block to reach it",
    )


def test_pending_callee_with_a_barrier_reached_by_every_thread_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.device
        def h1(x):
            h2()
            return x * 2

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = h1(a[i])

        @ss.device
        def h2():
            ss.block.sync()
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 2)


def test_pending_callee_returning_a_raw_value_is_not_summarised_as_plain(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.device
        def h1():
            with ss.unsafe("SAFETY: returns the grid group; callers keep it in regions"):
                return h2()

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: only fetches the grid group"):
                g = h1()
            if a[i] > 3:
                g.sync()  # BAD
            out[i] = a[i]

        @ss.device
        def h2():
            with ss.unsafe("SAFETY: returns the grid group; callers keep it in regions"):
                return cuda.cg.this_grid()
        """,
        "unsafe-escape",
        "`g` holds a raw value obtained inside an unsafe region",
        ss.UnsafeRegionRequired,
    )


def test_pending_callee_returning_a_plain_value_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.device
        def h1(x):
            return h2(x) + 1

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = h1(a[i])

        @ss.device
        def h2(x):
            return x * 3
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 3 + 1)


# ============================================================== 2. modules as values


def test_module_bound_to_local_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            c = cuda  # BAD
            out[i] = a[i]
        """,
        "module-value",
        "`cuda` is a module used as a value",
    )


def test_module_attribute_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + cuda.threadIdx.x * 0
        """,
    )


def test_module_alias_global_gated_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        C = cuda

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            C.syncthreads()  # BAD
            out[i] = a[i]
        """,
        "unsafe-op",
        "is allowed only inside",
        ss.UnsafeRegionRequired,
    )


def test_module_alias_global_geometry_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        C = cuda

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + C.blockDim.x * 0
        """,
    )


def test_module_passed_to_helper_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.device
        def helper(m, x):
            return x

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = helper(np, a[i])  # BAD
        """,
        "module-value",
        "`np` is a module used as a value",
    )


def test_attribute_through_module_special_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + np.__dict__  # BAD
        """,
        "dynamic-access",
        "special attribute",
    )


# ============================================================== 3. global arrays


def test_global_numpy_array_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        TABLE = np.zeros(64, np.float32)

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            TABLE[3] = a[i]  # BAD
            out[i] = a[i]
        """,
        "global-array",
        "`TABLE` is a global array (numpy.ndarray)",
    )


def test_global_constant_tuple_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        TABLE = (1.0, 2.0, 3.0)

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] * TABLE[1]
        """,
    )


def test_global_cuda_array_interface_object_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        class DeviceBuffer:
            __cuda_array_interface__ = {{"shape": (4,), "typestr": "<f4", "data": (0, False),
                                         "version": 3}}

        BUF = DeviceBuffer()

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + BUF[0]  # BAD
        """,
        "global-array",
        "is a global array",
    )


def test_global_tuple_holding_array_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        PAIR = (1.0, np.ones(4, np.float32))

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + PAIR[0]  # BAD
        """,
        "unknown-object",
        "is a tuple object",
    )


# ============================================================== 4. writing methods of views


@pytest.mark.parametrize(
    "line",
    [
        "a.flat[0] = a[i]  # BAD",
        "v = a.view(np.int32)  # BAD",
        "b = a.T  # BAD",
        "b = a.reshape(4, 10)  # BAD",
        "a.fill(0)  # BAD",
    ],
    ids=["flat", "view", "T", "reshape", "fill"],
)
def test_writing_attribute_of_input_refused(tmp_path, line):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            {line}
            out[i] = a[i]
        """,
        "attribute",
        "is not allowed in kernels (array methods and attributes can alias or write",
    )


def test_metadata_attributes_of_input_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i] + (a.shape[0] + a.size + a.ndim) * 0
        """,
    )


def test_nditer_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            for x in np.nditer(a):  # BAD
                x[...] = 0
            out[i] = a[i]
        """,
        "unknown-object",
        "`np.nditer` is a class (nditer), which kernels cannot use",
    )


def test_ufunc_with_out_argument_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            np.add(a[i], a[i], a)  # BAD
            out[i] = a[i]
        """,
        "ufunc-out",
        "takes exactly its 2 input(s)",
    )


def test_ufunc_with_inputs_only_passes_decoration(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = np.add(a[i], a[i])
        """,
    )
    # Compiles on the GPU target too: np.add of scalars lowers as operator.add (lowering/_ufuncs).
    res = run_or_compile(mod.k, 2, 32, np.zeros(40, F32), np.arange(40, dtype=F32))
    if res is not None:
        np.testing.assert_array_equal(res[0], np.arange(40, dtype=F32) * 2)


def test_record_field_store_through_a_rebound_output_name_refused(tmp_path):  # type: ignore[no-untyped-def]
    """`out[w].field = v` is the thread's own element only while `out` names the output."""
    refused(
        tmp_path,
        """
        Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
            w = thread.index_1d()
            out = a
            out[w].x = np.float32(-1.0)  # BAD
        """,
        "attribute-store",
        "writes through a reference",
    )


def test_record_field_store_on_the_own_output_element_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
            w = thread.index_1d()
            out[w] = a[w]
            out[w].x = np.float32(-1.0)
        """,
    )
    _compile(mod.k)


# ============================================================== 5. Numba internals


def test_cuda_submodule_name_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            cuda.stubs.syncthreads()  # BAD
            out[i] = a[i]
        """,
        "not-allowed",
        "is not part of the numba.cuda kernel API that simtsafe allows",
    )


@pytest.mark.skipif(ss.SIMULATOR, reason="numba.cuda.cache_hints exists on the CUDA target only")
def test_cache_hinted_store_through_submodule_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        import importlib
        hints = importlib.import_module("numba.cuda.cache_hints")

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            hints.stcs(a, 0, a[i])  # BAD
            out[i] = a[i]
        """,
        "not-allowed",
        "reaches cuda.stcs through a user module",
    )


def test_compiled_function_in_user_module_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        import types
        hints = types.ModuleType("hints")

        def _store(arr, i, v):
            return 0

        hints.store = cuda.jit(device=True)(_store)

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            hints.store(a, 0, a[i])  # BAD
            out[i] = a[i]
        """,
        "raw-device-function",
        "raw numba.cuda.jit function",
    )


@pytest.mark.skipif(ss.SIMULATOR, reason="the simulator has no cache-hint loads")
def test_cache_hinted_load_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            if i.in_bounds(a):
                out[i] = cuda.ldcg(a, i.index)
        """,
    )


def test_numba_njit_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        import numba

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = numba.njit(a[i])  # BAD
        """,
        "not-allowed",
        "of the numba package, kernels may use its scalar types",
    )


def test_numba_scalar_type_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
        import numba

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = numba.float32(a[i])
        """,
    )


# ============================================================== 6. mutable kernel state


def test_kernel_attributes_cannot_be_assigned(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i]
        """,
    )
    with pytest.raises(AttributeError, match="immutable after decoration"):
        mod.k.contract = ss.LaunchContract(domain=2)
    with pytest.raises(AttributeError, match="immutable"):
        mod.k.anything = 1
    with pytest.raises(TypeError):
        vars(mod.k)  # no __dict__ to edit


def test_declaration_swapped_after_compile_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i]
        """,
    )
    mod.k.prepare(grid=2, block=32) if ss.SIMULATOR else mod.k.ptx()
    decl = mod.k._decl
    object.__setattr__(mod.k, "_decl", dataclasses.replace(decl, contract=None, domain=None))
    with pytest.raises(ss.SafetyError) as info:
        mod.k.prepare(grid=2, block=32) if ss.SIMULATOR else mod.k.ptx()
    assert info.value.rule == "immutable"
    assert "replaced or edited after decoration" in str(info.value)
    object.__setattr__(mod.k, "_decl", decl)  # the twin: the compiled declaration again
    mod.k.prepare(grid=2, block=32) if ss.SIMULATOR else mod.k.ptx()


@pytest.mark.parametrize("target", ["declaration", "contract"])
def test_declaration_changed_in_place_after_compile_refused(tmp_path, target):  # type: ignore[no-untyped-def]
    """Same identity, other values: the declaration (or its frozen contract) edited in place."""
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=64))
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i]
        """,
    )
    compile_ = lambda: mod.k.prepare(grid=2, block=32) if ss.SIMULATOR else mod.k.ptx()  # noqa: E731
    compile_()
    decl, contract = mod.k._decl, mod.k.contract
    if target == "declaration":
        object.__setattr__(decl, "domain", None)
        undo = lambda: object.__setattr__(decl, "domain", 1)  # noqa: E731
    else:
        object.__setattr__(contract, "domain", 2)
        undo = lambda: object.__setattr__(contract, "domain", 1)  # noqa: E731
    with pytest.raises(ss.SafetyError) as info:
        compile_()
    assert info.value.rule == "immutable"
    assert "replaced or edited after decoration" in str(info.value)
    undo()  # the twin: the values compiled, the same objects
    compile_()


# ============================================================== 7. escapes from unsafe regions

_BLOCK = "ss.LaunchContract(domain=1, block=(32, 1, 1))"


def test_for_target_over_tuple_escape_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: buf is written only at this thread's own slot"):
                buf = cuda.shared.array(32, np.float32)
                for t in (buf, buf):
                    t[cuda.threadIdx.x] = 1.0
            t[0] = 2.0  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`t` holds a raw value obtained inside an unsafe region",
        ss.UnsafeRegionRequired,
    )


def test_copy_of_raw_array_escape_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: nothing is written here"):
                tile = cuda.shared.array(32, np.float32)
                t2 = tile
            t2[0] = a[0]  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`t2` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_container_escape_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: nothing is written here"):
                pair = (out.unchecked, 1)
            x = pair  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`pair` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_unpacking_escape_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: nothing is written here"):
                raw, n = out.unchecked, 3
            raw[0] = a[0]  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`raw` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_element_read_from_shared_leaves_region_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: each thread writes only buf[tid], read after the barrier"):
                buf = cuda.shared.array(32, np.float32)
                tid = cuda.threadIdx.x
                buf[tid] = a[i] if i.in_bounds(a) else np.float32(0)
                cuda.syncthreads()
                v = buf[tid]
            out[i] = v * 2
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 2)


def test_gated_function_bound_to_name_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: no barrier is called here"):
                s = cuda.syncthreads  # BAD
            s()
            out[i] = a[i]
        """,
        "unsafe-op",
        "may only be called directly inside",
        ss.UnsafeRegionRequired,
    )


_HELPER_WRITES_OUTSIDE = """
@ss.device
def fill(buf, v):
    buf[0] = v  # BAD
    return 0
"""

_HELPER_WRITES_INSIDE = """
@ss.device
def fill(buf, v):
    with ss.unsafe("SAFETY: the caller passes its own element's row"):
        buf[0] = v
    return 0
"""


def test_raw_array_passed_to_helper_used_outside_there_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        _HELPER_WRITES_OUTSIDE
        + f"""
@ss.kernel(contract={_BLOCK})
def k({SIG}) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: thread 0 alone fills buf[0]"):
        buf = cuda.shared.array(32, np.float32)
        if cuda.threadIdx.x == 0:
            fill(buf, 1.0)
    out[i] = a[i]
""",
        "unsafe-escape",
        "`buf` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_raw_array_passed_to_helper_used_inside_there_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        _HELPER_WRITES_INSIDE
        + f"""
@ss.kernel(contract={_BLOCK})
def k({SIG}) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: thread 0 alone fills buf[0]"):
        buf = cuda.shared.array(32, np.float32)
        if cuda.threadIdx.x == 0:
            fill(buf, 1.0)
    out[i] = a[i]
""",
    )


def test_raw_array_returned_by_helper_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.device
        def same(buf):
            with ss.unsafe("SAFETY: only passed through"):
                r = buf
            with ss.unsafe("SAFETY: only passed through"):
                return r

        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: nothing is written here"):
                got = same(out.unchecked)
            got[0] = a[0]  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`got` holds a raw value",
        ss.UnsafeRegionRequired,
    )


# Raw values that no name holds (a helper's result), whole-array subscripts that are not
# provably elements, calls that pass a raw value through, `*args` into helpers.

_GRID_OF = """
@ss.device
def grid_of():
    with ss.unsafe("SAFETY: returns the grid group; the caller keeps every use in a region"):
        return cuda.cg.this_grid()

@ss.device
def wait(g):
    with ss.unsafe("SAFETY: every thread of the cooperative grid calls this"):
        g.sync()
    return 0
"""


@pytest.mark.parametrize(
    "line",
    ["grid_of().sync()  # BAD", "wait(grid_of())  # BAD", "x = (grid_of(), 1)  # BAD"],
    ids=["method", "helper-argument", "container"],
)
def test_unnamed_raw_helper_result_outside_region_refused(tmp_path, line):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        _GRID_OF
        + f"""
@ss.kernel(contract={_BLOCK})
def k({SIG}) -> None:
    i = thread.index_1d()
    if a[i] > 3:
        {line}
    out[i] = a[i]
""",
        "unsafe-escape",
        "`grid_of()` gives a raw value",
        ss.UnsafeRegionRequired,
    )


def test_unnamed_raw_helper_result_inside_region_accepted(tmp_path):  # type: ignore[no-untyped-def]
    # cooperative=True: the kernel syncs its grid (prepare refuses it otherwise, on the GPU
    # and on the simulator, which now runs it with every block at once).
    mod = accepted(
        tmp_path,
        _GRID_OF
        + f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), cooperative=True))
def k({SIG}) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: every thread of the grid reaches this grid barrier"):
        grid_of().sync()
        wait(grid_of())
    out[i] = a[i]
""",
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input)


@pytest.mark.parametrize(
    ("lines", "name"),
    [
        (["r = out.unchecked[slice(None)]"], "r"),
        (["s = slice(0, 32)", "r = out.unchecked[s]"], "r"),
        (["r = cuda.shared.array(32, np.float32)[slice(None)]"], "r"),
        (["r = cuda.shared.array((4, 8), np.float32)[0, s]"], "r"),
        (["r = cuda.shared.array(32, np.float32)[None]"], "r"),
        (["r = cuda.shared.array(32, np.float32)[...]"], "r"),
    ],
    ids=["slice-call", "slice-in-name", "shared-slice-call", "2d-row", "newaxis", "ellipsis"],
)
def test_whole_array_subscript_is_not_an_element_refused(tmp_path, lines, name):  # type: ignore[no-untyped-def]
    body = "\n                ".join(lines)
    refused(
        tmp_path,
        f"""
        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            s = slice(0, 4)
            with ss.unsafe("SAFETY: only takes a view, writes nothing"):
                {body}
            r[0] = a[0]  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        f"`{name}` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_int_indices_read_elements_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        LAST = 31

        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            tid = cuda.threadIdx.x
            j = LAST - tid
            with ss.unsafe("SAFETY: each thread writes only buf[tid], read after the barrier"):
                buf = cuda.shared.array(32, np.float32)
                grid2 = cuda.shared.array((4, 8), np.float32)
                buf[tid] = a[i] if i.in_bounds(a) else np.float32(0)
                if tid < 4:
                    grid2[tid, 0] = np.float32(0)
                cuda.syncthreads()
                v = buf[tid]
                w = buf[j] + buf[len(buf) - 1 - j] + buf[min(tid, LAST)] + buf[i.index % 32]
                z = grid2[tid % 4, 0] + buf[buf.shape[0] - 1 - j]
                s = np.float32(0)
                for q in range(2):
                    s += buf[q] * 0
                n = len(buf)
                old = cuda.atomic.add(buf, tid, np.float32(0))
            out[i] = v * 2 + (w - 2 * v - buf_last(n)) * 0 + z * 0 + s + old * 0

        @ss.device
        def buf_last(n):
            return n - 32
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 2)


def test_call_passing_raw_value_through_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        import operator

        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: only takes a view, writes nothing"):
                r = operator.getitem(out.unchecked, slice(None))
            r[0] = a[i]  # BAD
            out[i] = a[i]
        """,
        "unsafe-escape",
        "`r` holds a raw value",
        ss.UnsafeRegionRequired,
    )


def test_call_of_raw_value_giving_a_scalar_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        import operator

        @ss.kernel(contract={_BLOCK})
        def k({SIG}) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: only lengths and this thread's own slot are read"):
                buf = cuda.shared.array(32, np.float32)
                buf[cuda.threadIdx.x] = np.float32(1)
                n = len(buf)
                v = operator.getitem(buf, cuda.threadIdx.x)  # stays in the region
                old = cuda.atomic.add(buf, cuda.threadIdx.x, v)
            out[i] = a[i] + (n - 32) + old - 1
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input)


_PUT = """
@ss.device
def put(pad, dst, j, v):
    with ss.unsafe("SAFETY: the caller passes its own in-bounds element"):
        dst[j] = v
    return pad
"""


@pytest.mark.parametrize(
    "call",
    ["put(*(0, out.unchecked), i.index, a[i])", "put(*args, i.index, a[i])"],
    ids=["starred-tuple", "starred-name"],
)
def test_starred_arguments_to_helper_refused(tmp_path, call):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        _PUT
        + f"""
@ss.kernel(contract={_BLOCK})
def k({SIG}) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        with ss.unsafe("SAFETY: i.index is this thread's own, in-bounds element"):
            args = (0, out.unchecked)
            {call}  # BAD
""",
        "unsafe-escape",
        "unpacks arguments into a call of the @simtsafe.device helper `put`",
        ss.UnsafeRegionRequired,
    )


def test_positional_arguments_to_helper_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        _PUT
        + f"""
@ss.kernel(contract={_BLOCK})
def k({SIG}) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        with ss.unsafe("SAFETY: i.index is this thread's own, in-bounds element"):
            put(0, out.unchecked, i.index, a[i])
""",
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input)


# ============================================================== 8. prefix trust


def test_module_named_like_numpy_is_not_trusted(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "numpy_utils.py").write_text("def twice(x):\n    return x * 2\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        refused(
            tmp_path,
            f"""
            import numpy_utils

            @ss.kernel
            def k({SIG}) -> None:
                i = thread.index_1d()
                out[i] = numpy_utils.twice(a[i])  # BAD
            """,
            "raw-device-function",
            "is a plain Python function",
        )
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("numpy_utils", None)


def test_helper_in_user_module_accepted(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "mathhelpers.py").write_text(
        "import simtsafe as ss\n\n@ss.device\ndef twice(x):\n    return x * 2\n"
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        mod = accepted(
            tmp_path,
            f"""
            import mathhelpers

            @ss.kernel
            def k({SIG}) -> None:
                i = thread.index_1d()
                out[i] = mathhelpers.twice(a[i])
            """,
        )
        if ss.SIMULATOR:
            np.testing.assert_array_equal(mod.result, mod.input * 2)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mathhelpers", None)


# ============================================================== 9. host escape and unsafe()


def test_unchecked_launcher_kept_past_region_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            out[i] = a[i]
        """,
    )
    with ss.unsafe("SAFETY: test of the host-side region"):
        launcher = mod.k.unchecked[1, 32]
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        launcher(None, None)
    assert info.value.rule == "unchecked-launch"
    assert "a launcher kept past its unsafe region" in str(info.value)
    if ss.SIMULATOR:  # the twin: configured and called inside the region
        from numba import cuda

        out, a = cuda.to_device(np.zeros(32, F32)), cuda.to_device(np.arange(32, dtype=F32))
        with ss.unsafe("SAFETY: 32 threads, 32 elements, arrays distinct"):
            mod.k.unchecked[1, 32](out, a)
        np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=F32))


def test_unsafe_needs_a_string() -> None:
    with pytest.raises(TypeError, match="needs a string reason"):
        ss.unsafe(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got an empty one"):
        ss.unsafe("SAFETY:  ")
    assert ss.unsafe("SAFETY: a reason").reason == "SAFETY: a reason"


# ============================================================== 10. dynamic access and shadowing


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("x = getattr(out, 'unchecked')  # BAD", "dynamic-access"),
        ("g = globals()  # BAD", "dynamic-access"),
        ("import math  # BAD", "statement"),
        ("f = lambda v: v  # BAD", "statement"),
        ("s = [v for v in range(3)]  # BAD", "statement"),
        ("w = __ss_index_1d()  # BAD", "private-name"),
    ],
    ids=["getattr", "globals", "import", "lambda", "comprehension", "private"],
)
def test_dynamic_constructs_refused(tmp_path, line, rule):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            {line}
            out[i] = a[i]
        """,
        rule,
        "",
    )


def test_shadowed_builtin_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        def range(*args):
            return [0, 0, 0]

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            for j in range(3):  # BAD
                out[i] = a[i]
        """,
        "raw-device-function",
        "`range` is a plain Python function",
    )


def test_builtin_range_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            acc = np.float32(0)
            for j in range(3):
                acc += a[i]
            out[i] = acc
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input * 3)


def test_attribute_store_outside_unsafe_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            c = complex(1, 2)
            c.real = 3.0  # BAD
            out[i] = a[i]
        """,
        "attribute-store",
        "writes through a reference",
    )


def test_reserved_parameter_name_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            """
            @ss.device
            def helper(__ss_no_witness, x):
                return x
            """,
        )
    assert info.value.rule == "private-name"
    assert "'__ss_no_witness' is reserved for simtsafe" in str(info.value)


def test_local_annotations_are_not_evaluated_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = accepted(
        tmp_path,
        f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            acc: float = 0.0
            w: DisjointSlice = out
            out[i] = a[i] + acc
        """,
    )
    if ss.SIMULATOR:
        np.testing.assert_array_equal(mod.result, mod.input)


def test_simtsafe_intrinsic_bound_at_module_level_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
        import importlib
        mint = importlib.import_module(
            "simtsafe.lowering._sim" if ss.SIMULATOR else "simtsafe.lowering._cuda"
        ).builtins(proven_domain=1)["__ss_mint_1d"]

        @ss.kernel
        def k({SIG}) -> None:
            w = mint(0)  # BAD
            out[w] = a[0]
        """,
        "private-name",
        "is simtsafe internals",
    )
