"""Scalars as annotated: a numpy scalar of another precision is refused at launch.

Python scalars convert as Numba converts them (range-checked); a numpy
scalar is taken only as its own dtype or one numpy casts to the annotation
safely (or as an integer of another width whose value fits). Checked on the
general loop and on the memoized/generated fast path alike; a refused launch
leaves the output untouched.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

POISON = np.float64(-7.0)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(
        tmp_path_factory.mktemp("scalars"),
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def scale32(out: DisjointSlice[np.float32], alpha: np.float32, a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = alpha * a[i]

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def scale64(out: DisjointSlice[np.float64], alpha: np.float64, a: In[np.float64]) -> None:
            i = thread.index_1d()
            out[i] = alpha * a[i]

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def shift(out: DisjointSlice[np.int32], n: np.int32, a: In[np.int32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] + n
        """,
    )


def _arrays(dtype):  # type: ignore[no-untyped-def]
    out = cuda.to_device(np.full(32, POISON, dtype))
    a = cuda.to_device(np.arange(32, dtype=dtype))
    return out, a


def _refused(launch, out, value, a):  # type: ignore[no-untyped-def]
    before = out.copy_to_host()
    with pytest.raises(ss.ArgumentTypeError) as info:
        launch(out, value, a)
    np.testing.assert_array_equal(out.copy_to_host(), before)  # nothing was enqueued
    return info.value


def test_float64_scalar_into_float32_parameter_refused(mod):  # type: ignore[no-untyped-def]
    launch = mod.scale32.prepare(grid=1, block=32)
    out, a = _arrays(np.float32)
    exc = _refused(launch, out, np.float64(0.1), a)
    text = str(exc)
    assert "kernel 'scale32'" in text and "argument 'alpha'" in text
    assert "declared float32, got np.float64(0.1)" in text
    assert "would be rounded to float32" in text
    assert "Pass np.float32(...)" in text and "annotate the parameter np.float64" in text
    assert (exc.kernel, exc.argument, exc.limit) == ("scale32", "alpha", "float32")
    assert exc.actual == np.float64(0.1)


def test_refused_on_the_memoized_fast_path_too(mod):  # type: ignore[no-untyped-def]
    launch = mod.scale32.prepare(grid=1, block=32)
    out, a = _arrays(np.float32)
    for _ in range(3):  # from the second launch on, this argument set is memoized
        launch(out, np.float32(0.5), a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.float32) * 0.5)
    # The same value (0.5 == np.float64(0.5)) of another precision: not the memoized set.
    _refused(launch, out, np.float64(0.5), a)
    assert launch._plan._fast_check((out, np.float64(0.5), a)) is None


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (np.int64(3), "a numpy int64 scalar is not a float32"),
        (np.complex64(1), "got complex64"),
        (np.float64(2.0), "would be rounded"),
    ],
)
def test_other_numpy_types_refused(mod, value, fragment):  # type: ignore[no-untyped-def]
    out, a = _arrays(np.float32)
    exc = _refused(mod.scale32.prepare(grid=1, block=32), out, value, a)
    assert fragment in str(exc)


def test_python_scalars_convert_as_numba_does(mod):  # type: ignore[no-untyped-def]
    launch = mod.scale32.prepare(grid=1, block=32)
    out, a = _arrays(np.float32)
    launch(out, 0.1, a)
    np.testing.assert_array_equal(
        out.copy_to_host(), np.float32(0.1) * np.arange(32, dtype=np.float32)
    )
    launch(out, 3, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.float32) * 3)
    exc = _refused(launch, out, 1e39, a)  # range-checked, as before
    assert "overflows float32" in str(exc)


def test_safe_numpy_casts_accepted_and_computed_as_annotated(mod):  # type: ignore[no-untyped-def]
    out, a = _arrays(np.float64)
    mod.scale64.prepare(grid=1, block=32)(out, np.float32(0.1), a)
    want = np.float64(np.float32(0.1)) * np.arange(32, dtype=np.float64)
    np.testing.assert_array_equal(out.copy_to_host(), want)
    out, a = _arrays(np.float32)
    mod.scale32.prepare(grid=1, block=32)(out, np.float16(0.5), a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.float32) * 0.5)


def test_integers_of_another_width_are_range_checked(mod):  # type: ignore[no-untyped-def]
    launch = mod.shift.prepare(grid=1, block=32)
    out, a = _arrays(np.int32)
    launch(out, np.int64(5), a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.int32) + 5)
    exc = _refused(launch, out, np.int64(2**40), a)
    assert "does not fit int32" in str(exc)
    out, a = _arrays(np.int32)
    exc = _refused(launch, out, np.float32(1.0), a)
    assert "got float32 np.float32(1.0). Pass an int (or np.int32(...))" in str(exc)
