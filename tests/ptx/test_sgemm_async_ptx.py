"""examples/sgemm_async.py on the real target (NVVM, no GPU), against its raw twin in
benchmarks/sgemm_variants.py: the cp.async fills, 16-byte shared reads, registers only."""

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
    import sgemm_variants

    kernel = sgemm_variants.sgemm_async_raw(lb2=False)
    sig = (types.float32[:, ::1], types.float32[:, ::1], types.float32[:, ::1])
    ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC)
    return str(ptx)


def test_fills_are_cp_async_and_transposed_vector_loads() -> None:
    ptx = safe()
    assert count(ptx, r"cp\.async\.cg\.shared\.global") >= 3  # prologue + two stages
    assert count(ptx, r"cp\.async\.wait_group 1;") == 2
    assert count(ptx, r"ld\.global(?:\.nc)?\.v4\.f32") >= 3  # A rows, 16 bytes per thread
    assert ".minnctapersm 2" in ptx


def test_inner_loops_are_4_shared_vector_loads_per_64_fmas_in_registers() -> None:
    ptx = safe()
    assert count(ptx, r"ld\.shared\.v4\.f32") == 8  # two stages x 4 runs per k
    assert count(ptx, r"ld\.shared\.f32") == 0  # no checked element path: runs are aligned
    assert count(ptx, r"fma\.rn\.f32") == 128
    assert count(ptx, r"(?:ld|st)\.local") == 0


def test_the_raw_twin_has_the_same_shared_reads_and_fmas() -> None:
    r = raw()
    assert count(r, r"ld\.shared\.v4\.f32") == count(safe(), r"ld\.shared\.v4\.f32")
    assert count(r, r"fma\.rn\.f32") == count(safe(), r"fma\.rn\.f32")
    assert count(r, r"cp\.async\.cg\.shared\.global") >= 3
