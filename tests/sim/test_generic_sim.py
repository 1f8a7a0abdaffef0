"""dtype-generic kernels: one kernel, a dtype bound per launch from the arguments."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

GENERIC = """
from typing import TypeVar

T = TypeVar("T", np.float32, np.float64)
F = TypeVar("F", bound=np.floating)

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, requires=["x.size == out.size"]))
def axpy(out: DisjointSlice[T], alpha: T, x: In[T], y: In[T]) -> None:
    for w in thread.grid_stride(out):
        out[w] = alpha * x[w] + y[w]

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def half(out: DisjointSlice[F], x: In[F]) -> None:
    w = thread.index_1d()
    out[w] = x[w] / 2
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_kernel_every_constrained_dtype(tmp_path, dtype):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    x, y = np.arange(50, dtype=dtype), np.ones(50, dtype)
    out = cuda.to_device(np.zeros(50, dtype))
    mod.axpy.prepare(grid=1, block=32)(out, dtype(3), cuda.to_device(x), cuda.to_device(y))
    np.testing.assert_array_equal(out.copy_to_host(), dtype(3) * x + y)
    assert mod.axpy.instantiate(T=dtype) is mod.axpy.instantiate(T=dtype)  # compiled once


def test_bound_type_variable_admits_its_subtypes(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    x = np.arange(40, dtype=np.float16)
    out = cuda.to_device(np.zeros(40, np.float16))
    mod.half.prepare(grid=2, block=32)(out, cuda.to_device(x))
    np.testing.assert_array_equal(out.copy_to_host(), x / 2)
    with pytest.raises(ss.ArgumentTypeError, match="F may be subtypes of floating; got int32"):
        mod.half.prepare(grid=2, block=32)(
            cuda.to_device(np.zeros(40, np.int32)), cuda.to_device(np.zeros(40, np.int32))
        )


def test_mismatched_binding_refused_with_both_arguments(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    out = cuda.to_device(np.full(8, 5, np.float32))
    with pytest.raises(ss.ArgumentTypeError) as info:
        mod.axpy.prepare(grid=1, block=32)(
            out, 2.0, cuda.to_device(np.zeros(8, np.float64)), cuda.to_device(np.zeros(8))
        )
    assert "T is bound to float32 by argument 'out', but argument 'x' is float64" in str(info.value)
    np.testing.assert_array_equal(out.copy_to_host(), 5)


def test_constraint_violation_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    ints = [cuda.to_device(np.zeros(8, np.int32)) for _ in range(3)]
    with pytest.raises(ss.ArgumentTypeError, match="T may be float32, float64; got int32"):
        mod.axpy.prepare(grid=1, block=32)(ints[0], 2, ints[1], ints[2])


def test_instantiate_errors(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    with pytest.raises(TypeError, match="missing: T"):
        mod.axpy.instantiate()
    with pytest.raises(TypeError, match="unknown: U"):
        mod.axpy.instantiate(T=np.float32, U=np.float32)
    with pytest.raises(TypeError, match="T may be float32, float64; got int8"):
        mod.axpy.instantiate(T=np.int8)
    assert [p.dtype for p in mod.axpy.instantiate(T=np.float64).params][:1] == [
        np.dtype(np.float64)
    ]


def test_a_generic_launch_binds_its_arguments(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, GENERIC)
    x = np.arange(40, dtype=np.float64)
    out = cuda.to_device(np.zeros(40, np.float64))
    bound = mod.half.prepare(grid=2, block=32).bind(out, cuda.to_device(x))
    assert isinstance(bound, ss.BoundLaunch)
    bound()
    np.testing.assert_array_equal(out.copy_to_host(), x / 2)
    with pytest.raises(ss.ArgumentTypeError, match="F may be subtypes of floating; got int32"):
        mod.half.prepare(grid=2, block=32).bind(
            cuda.to_device(np.zeros(40, np.int32)), cuda.to_device(np.zeros(40, np.int32))
        )
