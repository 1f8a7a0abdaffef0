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
    assert "this thread's 1D witness" in str(info.value)
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
