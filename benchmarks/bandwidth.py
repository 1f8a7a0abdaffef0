"""Bandwidth of Tier-1 kernels: simtsafe vs raw Numba twin vs CuPy, in one run.

    python benchmarks/bandwidth.py [--log2n 28]

vecadd (out = a + b) and saxpy (out = alpha * x + y, grid-stride) on 2**28
float32 elements. Bytes counted: each input read once, the output written
once (12 B per element). Reference ceiling: a device-to-device copy of the
same size (bytes read + bytes written). Targets: safe/raw >= 0.99 and
vecadd >= 85% of copy bandwidth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_gpu, write_results  # noqa: E402
from saxpy import saxpy  # noqa: E402
from vecadd import vecadd  # noqa: E402

import simtsafe as ss  # noqa: E402

BLOCK = 256


@cuda.jit
def vecadd_raw(out, a, b):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def copy_raw(out, a):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i]


@cuda.jit
def saxpy_raw(out, alpha, x, y):  # type: ignore[no-untyped-def]
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = alpha * x[i] + y[i]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    a = cuda.to_device(rng.standard_normal(n, dtype=np.float32))
    b = cuda.to_device(rng.standard_normal(n, dtype=np.float32))
    out = cuda.device_array(n, np.float32)
    alpha = np.float32(2.5)
    grid = ss.cover(n, BLOCK)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    stride_grid = sms * 8  # saxpy: a fixed grid, grid-stride loop

    variants: dict[str, dict[str, object]] = {}
    safe_vecadd = vecadd.prepare(grid=grid, block=BLOCK)
    safe_saxpy = saxpy.prepare(grid=stride_grid, block=BLOCK)
    raw_vecadd = vecadd_raw[grid, BLOCK]
    raw_saxpy = saxpy_raw[stride_grid, BLOCK]
    runs = {
        ("vecadd", "simtsafe"): lambda: safe_vecadd(out, a, b),
        ("vecadd", "numba raw"): lambda: raw_vecadd(out, a, b),
        ("saxpy", "simtsafe"): lambda: safe_saxpy(out, alpha, a, b),
        ("saxpy", "numba raw"): lambda: raw_saxpy(out, alpha, a, b),
    }
    checks = {
        "vecadd": lambda host: np.array_equal(host, a.copy_to_host() + b.copy_to_host()),
        "saxpy": lambda host: np.allclose(
            host, alpha * a.copy_to_host() + b.copy_to_host(), rtol=1e-5, atol=1e-5
        ),
    }
    try:
        import cupy as cp

        ca, cb = cp.asarray(a), cp.asarray(b)
        cout = cp.asarray(out)
        cp_saxpy = cp.ElementwiseKernel(
            "float32 a, float32 x, float32 y", "float32 z", "z = a * x + y"
        )
        runs[("vecadd", "cupy")] = lambda: cp.add(ca, cb, out=cout)
        runs[("saxpy", "cupy")] = lambda: cp_saxpy(alpha, ca, cb, cout)
    except ImportError:
        print("cupy not installed: skipping the CuPy column")

    copy_dst = cuda.device_array(n, np.float32)
    t_copy = time_gpu(lambda: copy_dst.copy_to_device(a), reps=args.reps)
    t_copy_kernel = time_gpu(lambda: copy_raw[grid, BLOCK](copy_dst, a), reps=args.reps)
    copies = {"cuMemcpyDtoD": t_copy, "copy kernel": t_copy_kernel}
    try:  # PyTorch's device-to-device copy, when the machine has torch
        import torch

        ta, tdst = torch.as_tensor(a, device="cuda"), torch.as_tensor(copy_dst, device="cuda")
        copies["torch copy_"] = time_gpu(lambda: tdst.copy_(ta), reps=args.reps)
    except ImportError:
        pass
    # The ceiling: the fastest of the copies (bytes read + bytes written).
    copy_gbs = 2 * n * 4 / min(copies.values()) / 1e9
    bytes_moved = 3 * n * 4
    for (kernel, who), fn in runs.items():
        out.copy_to_device(np.full(n, np.nan, np.float32))
        fn()
        cuda.synchronize()
        ok = bool(checks[kernel](out.copy_to_host()))
        t = time_gpu(fn, reps=args.reps)
        variants[f"{kernel}/{who}"] = {
            "kernel": kernel,
            "impl": who,
            "seconds": t,
            "GBps": bytes_moved / t / 1e9,
            "correct": ok,
        }
    # A second timing of the raw and safe variants: the spread tells what is noise.
    for key in ("vecadd/simtsafe", "vecadd/numba raw", "saxpy/simtsafe", "saxpy/numba raw"):
        kernel, who = key.split("/")
        variants[key]["seconds_repeat"] = time_gpu(runs[(kernel, who)], reps=args.reps)

    lines = [
        f"Bandwidth on {device_name()}, n = 2^{args.log2n} float32, median of {args.reps} "
        f"(copy ceiling: {copy_gbs:.0f} GB/s read + write; "
        + ", ".join(f"{k} {2 * n * 4 / t / 1e9:.0f}" for k, t in copies.items())
        + ")",
        "",
        "| kernel | impl | time (ms) | repeat (ms) | GB/s | % of copy | safe/raw | matches numpy |",
        "|---|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for v in variants.values():
        raw = variants[f"{v['kernel']}/numba raw"]
        secs, gbps = float(v["seconds"]), float(v["GBps"])  # type: ignore[arg-type]
        repeat = v.get("seconds_repeat")
        shown_repeat = f"{float(repeat) * 1e3:.3f}" if repeat is not None else "-"  # type: ignore[arg-type]
        ratio = float(raw["seconds"]) / secs  # type: ignore[arg-type]
        lines.append(
            f"| {v['kernel']} | {v['impl']} | {secs * 1e3:.3f} | {shown_repeat} | {gbps:.0f} | "
            f"{100 * gbps / copy_gbs:.1f} | {ratio:.3f} | {'yes' if v['correct'] else 'NO'} |"
        )
    write_results(
        "bandwidth",
        {
            "device": device_name(),
            "n": n,
            "copy_GBps": copy_gbs,
            "copies_seconds": copies,
            "variants": variants,
        },
        "\n".join(lines),
        bars={k: float(v["GBps"]) for k, v in variants.items()},  # type: ignore[arg-type]
        unit="GB/s (higher is better)",
    )
    return 0 if all(v["correct"] for v in variants.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
