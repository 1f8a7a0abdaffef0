"""benchmarks/axis_mapping.py compiles, and its three mappings differ only in addressing.

The safe 2D witness (row = y, col = x), its raw twin and the raw x-major
mapping have the same global loads and stores; which thread index is
multiplied by the row pitch (what decides coalescing) is measured on the GPU
by the benchmark itself.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from numba import cuda

pytestmark = pytest.mark.ptx

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _count(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


def test_axis_mappings_have_the_same_memory_instructions() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(
            "simtsafe_bench_axis", BENCH / "axis_mapping.py"
        )
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(BENCH))
    safe = bench.scale_2d.ptx(cc=(9, 0))
    argtypes = bench.scale_2d.argtypes()
    raws = [
        cuda.compile_ptx(k.py_func, argtypes, cc=(9, 0))[0]
        for k in (bench.scale_raw_ymajor, bench.scale_raw_xmajor)
    ]
    for op in ("ld.global", "st.global"):
        assert [_count(p, op) for p in (safe, *raws)] == [1, 1, 1], op
    assert ".reqntid 32, 8, 1" in safe
