"""examples/histogram_vec.py in PTX: 16-byte reads, one shared atomic per byte with no bounds
compare left (the counter index is provably below 8192), no local memory."""

from __future__ import annotations

import re

import pytest

from tests.coop_examples import example
from tests.ptx.ptx_text import (
    control_flow,
    count,
    fast_path,
    loops,
    on_every_iteration,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)

ATOMIC = r"atom\.shared\.add\.u32"
V4 = r"ld\.global\.v4\.u32"


def _atomics_per_byte(ptx: str) -> list[int]:
    """Check that every loop runs one shared atomic per byte it reads, all in one block with
    no compare among them (the counter index is provably below 8192), run on every way
    around the loop; and that the 5 atomics outside loops are those of the last word and
    the last byte. Returns the vector loads of each atomic loop's fast path (LLVM may keep
    several copies of a loop -- unswitched on the input's alignment, which is tested once
    -- each is checked on its own: the count of atomics a byte does not depend on them)."""
    blocks = control_flow(ptx)
    in_loops, runs = 0, []
    for loop in loops(blocks):
        held = [v for v in loop if count(blocks, [v], ATOMIC)]
        if not held:
            continue
        assert len(held) == 1, held  # no branch among them
        (at,) = held
        assert on_every_iteration(blocks, loop, at)
        instrs = blocks[at].instrs
        marks = [n for n, i in enumerate(instrs) if re.match(ATOMIC, i)]
        assert not any(i.startswith("setp") for i in instrs[marks[0] : marks[-1]])
        vectors = count(blocks, fast_path(blocks, loop, V4), V4)
        # the words one iteration reads: 4 a vector load, else (a copy of the loop for a
        # misaligned input) one guarded scalar load a word
        words = 4 * vectors if vectors else count(blocks, loop, r"ld\.global\.u32")
        assert len(marks) == 4 * words, (len(marks), words)
        in_loops += len(marks)
        runs.append(vectors)
    assert count(blocks, range(len(blocks)), ATOMIC) - in_loops == 4 + 1
    return runs


def test_one_shared_atomic_per_byte_without_compares() -> None:
    ptx = example("histogram_vec").histogram_vec.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert ".reqntid 256, 1, 1" in ptx
    assert "ld.local" not in body and "st.local" not in body
    assert set(re.findall(r"^\s*ld\.global\.(v\d\.\w+)", body, re.MULTILINE)) == {"v4.u32"}
    # four 16-byte runs a step in the main loop's fast path (the step's words in registers:
    # no local memory), one in the tail loop's
    runs = _atomics_per_byte(ptx)
    assert max(runs) == 4 and 1 in runs, runs


def test_two_runs_candidate() -> None:
    """benchmarks/primitives.py's candidate with two runs per step (the example before): two
    16-byte loads a step, one in the tail loop, one shared atomic per byte."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import primitives

    ptx = primitives.histogram_vec_2runs.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert "ld.local" not in body and "st.local" not in body
    runs = _atomics_per_byte(ptx)
    assert max(runs) == 2 and 1 in runs, runs


def test_flat_candidate_keeps_the_bounds_check_folded() -> None:
    """benchmarks/primitives.py's flat-bins candidate (the example before 2D accumulators):
    the counter ``b * 32 + lane`` is provably below 8192, so its atomics follow each other
    with no compare, one per byte, two vector loads a step."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import primitives

    ptx = primitives.histogram_flat.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert "ld.local" not in body and "st.local" not in body
    runs = _atomics_per_byte(ptx)
    assert max(runs) == 2 and 1 in runs, runs
