"""What the compiled-form check costs at a kernel's first compile (CPU, no GPU).

For every kernel of the examples, the first ``ptx()`` (Numba's typing and
lowering, NVVM, and the compiled-form check) is timed, and the check's own
share -- linking and normalizing the IR in llvmlite, parsing it, the
divergence analysis and the verdict -- is timed inside it, and within that the
tile phase check's (``verify._tilephases``: it runs on the form the verdict
already built). Target (issue 16): the check costs at most 15% of the first
compile without it.

    python benchmarks/compiled_form_cost.py [--out benchmarks/results/compiled_form_cost.md]
"""

from __future__ import annotations

import argparse
import importlib
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import simtsafe as ss  # noqa: E402
from simtsafe import _compose  # noqa: E402

EXAMPLES = [
    "vecadd",
    "saxpy",
    "jacobi",
    "matmul",
    "block_sumsq",
    "reduce_sum",
    "scan",
    "transpose",
    "sgemm",
    "sgemm_async",
    "histogram",
    "heat3d",
    "monte_carlo_pi",
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    spent = [0.0]
    original = _compose.check_kernel_ir

    def timed(*a: object, **k: object) -> object:
        t0 = time.perf_counter()
        try:
            return original(*a, **k)  # type: ignore[arg-type]
        finally:
            spent[0] += time.perf_counter() - t0

    _compose.check_kernel_ir = timed  # type: ignore[assignment]

    from simtsafe.verify import _verdict

    tiles = [0.0]
    tile_check = _verdict.check_tile_phases

    def timed_tiles(*a: object, **k: object) -> None:
        t0 = time.perf_counter()
        try:
            tile_check(*a, **k)  # type: ignore[arg-type]
        finally:
            tiles[0] += time.perf_counter() - t0

    _verdict.check_tile_phases = timed_tiles  # type: ignore[assignment]
    rows = []
    warm = importlib.import_module("vecadd")
    next(v for v in vars(warm).values() if isinstance(v, ss.Kernel)).ptx()  # Numba's own warm-up
    for name in EXAMPLES:
        mod = importlib.import_module(name)
        for attr, obj in sorted(vars(mod).items()):
            if not isinstance(obj, ss.Kernel) or obj.typevars or obj._build is not None:
                continue
            spent[0] = tiles[0] = 0.0
            t0 = time.perf_counter()
            obj.ptx()
            total = time.perf_counter() - t0
            check = spent[0]
            rows.append((f"{name}.{attr}", total - check, check, check / (total - check), tiles[0]))
    ratios = [r[3] for r in rows]
    lines = [
        f"# Compiled-form check: cost at the first compile ({platform.node()}, "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()})",
        "",
        "Command: `python benchmarks/compiled_form_cost.py` (one process; Numba warmed up on "
        "vecadd first; each kernel's first `ptx()`).",
        "",
        "| kernel | compile without the check (ms) | check (ms) | check / compile "
        "| of which tile phases (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, compile_s, check_s, ratio, tile_s in rows:
        lines.append(
            f"| {name} | {compile_s * 1e3:.1f} | {check_s * 1e3:.1f} | {ratio:.1%} "
            f"| {tile_s * 1e3:.1f} |"
        )
    lines += [
        "",
        f"Median check / compile: {statistics.median(ratios):.1%}; largest: {max(ratios):.1%}; "
        f"sum over all kernels: {sum(r[2] for r in rows) / sum(r[1] for r in rows):.1%} "
        f"(target: at most 15%).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
