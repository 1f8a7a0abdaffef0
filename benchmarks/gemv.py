"""Memory-bound GEMV (an LLM decode step): simtsafe with ``ss.vec.load`` vs raw Numba vs torch.

    python benchmarks/gemv.py [--reps 20] [--size full|tiny] [--dtypes bfloat16,float16,float32]

y = W x with W of shape (N, K), one warp per row: lanes read 16-byte runs of
W's row and of x with ``ss.vec.load``, ``ss.warp.sum`` adds the lanes' partial
sums (in float32) and the warp leader writes y[row]. Shapes: 8192 x 8192 and
151936 x 1024 (Qwen's lm_head). Against: the same schedule in raw Numba
(scalar reads: Numba cannot spell a vector load), and ``torch.mv`` when
torch is installed. The rate is the bytes GEMV must move (W, x and y once)
per second, and its share of the device-to-device copy rate measured in the
same run (read + write of W's bytes). Element types are a parameter: add a
kernel to ``SAFE`` for a new one (bf16 after its views land).

Target (issue 18): the simtsafe kernel >= 90% of the copy rate.
Results: $OUT (or benchmarks/results)/gemv.{json,md,png}.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda, float32

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_gpu, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from simtsafe import DisjointSlice, In, In2D, PerWarp, thread  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is left out
    torch = None

BLOCK = 256


@ss.kernel
def gemv_f32(y: DisjointSlice[np.float32, PerWarp], w: In2D[np.float32], x: In[np.float32]) -> None:
    row = cuda.grid(1) // 32
    acc = np.float32(0)
    for j in range(cuda.laneid, (w.shape[1] + 3) // 4, 32):
        a = ss.vec.load(w, (row, j), 4)
        b = ss.vec.load(x, j, 4)
        acc += a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    total = ss.warp.sum(acc)
    y[thread.warp_leader()] = total


@ss.kernel
def gemv_f16(y: DisjointSlice[np.float16, PerWarp], w: In2D[np.float16], x: In[np.float16]) -> None:
    row = cuda.grid(1) // 32
    acc = np.float32(0)
    for j in range(cuda.laneid, (w.shape[1] + 7) // 8, 32):
        a = ss.vec.load(w, (row, j), 8)
        b = ss.vec.load(x, j, 8)
        acc += (
            np.float32(a[0]) * np.float32(b[0])
            + np.float32(a[1]) * np.float32(b[1])
            + np.float32(a[2]) * np.float32(b[2])
            + np.float32(a[3]) * np.float32(b[3])
            + np.float32(a[4]) * np.float32(b[4])
            + np.float32(a[5]) * np.float32(b[5])
            + np.float32(a[6]) * np.float32(b[6])
            + np.float32(a[7]) * np.float32(b[7])
        )
    total = ss.warp.sum(acc)
    y[thread.warp_leader()] = np.float16(total)


@ss.kernel
def gemv_bf16(
    y: DisjointSlice[np.float32, PerWarp], w: In2D[ss.bfloat16], x: In[ss.bfloat16]
) -> None:
    # bf16 runs read as exact float32 values: the accumulation is fp32.
    row = cuda.grid(1) // 32
    acc = np.float32(0)
    for j in range(cuda.laneid, (w.shape[1] + 7) // 8, 32):
        a = ss.vec.load(w, (row, j), 8)
        b = ss.vec.load(x, j, 8)
        acc += (
            a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
            + a[4] * b[4] + a[5] * b[5] + a[6] * b[6] + a[7] * b[7]
        )  # fmt: skip
    total = ss.warp.sum(acc)
    y[thread.warp_leader()] = total


@ss.kernel
def gemv_bf16_x2(
    y: DisjointSlice[np.float32, PerWarp], w: In2D[ss.bfloat16], x: In[ss.bfloat16]
) -> None:
    # Two 16-byte runs of the row per lane and step (j and j + 32): twice the loads in
    # flight per warp. A run past the row's end reads 0, so no tail code is needed.
    row = cuda.grid(1) // 32
    acc0 = np.float32(0)
    acc1 = np.float32(0)
    for j in range(cuda.laneid, (w.shape[1] + 7) // 8, 64):
        a = ss.vec.load(w, (row, j), 8)
        c = ss.vec.load(w, (row, j + 32), 8)
        b = ss.vec.load(x, j, 8)
        d = ss.vec.load(x, j + 32, 8)
        acc0 += (
            a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
            + a[4] * b[4] + a[5] * b[5] + a[6] * b[6] + a[7] * b[7]
        )  # fmt: skip
        acc1 += (
            c[0] * d[0] + c[1] * d[1] + c[2] * d[2] + c[3] * d[3]
            + c[4] * d[4] + c[5] * d[5] + c[6] * d[6] + c[7] * d[7]
        )  # fmt: skip
    total = ss.warp.sum(acc0 + acc1)
    y[thread.warp_leader()] = total


#: The simtsafe kernel for each element type.
SAFE: dict[str, Any] = {"float32": gemv_f32, "float16": gemv_f16, "bfloat16": gemv_bf16}


@cuda.jit
def gemv_raw(y, w, x):  # type: ignore[no-untyped-def]
    """The raw twin: the same warp-per-row schedule, coalesced scalar reads."""
    row = cuda.grid(1) // 32
    lane = cuda.laneid
    if row >= w.shape[0]:
        return  # the whole warp leaves together
    acc = float32(0)
    for j in range(lane, w.shape[1], 32):
        acc += float32(w[row, j]) * float32(x[j])
    for off in (16, 8, 4, 2, 1):
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, off)
    if lane == 0:
        y[row] = acc


def _grid(rows: int) -> int:
    return (rows * 32 + BLOCK - 1) // BLOCK


def _row(rows: list[dict[str, Any]], **row: Any) -> None:
    rows.append(row)
    shown = f"{row['rate']:.1f} GB/s" if "rate" in row else row.get("error", "")
    print(f"  {row['shape']:14s} {row['dtype']:8s} {row['impl']:12s} {shown}", flush=True)


def bench_one(
    rows: list[dict[str, Any]], n: int, k: int, dtype: str, reps: int, copy_rate: float
) -> None:
    rng = np.random.default_rng(0)
    elem = ss.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    w_host = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(elem)
    x_host = rng.standard_normal(k).astype(elem)
    want = w_host.astype(np.float64) @ x_host.astype(np.float64)
    if dtype == "bfloat16":  # numba-cuda copies through the buffer protocol: bits as uint16
        w = cuda.to_device(w_host.view(np.uint16)).view(elem)
        x = cuda.to_device(x_host.view(np.uint16)).view(elem)
    else:
        w, x = cuda.to_device(w_host), cuda.to_device(x_host)
    y = cuda.device_array(n, np.float32 if dtype == "bfloat16" else dtype)
    moved = (n * k + k + n) * np.dtype(elem).itemsize
    tol = 3e-2 if dtype in ("float16", "bfloat16") else 1e-3
    shape = f"{n}x{k}"

    def measure(
        impl: str, make: Callable[[], tuple[Callable[[], None], Callable[[], Any]]]
    ) -> None:
        try:
            launch, result = make()
            launch()
            cuda.synchronize()
            got = np.asarray(result(), np.float64)
            correct = bool(np.allclose(got, want, rtol=tol, atol=tol))
            t = time_gpu(launch, reps)
            rate = moved / t / 1e9
            pct = 100 * rate / copy_rate
            _row(
                rows,
                shape=shape,
                dtype=dtype,
                impl=impl,
                seconds=t,
                rate=rate,
                pct_of_copy=pct,
                correct=correct,
            )
        except Exception as exc:  # a missing piece: report it, keep going
            traceback.print_exc()
            _row(
                rows,
                shape=shape,
                dtype=dtype,
                impl=impl,
                error=f"{type(exc).__name__}: {exc}"[:200],
            )

    safe = SAFE[dtype].prepare(grid=_grid(n), block=BLOCK)
    measure("simtsafe", lambda: ((lambda: safe(y, w, x)), y.copy_to_host))
    if dtype == "bfloat16":
        safe2 = gemv_bf16_x2.prepare(grid=_grid(n), block=BLOCK)
        measure("simtsafe x2", lambda: ((lambda: safe2(y, w, x)), y.copy_to_host))
    measure("numba raw", lambda: ((lambda: gemv_raw[_grid(n), BLOCK](y, w, x)), y.copy_to_host))
    if torch is not None and not ss.SIMULATOR:
        if dtype == "bfloat16":  # PyTorch's array interface has no bf16: convert on the host
            tw = torch.from_numpy(w_host.astype(np.float32)).to("cuda", torch.bfloat16)
            tx = torch.from_numpy(x_host.astype(np.float32)).to("cuda", torch.bfloat16)
        else:
            tw = torch.as_tensor(w, device="cuda")
            tx = torch.as_tensor(x, device="cuda")
        out: dict[str, Any] = {}

        def mv() -> None:
            out["y"] = torch.mv(tw, tx)

        measure("torch.mv", lambda: (mv, lambda: out["y"].float().cpu().numpy()))


def copy_rate(nbytes: int, reps: int) -> float:
    """Device-to-device copy rate in GB/s (read + write), the bandwidth ceiling."""
    src = cuda.device_array(nbytes // 4, np.float32)
    dst = cuda.device_array(nbytes // 4, np.float32)
    t = time_gpu(lambda: dst.copy_to_device(src), reps)
    return 2 * src.nbytes / t / 1e9


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument(
        "--size", choices=("full", "tiny"), default="tiny" if ss.SIMULATOR else "full"
    )
    parser.add_argument("--dtypes", default="bfloat16,float16,float32")
    args = parser.parse_args(argv)
    shapes = [(8192, 8192), (151936, 1024)] if args.size == "full" else [(48, 200)]
    reps = args.reps if args.size == "full" else 1
    dtypes = [d for d in args.dtypes.split(",") if d]
    biggest = max(n * k for n, k in shapes) * 4
    ceiling = copy_rate(biggest, reps)
    device = "the CUDA simulator" if ss.SIMULATOR else device_name()
    print(f"gemv on {device}: copy ceiling {ceiling:.0f} GB/s (read + write)")
    rows: list[dict[str, Any]] = []
    for n, k in shapes:
        for dtype in dtypes:
            bench_one(rows, n, k, dtype, reps, ceiling)
    lines = [
        f"GEMV y = W x on {device}, one warp per row; copy ceiling {ceiling:.0f} GB/s; "
        f"median of {reps} calls",
        "",
        "| shape | dtype | impl | GB/s | % of copy | matches numpy |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "rate" in r:
            lines.append(
                f"| {r['shape']} | {r['dtype']} | {r['impl']} | {r['rate']:.1f} | "
                f"{r['pct_of_copy']:.1f} | {r['correct']} |"
            )
        else:
            lines.append(f"| {r['shape']} | {r['dtype']} | {r['impl']} | {r['error']} | | |")
    bars = {f"{r['shape']} {r['dtype']} {r['impl']}": r["rate"] for r in rows if "rate" in r}
    write_results(
        "gemv",
        {"device": device, "copy_gbps": ceiling, "rows": rows},
        "\n".join(lines),
        bars,
        "GB/s",
    )


if __name__ == "__main__":
    main()
