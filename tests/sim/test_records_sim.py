"""Record dtypes and simtsafe.random on the simulator: values, refusals, launch checks."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

REC = """
Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)
"""


def _records(n: int) -> np.ndarray:
    rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)
    a = np.zeros(n, rec)
    a["x"] = np.arange(n)
    a["n"] = np.arange(n) % 7
    return a


def test_record_fields_read_and_written_through_witness(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        REC
        + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec], s: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = a[w]
    out[w].x = a[w].x * 2
    s[w] = a[w].x + a[w].n
""",
    )
    n = 40  # 64 threads: the last 24 witnesses are out of range (scratch records)
    a = _records(n)
    out = cuda.to_device(np.zeros(n, a.dtype))
    s = cuda.to_device(np.zeros(n, np.float32))
    mod.k.prepare(grid=2, block=32)(out, cuda.to_device(a), s)
    got = out.copy_to_host()
    np.testing.assert_array_equal(got["x"], a["x"] * 2)
    np.testing.assert_array_equal(got["n"], a["n"])
    np.testing.assert_array_equal(s.copy_to_host(), a["x"] + a["n"])


def test_record_of_another_layout_refused_at_launch(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        REC
        + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w] = a[w].x
""",
    )
    other = np.zeros(8, np.dtype([("n", np.int32), ("x", np.float32)], align=True))  # same size
    out = cuda.to_device(np.full(8, 5, np.float32))
    with pytest.raises(ss.ArgumentTypeError) as info:
        mod.k.prepare(grid=1, block=32)(out, cuda.to_device(other))
    assert "with the record dtype" in str(info.value)
    assert info.value.argument == "a"
    np.testing.assert_array_equal(out.copy_to_host(), 5)


def test_field_store_through_a_local_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            REC
            + """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[Rec]) -> None:
    w = thread.index_1d()
    r = a[w]
    r.x = 1.0  # BAD
    out[w] = r.x
""",
        )
    assert info.value.rule == "attribute-store"
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_random_draws_advance_only_own_state(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = ss.random.uniform_float32(states, w) + ss.random.normal_float32(states, w) * 0
""",
    )
    n = 40
    states = create_xoroshiro128p_states(n, seed=3)
    before = states.copy_to_host()
    out = cuda.to_device(np.zeros(n, np.float32))
    mod.k.prepare(grid=2, block=32)(out, states)  # 24 threads beyond the states: draw nothing
    after = states.copy_to_host()
    got = out.copy_to_host()
    assert ((got >= 0) & (got < 1)).all()
    assert (after["s0"] != before["s0"]).all()  # every thread advanced its own state


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
        mod.k.prepare(grid=1, block=32)(
            cuda.to_device(np.zeros(32, np.float32)), create_xoroshiro128p_states(32, seed=1)
        )
    assert "and this thread's witness (thread.index_1d(), grid_stride, thread.index_2d() or" in str(
        info.value
    )
