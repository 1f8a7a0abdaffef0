"""Shared tiles, output tiles and local arrays: simtsafe vs its raw twin vs CuPy, in one run.

    python benchmarks/tiles.py [--n 16384] [--gemm 4096]

* transpose of an n x n float32 matrix through a padded 32 x 32 shared tile,
  block (32, 8) (tests/kernels/tiles.py ``transpose`` / ``transpose_raw``),
  vs CuPy ``ascontiguousarray(A.T)``; GB/s counts one read and one write.
  The ceiling is a device-to-device copy of the same bytes.
* the Tier-1 register-blocked SGEMM schedule (``sgemm_tier1``: 16 x 16
  threads, 8 x 8 outputs each, shared tiles of depth 8, local-array
  accumulators, a strided output tile) vs the same schedule in raw Numba
  vs cuBLAS through CuPy ``matmul``; GFLOP/s.

Targets (issue 10): safe/raw >= 0.99 on both; transpose ahead of CuPy;
SGEMM >= 50% of cuBLAS. The results go to $OUT/tiles.{json,md,png}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_gpu, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from tests.kernels import tiles as k  # noqa: E402


def _transpose(n: int, reps: int, rows: list[dict[str, Any]]) -> None:
    rng = np.random.default_rng(0)
    host = rng.standard_normal((n, n), dtype=np.float32)
    a = cuda.to_device(host)
    out = cuda.device_array((n, n), np.float32)
    grid = (ss.cover(n, k.TILE), ss.cover(n, k.TILE))
    safe = k.transpose.prepare(grid=grid, block=(k.TILE, k.ROWS))
    raw = k.transpose_raw[grid, (k.TILE, k.ROWS)]
    runs: dict[str, Any] = {
        "simtsafe": lambda: safe(out, a),
        "numba raw": lambda: raw(out, a),
    }
    try:
        import cupy as cp

        ca = cp.asarray(a)
        holder: dict[str, Any] = {}
        runs["cupy ascontiguousarray(A.T)"] = lambda: holder.__setitem__(
            "r", cp.ascontiguousarray(ca.T)
        )
    except ImportError:
        print("cupy not installed: skipping the CuPy column")
    dst = cuda.device_array((n, n), np.float32)
    t_copy = time_gpu(lambda: dst.copy_to_device(a), reps=reps)
    nbytes = 2 * n * n * 4
    rows.append(
        {
            "kernel": "transpose",
            "who": "copy ceiling",
            "s": t_copy,
            "rate": nbytes / t_copy / 1e9,
            "ok": True,
        }
    )
    expected = host.T
    for who, fn in runs.items():
        fn()
        cuda.synchronize()
        got = out.copy_to_host() if who != "cupy ascontiguousarray(A.T)" else None
        ok = True if got is None else bool(np.array_equal(got, expected))
        t = time_gpu(fn, reps=reps)
        rows.append({"kernel": "transpose", "who": who, "s": t, "rate": nbytes / t / 1e9, "ok": ok})


def _sgemm(n: int, reps: int, rows: list[dict[str, Any]]) -> None:
    rng = np.random.default_rng(1)
    ha = rng.standard_normal((n, n), dtype=np.float32)
    hb = rng.standard_normal((n, n), dtype=np.float32)
    a, b = cuda.to_device(ha), cuda.to_device(hb)
    c = cuda.device_array((n, n), np.float32)
    grid = (ss.cover(n, k.GM), ss.cover(n, k.GM))
    safe = k.sgemm_tier1[grid, (k.GB, k.GB)]
    raw = k.sgemm_raw[grid, (k.GB, k.GB)]
    runs: dict[str, Any] = {"simtsafe": lambda: safe(c, a, b), "numba raw": lambda: raw(c, a, b)}
    try:
        import cupy as cp

        ca, cb = cp.asarray(a), cp.asarray(b)
        cc = cp.empty((n, n), cp.float32)
        runs["cuBLAS (cupy matmul)"] = lambda: cp.matmul(ca, cb, out=cc)
    except ImportError:
        print("cupy not installed: skipping the cuBLAS column")
    flops = 2.0 * n * n * n
    check_rows = slice(0, 64)
    expected = ha[check_rows].astype(np.float64) @ hb.astype(np.float64)
    for who, fn in runs.items():
        fn()
        cuda.synchronize()
        ok = True
        if who != "cuBLAS (cupy matmul)":
            ok = bool(np.allclose(c.copy_to_host()[check_rows], expected, rtol=1e-3, atol=5e-2))
        t = time_gpu(fn, reps=reps)
        rows.append(
            {"kernel": f"sgemm {n}^3", "who": who, "s": t, "rate": flops / t / 1e9, "ok": ok}
        )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=16384, help="transpose size (n x n)")
    parser.add_argument("--gemm", type=int, default=4096, help="SGEMM size (n x n x n)")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    _transpose(args.n, args.reps, rows)
    _sgemm(args.gemm, args.reps, rows)

    lines = [
        f"tiles on {device_name()} (median of {args.reps})",
        "",
        "| kernel | who | time (ms) | rate | vs raw | ok |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        raw = next(
            (r for r in rows if r["kernel"] == row["kernel"] and r["who"] == "numba raw"), None
        )
        unit = "GB/s" if row["kernel"] == "transpose" else "GFLOP/s"
        ratio = f"{row['rate'] / raw['rate']:.3f}" if raw else ""
        lines.append(
            f"| {row['kernel']} | {row['who']} | {row['s'] * 1e3:.3f} | {row['rate']:.1f} {unit} "
            f"| {ratio} | {row['ok']} |"
        )
    table = "\n".join(lines)
    bars = {f"{r['kernel']} / {r['who']}": r["rate"] for r in rows}
    write_results(
        "tiles",
        {"device": device_name(), "reps": args.reps, "rows": rows},
        table,
        bars,
        unit="GB/s (transpose), GFLOP/s (sgemm)",
    )
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
