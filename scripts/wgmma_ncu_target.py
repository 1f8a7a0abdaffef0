"""Device-call helper (not a test): launch the wgmma example's safe or raw kernel 3 times at
8192^3, for Nsight Compute (``ncu -k regex:... --launch-skip 2 --launch-count 1``)."""

import sys
from pathlib import Path

import numpy as np
from numba import cuda
from numba import types as t

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import gemm_bf16_wgmma as g  # noqa: E402

m = k = n = 8192
a = cuda.device_array((m, k), np.uint16)
b = cuda.device_array((k, n), np.uint16)
c = cuda.device_array((m, n), np.float32)
if sys.argv[1] == "safe":
    launch = g.gemm_bf16.prepare(grid=g.grid_for(m, n), block=g.BLOCK)
    fa, fb = a.view(g.ml_dtypes.bfloat16), b.view(g.ml_dtypes.bfloat16)
    for _ in range(3):
        launch(c, fa, fb)
else:
    u16 = t.uint16[:, ::1]
    kernel = g.raw_launcher(m, n, (t.float32[:, ::1], u16, u16))
    for _ in range(3):
        kernel(c, a, b)
cuda.synchronize()
print("done", sys.argv[1])
