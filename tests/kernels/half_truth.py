"""Truth tests of 16-bit floats (``lowering/_halfcasts.py``): ``if v:``, ``not v``, ``bool(v)``
and ``v and v`` of a float16 and of a bfloat16 read by int index (numba-cuda's own scalar).
numba-cuda refused the bfloat16 ones ("No definition for lowering") and lowered the float16
ones to IR that NVVM refused; Python and numpy call a value true unless it is a zero of either
sign (NaN is true). Run on the simulator, on the GPU, and compiled to PTX."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from numba import cuda

from tests.kernels import load_kernel_module

#: zeros of both signs, normals, subnormals of each format, NaN, infinity
VALUES = [0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), 1e-40, -6e-8, 6e-8]

DTYPES: dict[str, Any] = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def source(dtype: str) -> str:
    """A kernel writing, per element of ``x``, 1 for ``if v``, 10 for ``not v``, 100 for
    ``bool(v)``, 1000 for ``v and v``."""
    module = "ml_dtypes" if dtype == "bfloat16" else "np"
    return f"""
import ml_dtypes

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.int32], x: In[{module}.{dtype}]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.index < x.shape[0]:
        v = x[i.index]
        code = np.int32(0)
        if v:
            code += np.int32(1)
        if not v:
            code += np.int32(10)
        code += np.int32(100) if bool(v) else np.int32(0)
        code += np.int32(1000) if v and v else np.int32(0)
        out[i] = code
"""


def values(dtype: str) -> np.ndarray:
    """``VALUES`` in ``dtype`` (the subnormals of the other format become zeros or stay)."""
    return np.array(VALUES, np.float32).astype(DTYPES[dtype])


def expected(x: np.ndarray) -> np.ndarray:
    """The codes Python's truth gives for each element."""
    truth = np.array([bool(v) for v in x])
    return np.where(truth, 1101, 10).astype(np.int32)


def run(tmp_path: Path, dtype: str) -> np.ndarray:
    """Launch the kernel of ``dtype`` on ``values(dtype)``; the codes it wrote."""
    k = load_kernel_module(tmp_path, source(dtype)).k
    x = values(dtype)
    out = cuda.to_device(np.full(x.size, -1, np.int32))
    # through the bits: Numba's copy to the device takes no ml_dtypes buffer
    k.prepare(grid=1, block=32)(out, cuda.to_device(x.view(np.uint16)).view(x.dtype))
    return out.copy_to_host()
