"""The race differential of tests/ptx/test_race_differential.py, over many seeds, with the
figures kept.

Runs the seeded generated kernels that write shared memory (tests/kernels/generated_races.py):
for each, the static verdict (decoration and NVVM compile, as a user gets it), the
compiled form's alone (the source-level phase analysis off) and the replay's over every
launch shape and ``n`` (tests/kernels/race_differential.py); writes the counts, every
unsound acceptance and the false refusals by rule to a JSON file, and every outcome beside
it (``<out>.outcomes.json``). Races the replay reports on a read the compiled code does
not make (a read LLVM dropped as dead: ``race:dead``) are no unsound acceptance; they are
counted apart (``dead_races``).

    python scripts/race_differential.py OUT.json [--kernels 2000] [--first-seed 500000]
        [--workers 2]

Exit status 1 when a statically accepted kernel breaks a promise when replayed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.kernels.race_differential import as_json, run, summarize  # noqa: E402
from tests.ptx.test_race_differential import FIRST_SEED  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the JSON summary to write")
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    t0 = time.perf_counter()
    seeds = range(args.first_seed, args.first_seed + args.kernels)
    outcomes = run(seeds, workers=args.workers, progress=True)
    summary = summarize(outcomes)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["command"] = (
        f"python scripts/race_differential.py {args.out} --kernels {args.kernels} "
        f"--first-seed {args.first_seed}"
    )
    text = json.dumps(summary, indent=2)
    print(text)
    args.out.write_text(text + "\n")
    detail = args.out.with_suffix(".outcomes.json")
    detail.write_text(json.dumps(as_json(outcomes), indent=1) + "\n")
    return 0 if not summary["unsound"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
