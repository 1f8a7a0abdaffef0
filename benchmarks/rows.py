"""A row per block (or warp): simtsafe vs its raw Numba twin vs PyTorch, in one run.

    python benchmarks/rows.py [--reps 30] [--size full|quick]

Softmax, RMSNorm and LayerNorm over the last axis of float32 matrices
(examples/softmax.py, rmsnorm.py, layernorm.py: ``thread.block_row``; and
``softmax_warp``: ``thread.warp_row``), each against the same schedule in raw
Numba (tests/ptx/raw_rows.py) and against ``torch.softmax``,
``torch.nn.functional.rms_norm`` and ``layer_norm`` when PyTorch is there.
Shapes: 4096 x 4099 (a width that is not a multiple of the block) and 1 x 4096
(one row: launch-bound). Rate: GB/s counting the input read once and the
output written once (the kernels read the row two or three times; the
repeats hit L2 for rows this short), and % of the device-to-device copy rate
(``cuMemcpyDtoD`` of the same bytes, read + write) measured in the same run.
Timing: median CUDA-event time (benchmarks/_common.time_gpu). Every variant's
result is checked against numpy (float64) once before it is timed.
Results: $OUT (or benchmarks/results)/rows.{json,md,png}.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_gpu, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from tests.ptx import raw_rows  # noqa: E402

try:
    import torch
except ImportError:  # the library column is left out
    torch = None

SHAPES = {"full": [(4_096, 4_099), (1, 4_096)], "quick": [(1_024, 4_099), (1, 4_096)]}
EPS = np.float32(1e-5)


def _close(got: np.ndarray, want: np.ndarray) -> bool:
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))


class _keep:  # noqa: N801 - used like a function
    """A PyTorch call that returns its result (a new tensor): kept for the numpy check."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn, self.result = fn, None

    def __call__(self) -> None:
        self.result = self.fn()


def _variants(op: str, x: np.ndarray) -> tuple[np.ndarray, dict[str, Callable[[], Any]], Any]:
    """(numpy reference, name -> launch, device output) of one operation on ``x``."""
    rows, cols = x.shape
    d_x = cuda.to_device(x)
    d_out = cuda.to_device(np.zeros_like(x))
    rng = np.random.default_rng(1)
    g = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    d_g, d_b = cuda.to_device(g), cuda.to_device(b)
    found: dict[str, Callable[[], Any]] = {}
    if op == "softmax":
        ex = __import__("softmax")
        want = ex.reference(x)
        safe = ex.softmax.prepare(grid=rows, block=ex.BLOCK)
        found["simtsafe"] = lambda: safe(d_out, d_x)
        warp = ex.softmax_warp.prepare(
            grid=ss.cover(rows, ex.WARP_BLOCK // 32), block=ex.WARP_BLOCK
        )
        found["simtsafe warp_row"] = lambda: warp(d_out, d_x)
        raw = cuda.jit(raw_rows.softmax_raw)
        found["numba raw"] = lambda: raw[rows, ex.BLOCK](d_out, d_x)
        raw_w = cuda.jit(raw_rows.softmax_warp_raw)
        wgrid = ss.cover(rows, ex.WARP_BLOCK // 32)
        found["numba raw warp"] = lambda: raw_w[wgrid, ex.WARP_BLOCK](d_out, d_x)
        if torch is not None:
            tx = torch.as_tensor(d_x, device="cuda")
            found["torch.softmax"] = _keep(lambda: torch.softmax(tx, dim=-1))
    elif op == "rmsnorm":
        ex = __import__("rmsnorm")
        want = ex.reference(x, g, float(EPS))
        safe = ex.rmsnorm.prepare(grid=rows, block=ex.BLOCK)
        found["simtsafe"] = lambda: safe(d_out, d_x, d_g, EPS)
        raw = cuda.jit(raw_rows.rmsnorm_raw)
        found["numba raw"] = lambda: raw[rows, ex.BLOCK](d_out, d_x, d_g, EPS)
        if torch is not None and hasattr(torch.nn.functional, "rms_norm"):
            tx, tg = torch.as_tensor(d_x, device="cuda"), torch.as_tensor(d_g, device="cuda")
            fn = torch.nn.functional.rms_norm
            found["torch rms_norm"] = _keep(lambda: fn(tx, (cols,), tg, float(EPS)))
    else:
        ex = __import__("layernorm")
        want = ex.reference(x, g, b, float(EPS))
        safe = ex.layernorm.prepare(grid=rows, block=ex.BLOCK)
        found["simtsafe"] = lambda: safe(d_out, d_x, d_g, d_b, EPS)
        raw = cuda.jit(raw_rows.layernorm_raw)
        found["numba raw"] = lambda: raw[rows, ex.BLOCK](d_out, d_x, d_g, d_b, EPS)
        if torch is not None:
            tx, tg = torch.as_tensor(d_x, device="cuda"), torch.as_tensor(d_g, device="cuda")
            tb = torch.as_tensor(d_b, device="cuda")
            fn = torch.nn.functional.layer_norm
            found["torch layer_norm"] = _keep(lambda: fn(tx, (cols,), tg, tb, float(EPS)))
    return want, found, d_out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--size", choices=sorted(SHAPES), default="full")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    for rows, cols in SHAPES[args.size]:
        x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
        nbytes = 2 * x.nbytes  # read once + written once
        src, dst = cuda.to_device(x), cuda.to_device(np.zeros_like(x))
        copy_s = time_gpu(lambda: dst.copy_to_device(src), reps=args.reps)  # noqa: B023
        copy_rate = nbytes / copy_s / 1e9
        for op in ("softmax", "rmsnorm", "layernorm"):
            want, found, d_out = _variants(op, x)
            for name, fn in found.items():
                row: dict[str, Any] = {"op": op, "shape": [rows, cols], "impl": name}
                try:
                    fn()
                    cuda.synchronize()
                    got = fn.result.cpu().numpy() if isinstance(fn, _keep) else d_out.copy_to_host()
                    row["ok"] = _close(got, want)
                    seconds = time_gpu(fn, reps=args.reps)
                except Exception as exc:  # a variant that fails is a row with its error
                    row.update(ok=False, error=f"{type(exc).__name__}: {exc}")
                    results.append(row)
                    continue
                rate = nbytes / seconds / 1e9
                row.update(us=seconds * 1e6, gbs=rate, pct_copy=100 * rate / copy_rate)
                results.append(row)
        results.append(
            {"op": "copy", "shape": [rows, cols], "impl": "cuMemcpyDtoD", "ok": True,
             "us": copy_s * 1e6, "gbs": copy_rate, "pct_copy": 100.0}
        )  # fmt: skip
    lines = [
        f"Rows (float32) on {device_name()}: GB/s = input read once + output written once; "
        f"median of {args.reps}",
        "",
        "| op | shape | impl | us | GB/s | % of copy | matches numpy |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        shape = "x".join(map(str, r["shape"]))
        if "error" in r:
            lines.append(f"| {r['op']} | {shape} | {r['impl']} | - | - | - | {r['error']} |")
            continue
        lines.append(
            f"| {r['op']} | {shape} | {r['impl']} | {r['us']:.1f} | {r['gbs']:.0f} | "
            f"{r['pct_copy']:.0f}% | {r['ok']} |"
        )
    bars = {
        f"{r['op']} {'x'.join(map(str, r['shape']))} {r['impl']}": r["gbs"]
        for r in results
        if "gbs" in r
    }
    write_results(
        "rows", {"device": device_name(), "rows": results}, "\n".join(lines), bars, "GB/s"
    )
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
