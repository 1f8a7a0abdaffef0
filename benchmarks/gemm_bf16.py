"""bf16 GEMM on tensor cores (issue 20): simtsafe vs its raw twin vs cuBLAS vs Triton, one run.

    python3 benchmarks/gemm_bf16.py [--size full|tiny] [--reps 20]

``c = a @ b`` with ``a`` M x K and ``b`` K x N row-major bf16, fp32 accumulation:

| row | what |
|---|---|
| simtsafe | examples/gemm_bf16.py ``gemm_bf16`` (Tier 1: ``simtsafe.mma``), c float32: 128 x 256 tiles, 64 x 64 warp tiles, four 32-deep cp.async stages in 106 KiB of opt-in shared memory (``tile_shared``) |
| raw | the same schedule, ``numba.cuda.jit`` with inline PTX (``gemm_bf16_raw``), c float32 |
| simtsafe previous schedule, raw previous schedule | 128 x 128 tiles, four 16-deep stages in static shared memory, benchmarks/_gemm_bf16_4x16.py |
| simtsafe 2x32 stages, raw 2x32 stages | the previous schedule (two 32-deep stages), benchmarks/_gemm_bf16_2stage.py |
| torch.matmul (cuBLAS) | ``torch.matmul(a, b)``, bf16 out (cuBLAS' own choice of kernel) |
| triton | a bf16 matmul written here (block 128 x 128 x 32, fp32 accumulation), c float32 |
| simtsafe wgmma, raw wgmma (``--wgmma``) | examples/gemm_bf16_wgmma.py (Tier 1: ``simtsafe.wgmma``) and its raw twin: 128 x 256 x 64 stages, four deep, ``wgmma.m64n256k16`` |
| raw wgmma probe (``--wgmma``) | benchmarks/_gemm_bf16_wgmma.py: ``wgmma.mma_async`` m64n256k16, 128 x 256 x 64 stages (raw, no edges) |

TFLOP/s count ``2 M N K`` per call; "% of cuBLAS" divides by the torch row. Timing:
``_common.time_batched`` (CUDA events around batches, a busy kernel before each batch so
that host enqueueing is not timed). Every row is checked once against a reference
(torch's float32 matmul of the same bf16 values, or numpy at ``tiny``) before it is timed.
torch and Triton are imported lazily: their rows are left out without them.
``--size tiny`` (128 x 64 x 128) is a smoke test that runs on the simulator too (the raw,
torch and Triton rows need a GPU). Results: $OUT (or benchmarks/results)/gemm_bf16.{json,md,png}.
Target (issue 20): simtsafe >= 60% of cuBLAS, simtsafe/raw >= 0.99.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda
from numba import types as numba_types

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, time_batched, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402

SIZES = {"full": (8192, 8192, 8192), "tiny": (128, 64, 128)}
Make = Callable[[], tuple[Callable[[], None], Callable[[], bool]]]


def _triton_matmul() -> Any:
    """A plain Triton bf16 matmul (fp32 accumulation, fp32 out); None without Triton."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # type: ignore[no-untyped-def]
        pid_m = tl.program_id(1)
        pid_n = tl.program_id(0)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(
                a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N),
                other=0.0,
            )
            acc = tl.dot(a, b, acc)
        tl.store(
            c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N)
        )

    def launch(a: Any, b: Any, c: Any) -> None:
        m, k = a.shape
        n = b.shape[1]
        grid = (triton.cdiv(n, 128), triton.cdiv(m, 128))
        kernel[grid](a, b, c, m, n, k, BM=128, BN=128, BK=32, num_warps=8, num_stages=3)

    return launch


def _load(name: str, path: Path) -> Any:
    """A module loaded by path (this script has the example's name)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _example() -> Any:
    """examples/gemm_bf16.py."""
    return _load("gemm_bf16_example", ROOT / "examples" / "gemm_bf16.py")


def _two_stage() -> Any:
    """The schedule before that (two 32-deep stages), benchmarks/_gemm_bf16_2stage.py."""
    return _load("gemm_bf16_2stage", Path(__file__).resolve().parent / "_gemm_bf16_2stage.py")


def _previous() -> Any:
    """The previous schedule (four 16-deep stages), benchmarks/_gemm_bf16_4x16.py."""
    return _load("gemm_bf16_4x16", Path(__file__).resolve().parent / "_gemm_bf16_4x16.py")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=sorted(SIZES), default="full")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument(
        "--current-only", action="store_true", help="skip the previous schedules' rows"
    )
    parser.add_argument(
        "--wgmma",
        action="store_true",
        help="add the raw wgmma probe's rows (benchmarks/_gemm_bf16_wgmma.py), timed last",
    )
    args = parser.parse_args()
    smoke = args.size == "tiny"
    m, k, n = SIZES[args.size]
    g = _example()
    a, b = g.inputs(m, k, n, seed=8192)
    flops = 2.0 * m * n * k
    try:
        import torch

        torch_ok = not ss.SIMULATOR and torch.cuda.is_available()
    except ImportError:
        torch, torch_ok = None, False
    d_a, d_b = g.to_device_bf16(a), g.to_device_bf16(b)
    if torch_ok:
        t_a = torch.as_tensor(d_a.view(np.uint16), device="cuda").view(torch.bfloat16)
        t_b = torch.as_tensor(d_b.view(np.uint16), device="cuda").view(torch.bfloat16)
        ref = torch.matmul(t_a.float(), t_b.float())

        def close(c: Any) -> bool:
            got = torch.as_tensor(c, device="cuda").float()
            return bool(torch.allclose(got, ref, rtol=2e-2, atol=1e-1))
    else:
        want = a.astype(np.float64) @ b.astype(np.float64)

        def close(c: Any) -> bool:
            got = c.copy_to_host() if hasattr(c, "copy_to_host") else np.asarray(c)
            return bool(np.allclose(got, want, rtol=1e-4, atol=1e-3))

    def safe_of(mod: Any) -> Make:
        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            c = cuda.device_array((m, n), np.float32)
            launch = mod.gemm_bf16.prepare(grid=mod.grid_for(m, n), block=mod.BLOCK)
            return (lambda: launch(c, d_a, d_b)), (lambda: close(c))

        return make

    def raw_of(mod: Any) -> Make:
        def make() -> tuple[Callable[[], None], Callable[[], bool]]:
            c = cuda.device_array((m, n), np.float32)
            ra, rb = d_a.view(np.uint16), d_b.view(np.uint16)
            if hasattr(mod, "raw_launcher"):  # over 48 KiB of shared memory: opted in first
                u16 = numba_types.uint16[:, ::1]
                sig = (numba_types.float32[:, ::1], u16, u16)
                kernel = mod.raw_launcher(m, n, sig)
            else:
                kernel = mod.gemm_bf16_raw[mod.grid_for(m, n), mod.BLOCK]
            return (lambda: kernel(c, ra, rb)), (lambda: close(c))

        return make

    def cublas() -> tuple[Callable[[], None], Callable[[], bool]]:
        out = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
        return (lambda: torch.matmul(t_a, t_b, out=out)), (lambda: close(out))

    def triton_row() -> tuple[Callable[[], None], Callable[[], bool]]:
        fn = _triton_matmul()
        if fn is None:
            raise ImportError("triton is not installed")
        out = torch.empty((m, n), dtype=torch.float32, device="cuda")
        return (lambda: fn(t_a, t_b, out)), (lambda: close(out))

    makers: dict[str, Make] = {"simtsafe": safe_of(g)}
    if not ss.SIMULATOR:
        makers["raw"] = raw_of(g)
    if not smoke and not args.current_only:
        previous = _previous()
        makers["simtsafe previous schedule"] = safe_of(previous)
        if not ss.SIMULATOR:
            makers["raw previous schedule"] = raw_of(previous)
        two = _two_stage()
        makers["simtsafe 2x32 stages"] = safe_of(two)
        if not ss.SIMULATOR:
            makers["raw 2x32 stages"] = raw_of(two)
    if torch_ok:
        makers["torch.matmul (cuBLAS)"] = cublas
        makers["triton"] = triton_row
    if args.wgmma and not ss.SIMULATOR and not smoke:
        wg = _load("gemm_bf16_wgmma_example", ROOT / "examples" / "gemm_bf16_wgmma.py")
        makers["simtsafe wgmma"] = safe_of(wg)
        makers["raw wgmma"] = raw_of(wg)
        probe = _load("_gemm_bf16_wgmma", Path(__file__).resolve().parent / "_gemm_bf16_wgmma.py")
        for stages, lag in ((4, 1), (4, 0)):
            makers[f"raw wgmma probe, {stages} stages, {lag} in flight"] = raw_of(
                probe.Probe(stages, lag)
            )
    rows: list[dict[str, Any]] = []
    for impl, make in makers.items():
        row: dict[str, Any] = {"impl": impl}
        try:
            launch, check = make()
            launch()
            cuda.synchronize()
            row["correct"] = check()
            reps, batch = (1, 1) if smoke else (args.reps, 5)
            row["seconds"] = time_batched(launch, reps, batch, warmup=0 if smoke else 3)
            # (the simulator's events do not time anything: 0 there)
            row["tflops"] = flops / row["seconds"] / 1e12 if row["seconds"] > 0 else 0.0
        except Exception as exc:  # a row that fails is reported, the others still run
            row["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        rows.append(row)
    base = next((r.get("tflops") for r in rows if r["impl"].startswith("torch")), None)
    safe_row = next(r for r in rows if r["impl"] == "simtsafe")
    raw_row = next((r for r in rows if r["impl"] == "raw"), None)
    name = "simulator" if ss.SIMULATOR else device_name()
    lines = [
        f"bf16 GEMM {m}x{k}x{n} (c = a @ b, fp32 accumulation) on {name}",
        "",
        "| impl | TFLOP/s | % of cuBLAS | ms | correct |",
        "|---|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['impl']} | error: {r['error'][:80]} | | | |")
            continue
        pct = f"{100 * r['tflops'] / base:.1f}" if base else ""
        r.setdefault("correct", False)
        lines.append(
            f"| {r['impl']} | {r['tflops']:.2f} | {pct} | {1e3 * r['seconds']:.3f} | {r['correct']} |"
        )
    if raw_row and raw_row.get("tflops") and safe_row.get("tflops"):
        lines += ["", f"simtsafe/raw speed: {safe_row['tflops'] / raw_row['tflops']:.3f}"]
    wg_safe = next((r for r in rows if r["impl"] == "simtsafe wgmma"), None)
    wg_raw = next((r for r in rows if r["impl"] == "raw wgmma"), None)
    if wg_safe and wg_raw and wg_safe.get("tflops") and wg_raw.get("tflops"):
        lines.append(f"simtsafe/raw speed, wgmma: {wg_safe['tflops'] / wg_raw['tflops']:.3f}")
    for label in ("previous schedule", "2x32 stages"):
        old_safe = next((r for r in rows if r["impl"] == f"simtsafe {label}"), None)
        old_raw = next((r for r in rows if r["impl"] == f"raw {label}"), None)
        if old_safe and old_raw and old_safe.get("tflops") and old_raw.get("tflops"):
            ratio = old_safe["tflops"] / old_raw["tflops"]
            lines.append(f"simtsafe/raw speed, {label}: {ratio:.3f}")
    payload = {"size": [m, k, n], "device": name, "rows": rows}
    bars = {r["impl"]: r["tflops"] for r in rows if "tflops" in r}
    write_results("gemm_bf16", payload, "\n".join(lines), bars, "TFLOP/s")


if __name__ == "__main__":
    main()
