"""The scalar table: which dtypes a kernel takes by value and how they are packed."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lowering._scalars import SCALARS, scalar_kind
from tests.kernels import load_kernel_module


def test_complex_packs_as_two_floats() -> None:
    c64 = SCALARS["complex64"].pack(1.5 - 2j)
    assert [type(v) for v in c64] == [ctypes.c_float, ctypes.c_float]
    assert [v.value for v in c64] == [1.5, -2.0]
    c128 = SCALARS["complex128"].pack(3)
    assert [type(v) for v in c128] == [ctypes.c_double, ctypes.c_double]


def test_half_packs_its_bits() -> None:
    (bits,) = SCALARS["float16"].pack(1.0)
    assert isinstance(bits, ctypes.c_uint16)
    assert bits.value == int(np.float16(1.0).view(np.uint16)) == 0x3C00


def test_kinds_admit_only_their_values() -> None:
    assert not SCALARS["int32"].admits(True)
    assert not SCALARS["int32"].admits(1.5)
    assert SCALARS["float32"].admits(np.int64(3))
    assert not SCALARS["float32"].admits(1j)
    assert SCALARS["complex64"].admits(1j)
    assert SCALARS["bool"].admits(np.bool_(False)) and not SCALARS["bool"].admits(1)


def test_records_and_datetimes_are_not_scalars() -> None:
    assert scalar_kind(np.dtype("datetime64[s]")) is None
    assert scalar_kind(np.dtype([("x", "f4")])) is None


@pytest.mark.parametrize("ann", ["np.datetime64", "np.str_", "np.longdouble"])
def test_unsupported_scalar_annotation_refused(tmp_path, ann):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            f"""
            @ss.kernel
            def k(out: DisjointSlice[np.float32], s: {ann}) -> None:
                i = thread.index_1d()
                out[i] = 1.0
            """,
        )
    assert info.value.rule == "annotation"
    assert "cannot be passed to a kernel by value" in str(info.value)


def test_user_index_space_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            """
            class Mine(ss.IndexSpace):
                pass

            @ss.kernel
            def k(out: DisjointSlice[np.float32, Mine]) -> None:
                pass
            """,
        )
    assert info.value.rule == "annotation"
    assert "A user-defined IndexSpace has no witness constructor" in str(info.value)


@pytest.mark.parametrize(
    ("param", "value", "ok"),
    [
        ("float32", np.float32(0.1), True),
        ("float32", np.float64(0.1), False),  # would round
        ("float16", np.float32(1.0), False),
        ("float64", np.float32(0.1), True),  # numpy casts it safely: exact
        ("float32", np.int64(3), False),  # another kind
        ("float64", np.int32(3), True),  # safe (exact)
        ("int32", np.int64(3), True),  # an integer: range-checked instead
        ("uint8", np.int64(-1), True),  # ... (out_of_range refuses it)
        ("complex64", np.complex128(1j), False),
        ("complex128", np.float32(1.0), True),
        ("float32", 0.1, True),  # Python scalars have no precision: converted as Numba does
        ("int8", 3, True),
    ],
)
def test_numpy_scalars_of_another_precision(param, value, ok) -> None:  # type: ignore[no-untyped-def]
    assert (SCALARS[param].other_precision(value) is None) is ok
