"""Every corpus kernel is a real Numba CUDA kernel: it compiles to PTX (NVVM, no GPU).

So benchmarks/sanitizer_corpus.py and tests/gpu/test_checker_gpu.py can launch
them on a device, and the checker's verdicts are about kernels that exist.
"""

from __future__ import annotations

import pytest

import simtsafe

from .cases import CASES, Case

pytestmark = [
    pytest.mark.ptx,
    pytest.mark.skipif(simtsafe.SIMULATOR, reason="compiles for the real CUDA target"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compiles(case: Case) -> None:
    from numba import cuda

    from simtsafe.lowering import numba_type
    from simtsafe.lowering._compat import assume_compute_capability

    for kernel in (case.bug, case.ok):
        if case.tier == "simtsafe":
            assert ".entry" in kernel.ptx(cc=(8, 0))
            continue
        sig = tuple(numba_type(a.dtype, a.ndim) for a in case.args())
        with assume_compute_capability((8, 0)):
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(8, 0))
        assert ".entry" in ptx
