"""Axis mapping of 2D kernels: row = y, col = x (simtsafe's index_2d) vs the x-major mapping.

    python benchmarks/axis_mapping.py [--rows 8192 --cols 8192]

``out = alpha * a`` on a C-order float32 matrix, three ways, same block
(32, 8) and a grid that covers the matrix:

* ``simtsafe index_2d``: ``w = thread.index_2d()``, row follows y, col x;
* ``numba raw, row=y col=x``: ``c, r = cuda.grid(2)``, the same mapping by hand;
* ``numba raw, x-major``: ``r, c = cuda.grid(2)``, the row follows x.

The three compile to the same instructions (same loads, stores and index
arithmetic; checked in PTX); they differ in which thread index is multiplied
by the row pitch. With row = y, the 32 lanes of a warp read 32 consecutive
floats of one row (one 128-byte transaction); with the x-major mapping, they
read one float from each of 32 rows (32 transactions). Bytes counted: the
input read once and the output written once (8 B per element). simtsafe has
no x-major witness; this measures what such a witness would give up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_gpu, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from simtsafe import DisjointSlice2D, In2D, thread  # noqa: E402

BLOCK = (32, 8, 1)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=BLOCK,
        requires=["a.shape[0] == out.shape[0]", "a.shape[1] == out.shape[1]"],
        covers="out",
    )
)
def scale_2d(out: DisjointSlice2D[np.float32], a: In2D[np.float32], alpha: np.float32) -> None:
    w = thread.index_2d()  # row = y, col = x
    out[w] = a[w] * alpha


@cuda.jit
def scale_raw_ymajor(out, a, alpha):  # type: ignore[no-untyped-def]
    c, r = cuda.grid(2)  # cuda.grid(2) is (x, y): the row follows y
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r, c] * alpha


@cuda.jit
def scale_raw_xmajor(out, a, alpha):  # type: ignore[no-untyped-def]
    r, c = cuda.grid(2)  # the row follows x: neighbouring lanes are a row apart
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r, c] * alpha


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--cols", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    rows, cols = args.rows, args.cols
    host = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32)
    a = cuda.to_device(host)
    out = cuda.device_array((rows, cols), np.float32)
    alpha = np.float32(1.5)
    expected = host * alpha

    ymajor_grid = (ss.cover(cols, BLOCK[0]), ss.cover(rows, BLOCK[1]))
    xmajor_grid = (ss.cover(rows, BLOCK[0]), ss.cover(cols, BLOCK[1]))
    safe = scale_2d.prepare(grid=ymajor_grid, block=BLOCK)
    raw_y = scale_raw_ymajor[ymajor_grid, BLOCK[:2]]
    raw_x = scale_raw_xmajor[xmajor_grid, BLOCK[:2]]
    runs = {
        "simtsafe index_2d (row=y, col=x)": lambda: safe(out, a, alpha),
        "numba raw, row=y col=x": lambda: raw_y(out, a, alpha),
        "numba raw, x-major (row=x col=y)": lambda: raw_x(out, a, alpha),
    }
    copy_dst = cuda.device_array((rows, cols), np.float32)
    t_copy = time_gpu(lambda: copy_dst.copy_to_device(a), reps=args.reps)
    bytes_moved = 2 * rows * cols * 4
    copy_gbs = bytes_moved / t_copy / 1e9

    variants: dict[str, dict[str, object]] = {}
    for name, fn in runs.items():
        out.copy_to_device(np.full((rows, cols), np.nan, np.float32))
        fn()
        cuda.synchronize()
        correct = bool(np.array_equal(out.copy_to_host(), expected))
        t = time_gpu(fn, reps=args.reps)
        variants[name] = {
            "seconds": t,
            "seconds_repeat": time_gpu(fn, reps=args.reps),
            "GBps": bytes_moved / t / 1e9,
            "correct": correct,
        }

    base = float(variants["numba raw, row=y col=x"]["seconds"])  # type: ignore[arg-type]
    lines = [
        f"2D axis mapping on {device_name()}: out = alpha * a, {rows} x {cols} float32, block "
        f"{BLOCK[:2]}, median of {args.reps} (copy ceiling: {copy_gbs:.0f} GB/s read + write)",
        "",
        "| mapping | time (ms) | repeat (ms) | GB/s | % of copy | raw row=y / this | matches numpy |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for name, v in variants.items():
        secs, repeat = float(v["seconds"]), float(v["seconds_repeat"])  # type: ignore[arg-type]
        gbps = float(v["GBps"])  # type: ignore[arg-type]
        lines.append(
            f"| {name} | {secs * 1e3:.3f} | {repeat * 1e3:.3f} | {gbps:.0f} | "
            f"{100 * gbps / copy_gbs:.1f} | {base / secs:.3f} | {'yes' if v['correct'] else 'NO'} |"
        )
    write_results(
        "axis_mapping",
        {
            "device": device_name(),
            "shape": [rows, cols],
            "block": list(BLOCK),
            "copy_GBps": copy_gbs,
            "variants": variants,
        },
        "\n".join(lines),
        bars={k: float(v["GBps"]) for k, v in variants.items()},  # type: ignore[arg-type]
        unit="GB/s (higher is better)",
    )
    return 0 if all(v["correct"] for v in variants.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
