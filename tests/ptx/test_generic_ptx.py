"""dtype-generic kernels compile per instance, with the memory traffic of a raw twin."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module

SOURCE = """
from typing import TypeVar

T = TypeVar("T", np.float32, np.float64)

@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def scale(out: DisjointSlice[T], alpha: T, x: In[T]) -> None:
    i = thread.index_1d()
    out[i] = alpha * x[i]

def scale_raw(out, alpha, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i]
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_instances_match_the_raw_kernel(tmp_path, dtype):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, SOURCE)
    concrete = mod.scale.instantiate(T=dtype)
    safe = concrete.ptx()
    raw, _ = cuda.compile_ptx(mod.scale_raw, concrete.argtypes(), cc=(9, 0))
    width = "f32" if dtype is np.float32 else "f64"
    for op in (f"ld.global.{width}", f"st.global.{width}"):
        count = lambda ptx, op=op: len(re.findall(re.escape(op), ptx))  # noqa: E731
        assert count(safe) == count(raw) >= 1, op


def test_generic_kernel_needs_a_binding_to_compile(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, SOURCE)
    with pytest.raises(TypeError, match="is generic in T: ptx\\(\\) needs one dtype"):
        mod.scale.ptx()
