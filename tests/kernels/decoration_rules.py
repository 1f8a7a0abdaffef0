"""Decoration-time safety rules, shared by tests/sim and tests/ptx.

Every rule here is checked on the kernel's source when ``@simtsafe.kernel``
runs, so it must fire identically in both modes; test_decoration_sim.py and
test_decoration_ptx.py import these tests so each mode runs them. Each
rejected kernel has an accepted close twin that compiles (PTX) or runs and
matches numpy (simulator).
"""

from __future__ import annotations

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, run_or_compile

F32 = np.float32

# ---------------------------------------------------------------------- helpers


def _rejected(tmp_path, source, cls=ss.SafetyError):  # type: ignore[no-untyped-def]
    with pytest.raises(cls) as info:
        load_kernel_module(tmp_path, source)
    assert type(info.value) is cls, f"expected exactly {cls.__name__}, got {type(info.value)}"
    return info.value


def _assert_points_at(exc, tmp_path, marker, kernel="k"):  # type: ignore[no-untyped-def]
    assert exc.kernel == kernel
    assert f"kernel {kernel!r}" in str(exc)
    assert exc.lineno == line_of(tmp_path, marker)
    assert exc.filename is not None and exc.filename.endswith(".py")
    assert marker in (exc.source_line or "")


def _copy_twin(mod):  # type: ignore[no-untyped-def]
    n = 40
    a = np.arange(n, dtype=F32)
    res = run_or_compile(mod.k, 2, 32, np.zeros(n, F32), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 2)


# ---------------------------------------------------------------------- 7: annotations


@pytest.mark.parametrize(
    ("signature", "fragment"),
    [
        ("out, a: In[np.float32]", "parameter 'out' has no annotation"),
        ("out: DisjointSlice[np.float32], a: np.ndarray", "which simtsafe does not know"),
        ("out: DisjointSlice, a: In[np.float32]", "without an element type"),
        ("out: DisjointSlice[np.float32], a: In", "without an element type"),
        ("out: DisjointSlice[float], a: In[np.float32]", "is not a numpy scalar type"),
    ],
    ids=["unannotated", "unknown", "slice-no-dtype", "in-no-dtype", "builtin-dtype"],
)
def test_bad_annotation_rejected(tmp_path, signature, fragment):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel
        def k({signature}) -> None:
            i = thread.index_1d()
            out[i] = a[i] * 2
        """,
    )
    assert fragment in str(exc)
    assert exc.rule == "annotation"
    assert "'k'" in str(exc)


def test_annotated_twin_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] * 2
        """,
    )
    assert [p.kind for p in mod.k.params] == ["out", "in"]
    _copy_twin(mod)


# ---------------------------------------------------------------------- 8: unsafe-gated ops

_GATED = {
    "syncthreads": "cuda.syncthreads()  # BAD",
    "shared": "buf = cuda.shared.array(32, np.float32)  # BAD",
    "atomic": "cuda.atomic.add(out.unchecked, 0, 1.0)  # BAD",
    "unchecked": "out.unchecked[i.index] = 1.0  # BAD",
    "syncwarp": "cuda.syncwarp()  # BAD",
    "threadfence": "cuda.threadfence()  # BAD",
}


@pytest.mark.parametrize("op", list(_GATED))
def test_gated_op_outside_unsafe_rejected(tmp_path, op):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            {_GATED[op]}
            out[i] = a[i] * 2
        """,
        ss.UnsafeRegionRequired,
    )
    assert isinstance(exc, ss.SafetyError)
    assert "allowed only inside `with simtsafe.unsafe(" in str(exc)
    assert exc.rule == "unsafe-op"
    _assert_points_at(exc, tmp_path, "# BAD")


def test_gated_ops_inside_unsafe_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: each thread writes only buf[tid] before the barrier"):
                buf = cuda.shared.array(32, np.float32)
                tid = cuda.threadIdx.x
                buf[tid] = a[i] * 2 if i.in_bounds(a) else np.float32(0)
                cuda.syncthreads()
                out[i] = buf[tid]
        """,
    )
    assert [r.reason for r in mod.k.unsafe_regions] == [
        "SAFETY: each thread writes only buf[tid] before the barrier"
    ]
    _copy_twin(mod)


def test_atomic_and_unchecked_inside_unsafe_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            if i.in_bounds(out):
                with ss.unsafe("SAFETY: i.index is this thread's own, in-bounds element"):
                    out.unchecked[i.index] = a[i]
                    cuda.atomic.add(out.unchecked, i.index, a[i])
        """,
    )
    _copy_twin(mod)


def test_unsafe_region_ends_with_its_block(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            with ss.unsafe("SAFETY: nothing shared yet"):
                x = 1
            cuda.syncthreads()  # BAD
        """,
        ss.UnsafeRegionRequired,
    )
    _assert_points_at(exc, tmp_path, "# BAD")


@pytest.mark.parametrize(
    ("reason", "fragment"),
    [
        ('""', "got an empty one"),
        ('"SAFETY:"', "got an empty one"),
        ('"SAFETY:   "', "got an empty one"),
        ("REASON", "takes one string literal"),
        ('f"SAFETY: {REASON}"', "takes one string literal"),
        ('"SAFETY: a", "b"', "takes one string literal"),
    ],
    ids=["empty", "prefix-only", "prefix-blank", "name", "fstring", "two-args"],
)
def test_bad_unsafe_reason_rejected(tmp_path, reason, fragment):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        REASON = "SAFETY: a module constant is not a literal"

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            with ss.unsafe({reason}):  # BAD
                cuda.syncthreads()
            out[i] = a[i] * 2
        """,
    )
    assert not isinstance(exc, ss.UnsafeRegionRequired)
    assert fragment in str(exc)
    assert exc.rule == "unsafe-reason"
    _assert_points_at(exc, tmp_path, "# BAD")


@pytest.mark.parametrize(
    "with_line",
    ['with open("/dev/null"):  # BAD', 'with ss.unsafe("SAFETY: x") as u:  # BAD'],
    ids=["open", "as-target"],
)
def test_other_with_rejected(tmp_path, with_line):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            {with_line}
                out[i] = a[i] * 2
        """,
    )
    assert exc.rule == "with"
    assert "with" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


# ---------------------------------------------------------------------- 9: grid_stride


@pytest.mark.parametrize(
    "body",
    [
        "it = thread.grid_stride(out)  # BAD",
        "for w in zip(thread.grid_stride(out)):  # BAD\n                out[w] = a[w] * 2",
        "g = thread.grid_stride  # BAD",
    ],
    ids=["assigned", "wrapped", "aliased"],
)
def test_grid_stride_outside_for_rejected(tmp_path, body):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            {body}
        """,
    )
    assert exc.rule == "witness-ctor"
    assert "grid_stride" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_index_ctor_not_called_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            f = thread.index_1d  # BAD
            i = f()
            out[i] = a[i]
        """,
    )
    assert exc.rule == "witness-ctor"
    _assert_points_at(exc, tmp_path, "# BAD")


@pytest.mark.parametrize("n", [100, 128, 5])
def test_grid_stride_for_loop_accepted(tmp_path, n):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1),
                                              requires=["a.size == out.size"]))
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            for w in thread.grid_stride(out):
                out[w] = a[w] * 2
        """,
    )
    a = np.arange(n, dtype=F32) + 1
    res = run_or_compile(mod.k, 2, 32, np.full(n, np.nan, F32), a)  # 64 threads
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 2)


# ---------------------------------------------------------------------- 10: domain


@pytest.mark.parametrize(
    ("domain", "out_ann", "ctor", "needed"),
    [
        (1, "DisjointSlice2D[np.float32]", "index_2d", 2),
        (2, "DisjointSlice[np.float32]", "index_1d", 1),
        (2, "DisjointSlice[np.float32]", "grid_stride", 1),
        (3, "DisjointSlice[np.float32]", "index_1d", 1),
        (3, "DisjointSlice2D[np.float32]", "index_2d", 2),
        (3, "DisjointSlice[np.float32]", "grid_stride", 1),
        (1, "DisjointSlice3D[np.float32]", "index_3d", 3),
        (2, "DisjointSlice3D[np.float32]", "index_3d", 3),
    ],
    ids=[
        "2d-in-domain1",
        "1d-in-domain2",
        "grid-stride-in-domain2",
        "1d-in-domain3",
        "2d-in-domain3",
        "grid-stride-in-domain3",
        "3d-in-domain1",
        "3d-in-domain2",
    ],
)
def test_witness_of_other_domain_rejected(tmp_path, domain, out_ann, ctor, needed):  # type: ignore[no-untyped-def]
    body = (
        "for w in thread.grid_stride(out):  # BAD\n                out[w] = 1.0"
        if ctor == "grid_stride"
        else f"w = thread.{ctor}()  # BAD\n            out[w] = 1.0"
    )
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel(contract=ss.LaunchContract(domain={domain}))
        def k(out: {out_ann}) -> None:
            {body}
        """,
    )
    assert exc.rule == "witness-domain"
    assert f"needs a {needed}D launch" in str(exc)
    assert f"domain={domain}" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_witness_of_contract_domain_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
        def k(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
            w = thread.index_2d()
            out[w] = a[w] * 2
        """,
    )
    a = np.arange(6 * 10, dtype=F32).reshape(6, 10)
    res = run_or_compile(mod.k, (2, 2), (8, 4), np.zeros_like(a), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 2)


def test_witness_of_contract_domain_3_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=3, block=(8, 2, 2)))
        def k(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
            w = thread.index_3d()
            if w.in_bounds(a):
                out[w] = a[w] * 2 + a[w.z, w.y, w.x]
        """,
    )
    a = np.arange(3 * 5 * 10, dtype=F32).reshape(3, 5, 10)
    res = run_or_compile(mod.k, (2, 3, 2), (8, 2, 2), np.zeros_like(a), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 3)


def test_index_3d_without_contract_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
            w = thread.index_3d()
            out[w] = a[w] + 1
        """,
    )
    a = np.arange(2 * 3 * 4, dtype=F32).reshape(2, 3, 4)
    res = run_or_compile(mod.k, (1, 2, 1), (4, 2, 2), np.zeros_like(a), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a + 1)


# ---------------------------------------------------------------------- 11: raw device functions


def test_raw_device_function_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @cuda.jit(device=True)
        def twice(x):
            return x * 2

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = twice(a[i])  # BAD
        """,
    )
    assert exc.rule == "raw-device-function"
    assert "`twice` is a raw numba.cuda.jit function" in str(exc)
    assert "@simtsafe.device" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_simtsafe_device_helper_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.device
        def twice(x):
            return x * 2

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = twice(a[i])
        """,
    )
    _copy_twin(mod)


def test_device_helper_minting_a_3d_witness_accepted(tmp_path):  # type: ignore[no-untyped-def]
    # A helper has no domain proof; index_3d needs none (unique in every launch).
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.device
        def put(out, a):
            w = thread.index_3d()
            out[w] = a[w] * 2

        @ss.kernel(contract=ss.LaunchContract(domain=3))
        def k(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
            put(out, a)
        """,
    )
    a = np.arange(2 * 3 * 5, dtype=F32).reshape(2, 3, 5)
    res = run_or_compile(mod.k, (1, 1, 2), (5, 3, 1), np.zeros_like(a), a)
    if res is not None:
        np.testing.assert_array_equal(res[0], a * 2)


def test_kernel_calling_kernel_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def inner(out: DisjointSlice[np.float32]) -> None:
            pass

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            inner(out)  # BAD
        """,
    )
    assert exc.rule == "nested-kernel"
    _assert_points_at(exc, tmp_path, "# BAD")


# ---------------------------------------------------------------------- 12: private names


@pytest.mark.parametrize(
    "line",
    ["i = __ss_index_1d()  # BAD", "__ss_x = 1  # BAD", "x = __ss_view_in(a)  # BAD"],
    ids=["call", "store", "view"],
)
def test_private_name_rejected(tmp_path, line):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            {line}
        """,
    )
    assert exc.rule == "private-name"
    assert "is reserved for simtsafe" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


# ---------------------------------------------------------------------- 13: returns, closures


def test_kernel_returning_value_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] * 2
            return 1  # BAD
        """,
    )
    assert exc.rule == "return"
    assert "a kernel returns nothing" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_kernel_bare_return_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            if not i.in_bounds(out):
                return
            out[i] = a[i] * 2
        """,
    )
    _copy_twin(mod)


def test_closure_over_array_rejected(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        def make():
            table = np.arange(4, dtype=np.float32)

            @ss.kernel
            def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
                i = thread.index_1d()
                out[i] = a[i] * table[0]  # BAD

            return k
        """,
    )
    with pytest.raises(ss.SafetyError) as info:
        mod.make()
    assert info.value.rule == "global-array"
    assert "`table` is a global array (numpy.ndarray)" in str(info.value)
    assert "Pass it as an argument" in str(info.value)
    _assert_points_at(info.value, tmp_path, "# BAD")


def test_closure_over_constant_accepted_and_cached(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        def make(scale):
            @ss.kernel
            def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
                i = thread.index_1d()
                out[i] = a[i] * scale

            return k
        """,
    )
    k2 = mod.make(np.float32(2))
    assert mod.make(np.float32(2)) is k2  # same closure values: the same (compiled) kernel
    assert mod.make(np.float32(3)) is not k2

    class Twin:
        k = k2

    _copy_twin(Twin)


def test_factory_cache_tells_apart_annotations_and_values_equal_by_eq(tmp_path):  # type: ignore[no-untyped-def]
    """The cache key holds what decides the code: annotations too, and values by repr."""
    mod = load_kernel_module(
        tmp_path,
        """
        def make(dt, scale):
            @ss.kernel
            def k(out: DisjointSlice[dt], a: In[dt]) -> None:
                i = thread.index_1d()
                out[i] = a[i] * scale

            return k
        """,
    )
    k32 = mod.make(np.float32, 2.0)
    assert mod.make(np.float32, 2.0) is k32
    k64 = mod.make(np.float64, 2.0)
    assert k64 is not k32 and [p.dtype for p in k64.params] == [np.float64, np.float64]
    assert mod.make(np.float32, -0.0) is not mod.make(np.float32, 0.0)


def test_module_global_twin_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        SCALE = np.float32(2)

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] * SCALE
        """,
    )
    _copy_twin(mod)


def test_kernel_defaults_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], s: float = 1.0) -> None:
            pass
        """,
    )
    assert exc.rule == "signature"


# --- raw arrays must not escape their unsafe region --------------------------------------


def test_shared_array_used_after_its_unsafe_region_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: each thread writes only buf[tid] before the barrier"):
                buf = cuda.shared.array(32, np.float32)
                tid = cuda.threadIdx.x
                buf[tid] = a[i] * 2 if i.in_bounds(a) else np.float32(0)
                cuda.syncthreads()
            out[i] = buf[tid]  # BAD
        """,
        cls=ss.UnsafeRegionRequired,
    )
    assert exc.rule == "unsafe-escape"
    assert "`buf` holds a raw value obtained inside an unsafe region" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_unchecked_view_escaping_its_region_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: only takes the raw view"):
                raw = out.unchecked
            raw[0] = a[i]  # BAD
        """,
        cls=ss.UnsafeRegionRequired,
    )
    assert exc.rule == "unsafe-escape"
    assert "`raw` holds a raw value" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_unchecked_view_used_inside_its_region_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            if i.in_bounds(out):
                with ss.unsafe("SAFETY: i.index is this thread's own, in-bounds element"):
                    raw = out.unchecked
                    raw[i.index] = a[i] * 2
        """,
    )
    _copy_twin(mod)


def test_getattr_cannot_reach_unchecked(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            getattr(out, "unchecked")[0] = a[i]  # BAD
        """,
    )
    assert exc.rule == "dynamic-access"
    assert "`getattr` is not allowed in kernels" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_simtsafe_internals_cannot_mint_witnesses(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        import importlib
        _backend = importlib.import_module(
            "simtsafe.lowering._sim" if ss.SIMULATOR else "simtsafe.lowering._cuda"
        )

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            w = _backend._mint_1d(0)  # BAD
            out[w] = a[0]
        """,
    )
    assert exc.rule == "private-name"
    assert "is simtsafe internals" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_njit_function_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        import numba

        @numba.njit
        def twice(x):
            return x * 2

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = twice(a[i])  # BAD
        """,
    )
    assert exc.rule == "raw-device-function"
    assert "Numba-compiled function (njit or @intrinsic)" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_register_jitable_helper_rejected(tmp_path):  # type: ignore[no-untyped-def]
    exc = _rejected(
        tmp_path,
        """
        from numba.extending import register_jitable

        @register_jitable
        def twice(x):
            return x * 2

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = twice(a[i])  # BAD
        """,
    )
    assert exc.rule == "raw-device-function"
    assert "`twice` is a plain Python function" in str(exc)
    assert "@simtsafe.device" in str(exc)
    _assert_points_at(exc, tmp_path, "# BAD")


def test_math_and_numpy_functions_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        import math

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = np.float32(2.0) * a[i] + np.float32(math.floor(0.5)) + min(a[i], a[i]) - a[i]
        """,
    )
    _copy_twin(mod)
