"""examples/histogram_vec.py in PTX: 16-byte reads, one shared atomic per byte with no bounds
compare left (the counter index is provably below 8192), no local memory."""

from __future__ import annotations

import re

import pytest

from tests.coop_examples import example

pytestmark = pytest.mark.ptx

CC = (9, 0)


def test_one_shared_atomic_per_byte_without_compares() -> None:
    ptx = example("histogram_vec").histogram_vec.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert ".reqntid 256, 1, 1" in ptx
    assert "ld.local" not in body and "st.local" not in body
    loads = re.findall(r"^\s*ld\.global\.v4\.u32", body, re.MULTILINE)
    assert len(loads) == 3  # two per step in the main loop, one in the tail loop
    # 16 + 16 bytes of the main loop, 16 of the tail loop, 4 of a last word, 1 of a last byte
    atomics = re.findall(r"^\s*atom\.shared\.add\.u32", body, re.MULTILINE)
    assert len(atomics) == 53
    # The main loop's 32 atomics follow each other with no compare between them: the index
    # (byte * 32 + lane) is below 8192 by its arithmetic, so the bounds check folded.
    starts = [m.start() for m in re.finditer(r"atom\.shared\.add\.u32", body)][:32]
    for lo, hi in zip(starts, starts[1:], strict=False):
        assert "setp" not in body[lo:hi] and "bra" not in body[lo:hi], body[lo:hi]


def test_candidate_with_four_runs_per_step_keeps_them_in_registers() -> None:
    """benchmarks/primitives.py's candidate: four 16-byte loads per step (one more in the tail
    loop), the 16 words in registers (no local memory), one shared atomic per byte."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import primitives

    body = primitives.histogram_vec_x4.ptx(cc=CC).split(".entry", 1)[1]
    assert "ld.local" not in body and "st.local" not in body
    assert len(re.findall(r"^\s*ld\.global\.v4\.u32", body, re.MULTILINE)) == 5
    # 64 bytes of the main loop, 16 of the tail loop, 4 of a last word, 1 of a last byte
    assert len(re.findall(r"^\s*atom\.shared\.add\.u32", body, re.MULTILINE)) == 85


@pytest.mark.parametrize(
    ("name", "runs", "loads", "atomics"),
    [
        ("histogram_lane_x4", 4, 9, 85),
        ("histogram_lane_x2", 2, 5, 53),
    ],
)
def test_lane_register_candidates_keep_the_bounds_check_folded(
    name: str, runs: int, loads: int, atomics: int
) -> None:
    """The candidates that read the lane from %laneid: ``cuda.laneid & 31`` keeps the counter
    index provably below 8192, so the main loop's atomics follow each other with no compare
    (a bare ``cuda.laneid`` leaves a compare and a branch per byte). Vector loads: ``runs``
    back to back from ``vec.load_runs``, one per run on its fallback path, one in the tail."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import primitives

    body = getattr(primitives, name).ptx(cc=CC).split(".entry", 1)[1]
    assert "ld.local" not in body and "st.local" not in body
    assert "%laneid" in body
    assert len(re.findall(r"^\s*ld\.global\.v4\.u32", body, re.MULTILINE)) == loads
    assert len(re.findall(r"^\s*atom\.shared\.add\.u32", body, re.MULTILINE)) == atomics
    starts = [m.start() for m in re.finditer(r"atom\.shared\.add\.u32", body)][: 16 * runs]
    for lo, hi in zip(starts, starts[1:], strict=False):
        assert "setp" not in body[lo:hi] and "bra" not in body[lo:hi], body[lo:hi]
