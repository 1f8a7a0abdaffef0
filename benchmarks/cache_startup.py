"""Process start to first launch, with and without the on-disk cache (GPU).

Each measurement is a fresh Python process (the wall time the parent sees:
interpreter start, imports, decoration, compile or cache load, the checks,
one launch, synchronize). Three cases per kernel, each repeated: ``cache``
off; ``cache=True`` with an empty cache directory (cold: compile and store);
``cache=True`` again (warm: load, compile nothing). The kernels are the SGEMM
and block-reduction examples, decorated again with ``cache=True``.

    python benchmarks/cache_startup.py [--repeat 3] [--out benchmarks/results/cache_startup.md]

``--ptx`` measures the path without a GPU instead: process start to the
kernel's first ``ptx()`` (compile and checks, or a cache load), on the CPU.

    python benchmarks/cache_startup.py --ptx --out benchmarks/results/cache_startup_ptx.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = r"""
import sys
sys.path.insert(0, {examples!r})
import numpy as np
from numba import cuda
import simtsafe as ss
import {module} as ex
k = ss.kernel(contract=ex.{kernel}.contract, cache={cache})(ex.{kernel}.py_func)
{launch}
cuda.synchronize()
"""

LAUNCH = {
    "sgemm": (
        "a = cuda.to_device(np.ones((512, 512), np.float32))\n"
        "b = cuda.to_device(np.ones((512, 512), np.float32))\n"
        "c = cuda.to_device(np.zeros((512, 512), np.float32))\n"
        "k.prepare(grid=ex.grid_for(512, 512), block=(ex.TX, ex.TY))(c, a, b)\n"
    ),
    "reduce_sum": (
        "x = cuda.to_device(np.ones(1 << 20, np.float32))\n"
        "out = cuda.to_device(np.zeros(264, np.float32))\n"
        "k.prepare(grid=264, block=ex.BLOCK)(out, x)\n"
    ),
}
KERNELS = {"sgemm": "sgemm", "reduce_sum": "reduce_sum"}

#: The CPU path: the first ``ptx()`` in place of the launch (no device is touched).
PTX_PROGRAM = r"""
import sys
sys.path.insert(0, {examples!r})
import simtsafe as ss
import {module} as ex
k = ss.kernel(contract=ex.{kernel}.contract, cache={cache})(ex.{kernel}.py_func)
assert k.ptx()
"""


def _time(module: str, cache: bool, cache_dir: Path, *, ptx: bool = False) -> float:
    program = (PTX_PROGRAM if ptx else PROGRAM).format(
        examples=str(ROOT / "examples"),
        module=module,
        kernel=KERNELS[module],
        cache=cache,
        launch=LAUNCH[module],
    )
    env = {**os.environ, "SIMTSAFE_CACHE_DIR": str(cache_dir)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", program], env=env, check=True, cwd=ROOT)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--ptx", action="store_true", help="first ptx() on the CPU, no GPU")
    args = parser.parse_args()
    if args.ptx:
        device, what = f"CPU, {os.cpu_count()} cores, no GPU", "first ptx()"
    else:
        from numba import cuda

        device = cuda.get_current_device().name
        device = device.decode() if isinstance(device, bytes) else device
        what = "first launch"
    rows = []
    for module in LAUNCH:
        off, cold, warm = [], [], []
        for _ in range(args.repeat):
            folder = Path(tempfile.mkdtemp(prefix="ss_cache_bench_"))
            try:
                off.append(_time(module, False, folder, ptx=args.ptx))
                cold.append(_time(module, True, folder, ptx=args.ptx))
                warm.append(_time(module, True, folder, ptx=args.ptx))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        rows.append(
            (module, statistics.median(off), statistics.median(cold), statistics.median(warm))
        )
    lines = [
        f"# Process start to {what} ({device}), median of {args.repeat}",
        "",
        f"Command: `python benchmarks/cache_startup.py{' --ptx' if args.ptx else ''}` "
        "(each figure: a fresh process, wall time).",
        "",
        "| kernel | cache off (s) | cache=True, cold (s) | cache=True, warm (s) | warm / off |",
        "|---|---:|---:|---:|---:|",
    ]
    for module, off_s, cold_s, warm_s in rows:
        lines.append(
            f"| {module} | {off_s:.2f} | {cold_s:.2f} | {warm_s:.2f} | {warm_s / off_s:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
