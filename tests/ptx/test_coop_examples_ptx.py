"""Block-cooperation examples in PTX: the raw twins' code, and the Tier-1 versions against it.

The raw twins (examples/coop_raw.py) are the speed reference of
benchmarks/coop.py, so their inner loops are checked here: no local memory,
the SGEMM's 16 shared loads per 64 FMAs with no negative-index wraparound
left in that loop, one barrier where the schedule has one. The Tier-1
examples must compile to the same kind of code: the same global loads and
stores where the two compile to the same loop structure (reduction, tile
totals, histogram), the same FMA to shared-load ratio in the SGEMM, no local
memory, no trap. Static instruction counts of kernels whose loops LLVM
unrolls differently (the scan and transpose fills) are not compared.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest
from numba import cuda, types

from simtsafe.lowering._compat import assume_compute_capability
from tests.coop_examples import example, skip_if_not_lowered

pytestmark = pytest.mark.ptx

CC = (9, 0)
F32, I32, U32, U8 = types.float32, types.int32, types.uint32, types.uint8


def _arr(dtype: Any, ndim: int = 1, readonly: bool = False) -> Any:
    a = types.Array(dtype, ndim, "C")
    return a.copy(readonly=True) if readonly else a


#: raw twin -> argument types (inputs read-only, as the safe kernels see them)
RAW_SIGNATURES: dict[str, tuple[Any, ...]] = {
    "reduce_sum_raw": (_arr(F32), _arr(F32, readonly=True)),
    "reduce_sum_atomic_raw": (_arr(F32), _arr(F32, readonly=True)),
    "tile_totals_raw": (_arr(I32), _arr(I32, readonly=True)),
    "tile_scan_raw": (_arr(I32), _arr(I32, readonly=True), _arr(I32, readonly=True)),
    "transpose_raw": (_arr(F32, 2), _arr(F32, 2, True)),
    "transpose_padded_raw": (_arr(F32, 2), _arr(F32, 2, True)),
    "sgemm_raw": (_arr(F32, 2), _arr(F32, 2, True), _arr(F32, 2, True)),
    "histogram_raw": (_arr(U32), _arr(U32, readonly=True), _arr(U8, readonly=True)),
}

#: (example, safe kernel, raw twin) whose loops compile to the same structure.
SAME_TRAFFIC = [
    ("reduce_sum", "reduce_sum", "reduce_sum_raw"),
    ("reduce_sum", "reduce_sum_atomic", "reduce_sum_atomic_raw"),
    ("scan", "tile_totals", "tile_totals_raw"),
    ("histogram", "histogram", "histogram_raw"),
]
SAFE_KERNELS = [
    ("reduce_sum", "reduce_sum"),
    ("reduce_sum", "reduce_sum_atomic"),
    ("scan", "tile_totals"),
    ("scan", "tile_scan"),
    ("transpose", "transpose"),
    ("sgemm", "sgemm"),
    ("histogram", "histogram"),
]

_WRAPAROUND = "-9223372036854775808"  # the sign mask of Numba's negative-index fix-up


def count(ptx: str, op: str) -> int:
    """Instructions whose opcode starts with ``op`` (optionally predicated)."""
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


@cache
def raw_ptx(name: str) -> str:
    kernel = getattr(example("coop_raw"), name)
    with assume_compute_capability(CC):  # the twins call device functions
        ptx, _ = cuda.compile_ptx(kernel.py_func, RAW_SIGNATURES[name], cc=CC)
    return str(ptx)


@cache
def safe_ptx(module: str, name: str) -> str:
    return str(getattr(example(module), name).ptx(cc=CC))


def fma_region(ptx: str) -> str:
    """The PTX from the first to the last ``fma.rn.f32``: the SGEMM's inner loop."""
    lines = ptx.splitlines()
    idx = [i for i, line in enumerate(lines) if "fma.rn.f32" in line]
    assert idx, "no fma.rn.f32"
    return "\n".join(lines[idx[0] : idx[-1] + 1])


# ------------------------------------------------------------------ raw twins


@pytest.mark.parametrize("name", sorted(RAW_SIGNATURES))
def test_raw_twin_has_no_local_memory(name: str) -> None:
    ptx = raw_ptx(name)
    assert count(ptx, "ld.local") == 0 and count(ptx, "st.local") == 0, name
    assert not re.search(r"\btrap\b", ptx)


def test_raw_sgemm_inner_loop_is_16_shared_loads_per_64_fmas() -> None:
    ptx = raw_ptx("sgemm_raw")
    fmas, loads = count(ptx, "fma.rn.f32"), count(ptx, "ld.shared")
    assert fmas > 0 and fmas % 64 == 0, fmas
    assert loads * 4 == fmas, (loads, fmas)
    assert count(ptx, "bar.sync") == 2
    region = fma_region(ptx)
    assert _WRAPAROUND not in region, "negative-index fix-up left in the SGEMM inner loop"
    assert "ld.global" not in region


def test_raw_reduction_is_two_butterflies_and_one_barrier() -> None:
    for name in ("reduce_sum_raw", "reduce_sum_atomic_raw", "tile_totals_raw"):
        ptx = raw_ptx(name)
        assert count(ptx, "shfl.sync.bfly") == 10, name
        assert count(ptx, "bar.sync") == 1, name
    assert count(raw_ptx("reduce_sum_atomic_raw"), "atom.global.add.f32") == 1


def test_raw_tile_scan_is_warp_scans_and_three_barriers() -> None:
    ptx = raw_ptx("tile_scan_raw")
    assert count(ptx, "shfl.sync.up") % 5 == 0 and count(ptx, "shfl.sync.up") > 0
    assert count(ptx, "bar.sync") == 3  # fill | block scan | second tile


def test_raw_transposes_have_one_barrier() -> None:
    for name in ("transpose_raw", "transpose_padded_raw"):
        assert count(raw_ptx(name), "bar.sync") == 1, name


def test_raw_histogram_counts_in_shared_memory() -> None:
    ptx = raw_ptx("histogram_raw")
    assert count(ptx, "atom.shared.add.u32") >= 9  # 8 per unrolled step, 4 in the tail loop...
    assert count(ptx, "atom.global.add.u32") >= 1  # the flush
    assert count(ptx, "bar.sync") == 2  # zeroed | counted


# ------------------------------------------------------------------ Tier-1 versions


@pytest.mark.parametrize(("module", "name"), SAFE_KERNELS)
def test_safe_example_has_no_local_memory_or_trap(module: str, name: str) -> None:
    skip_if_not_lowered(module)
    ptx = safe_ptx(module, name)
    assert count(ptx, "ld.local") == 0 and count(ptx, "st.local") == 0, name
    assert not re.search(r"\btrap\b", ptx), name
    assert ".reqntid" in ptx


@pytest.mark.parametrize(("module", "safe", "raw"), SAME_TRAFFIC)
def test_safe_example_has_the_raw_twins_global_traffic(module: str, safe: str, raw: str) -> None:
    skip_if_not_lowered(module)
    s, r = safe_ptx(module, safe), raw_ptx(raw)
    for op in ("ld.global", "st.global", "atom.global"):
        # No more global accesses than the raw twin. Fewer static instructions are allowed:
        # the safe kernel's thread-index reads carry the exact block's ranges, so a loop the
        # raw twin unrolls for any block (the histogram's flush, `for b in range(tid, 256,
        # blockDim.x)`: 4 unrolled + 1 in the tail) is one iteration for 256 threads.
        assert 0 < count(s, op) <= count(r, op) or count(s, op) == count(r, op) == 0, (
            f"{safe}: {op} safe {count(s, op)} raw {count(r, op)}"
        )


def test_safe_sgemm_inner_loop_matches_the_raw_twin() -> None:
    skip_if_not_lowered("sgemm")
    s = safe_ptx("sgemm", "sgemm")
    fmas, loads = count(s, "fma.rn.f32"), count(s, "ld.shared")
    assert fmas == count(raw_ptx("sgemm_raw"), "fma.rn.f32")
    assert loads * 4 == fmas, (loads, fmas)
    assert count(s, "bar.sync") == 2
    assert "ld.global" not in fma_region(s)


def test_safe_transpose_has_one_barrier() -> None:
    skip_if_not_lowered("transpose")
    assert count(safe_ptx("transpose", "transpose"), "bar.sync") == 1


SHARED_SHAPES = {
    "reduce_sum": {"BLOCK": "REDUCE_BLOCK", "BLOCKS_PER_SM": "REDUCE_BLOCKS_PER_SM"},
    "scan": {"BLOCK": "SCAN_BLOCK", "ITEMS": "SCAN_ITEMS", "TILE": "SCAN_TILE"},
    "transpose": {"TDIM": "TDIM", "TROWS": "TROWS"},
    "sgemm": {k: k for k in ("BM", "BN", "BK", "TM", "TN", "TX", "TY")},
    "histogram": {"NBINS": "NBINS", "BLOCK": "HIST_BLOCK"},
}


@pytest.mark.parametrize("module", sorted(SHARED_SHAPES))
def test_example_and_raw_twin_share_their_shapes(module: str) -> None:
    skip_if_not_lowered(module)
    raw, safe = example("coop_raw"), example(module)
    for mine, theirs in SHARED_SHAPES[module].items():
        assert getattr(safe, mine) == getattr(raw, theirs), f"{module}.{mine}"
