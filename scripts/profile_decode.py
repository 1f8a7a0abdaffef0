"""One decode step, launch by launch, inside cuda.profile_start/stop, for Nsight Compute:

    ncu --clock-control none --profile-from-start off --csv --page raw \
        --metrics gpu__time_duration.sum,launch__registers_per_thread,... \
        python3 scripts/profile_decode.py [--config 0.6b] [--context 0]

Seeded weights; a few steps first (warm-up, compiles), then one profiled step.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from numba import cuda

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from decode.model import Decoder  # noqa: E402
from decode.weights import random_weights  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="0.6b")
    p.add_argument("--context", type=int, default=0)
    p.add_argument(
        "--only", default="", help="comma-separated launch names to profile (default: all)"
    )
    a = p.parse_args()
    dec = Decoder(random_weights(a.config), max_len=max(64, a.context + 64))
    dec.set_position(a.context)
    dec.set_token(1)
    for _ in range(3):
        dec.step()
    cuda.synchronize()
    dec.set_position(a.context)
    only = set(filter(None, a.only.split(",")))
    if not only:
        cuda.profile_start()
    for launch in dec.launches:
        if launch.name in only:
            cuda.synchronize()
            cuda.profile_start()
        launch()
        if launch.name in only:
            cuda.synchronize()
            cuda.profile_stop()
    cuda.synchronize()
    if not only:
        cuda.profile_stop()
    for launch in dec.launches:
        print(launch.name, file=sys.stderr)


if __name__ == "__main__":
    main()
