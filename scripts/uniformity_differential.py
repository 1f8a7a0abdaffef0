"""The differential of tests/ptx/test_uniformity_differential.py, with the figures kept.

Runs the seeded generated kernels (the CI test's seeds by default), records
for each the compiled-form verdict, the source-level analysis' own verdict
(what decided before the compiled form did) and the replay's, and writes the
counts and the precision before and after to a results file.

    python scripts/uniformity_differential.py [--kernels 2000] [--out benchmarks/results/uniformity_differential.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.kernels.differential import run, summarize  # noqa: E402
from tests.ptx.test_uniformity_differential import FIRST_SEED  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    t0 = time.perf_counter()
    outcomes = run(range(FIRST_SEED, FIRST_SEED + args.kernels), before=True)
    summary = summarize(outcomes)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["command"] = f"python scripts/uniformity_differential.py --kernels {args.kernels}"
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0 if not summary["unsound"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
