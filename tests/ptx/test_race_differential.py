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
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.generated_races import SIGNATURE
from tests.kernels.race_differential import (
    check_source,
    compiled_form_only,
    launch_args,
    run,
    summarize,
)

pytestmark = [
    pytest.mark.ptx,
    pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler"),
]

#: CI's count (about a second each on a 2-core machine); any count works, the seeds are fixed.
KERNELS = int(os.environ.get("SIMTSAFE_RACE_KERNELS", "30"))
FIRST_SEED = 500_000
#: Seeds whose kernel opens with a planted fill read (tests/kernels/generated_races.py,
#: ``PLANTED``; three routes: a 2D tile's own-element fill, a block_stride walk, a
#: local_index() witness into a dynamic tile) and whose rest the compiled form
#: accepts: the compiled form refuses them only for the clash of the read with the fill,
#: and their replay races there. (500_005 is in the CI range.)
RACY_FILL_READS = (500_005, 500_038, 500_098)


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
    # A planted fill read is refused by the compiled form for its clash, and races.
    for o in outcomes:
        if o.seed in RACY_FILL_READS:
            assert o.compiled == "refused:tile-phase", o
            assert "race:shared" in o.dynamic, o


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
    found = {o.seed: (o.static, o.compiled, o.unsound) for o in outcomes}
    # The compiled form alone accepts what the broken rule lets through, and the replay
    # shows the race; the user's verdict still refuses, by the source-level phase analysis:
    # what the differential finds is the compiled form's broken rule.
    assert all(
        static == "refused:tile-phase" and compiled == "accepted" and "race:shared" in broken
        for static, compiled, broken in found.values()
    ), found


# --------------------------------------------------------------------------- pinned cases
#
# Kernels the differential found, minimized. Each runs through the same runner
# (check_source): the static verdicts and the replays at the contract's shapes.

_SIGNATURE = SIGNATURE  # the generated kernels' parameters, as the runner passes them
_SHAPES = ((1, 64),)

#: A read of another thread's element in a fill phase whose value is never used: LLVM drops
#: the load, so the compiled form (rightly: the compiled code reads nothing) accepts it, and
#: the source-level phase analysis refuses it (docs/safety.md, "Decided twice": "a read LLVM
#: removes as dead" is left to the source analysis). The replay runs the source and reports
#: the race of the read that the GPU never makes; the runner tells it by the analysed IR,
#: which has no shared load at that line: ``race:dead``, not an unsound acceptance. Found by
#: the differential (seeds 501142, 501315, 500575 of earlier generator versions, which
#: overwrote variables).
DEAD_READ = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k({_SIGNATURE}) -> None:
    i = thread.index_1d()
    lw = thread.local_index()
    T = ss.shared.tile(64, np.int32)
    T[lw] = 1
    ss.block.sync()
    x = T[(cuda.threadIdx.x + 1) % 64]
    T[lw] = 2
    x = n
    out[i] = np.float32(x)
"""


def test_a_dead_read_is_refused_by_the_source_analysis(tmp_path: Path) -> None:
    o = check_source(1, DEAD_READ, "block64", _SHAPES, [], tmp_path)
    assert (o.static, o.compiled) == ("refused:tile-phase", "accepted"), o
    # the replay's race is on the read the compiled code does not make: race:dead, which
    # breaks no promise (the compiled form accepts, and is right to)
    assert "race:dead" in o.dynamic and "race:shared" not in o.dynamic, o
    assert o.unsound == [], o
    assert "15: x = T[(cuda.threadIdx.x + 1) % 64]" in o.details[0], o.details
    live = DEAD_READ.replace("    x = n\n", "    x = x + n\n")
    o = check_source(2, live, "block64", _SHAPES, [], tmp_path)
    assert (o.static, o.compiled) == ("refused:tile-phase", "refused:tile-phase"), o
    assert "race:shared" in o.dynamic and "race:dead" not in o.dynamic, o
    # Only a read is judged dead: the replay lands an asynchronous fill's writes at the
    # wait, whose line has no store in the compiled code (found at seed 500559).
    o = check_source(3, ASYNC_FILL_READ, "block64", _SHAPES, [], tmp_path)
    assert (o.static, o.compiled) == ("refused:tile-phase", "refused:tile-phase"), o
    assert "race:shared" in o.dynamic and "race:dead" not in o.dynamic, o
    assert "ss.shared.wait_all()" in o.details[0], o.details


#: A read of another thread's element while an asynchronous fill of the tile is in flight.
ASYNC_FILL_READ = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["a.size >= 64"]))
def k({_SIGNATURE}) -> None:
    i = thread.index_1d()
    T = ss.shared.tile(64, np.int32)
    ss.shared.fill_async(T, a, 0)
    ss.shared.commit_group()
    x = T[(cuda.threadIdx.x + 1) % 64]
    ss.shared.wait_all()
    out[i] = np.float32(x + n)
"""


#: A block collective that part of the block skips (an early return) is a divergent barrier,
#: as a plain block.sync() there is. (sim.check used to raise a SafetyError about the
#: collective's argument instead, "block.max(v) takes a number ...; got Poison": the
#: exchange slot of the thread that left was read as its value.)
COLLECTIVE_AFTER_EXIT = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k({_SIGNATURE}) -> None:
    i = thread.index_1d()
    if cuda.threadIdx.x == 0:
        return
    x = ss.block.max(n)
    out[i] = np.float32(x)
"""

#: The same for a warp collective: lanes that leave a loop of thread-dependent trip count
#: early are named in the masks of the others' later calls. sim.check reports `warp_mask`
#: and goes on (it used to read the slots those lanes never wrote as their states, and raise
#: "the threads passed states of different shapes (int and tuple(int64, int64))"; found by
#: the differential, seed 500015).
WARP_COLLECTIVE_AFTER_EXIT = f"""
from tests.kernels.generated_race_helpers import h_pair


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k({_SIGNATURE}) -> None:
    i = thread.index_1d()
    x = n
    for q in range(cuda.threadIdx.x % 3):
        p0, p1 = ss.warp.reduce((np.int64(n), np.int64(q)), h_pair)
        x = x + p0 + p1
    out[i] = np.float32(x)
"""

#: A shared accumulator read at an index that is undefined (a tile element nobody wrote) is
#: an `uninitialized` use, and the replay goes on, as a tile read at that index (docs/
#: checker.md: an index is a use). (sim.check used to raise a SafetyError, "a shared
#: accumulator is read with an int ...; got Poison", and lose the replay's other findings.)
ACCUMULATOR_READ_AT_UNDEFINED = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k({_SIGNATURE}) -> None:
    i = thread.index_1d()
    T = ss.shared.tile(64, np.int32)
    B = ss.shared.accumulator(16, np.int32)
    ss.block.sync()
    x = B[T[(cuda.threadIdx.x + 1) % 64] % 16]
    out[i] = np.float32(x)
"""


def _replay(tmp_path: Path, source: str) -> ss.sim.CheckReport:
    kernel = load_kernel_module(tmp_path, source).k
    return ss.sim.check(kernel, 1, 64, *launch_args(1, 64, 1))


def test_sim_reports_a_collective_after_an_exit_as_barrier_divergence(tmp_path: Path) -> None:
    report = _replay(tmp_path, COLLECTIVE_AFTER_EXIT)
    (found,) = report.findings
    assert found.kind == "barrier_divergence", report
    assert "exited (line 12) while" in found.message, report
    # the twin: every thread reaches the collective
    report = _replay(
        tmp_path, COLLECTIVE_AFTER_EXIT.replace("        return\n", "        n = n + 1\n")
    )
    assert report.ok, report


def test_sim_reports_a_warp_collective_after_an_exit_as_a_warp_mask(tmp_path: Path) -> None:
    report = _replay(tmp_path, WARP_COLLECTIVE_AFTER_EXIT)
    assert {f.kind for f in report.findings} == {"warp_mask"}, report
    # the twin: a loop every lane runs as often
    uniform = WARP_COLLECTIVE_AFTER_EXIT.replace("range(cuda.threadIdx.x % 3)", "range(n + 1)")
    assert _replay(tmp_path, uniform).ok


def test_sim_reports_a_collective_of_a_wrong_type_after_an_exit_as_an_error(tmp_path: Path) -> None:
    # Only the slots of threads that never came are filled in: a value of a wrong type that
    # a thread passed stays the caller's error (here: a tuple to block.max).
    bad = COLLECTIVE_AFTER_EXIT.replace("ss.block.max(n)", "ss.block.max((n, n))")
    with pytest.raises(ss.SafetyError, match=r"block\.max\(v\) takes a number"):
        _replay(tmp_path, bad)


def test_sim_reports_an_accumulator_read_at_an_undefined_index(tmp_path: Path) -> None:
    report = _replay(tmp_path, ACCUMULATOR_READ_AT_UNDEFINED)
    (found,) = report.findings
    assert found.kind == "uninitialized", report
    assert "used as an index of a shared accumulator at line 14" in found.message, report
    # and the replay goes on: a race after the read (another tile's) is still reported
    racy = ACCUMULATOR_READ_AT_UNDEFINED.replace(
        "    out[i] = np.float32(x)\n",
        "    S = ss.shared.tile(64, np.int32)\n"
        "    S[thread.local_index()] = 1\n"
        "    out[i] = np.float32(x + S[(cuda.threadIdx.x + 1) % 64])\n",
    )
    with compiled_form_only():  # (the source-level phase analysis refuses the racy twin)
        report = _replay(tmp_path, racy)
    assert {f.kind for f in report.findings} == {"uninitialized", "race"}, report
    # the twin: the tile written before the barrier, nothing undefined
    written = ACCUMULATOR_READ_AT_UNDEFINED.replace(
        "    ss.block.sync()\n", "    T[thread.local_index()] = 3\n    ss.block.sync()\n"
    )
    assert _replay(tmp_path, written).ok
