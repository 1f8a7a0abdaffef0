"""The decode step's GEMVs (examples/decode/gemv.py) alone, on the Qwen3 0.6B and 4B shapes,
for each ``blocks_per_sm`` bound of their registers: GB/s of weights read, against the
device-copy rate measured in the same run.

    python benchmarks/decode_gemv.py [--reps 20] [--shapes 0.6b,4b] [--blocks-per-sm 3]
                                     [--splits 1,2,4,8]

The row marked ``*`` is the split ``gemv.pick_split`` gives the shape (the decode's).

Each launch reads a different copy of its weights (copies enough to pass 160 MB, more than
the H200's 50 MB L2), so a small matrix is read from HBM as in the decode step, not from L2.
Results: $OUT (or benchmarks/results)/decode_gemv.{json,md}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "examples"))  # ahead of benchmarks/decode.py: the package

from _common import device_name, time_batched, write_results  # noqa: E402
from decode import gemv as G  # noqa: E402
from decode.config import CONFIGS  # noqa: E402
from decode.weights import BF16  # noqa: E402

import simtsafe as ss  # noqa: E402


def shapes(name: str) -> list[tuple[str, str, int, int]]:
    """(label, kind, weight rows, input length) of the step's GEMVs for a config."""
    c = CONFIGS[name]
    hdp = -(-c.head_dim // 8) * 8
    return [
        ("qkv", "norm", c.qkv_rows, c.hidden),
        ("o_proj", "residual", c.hidden, c.heads * hdp),
        ("gate_up", "swiglu", 2 * c.inter, c.hidden),
        ("down", "residual", c.hidden, c.inter),
        ("lm_head", "lm_head", c.vocab, c.hidden),
    ]


def copy_rate(nbytes: int) -> float:
    a = cuda.device_array(nbytes // 4, np.float32)
    b = cuda.device_array(nbytes // 4, np.float32)
    t = time_batched(lambda: b.copy_to_device(a), reps=10, batch=5)
    return 2 * nbytes / t


def reference(kind: str, w: np.ndarray, x: np.ndarray, eps: float) -> np.ndarray:
    """The GEMV's outputs in float64 (norm weights of 1, residual of 0)."""
    w64 = w.astype(np.float64)
    x64 = x.astype(np.float64)
    if kind != "residual":
        x64 = x64 / np.sqrt(np.mean(x64 * x64) + eps)
    y = w64 @ x64
    if kind == "swiglu":
        g, u = y[: len(y) // 2], y[len(y) // 2 :]
        y = g / (1 + np.exp(-g)) * u
    return y


def bench(kernel: Any, kind: str, rows: int, k: int, split: int, reps: int) -> tuple[float, float]:
    """Seconds per launch, rotating over weight copies, and the largest error of the outputs
    against ``reference``, relative to their largest magnitude."""
    rng = np.random.default_rng(0)
    one = (rng.standard_normal((rows, k), dtype=np.float32) * 0.02).astype(BF16)
    copies = max(1, -(-160 * 2**20 // one.nbytes)) if not ss.SIMULATOR else 1
    ws = [cuda.to_device(one.view(np.uint16)).view(BF16) for _ in range(copies)]
    x = cuda.to_device(rng.standard_normal(k, dtype=np.float32))
    nw = cuda.to_device(np.ones(k, np.float32))
    out_rows = rows // 2 if kind == "swiglu" else rows
    per = G.rows_per_block(split)
    y = cuda.device_array((out_rows // per, per), np.float32)
    res = cuda.to_device(np.zeros((out_rows // per, per), np.float32))
    nb = G.grid(out_rows, split)
    bval = cuda.device_array(nb, np.float32)
    bidx = cuda.device_array(nb, np.int32)
    launch = kernel.prepare(grid=nb, block=G.BLOCK, shared_mem=4 * k)
    eps = np.float32(1e-6)
    calls = []
    for w in ws:
        if kind == "residual":
            args: tuple[Any, ...] = (y, w, x, res, split)
        elif kind == "lm_head":
            args = (y, bval, bidx, w, x, nw, eps, split)
        else:
            args = (y, w, x, nw, eps, split)
        calls.append(args)
    state = {"i": 0}

    def call() -> None:
        launch(*calls[state["i"] % len(calls)])
        state["i"] += 1

    t = time_batched(call, reps=reps, batch=2 * len(calls))
    launch(*calls[0])
    want = reference(kind, one, x.copy_to_host(), float(eps))
    got = y.copy_to_host().ravel()[: len(want)]
    return t, float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3 if ss.SIMULATOR else 20)
    ap.add_argument("--shapes", default="tiny" if ss.SIMULATOR else "0.6b,4b")
    ap.add_argument("--blocks-per-sm", default=str(G.BLOCKS_PER_SM))
    ap.add_argument("--splits", default=",".join(map(str, G.SPLITS)))
    a = ap.parse_args(argv)
    bw = copy_rate(2**20 if ss.SIMULATOR else 2**30)
    bps_list = [int(b) for b in a.blocks_per_sm.split(",")]
    kernels = {b: G.variants(b) for b in bps_list}
    rows: list[dict[str, Any]] = []
    for cfg in a.shapes.split(","):
        for label, kind, wrows, k in shapes(cfg):
            outputs = wrows // 2 if kind == "swiglu" else wrows
            for b, split in [(b, sp) for b in bps_list for sp in map(int, a.splits.split(","))]:
                if outputs % G.rows_per_block(split):
                    continue
                t, err = bench(kernels[b][kind], kind, wrows, k, split, a.reps)
                gbps = wrows * (-(-k // 8) * 8) * 2 / t / 1e9
                rows.append(
                    {
                        "shape": cfg,
                        "gemv": label,
                        "rows": wrows,
                        "k": k,
                        "blocks_per_sm": b,
                        "split": split,
                        "picked": split == G.pick_split(outputs),
                        "us": t * 1e6,
                        "GBps": gbps,
                        "pct_copy": 100 * gbps * 1e9 / bw,
                        "rel_err": err,
                    }
                )
                print(rows[-1], flush=True)
    head = (
        f"Decode GEMVs (examples/decode/gemv.py) on {device_name()}: weights read once per "
        f"launch from HBM (rotating copies), median of {a.reps} batches; device copy rate "
        f"{bw / 1e9:.0f} GB/s (read + write); each lane reads a batch of {2 * G.RUNS} "
        f"16-byte weight runs with one vec.load_runs (gemv.RUNS = {G.RUNS})\n\n"
        "| shape | GEMV | rows x k | blocks/SM | split | us | GB/s of weights | % of copy rate "
        "| max error / max |y| |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['shape']} | {r['gemv']} | {r['rows']}x{r['k']} | {r['blocks_per_sm']} | "
        f"{r['split']}{' *' if r['picked'] else ''} | "
        f"{r['us']:.2f} | {r['GBps']:.0f} | {r['pct_copy']:.1f} | {r['rel_err']:.1e} |\n"
        for r in rows
    )
    write_results("decode_gemv", {"copy_rate": bw, "runs": G.RUNS, "rows": rows}, head + body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
