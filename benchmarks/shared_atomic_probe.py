"""How many shared-memory counter updates a second the GPU makes with no input to read: the
ceiling of a histogram that counts each byte with one shared atomic (examples/histogram_vec.py).

Each probe kernel is the histogram's inner step with its global loads replaced by a value
made in registers (one 32-bit LCG step gives four byte-sized bins): every thread of
``SMs x 6`` blocks of 256 makes ``STEPS x 16`` updates of counter ``bin * 32 + lane`` of a
32 KB shared array (bank ``lane``: no bank conflict, as in the histogram). Variants:

* ``inc``: ``cuda.atomic.add(h, i, 1)`` (a constant 1: the increment instruction the
  histogram's accumulator compiles to);
* ``add``: ``cuda.atomic.add(h, i, one)`` with ``one`` a launch argument (an add of a value);
* ``rmw``: a plain load, add and store of the same counter (not atomic: wrong where two warps
  share a copy; the cost of the memory operations without the atomic unit).

Printed as updates per second, bytes per second at one update per byte (what a histogram of
bytes could reach on this GPU with this step), and that as a share of the read ceiling
measured in the same run (a read-only kernel over 2**30 bytes). Run on the GPU:

    python3 benchmarks/shared_atomic_probe.py [--steps 4096]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import cuda, uint32

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import device_name, out_dir, time_gpu  # noqa: E402

BLOCK = 256
COUNTERS = 256 * 32
PER_SM = 6


KINDS = {"inc": 0, "add": 1, "rmw": 2}


def _probe(kind: str):  # type: ignore[no-untyped-def]
    """A probe kernel: ``steps`` iterations of 16 counter updates a thread."""
    which = KINDS[kind]

    @cuda.jit(lineinfo=False)
    def probe(out, steps, one):  # type: ignore[no-untyped-def]
        h = cuda.shared.array(COUNTERS, uint32)
        t = cuda.threadIdx.x
        for k in range(t, COUNTERS, BLOCK):
            h[k] = 0
        cuda.syncthreads()
        lane = t & 31
        x = uint32(cuda.grid(1) * 2654435761 + 12345)
        for _ in range(steps):
            for _ in range(4):
                x = x * uint32(1664525) + uint32(1013904223)
                for b in range(4):
                    i = ((x >> (8 * b)) & 0xFF) * 32 + lane
                    if which == 0:
                        cuda.atomic.add(h, i, 1)
                    elif which == 1:
                        cuda.atomic.add(h, i, one)
                    else:
                        h[i] += one
        cuda.syncthreads()
        s = uint32(0)
        for k in range(t, COUNTERS, BLOCK):
            s += h[k]
        cuda.atomic.add(out, 0, s)

    return probe


@cuda.jit
def _read(out, words):  # type: ignore[no-untyped-def]
    s = uint32(0)
    for k in range(cuda.grid(1), words.size // 4, cuda.gridsize(1)):
        s ^= words[4 * k] ^ words[4 * k + 1] ^ words[4 * k + 2] ^ words[4 * k + 3]
    if s == 0x9E3779B9:
        out[0] = s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    grid = sms * PER_SM
    out = cuda.to_device(np.zeros(1, np.uint32))
    rows = []
    updates = grid * BLOCK * args.steps * 16
    words = cuda.to_device(np.zeros(2**28, np.uint32))
    sink = cuda.to_device(np.zeros(1, np.uint32))
    read_s = time_gpu(lambda: _read[sms * 8, 512](sink, words), reps=args.reps)
    read_ceiling = 2**30 / read_s
    for kind in KINDS:
        kernel = _probe(kind)

        def launch(kernel=kernel) -> None:  # type: ignore[no-untyped-def]
            kernel[grid, BLOCK](out, np.int32(args.steps), np.uint32(1))

        seconds = time_gpu(launch, reps=args.reps)
        out.copy_to_device(np.zeros(1, np.uint32))
        launch()
        total = int(out.copy_to_host()[0])
        rate = updates / seconds
        rows.append(
            f"| {kind} | {seconds * 1e3:.3f} | {rate / 1e9:.1f} | {rate / 1e9:.1f} | "
            f"{100 * rate / read_ceiling:.1f} | {total == updates % 2**32} |"
        )
    table = "\n".join(
        [
            f"Shared counter updates on {device_name()}: {grid} blocks of {BLOCK}, "
            f"{args.steps * 16} updates a thread; read ceiling {read_ceiling / 1e9:.1f} GB/s "
            "(a read of 2**30 bytes, same run)",
            "",
            "| probe | time (ms) | updates/s (1e9) | GB/s at one update a byte | "
            "% of the read ceiling | count exact |",
            "|---|---:|---:|---:|---:|:---:|",
            *rows,
        ]
    )
    print(table)
    (out_dir() / "shared_atomic_probe.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
