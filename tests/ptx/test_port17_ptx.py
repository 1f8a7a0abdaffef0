"""Porting round 17 (an outside helper porting 20 kernels new to the corpus, in Tier 1;
tests/kernels/port17.py; its kernels' checks: tests/ptx/test_porting_ptx.py). The refusals
the round met now name the Tier-1 form that works (each message asserted here, at compile
or decoration)."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import port17

pytestmark = pytest.mark.ptx


#: case -> the fix its refusal names now (the round saw a message without it).
ADVICE = {
    "atomic_fetch_add_slot": r"In Tier 1, use an Accumulate output .* an AppendBuffer "
    r"\(w = buf\.claim\(\): a unique slot per thread",
    "accumulate_add_as_fetch_add": r"`count\.add\(0, 1\)` returns nothing: .* use an "
    r"AppendBuffer: w = buf\.claim\(\)",
    "in_bounds_1d_witness_2d_input": r"Compare the coordinate with the axis you mean "
    r"\(w\.index < a\.shape\[0\]",
    "compact_two_buffers_one_claim": r"would not hold one item\. To append several values per "
    r"item, append records to one buffer",
    "tile_pingpong_swap": r"To alternate two tiles \(ping-pong buffers\), keep each tile's name "
    r"and unroll the loop by two",
    "nbody_row_per_thread": r"owns them as an output tile: thread\.tile_1d\(out, n\) over a "
    r"flat output",
    "rope_thread_per_pair": r"owns them as an output tile",
    "row_cumsum_block_row_scan": r"walk the row in whole chunks, `for c in "
    r"thread\.block_row_chunks\(s\)`, ceil\(width / blockDim\.x\) iterations in every thread",
}


def _compile_all(mod: object) -> None:
    for v in vars(mod).values():
        if isinstance(v, ss.Kernel):
            v.ptx(cc=(9, 0))


@pytest.mark.parametrize("name", sorted(ADVICE))
def test_a_refusal_names_the_tier1_form(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError, match=ADVICE[name]):
        _compile_all(port17.load(name, tmp_path))


def test_the_constant_memory_filter_is_tier1_now(tmp_path: Path) -> None:
    # the round's false refusal: cuda.const.array_like(FILT) outside an unsafe region
    mod = port17.load("constant_memory_filter", tmp_path)
    assert ss.check_kernel(mod.blur1d) == []
    ptx = mod.blur1d.ptx(cc=(9, 0))
    for tap in ("0f3D800000", "0f3E800000", "0f3EC00000"):  # 1/16, 4/16, 6/16 folded in
        assert tap in ptx


def test_the_row_scan_the_round_could_not_write_compiles(tmp_path: Path) -> None:
    # The round's false refusal: no Tier-1 unbounded-width row scan. The chunked walk is
    # one: its scan and sum inside the chunk loop pass the compiled-form verdict.
    mod = port17.load("row_cumsum_chunks", tmp_path)
    assert ss.check_kernel(mod.row_cumsum) == []
    assert ".entry" in mod.row_cumsum.ptx(cc=(9, 0))
