"""Device-call helper (not a test): the wgmma example and its raw twin at M = N = 8192 and
several K, timed alternately (safe, raw, safe, raw), to tell a cost per K step (grows with
K) from a cost per block tile (prologue, tail, store: the same at every K).

    python3 scripts/wgmma_sweep.py [--ks 2048,8192,16384] [--reps 10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import cuda
from numba import types as t

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))
import gemm_bf16_wgmma as g  # noqa: E402

from benchmarks._common import time_batched  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ks", default="2048,8192,16384")
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    m = n = 8192
    ks = [int(v) for v in args.ks.split(",")]
    rng = np.random.default_rng(7)
    top = max(ks)
    a_all = rng.standard_normal((m, top), dtype=np.float32).astype(g.ml_dtypes.bfloat16)
    b_all = rng.standard_normal((top, n), dtype=np.float32).astype(g.ml_dtypes.bfloat16)
    u16 = t.uint16[:, ::1]
    raw = g.raw_launcher(m, n, (t.float32[:, ::1], u16, u16))
    safe = g.gemm_bf16.prepare(grid=g.grid_for(m, n), block=g.BLOCK)
    print("| K | safe ms | raw ms | safe/raw speed | (safe - raw) us | per K step ns |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in ks:
        d_a = g.to_device_bf16(np.ascontiguousarray(a_all[:, :k]))
        d_b = g.to_device_bf16(np.ascontiguousarray(b_all[:k]))
        c_safe = cuda.device_array((m, n), np.float32)
        c_raw = cuda.device_array((m, n), np.float32)
        ra, rb = d_a.view(np.uint16), d_b.view(np.uint16)
        times: dict[str, list[float]] = {"safe": [], "raw": []}

        def run_safe(c=c_safe, x=d_a, y=d_b) -> None:  # type: ignore[no-untyped-def]
            safe(c, x, y)

        def run_raw(c=c_raw, x=ra, y=rb) -> None:  # type: ignore[no-untyped-def]
            raw(c, x, y)

        for _ in range(2):
            times["safe"].append(time_batched(run_safe, args.reps, 5))
            times["raw"].append(time_batched(run_raw, args.reps, 5))
        same = np.array_equal(c_safe.copy_to_host(), c_raw.copy_to_host())
        s, r = min(times["safe"]), min(times["raw"])
        waves = -(-(m // g.BM) * (n // g.BN) // cuda.get_current_device().MULTIPROCESSOR_COUNT)
        per_step = (s - r) / waves / (k // g.BK) * 1e9
        print(
            f"| {k} | {s * 1e3:.3f} | {r * 1e3:.3f} | {r / s:.3f} | {(s - r) * 1e6:.1f} |"
            f" {per_step:.1f} |  (equal outputs: {same}; all {times})"
        )


if __name__ == "__main__":
    main()
