"""Cost of one collective: simtsafe's block/warp collectives vs raw Numba twins, in one run.

    python benchmarks/collectives.py [--reps 20]

Each kernel runs a chain of ROUNDS dependent collectives per thread
(``v = collective(v) * c + a[i]``), so the time is the collectives' own
latency, not memory traffic. The raw twins are hand-written
``numba.cuda.jit`` kernels with the schedule simtsafe emits for a contract
with an exact 256-thread block (the same shuffles; two shared buffers
alternating, one barrier per block collective; the fold over the warps
unrolled). Target:
safe/raw >= 0.99. Reported: ns per collective per block (time / ROUNDS /
waves), and the ratio.
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
from simtsafe import DisjointSlice, In, thread  # noqa: E402

BLOCK = 256
ROUNDS = 64
C = np.float32(1e-3)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def block_sum_chain(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    x = a[i]
    v = x
    for _ in range(ROUNDS):
        v = ss.block.sum(v) * C + x
    out[i] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def block_scan_chain(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    x = a[i]
    v = x
    for _ in range(ROUNDS):
        v = ss.block.scan(v) * C + x
    out[i] = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def warp_sum_chain(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    x = a[i]
    v = x
    for _ in range(ROUNDS):
        v = ss.warp.sum(v) * C + x
    out[i] = v


NWARPS = BLOCK // 32


@cuda.jit
def raw_block_sum_chain(out, a):  # type: ignore[no-untyped-def]
    """By hand, the schedule simtsafe emits for an exact 256-thread block: two buffers
    alternating, one barrier per reduction, the fold over the 8 warps unrolled."""
    buf = cuda.shared.array((2, NWARPS), np.float32)
    i = cuda.grid(1)
    x = a[i] if i < a.size else np.float32(0)
    tid = cuda.threadIdx.x
    lane = tid & 31
    v = x
    parity = 0
    for _ in range(ROUNDS):
        w = v
        for off in (16, 8, 4, 2, 1):
            t = cuda.shfl_down_sync(0xFFFFFFFF, w, off)
            if lane + off < 32:
                w += t
        if lane == 0:
            buf[parity, tid >> 5] = w
        cuda.syncthreads()
        s = buf[parity, 0]
        for j in range(1, NWARPS):
            s += buf[parity, j]
        parity ^= 1
        v = s * C + x
    if i < out.size:
        out[i] = v


@cuda.jit
def raw_block_scan_chain(out, a):  # type: ignore[no-untyped-def]
    buf = cuda.shared.array((2, NWARPS), np.float32)
    i = cuda.grid(1)
    x = a[i] if i < a.size else np.float32(0)
    tid = cuda.threadIdx.x
    lane = tid & 31
    warp = tid >> 5
    v = x
    parity = 0
    for _ in range(ROUNDS):
        s = v
        for off in (1, 2, 4, 8, 16):
            t = cuda.shfl_up_sync(0xFFFFFFFF, s, off)
            if lane >= off:
                s += t
        if lane == 31:
            buf[parity, warp] = s
        cuda.syncthreads()
        if warp > 0:
            p = buf[parity, 0]
            for j in range(1, warp):
                p += buf[parity, j]
            s = p + s
        parity ^= 1
        v = s * C + x
    if i < out.size:
        out[i] = v


@cuda.jit
def raw_warp_sum_chain(out, a):  # type: ignore[no-untyped-def]
    i = cuda.grid(1)
    x = a[i] if i < a.size else np.float32(0)
    v = x
    for _ in range(ROUNDS):
        s = v
        for off in (16, 8, 4, 2, 1):
            s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
        v = s * C + x
    if i < out.size:
        out[i] = v


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    grid = sms * 8
    n = grid * BLOCK
    a = cuda.to_device(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    out_safe, out_raw = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    pairs = {
        "block.sum": (block_sum_chain, raw_block_sum_chain),
        "block.scan": (block_scan_chain, raw_block_scan_chain),
        "warp.sum": (warp_sum_chain, raw_warp_sum_chain),
    }
    rows = {}
    for name, (safe, raw) in pairs.items():
        safe_launch = safe.prepare(grid=grid, block=BLOCK)
        raw_launch = raw[grid, BLOCK]
        safe_launch(out_safe, a)
        raw_launch(out_raw, a)
        cuda.synchronize()
        same = bool(np.allclose(out_safe.copy_to_host(), out_raw.copy_to_host(), rtol=1e-5))
        t_safe = time_gpu(lambda s=safe_launch: s(out_safe, a), reps=args.reps)
        t_raw = time_gpu(lambda r=raw_launch: r(out_raw, a), reps=args.reps)
        t_safe2 = time_gpu(lambda s=safe_launch: s(out_safe, a), reps=args.reps)
        waves = grid / sms
        rows[name] = {
            "safe_s": t_safe,
            "safe_repeat_s": t_safe2,
            "raw_s": t_raw,
            "ns_per_collective_per_block_safe": t_safe / ROUNDS / waves * 1e9,
            "ns_per_collective_per_block_raw": t_raw / ROUNDS / waves * 1e9,
            "safe_over_raw_speed": t_raw / t_safe,
            "same_result": same,
        }
    lines = [
        f"Collectives on {device_name()}: chains of {ROUNDS} per thread, block {BLOCK}, "
        f"grid {grid} ({grid // sms} blocks per SM), median of {args.reps}",
        "",
        "| collective | safe (ms) | repeat (ms) | raw (ms) | ns/collective/block safe | raw "
        "| safe/raw speed | same result |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['safe_s'] * 1e3:.3f} | {r['safe_repeat_s'] * 1e3:.3f} | "
            f"{r['raw_s'] * 1e3:.3f} | {r['ns_per_collective_per_block_safe']:.1f} | "
            f"{r['ns_per_collective_per_block_raw']:.1f} | {r['safe_over_raw_speed']:.3f} | "
            f"{'yes' if r['same_result'] else 'NO'} |"
        )
    write_results(
        "collectives",
        {"device": device_name(), "rounds": ROUNDS, "block": BLOCK, "grid": grid, "rows": rows},
        "\n".join(lines),
        bars={k: v["safe_over_raw_speed"] for k, v in rows.items()},
        unit="safe/raw speed",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
