"""Device-call helper (not a test): the wgmma kernels against numpy at small sizes."""

import sys
from pathlib import Path

import numpy as np
from numba import cuda
from numba import types as t

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))
import _gemm_bf16_wgmma as w  # noqa: E402
import gemm_bf16_wgmma as g  # noqa: E402

u16 = t.uint16[:, ::1]
sig = (t.float32[:, ::1], u16, u16)


def check(name, got, want):
    bad = np.argwhere(~np.isclose(got, want, rtol=1e-4, atol=1e-3))
    print(
        name,
        "ok"
        if len(bad) == 0
        else f"{len(bad)} wrong, first {bad[:4].tolist()} "
        f"got {got[tuple(bad[0])]} want {want[tuple(bad[0])]}",
        flush=True,
    )


for m, k, n in ((128, 64, 256), (128, 128, 256), (256, 512, 512)):
    a, b = g.inputs(m, k, n, seed=1)
    want = a.astype(np.float64) @ b.astype(np.float64)
    da, db = cuda.to_device(a.view(np.uint16)), cuda.to_device(b.view(np.uint16))
    for stages, lag in ((4, 1), (4, 0)):
        p = w.Probe(stages, lag)
        c = cuda.to_device(np.full((m, n), np.nan, np.float32))
        p.raw_launcher(m, n, sig)(c, da, db)
        check(f"probe {stages}/{lag} {m}x{k}x{n}", c.copy_to_host(), want)
    c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    g.raw_launcher(m, n, sig)(c, da, db)
    check(f"raw twin {m}x{k}x{n}", c.copy_to_host(), want)
for m, k, n in ((128, 64, 256), (256, 512, 512), (200, 160, 300), (1, 8, 1), (129, 72, 257)):
    a, b = g.inputs(m, k, n, seed=2)
    want = a.astype(np.float64) @ b.astype(np.float64)
    c = cuda.to_device(np.full((m, n), np.nan, np.float32))
    g.gemm_bf16.prepare(grid=g.grid_for(m, n), block=g.BLOCK)(
        c, g.to_device_bf16(a), g.to_device_bf16(b)
    )
    check(f"simtsafe {m}x{k}x{n}", c.copy_to_host(), want)
print("run():", g.run())
