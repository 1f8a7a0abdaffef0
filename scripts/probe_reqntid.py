"""Probe: which block shapes does the driver accept for kernels stamped with .reqntid?"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import simtsafe as ss  # noqa: E402
from tests.gpu.gpu_kernels import diff_exact, scale  # noqa: E402

out = cuda.device_array(1 << 16, np.int32)
for block in [
    (8, 4, 2),
    (1, 1, 1),
    (8, 4, 1),
    (64, 1, 1),
    (4, 8, 2),
    (16, 4, 2),
    (8, 8, 2),
    (32, 1, 1),
]:
    try:
        with ss.unsafe("SAFETY: probe"):
            diff_exact.unchecked[(2, 1, 1), block](out)
        cuda.synchronize()
        r = "ok"
    except Exception as e:  # noqa: BLE001
        r = f"{type(e).__name__}: {str(e)[:80]}"
    print("diff_exact", block, r)
spec = diff_exact.specialize()
print("attrs", spec.numba_kernel._codelibrary.get_cufunc().attrs)
a = cuda.to_device(np.ones(256, np.float32))
o = cuda.device_array(256, np.float32)
for block in [128, 64, 32, 1, 256, (64, 2)]:
    try:
        with ss.unsafe("SAFETY: probe"):
            scale.unchecked[2, block](o, a, np.float32(2))
        cuda.synchronize()
        r = "ok"
    except Exception as e:  # noqa: BLE001
        r = f"{type(e).__name__}: {str(e)[:80]}"
    print("scale", block, r)
print("attrs", scale.specialize().numba_kernel._codelibrary.get_cufunc().attrs)
