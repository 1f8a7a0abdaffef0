"""The static verdict against simtsafe.sim.check, on generated kernels that write shared memory.

Seeded Tier-1 kernels (tests/kernels/generated_races.py) fill shared tiles through every
witness route and whole-tile fills, read them (own element, by index, runs, helpers), update
and read a shared accumulator, call block and warp collectives and barriers, and write every
kind of output, under uniform and thread-dependent control flow with early exits. Each is
compiled to PTX (the static verdict a user gets, and the compiled form's alone) and replayed
by ``sim.check`` at every launch shape its contract admits and ``n`` = 0, 1, 2
(tests/kernels/race_differential.py): no kernel accepted statically may race, diverge at a
barrier or warp collective, or write out of bounds. ``SIMTSAFE_RACE_KERNELS`` sets the count
(the seeds are fixed); scripts/race_differential.py runs thousands and keeps the figures.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

import simtsafe as ss
from tests.kernels.race_differential import run, summarize

pytestmark = [
    pytest.mark.ptx,
    pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler"),
]

KERNELS = int(os.environ.get("SIMTSAFE_RACE_KERNELS", "40"))
FIRST_SEED = 500_000


def test_no_kernel_accepted_statically_races_dynamically() -> None:
    outcomes = run(range(FIRST_SEED, FIRST_SEED + KERNELS), workers=1)
    summary = summarize(outcomes)
    print(summary)
    assert summary["unsound"] == [], summary["unsound"]
    # The generator reaches both sides: accepted kernels, and refused ones that race.
    counts = Counter(o.static for o in outcomes)
    assert counts["accepted"] > KERNELS // 10, summary["counts"]
    racy_refused = sum(
        1
        for o in outcomes
        if o.static != "accepted" and any(k.startswith("race") for k in o.dynamic)
    )
    assert racy_refused > KERNELS // 20, summary["counts"]
