"""Record dtypes and simtsafe.random on the CUDA target: typing rules hold in PTX compiles."""

from __future__ import annotations

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module


def test_record_kernel_compiles(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w] = a[w]
    out[w].x = a[w].x * 2
""",
    )
    ptx = mod.k.ptx()
    assert "st.global" in ptx and "trap" not in ptx


def test_random_with_plain_int_index_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = ss.random.uniform_float32(states, w.index)  # BAD
""",
    )
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx()
    assert "and this thread's witness (thread.index_1d(), grid_stride, thread.index_2d() or" in str(
        info.value
    )
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_numba_random_functions_are_gated(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        load_kernel_module(
            tmp_path,
            """
from numba.cuda.random import xoroshiro128p_uniform_float32

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = xoroshiro128p_uniform_float32(states.unchecked, 0)  # BAD
""",
        )
    assert info.value.lineno == line_of(tmp_path, "# BAD")


_REC = 'Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)\n'


@pytest.mark.parametrize(
    "body",
    [
        'r = a[w]\n    r["x"] = np.float32(-1.0)  # BAD',  # an input's element, by name
        "a[0][1] = np.int32(w.index)  # BAD",  # a field by position: every thread, a[0]
        'out[w]["x"] = np.float32(1.0)  # BAD',  # even the thread's own element: by attribute
    ],
)
def test_record_field_store_by_subscript_refused(tmp_path, body):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        _REC
        + f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    {body}
    out[w] = a[w]
""",
    )
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx()
    assert "a record field is written only by attribute" in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_record_field_store_by_subscript_in_a_helper_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        _REC
        + """
@ss.device
def setx(r, v):
    r["x"] = v

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    setx(a[0], np.float32(7.0))
    out[w] = a[w]
""",
    )
    with pytest.raises(ss.SafetyError, match="a record field is written only by attribute"):
        mod.k.ptx()


def test_record_fields_read_by_subscript_and_written_by_attribute_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        _REC
        + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w].x = a[w]["x"] * 2
    out[w].n = a[w][1]
""",
    )
    body = mod.k.ptx().split(".entry", 1)[1]
    # the two field stores (own element, else a scratch record), each after its load
    assert "st.f32" in body and "st.u32" in body, body


def test_raw_numba_record_stores_keep_numbas_behaviour() -> None:
    """The refusal applies while a simtsafe kernel is typed, not to raw numba.cuda.jit code."""
    import numpy as np
    from numba import cuda

    rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)

    def raw(a):  # type: ignore[no-untyped-def]
        a[0]["x"] = 1.0

    from numba.cuda.np.numpy_support import from_dtype

    ptx, _ = cuda.compile_ptx(raw, (from_dtype(rec)[::1],), cc=(9, 0))
    assert "st.global" in ptx


def test_record_with_an_array_field_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError, match="record field 'v' is an array"):
        load_kernel_module(
            tmp_path,
            """
Rec = np.dtype([("x", np.float32), ("v", np.float32, (4,))])

@ss.kernel
def k(out: DisjointSlice[Rec], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w].x = a[w]
""",
        )


def test_record_with_nested_scalar_records_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
Inner = np.dtype([("u", np.float32), ("v", np.float32)])
Rec = np.dtype([("p", Inner), ("n", np.int32)])

@ss.kernel
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w] = a[w]
""",
    )
    assert "st.global" in mod.k.ptx()
