"""numpy ufuncs on scalars compile to PTX (tests/kernels/ufunc_cases.py), and the table is true."""

from __future__ import annotations

import numpy as np

from simtsafe.lowering._ufuncs import SCALAR_UFUNCS
from tests.kernels.ufunc_cases import *  # noqa: F403


def test_native_entries_are_numba_cudas_own_table() -> None:
    """Every ufunc lowered by numba-cuda's loops is in its CUDA ufunc table (no silent drift)."""
    from numba.cuda import ufuncs

    native = {name for name, eq in SCALAR_UFUNCS.items() if eq.real == "native"}
    table = {u.__name__ for u in ufuncs.ufunc_db()}
    assert native <= table, native - table
    # And what numba-cuda lowers itself but simtsafe sends elsewhere is a math equivalent.
    for name in table - native:
        assert name in SCALAR_UFUNCS and SCALAR_UFUNCS[name].real is not None, name
    assert all(hasattr(np, n) for n in SCALAR_UFUNCS)
