"""Block cooperation in Tier 1: simtsafe vs its raw Numba twin vs the library, in one run.

    python benchmarks/coop.py [--reps 30] [--size full|quick|tiny]

Five kernels (examples/reduce_sum.py, scan.py, transpose.py, sgemm.py,
histogram.py), each against the same schedule written in raw Numba
(examples/coop_raw.py) and against what a user would call instead:

| kernel | size | library | rate counted |
|---|---|---|---|
| sum | 2^28 float32 | ``cupy.sum`` | GB/s: bytes read once |
| inclusive scan | 2^26 int32 | ``cupy.cumsum(dtype=int32)`` | GB/s: read once + written once |
| transpose | 16384^2 float32 | ``cupy.ascontiguousarray(A.T)`` | GB/s: read once + written once |
| SGEMM | 4096^3 float32 | ``cupy.matmul`` (cuBLAS; TF32 off) | TFLOP/s: 2 M N K |
| histogram | 2^30 uint8, 256 bins | ``cupy.bincount(minlength=256)`` | GB/s: bytes read once |

plus the device-to-device copy of 2^28 floats (``cuMemcpyDtoD`` and, when
CuPy is there, ``cupy.copyto``) as the bandwidth ceiling (read + write).

Timing: CUDA events around a batch of calls, after warm-up; before each
batch a one-thread kernel keeps the GPU busy for a few milliseconds while
the host enqueues the batch, so host launch overhead (5 launches per scan,
2 per sum) is not timed as GPU idle time. Median of ``--reps`` batches, and
a second median for the simtsafe and raw rows (the spread is the noise).
Every variant's result is checked against numpy once before it is timed.
TF32: CuPy uses TF32 for float32 matmul only when ``CUPY_TF32=1``; this
script sets ``CUPY_TF32=0`` before importing CuPy, so cuBLAS runs plain
FP32 SGEMM (stated in the output).

Each Tier-1 example is imported on its own: one that cannot be imported or
compiled (a missing feature) becomes a row with its error, the others run.

Targets (issue 10): safe/raw >= 0.99 on every kernel; sum >= 90% of
``cupy.sum``; scan >= 80% of ``cupy.cumsum``; transpose and histogram ahead
of CuPy; SGEMM >= 50% of cuBLAS. Results: $OUT (or benchmarks/results)/coop.{json,md,png}.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numba import cuda

os.environ["CUPY_TF32"] = "0"  # plain FP32 cuBLAS (before CuPy is imported anywhere)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_batched, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402

try:
    import cupy as cp
except ImportError:  # the library column is left out
    cp = None

SAFE, RAW, LIB = "simtsafe", "numba raw", "library"


class Bench:
    """Rows of one run: (kernel, impl) -> measurements, or the error that prevented them."""

    def __init__(self, reps: int, smoke: bool = False) -> None:
        self.reps = reps
        self.smoke = smoke  # one call per batch, no warm-up: checks this script, times nothing
        self.rows: list[dict[str, Any]] = []

    def run(
        self,
        kernel: str,
        impl: str,
        make: Callable[[], tuple[Callable[[], None], Callable[[], bool]]],
        *,
        work: float,
        unit: str,
        batch: int,
    ) -> None:
        """``make()`` -> (launch, check); times ``launch`` if ``check`` passes once."""
        row: dict[str, Any] = {"kernel": kernel, "impl": impl, "unit": unit}
        try:
            launch, check = make()
            launch()
            cuda.synchronize()
            row["correct"] = bool(check())
            if self.smoke:
                batch = 1
            warmup = 0 if self.smoke else 3
            t = time_batched(launch, self.reps, batch, warmup)
            row["seconds"] = t
            row["rate"] = work / t / (1e12 if unit == "TFLOP/s" else 1e9)
            if impl in (SAFE, RAW):
                row["seconds_repeat"] = time_batched(launch, self.reps, batch, warmup)
        except Exception as exc:  # a missing feature: report it, keep going
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            traceback.print_exc()
        self.rows.append(row)
        shown = f"{row['rate']:.1f} {unit}" if "rate" in row else row["error"]
        print(f"  {kernel:10s} {impl:28s} {shown}", flush=True)

    def rate(self, kernel: str, impl: str) -> float | None:
        for row in self.rows:
            if row["kernel"] == kernel and row["impl"] == impl and "rate" in row:
                return float(row["rate"])
        return None


def _device() -> str:
    return "the CUDA simulator" if ss.SIMULATOR else device_name()


def _fixed_grid() -> int:
    """Blocks of the fixed-grid kernels (sum, histogram): 8 per SM (2 on the simulator)."""
    if ss.SIMULATOR:
        return 2
    return 8 * int(cuda.get_current_device().MULTIPROCESSOR_COUNT)


def _example(name: str) -> ModuleType:
    return importlib.import_module(name)


def _fresh(shape: Any, dtype: Any, fill: Any) -> Any:
    return cuda.to_device(np.full(shape, fill, dtype))


# ------------------------------------------------------------------ kernels


def bench_sum(b: Bench, log2n: int) -> None:
    n = 1 << log2n
    x_host = np.random.default_rng(1).random(n, dtype=np.float32)
    expected = x_host.astype(np.float64).sum()
    x = cuda.to_device(x_host)
    blocks = _fixed_grid()
    close = lambda v: bool(np.isclose(float(v), expected, rtol=1e-4))  # noqa: E731

    def safe() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("reduce_sum")
        partial, result = _fresh(blocks, np.float32, np.nan), _fresh(1, np.float32, np.nan)
        return ex.make_reduce_sum(x, partial, result), lambda: close(result.copy_to_host()[0])

    def raw() -> tuple[Callable[[], None], Callable[[], bool]]:
        tw = _example("coop_raw")
        partial, result = _fresh(blocks, np.float32, np.nan), _fresh(1, np.float32, np.nan)
        return tw.make_reduce_sum(x, partial, result), lambda: close(result.copy_to_host()[0])

    zero = _fresh(1, np.float32, 0)

    def safe_atomic() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("reduce_sum")
        acc = _fresh(1, np.float32, 0)
        add = ex.make_reduce_sum_atomic(x, acc, blocks)

        def launch() -> None:
            acc.copy_to_device(zero)  # device to device: the zeroing is part of the cost
            add()

        return launch, lambda: close(acc.copy_to_host()[0])

    def raw_atomic() -> tuple[Callable[[], None], Callable[[], bool]]:
        tw = _example("coop_raw")
        acc = _fresh(1, np.float32, 0)

        def launch() -> None:
            acc.copy_to_device(zero)
            tw.reduce_sum_atomic_raw[blocks, tw.REDUCE_BLOCK](acc, x)

        return launch, lambda: close(acc.copy_to_host()[0])

    work = 4.0 * n
    for impl, make in ((SAFE, safe), (RAW, raw)):
        b.run("sum", impl, make, work=work, unit="GB/s", batch=10)
    b.run("sum", "simtsafe, 1 atomic/block", safe_atomic, work=work, unit="GB/s", batch=10)
    b.run("sum", "numba raw, 1 atomic/block", raw_atomic, work=work, unit="GB/s", batch=10)
    if cp is not None:
        cx = cp.asarray(x)
        box: dict[str, Any] = {}

        def lib() -> tuple[Callable[[], None], Callable[[], bool]]:
            return (lambda: box.__setitem__("r", cp.sum(cx))), lambda: close(box["r"].get())

        b.run("sum", TARGETS["sum"][0], lib, work=work, unit="GB/s", batch=10)


def bench_scan(b: Bench, log2n: int) -> None:
    n = 1 << log2n
    x_host = np.random.default_rng(2).integers(0, 4, n, dtype=np.int32)
    expected = np.cumsum(x_host, dtype=np.int32)
    x = cuda.to_device(x_host)

    def make(module: str) -> tuple[Callable[[], None], Callable[[], bool]]:
        out = _fresh(n, np.int32, -1)
        launch = _example(module).make_scan(x, out)
        return launch, lambda: bool(np.array_equal(out.copy_to_host(), expected))

    work = 8.0 * n  # read once + written once: what a single-pass scan moves
    b.run("scan", SAFE, lambda: make("scan"), work=work, unit="GB/s", batch=10)
    b.run("scan", RAW, lambda: make("coop_raw"), work=work, unit="GB/s", batch=10)
    if cp is not None:
        cx = cp.asarray(x)
        cout = cp.empty(n, cp.int32)

        def lib() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: cp.cumsum(cx, dtype=cp.int32, out=cout)  # noqa: E731
            return launch, lambda: bool(np.array_equal(cout.get(), expected))

        b.run("scan", TARGETS["scan"][0], lib, work=work, unit="GB/s", batch=10)


def bench_transpose(b: Bench, n: int) -> None:
    a_host = np.random.default_rng(3).standard_normal((n, n), dtype=np.float32)
    a = cuda.to_device(a_host)
    out = _fresh((n, n), np.float32, np.nan)
    check = lambda: bool(np.array_equal(out.copy_to_host(), a_host.T))  # noqa: E731

    def safe() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("transpose")
        launch = ex.transpose.prepare(grid=ex.grid_for((n, n)), block=(ex.TDIM, ex.TROWS, 1))
        return (lambda: launch(out, a)), check

    def raw(kernel: str) -> Callable[[], tuple[Callable[[], None], Callable[[], bool]]]:
        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            tw = _example("coop_raw")
            k = getattr(tw, kernel)[tw.transpose_grid((n, n)), (tw.TDIM, tw.TROWS)]
            return (lambda: k(out, a)), check

        return make

    work = 8.0 * n * n
    b.run("transpose", SAFE, safe, work=work, unit="GB/s", batch=5)
    b.run("transpose", RAW, raw("transpose_raw"), work=work, unit="GB/s", batch=5)
    padded = "numba raw, padded 32x33"
    b.run("transpose", padded, raw("transpose_padded_raw"), work=work, unit="GB/s", batch=5)
    if cp is not None:
        ca = cp.asarray(a)
        box: dict[str, Any] = {}

        def lib() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: box.__setitem__("r", cp.ascontiguousarray(ca.T))  # noqa: E731
            return launch, lambda: bool(np.array_equal(box["r"].get(), a_host.T))

        b.run("transpose", TARGETS["transpose"][0], lib, work=work, unit="GB/s", batch=5)


def bench_sgemm(b: Bench, n: int) -> None:
    rng = np.random.default_rng(4)
    a_host = rng.standard_normal((n, n), dtype=np.float32)
    b_host = rng.standard_normal((n, n), dtype=np.float32)
    a, bb = cuda.to_device(a_host), cuda.to_device(b_host)
    c = _fresh((n, n), np.float32, np.nan)
    # Reference: float64 on the host for a row sample (a full float64 n^3 product is slow).
    rows = np.random.default_rng(5).choice(n, size=min(n, 64), replace=False)
    ref = a_host[rows].astype(np.float64) @ b_host.astype(np.float64)

    def check_c(got: Any) -> bool:
        return bool(np.allclose(got[rows], ref, rtol=1e-3, atol=1e-2 * np.sqrt(n)))

    def safe() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("sgemm")
        launch = ex.sgemm.prepare(grid=ex.grid_for(n, n), block=(ex.TX, ex.TY, 1))
        return (lambda: launch(c, a, bb)), lambda: check_c(c.copy_to_host())

    def raw() -> tuple[Callable[[], None], Callable[[], bool]]:
        tw = _example("coop_raw")
        k = tw.sgemm_raw[tw.sgemm_grid(n, n), (tw.TX, tw.TY)]
        return (lambda: k(c, a, bb)), lambda: check_c(c.copy_to_host())

    work = 2.0 * n**3
    b.run("sgemm", SAFE, safe, work=work, unit="TFLOP/s", batch=3)
    b.run("sgemm", RAW, raw, work=work, unit="TFLOP/s", batch=3)
    if cp is not None:
        ca, cb = cp.asarray(a), cp.asarray(bb)
        cc = cp.empty((n, n), cp.float32)

        def lib() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: cp.matmul(ca, cb, out=cc)  # noqa: E731
            return launch, lambda: check_c(cc.get())

        b.run("sgemm", TARGETS["sgemm"][0], lib, work=work, unit="TFLOP/s", batch=3)
    if ss.SIMULATOR:
        return  # the raw twin's cp.async runs on a GPU only
    # The fast schedule (issue 20): examples/sgemm_async.py and its raw twin.

    def safe_async() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("sgemm_async")
        launch = ex.sgemm_async.prepare(grid=ex.grid_for(n, n), block=(ex.TX, ex.TY, 1))
        return (lambda: launch(c, a, bb)), lambda: check_c(c.copy_to_host())

    def raw_async() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("sgemm_async")
        k = _example("sgemm_variants").sgemm_async_raw(lb2=True)[ex.grid_for(n, n), (ex.TX, ex.TY)]
        return (lambda: k(c, a, bb)), lambda: check_c(c.copy_to_host())

    b.run("sgemm_async", SAFE, safe_async, work=work, unit="TFLOP/s", batch=3)
    b.run("sgemm_async", RAW, raw_async, work=work, unit="TFLOP/s", batch=3)
    if cp is not None:
        b.run("sgemm_async", TARGETS["sgemm_async"][0], lib, work=work, unit="TFLOP/s", batch=3)


def bench_histogram(b: Bench, log2n: int) -> None:
    n = 1 << log2n
    data_host = np.random.default_rng(6).integers(0, 256, n, dtype=np.uint8)
    expected = np.bincount(data_host, minlength=256)
    data = cuda.to_device(data_host)
    counts = _fresh(256, np.uint32, 0)
    zeros = _fresh(256, np.uint32, 0)  # device to device zeroing, no host round trip
    blocks = _fixed_grid()
    check = lambda: bool(np.array_equal(counts.copy_to_host(), expected))  # noqa: E731

    def safe() -> tuple[Callable[[], None], Callable[[], bool]]:
        ex = _example("histogram")
        launch = ex.histogram.prepare(grid=blocks, block=ex.BLOCK)
        words = ex.as_words(data)

        def run() -> None:
            counts.copy_to_device(zeros)  # an Accumulate output starts at zero
            launch(counts, words, data)

        return run, check

    def raw() -> tuple[Callable[[], None], Callable[[], bool]]:
        tw = _example("coop_raw")
        k = tw.histogram_raw[blocks, tw.HIST_BLOCK]
        words = tw.as_words(data)

        def run() -> None:
            counts.copy_to_device(zeros)
            k(counts, words, data)

        return run, check

    work = 1.0 * n
    b.run("histogram", SAFE, safe, work=work, unit="GB/s", batch=5)
    b.run("histogram", RAW, raw, work=work, unit="GB/s", batch=5)
    if cp is not None:
        cdata = cp.asarray(data)
        box: dict[str, Any] = {}

        def lib() -> tuple[Callable[[], None], Callable[[], bool]]:
            launch = lambda: box.__setitem__("r", cp.bincount(cdata, minlength=256))  # noqa: E731
            return launch, lambda: bool(np.array_equal(box["r"].get(), expected))

        b.run("histogram", TARGETS["histogram"][0], lib, work=work, unit="GB/s", batch=2)


def copy_ceiling(reps: int, log2n: int, batch: int = 5) -> dict[str, float]:
    """GB/s (read + write) of device-to-device copies of 2^log2n floats."""
    n = 1 << log2n
    src = cuda.to_device(np.ones(n, np.float32))
    dst = cuda.device_array(n, np.float32)
    found = {"cuMemcpyDtoD": time_batched(lambda: dst.copy_to_device(src), reps, batch)}
    if cp is not None:
        csrc, cdst = cp.asarray(src), cp.asarray(dst)
        found["cupy.copyto"] = time_batched(lambda: cp.copyto(cdst, csrc), reps, batch)
    return {k: 2 * n * 4 / t / 1e9 for k, t in found.items()}


# ------------------------------------------------------------------ report

TARGETS = {  # kernel -> (library impl, minimum safe rate / library rate, what the issue asks)
    "sum": (LIB + " cupy.sum", 0.90, ">= 90% of cupy.sum"),
    "scan": (LIB + " cupy.cumsum", 0.80, ">= 80% of cupy.cumsum"),
    "transpose": (LIB + " cupy.ascontiguousarray(A.T)", 1.0, "ahead of CuPy"),
    "sgemm": (LIB + " cupy.matmul (cuBLAS, TF32 off)", 0.50, ">= 50% of cuBLAS"),
    "sgemm_async": (LIB + " cupy.matmul (cuBLAS, TF32 off)", 0.70, ">= 70% of cuBLAS"),
    "histogram": (LIB + " cupy.bincount", 1.0, "ahead of CuPy"),
}


def _lib_rate(b: Bench, kernel: str) -> float | None:
    return b.rate(kernel, TARGETS[kernel][0])


def report(b: Bench, copies: dict[str, float], args: argparse.Namespace) -> bool:
    ceiling = max(copies.values())
    lines = [
        f"Block cooperation on {_device()}: simtsafe Tier 1 vs raw Numba twin vs library, "
        f"median of {args.reps} batches (copy ceiling {ceiling:.0f} GB/s read + write: "
        + ", ".join(f"{k} {v:.0f}" for k, v in copies.items())
        + "; CuPy "
        + (f"{cp.__version__}, CUPY_TF32={os.environ['CUPY_TF32']}" if cp else "not installed")
        + ")",
        "",
        "| kernel | impl | time (ms) | repeat (ms) | rate | safe/raw | % of library "
        "| % of copy | matches numpy |",
        "|---|---|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for row in b.rows:
        kernel, impl = row["kernel"], row["impl"]
        if "error" in row:
            lines.append(f"| {kernel} | {impl} | - | - | - | - | - | - | {row['error']} |")
            continue
        raw = b.rate(kernel, RAW)
        lib = b.rate(kernel, TARGETS[kernel][0])
        rate = row["rate"]
        ratio = f"{rate / raw:.3f}" if raw and impl == SAFE else "-"
        of_lib = f"{100 * rate / lib:.1f}" if lib else "-"
        of_copy = f"{100 * rate / ceiling:.1f}" if row["unit"] == "GB/s" else "-"
        rep = row.get("seconds_repeat")
        shown_rep = f"{rep * 1e3:.3f}" if rep is not None else "-"
        lines.append(
            f"| {kernel} | {impl} | {row['seconds'] * 1e3:.3f} | {shown_rep} | "
            f"{rate:.1f} {row['unit']} | {ratio} | {of_lib} | {of_copy} | "
            f"{'yes' if row['correct'] else 'NO'} |"
        )
    lines += ["", "| target | measured | met |", "|---|---:|:---:|"]
    met_all = True
    for kernel, (lib_impl, need, text) in TARGETS.items():
        safe, raw, lib = b.rate(kernel, SAFE), b.rate(kernel, RAW), b.rate(kernel, lib_impl)
        ratio_ok = safe is not None and raw is not None and safe / raw >= 0.99
        lines.append(
            f"| {kernel}: safe/raw >= 0.99 | "
            + (f"{safe / raw:.3f}" if safe and raw else "-")
            + f" | {'yes' if ratio_ok else 'NO'} |"
        )
        lib_ok = safe is not None and lib is not None and safe / lib >= need
        lines.append(
            f"| {kernel}: {text} | "
            + (f"{100 * safe / lib:.1f}%" if safe and lib else "-")
            + f" | {'yes' if lib_ok else 'NO'} |"
        )
        met_all = met_all and ratio_ok and lib_ok
    write_results(
        "coop",
        {
            "device": _device(),
            "cupy": cp.__version__ if cp else None,
            "CUPY_TF32": os.environ["CUPY_TF32"],
            "simtsafe": ss.__version__,
            "reps": args.reps,
            "copy_GBps": copies,
            "rows": b.rows,
        },
        "\n".join(lines),
        bars={
            f"{r['kernel']}/{r['impl']}": 100 * r["rate"] / (_lib_rate(b, r["kernel"]) or r["rate"])
            for r in b.rows
            if "rate" in r
        },
        unit="% of the library's rate (higher is better)",
    )
    return met_all and all(r.get("correct") for r in b.rows)


#: --size: (log2 sum, log2 scan, transpose n, sgemm n, log2 histogram, log2 copy)
SIZES = {
    "full": (28, 26, 16384, 4096, 30, 28),
    "quick": (20, 20, 1024, 512, 22, 24),
    "tiny": (12, 12, 64, 128, 12, 12),  # a smoke test of this script, on the simulator too
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--size", choices=sorted(SIZES), default="full")
    args = parser.parse_args()
    s_sum, s_scan, s_tr, s_gemm, s_hist, s_copy = SIZES[args.size]
    b = Bench(args.reps, smoke=args.size == "tiny")
    print(f"coop benchmark on {_device()} (CUPY_TF32={os.environ['CUPY_TF32']})", flush=True)
    bench_sum(b, s_sum)
    bench_scan(b, s_scan)
    bench_transpose(b, s_tr)
    bench_sgemm(b, s_gemm)
    bench_histogram(b, s_hist)
    copies = copy_ceiling(args.reps, s_copy, batch=1 if b.smoke else 5)
    met = report(b, copies, args)
    print("all targets met" if met else "some targets missed or rows failed: see the table")
    return 0 if all(r.get("correct") for r in b.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
