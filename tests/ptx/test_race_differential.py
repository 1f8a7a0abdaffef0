"""The static verdict against simtsafe.sim.check, on generated kernels that write shared memory.

Seeded Tier-1 kernels (tests/kernels/generated_races.py) fill shared tiles through every
witness route and whole-tile fills, read them (own element, by index, runs, helpers), update
and read a shared accumulator, call block and warp collectives and barriers, and write every
kind of output, under uniform and thread-dependent control flow with early exits. Each is
compiled to PTX (the static verdict a user gets, and the compiled form's alone, with the
source-level phase analysis off) and replayed by ``sim.check`` at every launch shape its
contract admits and ``n`` = 0, 1, 2 (tests/kernels/race_differential.py): no kernel either
verdict accepts may race, diverge at a barrier or warp collective, or write out of bounds.
``SIMTSAFE_RACE_KERNELS`` sets the count (the seeds are fixed);
scripts/race_differential.py runs thousands and keeps the figures.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

import pytest

import simtsafe as ss
from tests.kernels.race_differential import run, summarize

pytestmark = [
    pytest.mark.ptx,
    pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler"),
]

#: CI's count (about a second each on a 2-core machine); any count works, the seeds are fixed.
KERNELS = int(os.environ.get("SIMTSAFE_RACE_KERNELS", "30"))
FIRST_SEED = 500_000
#: Seeds of the CI range whose kernel the compiled form refuses for a read of another
#: thread's element in a fill phase, and whose replay races there.
RACY_FILL_READS = (500_001, 500_003, 500_005)


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


@pytest.fixture
def reads_never_clash_with_witness_stores() -> Iterator[None]:
    """A deliberately broken compiled-form rule: every read of a tile counts as the thread's
    own element, so a read of another thread's element no longer clashes with a fill."""
    from simtsafe.verify import _tilephases

    right = _tilephases._clash

    def broken(x: _tilephases.Access, y: _tilephases.Access) -> bool:
        kinds = {x.kind, y.kind}
        if "witness" in kinds and kinds & set(_tilephases.READS):
            return False
        return right(x, y)

    _tilephases._clash = broken
    try:
        yield
    finally:
        _tilephases._clash = right


def test_the_differential_finds_a_broken_rule(reads_never_clash_with_witness_stores: None) -> None:
    outcomes = run(list(RACY_FILL_READS), workers=1)
    found = {o.seed: o.unsound for o in outcomes}
    assert all("race:shared" in broken for broken in found.values()), found
