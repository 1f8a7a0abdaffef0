"""The generated per-kernel checker never accepts what the general check loop refuses.

Random argument sets (dtypes, ranks, overlapping views of one buffer, sizes,
scalars) go through both: when the generated checker accepts, the general
loop must accept too and produce the same layouts and kernel parameters.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

import simtsafe as ss

pytestmark = pytest.mark.sim

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))


def _plans():  # type: ignore[no-untyped-def]
    from saxpy import saxpy
    from vecadd import vecadd

    return {
        "vecadd": vecadd.prepare(grid=4, block=256)._plan,
        "saxpy": saxpy.prepare(grid=2, block=256)._plan,
    }


BUFFER = cuda.to_device(np.zeros(4096, np.float32))
OTHER = cuda.to_device(np.zeros(4096, np.float64))

views = st.tuples(
    st.sampled_from(["f32", "f64", "2d"]),
    st.integers(0, 2000),
    st.integers(1, 1500),
    st.sampled_from([1, 1, 1, 2]),
)


def _make(view: tuple[str, int, int, int]):  # type: ignore[no-untyped-def]
    kind, start, length, step = view
    if kind == "2d":
        return cuda.to_device(np.zeros((4, 8), np.float32))
    buf = BUFFER if kind == "f32" else OTHER
    return buf[start : start + length * step : step]


@settings(max_examples=300, deadline=None)
@given(
    which=st.sampled_from(["vecadd", "saxpy"]),
    arrays=st.lists(views, min_size=3, max_size=3),
    alpha=st.sampled_from(
        [np.float32(2.0), 2.0, 3, "x", True, np.float64(2.0), np.int64(3), np.float16(2), 1e39]
    ),
    drop=st.booleans(),
)
def test_generated_checker_is_sound(which, arrays, alpha, drop) -> None:  # type: ignore[no-untyped-def]
    plan = _plans()[which]
    out, a, b = (_make(v) for v in arrays)
    args = (out, a, b) if which == "vecadd" else (out, alpha, a, b)
    if drop:
        args = args[:-1]
    fast = plan._fast_check(args)
    try:
        slow = plan._check(args)
    except ss.LaunchContractError:
        assert fast is None, f"generated checker accepted what the general loop refuses: {args}"
        return
    if fast is not None:
        assert fast == slow


def test_generated_checker_accepts_valid_arguments() -> None:
    plan = _plans()["vecadd"]
    out = cuda.to_device(np.zeros(1000, np.float32))
    args = (out, BUFFER[:1000], BUFFER[1000:2000])
    fast = plan._fast_check(args)
    assert fast is not None
    assert fast == plan._check(args)
    assert fast[0] == ("C", "C")


@settings(max_examples=200, deadline=None)
@given(arrays=st.lists(views, min_size=3, max_size=3))
def test_generated_checker_gives_the_run_aligned_layouts(arrays) -> None:  # type: ignore[no-untyped-def]
    # A kernel that fills shared tiles gets "C16" for inputs aligned for 16-byte runs (the
    # simulator never asks for it: forced here on a fresh plan and its generated checker).
    from simtsafe.host._fastcheck import build_fast_check

    plan = _plans()["vecadd"]
    saved = plan._fast_check
    plan.run_layouts = True
    plan._fast_check = build_fast_check(plan, check_devices=False)
    args = tuple(_make(v) for v in arrays)
    try:
        slow = plan._check(args)
        fast = plan._fast_check(args)
    except ss.LaunchContractError:
        assert plan._fast_check(args) is None
        return
    finally:
        plan.run_layouts, plan._fast_check = False, saved
    if fast is not None:
        assert fast == slow
    for layout, f in zip(slow[0], slow[3][1:], strict=True):  # the inputs' facts
        aligned = f.c_contiguous and f.ptr % 16 == 0 and (f.shape[-1] * 4) % 16 == 0
        assert layout == ("C16" if aligned else "C" if f.c_contiguous else "A"), (layout, f)


def test_generated_checker_source_is_straight_line() -> None:
    plan = _plans()["saxpy"]
    code = plan._fast_check.__code__
    assert code.co_filename == "<simtsafe fast check for saxpy>"


# ---------------------------------------------------------------------------- CuPy / PyTorch

foreign_views = st.tuples(
    st.sampled_from(["cupy", "torch"]),
    st.sampled_from(["float32", "float32", "float64", "int32"]),
    st.integers(0, 2000),
    st.integers(1, 1500),
    st.sampled_from([1, 1, 1, 2]),
    st.booleans(),  # a tensor that requires grad
)


def _foreign(view: tuple[str, str, int, int, int, bool]):  # type: ignore[no-untyped-def]
    from tests import fake_arrays as fa

    lib, dtype, start, length, step, grad = view
    itemsize = np.dtype(dtype).itemsize
    base = 0x7F0000000000  # every view is of one buffer: overlaps are likely
    if lib == "cupy":
        return fa.make_cupy(base + start * itemsize, (length,), (step * itemsize,), dtype)
    return fa.make_torch(base + start * itemsize, (length,), (step,), dtype, requires_grad=grad)


@settings(max_examples=300, deadline=None)
@given(
    which=st.sampled_from(["vecadd", "saxpy"]),
    arrays=st.lists(foreign_views, min_size=3, max_size=3),
    stream=st.sampled_from([0, 0x55]),
)
def test_generated_checker_is_sound_on_cupy_and_torch_arrays(which, arrays, stream) -> None:  # type: ignore[no-untyped-def]
    import pytest as _pytest

    from tests import fake_arrays as fa

    with _pytest.MonkeyPatch.context() as mp:
        fa.install(mp)
        fa.set_cupy_stream(stream)
        plan = _plans()[which]
        out, a, b = (_foreign(v) for v in arrays)
        args = (out, a, b) if which == "vecadd" else (out, np.float32(2), a, b)
        try:
            fast = plan._fast_check(args)  # native facts
        except ss.LaunchContractError as exc:  # an argument the CAI path refuses, in order
            with _pytest.raises(type(exc)) as info:
                plan._check(args)
            assert str(info.value) == str(exc)
            return
        try:
            slow = plan._check(args)  # __cuda_array_interface__ facts
        except ss.LaunchContractError:
            assert fast is None, f"generated checker accepted what the general loop refuses: {args}"
            return
        assert fast == slow
