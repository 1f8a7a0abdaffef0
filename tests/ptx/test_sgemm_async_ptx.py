"""examples/sgemm_async.py on the real target (NVVM, no GPU), against its raw twin in
benchmarks/sgemm_variants.py: the cp.async fills, 16-byte shared reads, registers only, and
the loop's shape: two 16-deep stages per iteration, one barrier each, each stage's 16 ``k``
one straight run of 64 ``ld.shared.v4`` and 1024 FMAs (no inner loop)."""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest
from numba import cuda, types

from tests.coop_examples import example

pytestmark = pytest.mark.ptx

CC = (9, 0)
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx.split(".entry", 1)[1]))


@cache
def safe() -> str:
    return str(example("sgemm_async").sgemm_async.ptx(cc=CC))


@cache
def raw() -> str:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import sgemm_variants
    finally:  # benchmarks/ shadows examples of the same name (gemm_bf16) for later tests
        sys.path.remove(str(BENCHMARKS))

    kernel = sgemm_variants.sgemm_async_raw(lb2=False)
    sig = (types.float32[:, ::1], types.float32[:, ::1], types.float32[:, ::1])
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC)
    return str(ptx)


def test_fills_are_cp_async_and_transposed_vector_loads() -> None:
    ptx = safe()
    assert count(ptx, r"cp\.async\.cg\.shared\.global") >= 5  # prologue + 2 runs x 2 stages
    assert count(ptx, r"cp\.async\.wait_group 0;") == 2  # one wait per stage
    assert count(ptx, r"cp\.async\.wait_group [1-7];") == 0
    assert count(ptx, r"ld\.global(?:\.nc)?\.v4\.f32") >= 5  # A rows, 2 x 16 bytes per stage
    assert ".minnctapersm 2" in ptx


def stages(ptx: str) -> list[str]:
    """The kernel's code between its barriers: [prologue, stage a0/b0, stage a1/b1 + rest]."""
    return re.split(r"bar(?:rier)?\.sync", ptx.split(".entry", 1)[1])


def test_one_barrier_per_stage_and_each_stage_is_one_straight_run() -> None:
    ptx = safe()
    parts = stages(ptx)
    assert len(parts) == 3  # two barriers in the whole kernel: one per stage of the loop
    for part in parts[1:]:
        assert len(re.findall(r"ld\.shared\.v4\.f32", part)) == 64  # 16 k x 4 runs
        assert len(re.findall(r"fma\.rn\.f32", part)) == 1024  # 16 k x 64
    # The reads and FMAs of a stage are not a loop: no branch at all between its first
    # shared read and its last FMA (the ``k`` written out, every bound folded).
    for part in parts[1:]:
        body = part[part.index("ld.shared.v4") : part.rindex("fma.rn.f32")]
        assert re.search(r"\bbra\b", body) is None


def test_inner_loops_are_4_shared_vector_loads_per_64_fmas_in_registers() -> None:
    ptx = safe()
    assert count(ptx, r"ld\.shared\.v4\.f32") == 128  # two stages x 16 k x 4 runs
    assert count(ptx, r"ld\.shared\.f32") == 0  # no checked element path: runs are aligned
    assert count(ptx, r"fma\.rn\.f32") == 2048
    assert count(ptx, r"(?:ld|st)\.local") == 0


def test_the_raw_twin_has_the_same_shared_reads_fmas_and_barriers() -> None:
    r = raw()
    assert count(r, r"ld\.shared\.v4\.f32") == count(safe(), r"ld\.shared\.v4\.f32")
    assert count(r, r"fma\.rn\.f32") == count(safe(), r"fma\.rn\.f32")
    assert count(r, r"cp\.async\.cg\.shared\.global") >= 5
    assert count(r, r"cp\.async\.wait_group 0;") == 2
    assert len(stages(r)) == len(stages(safe())) == 3
