"""The ufunc table (lowering/_ufuncs): numpy's result dtypes, the refusals, the simulator twin."""

from __future__ import annotations

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lowering._ufuncs import SCALAR_UFUNCS, plan, sim_builtins, unsupported_ufunc

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


@pytest.mark.parametrize(
    ("name", "dtypes", "how", "out"),
    [
        ("exp", (F32,), "math.exp", F32),
        ("exp", (np.dtype(np.int32),), "math.exp", F64),
        ("sqrt", (np.dtype(np.float16),), "math.sqrt", np.dtype(np.float16)),
        ("absolute", (np.dtype(np.int8),), "abs", np.dtype(np.int8)),
        ("absolute", (np.dtype(np.complex64),), "abs", F32),
        ("floor", (np.dtype(np.int16),), "identity", np.dtype(np.int16)),
        ("isnan", (np.dtype(np.int64),), "false", np.dtype(np.bool_)),
        ("arctan2", (F32, F64), "math.atan2", F64),
        ("add", (np.dtype(np.uint8), np.dtype(np.uint8)), "operator.add", np.dtype(np.uint8)),
        ("maximum", (F32, F32), "native", F32),
    ],
)
def test_plan_follows_numpy(name, dtypes, how, out):  # type: ignore[no-untyped-def]
    p = plan(name, dtypes)
    assert not isinstance(p, str), p
    assert (p.how, p.out) == (how, out)
    assert p.out == getattr(np, name).resolve_dtypes((*dtypes, None))[-1]


def test_float16_loops_compute_in_float32() -> None:
    p = plan("exp", (np.dtype(np.float16),))
    assert not isinstance(p, str)
    assert p.compute == (F32,) and p.compute_out == F32 and p.loop_signature == "f->f"


def test_refusals_name_the_types_and_the_fix() -> None:
    msg = plan("power", (np.dtype(np.int64), np.dtype(np.int64)))
    assert isinstance(msg, str)
    assert "np.power of integer values (int64, int64)" in msg and "a ** b" in msg
    msg = plan("floor", (np.dtype(np.complex128),))
    assert isinstance(msg, str) and "numpy has no np.floor for (complex128)" in msg


def test_ufuncs_simtsafe_does_not_compile_are_named() -> None:
    assert unsupported_ufunc(np.exp) is None
    assert unsupported_ufunc(np.abs) is None  # np.abs is np.absolute
    assert "write `a // b`" in (unsupported_ufunc(np.floor_divide) or "")
    assert "several outputs" in (unsupported_ufunc(np.modf) or "")
    assert "returns 2 values" in (unsupported_ufunc(np.frexp) or "")
    assert unsupported_ufunc(np.matmul) is not None  # a generalized ufunc


def test_table_has_one_output_elementwise_ufuncs_only() -> None:
    for name in SCALAR_UFUNCS:
        u = getattr(np, name)
        assert isinstance(u, np.ufunc) and u.nout == 1 and u.signature is None, name
        assert u.__name__ == name


def test_sim_twin_keeps_numpys_dtype_and_takes_python_scalars_as_numba_types() -> None:
    twins = sim_builtins()
    r = twins["__ss_ufunc_exp"](np.float32(1.5))
    assert type(r) is np.float32 and r == np.exp(np.float32(1.5))
    # A Python float is a float64 in Numba: numpy 2 would keep float32 for (float32, 2.0),
    # the kernel (and so its twin) computes in float64.
    r = twins["__ss_ufunc_arctan2"](np.float32(1.0), 2.0)
    assert type(r) is np.float64
    assert type(twins["__ss_ufunc_absolute"](-3)) is np.int64
    # The GPU computes silently; so does the twin (no RuntimeWarning for sqrt(-1)).
    with np.errstate(all="raise"):
        assert np.isnan(twins["__ss_ufunc_sqrt"](np.float32(-1.0)))


def test_sim_twin_refuses_arrays_and_unsupported_types() -> None:
    twins = sim_builtins()
    with pytest.raises(ss.SafetyError, match="np.sqrt takes scalars in kernels"):
        twins["__ss_ufunc_sqrt"](np.ones(3, np.float32))
    with pytest.raises(ss.SafetyError, match="np.power of integer values"):
        twins["__ss_ufunc_power"](2, 3)
