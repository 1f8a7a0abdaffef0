"""numpy ufuncs on scalars on a real GPU: every call `plan` accepts, against numpy's value.

The kernels of tests/kernels/ufunc_cases.py (one per argument dtype, a scalar
picking the call) launched on the device: integer and boolean results equal
numpy's, floating results agree to a few units in the last place (libdevice
and numpy's math libraries round differently), complex ones likewise per part.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from tests.kernels import load_kernel_module
from tests.kernels.ufunc_cases import (
    _OUT_DTYPE,
    _OUT_FOR_KIND,
    DTYPES,
    accepted_calls,
    kernel_source,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

#: Relative tolerance by the computed (loop) float type.
_RTOL = {"float16": 4e-3, "float32": 4e-6, "float64": 1e-13}


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_accepted_ufunc_matches_numpy_on_the_gpu(tmp_path, dtype):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, kernel_source(dtype))
    value = np.array([True]) if dtype == "bool_" else np.array([3], dtype=dtype)
    d_value = cuda.to_device(value)
    launch = mod.k.prepare(grid=1, block=1)
    failures = []
    with np.errstate(all="ignore"):
        for j, (name, p) in enumerate(accepted_calls(dtype)):
            d = {o: cuda.to_device(np.zeros(1, dtype=t)) for o, t in _OUT_DTYPE.items()}
            launch(*d.values(), d_value, np.int64(j))
            want = getattr(np, name)(*([value[0]] * getattr(np, name).nin))
            got = d[_OUT_FOR_KIND[p.out.kind]].copy_to_host()[0]
            if p.out.kind in "fc":
                rtol = _RTOL[np.finfo(p.out).dtype.name]  # complex: its parts' float type
                ok = np.allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
            else:
                ok = got == want
            if not ok:
                failures.append(f"np.{name}({dtype}) = {want!r}, GPU {got!r}")
    assert not failures, failures
