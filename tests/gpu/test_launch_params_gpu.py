"""Memoized launches: the parameters packed once for ``cuLaunchKernel`` are the checked ones.

A prepared launch memoizes an argument set from its second checked launch on;
from the third launch with the same objects it calls ``cuLaunchKernel`` with
the parameters packed at memoization (``lowering._launching.direct_launcher``).
These tests launch every scalar kind and a negative-stride input that way and
compare each launch's result with numpy, so a packing that differs from
``cuda.core.launch``'s shows as a wrong value.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from simtsafe.lowering._scalars import SCALARS
from tests.kernels import load_kernel_module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

N = 256

#: scalar kind -> (a value that tells the bytes apart, what the kernel writes for it)
VALUES: dict[str, tuple[Any, float]] = {
    "bool": (np.bool_(True), 1.0),
    "int8": (np.int8(-100), -100.0),
    "int16": (np.int16(-30000), -30000.0),
    "int32": (np.int32(-2_000_000_000), -2_000_000_000.0),
    "int64": (np.int64(-(2**40) - 3), float(-(2**40) - 3)),
    "uint8": (np.uint8(250), 250.0),
    "uint16": (np.uint16(65000), 65000.0),
    "uint32": (np.uint32(4_000_000_000), 4_000_000_000.0),
    "uint64": (np.uint64(2**50 + 7), float(2**50 + 7)),
    "float16": (np.float16(-1.5), -1.5),
    "float32": (np.float32(3.25), 3.25),
    "float64": (np.float64(-(2.0**-30)), -(2.0**-30)),
    "complex64": (np.complex64(1.5 - 2.25j), 1.5 * 1000 - 2.25),
    "complex128": (np.complex128(-3.5 + 0.125j), -3.5 * 1000 + 0.125),
}


def _memo_goes(launch: Any) -> list[Any]:
    return [memo.go for memo in launch._plan._memo.values()]


def _direct(go: Any) -> bool:
    return not isinstance(go, functools.partial)  # partial: the cuda.core fallback


def test_the_table_is_covered() -> None:
    assert set(VALUES) == set(SCALARS)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_every_scalar_kind_survives_the_packed_launch(tmp_path: Path, name: str) -> None:
    annotation = "np.bool_" if name == "bool" else f"np.{name}"
    expr = {"bool": "1.0 if s else 0.0"}.get(name, "s")
    if name.startswith("complex"):
        expr = "s.real * 1000.0 + s.imag"
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
        def k(out: DisjointSlice[np.float64], s: {annotation}) -> None:
            i = thread.index_1d()
            out[i] = np.float64({expr})
        """,
    )
    value, expected = VALUES[name]
    launch = mod.k.prepare(grid=N // 128, block=128)
    out = cuda.to_device(np.full(N, np.nan))
    poison = np.full(N, np.nan)
    for _ in range(4):  # checked, checked + memoized, then the packed launch twice
        out.copy_to_device(poison)
        launch(out, value)
        np.testing.assert_array_equal(out.copy_to_host(), np.full(N, expected))
    goes = _memo_goes(launch)
    assert len(goes) == 1 and _direct(goes[0])


def test_a_negative_stride_input_survives_the_packed_launch(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=128, requires=["a.size == out.size"]))
        def k(out: DisjointSlice[np.float32], a: In[np.float32], x: np.float32) -> None:
            i = thread.index_1d()
            out[i] = a[i] * x
        """,
    )
    host = np.arange(2 * N, dtype=np.float32)
    backwards = cuda.to_device(host)[::-2]  # strides < 0: packed as signed 64-bit
    launch = mod.k.prepare(grid=N // 128, block=128)
    out = cuda.to_device(np.full(N, np.nan, np.float32))
    for _ in range(4):
        out.copy_to_device(np.full(N, np.nan, np.float32))
        launch(out, backwards, np.float32(2))
        np.testing.assert_array_equal(out.copy_to_host(), host[::-2] * 2)
    goes = _memo_goes(launch)
    assert len(goes) == 1 and _direct(goes[0])
