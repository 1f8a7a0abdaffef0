"""Attack round 7 on the real target (NVVM, no GPU): grid cooperation's compiled-form checks.

The refusals expected here FAIL on the current code (the kernels compile): each names a
hole. The twins pass today and pin what does hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import attacks7 as K
from tests.kernels import line_of, load_kernel_module

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _refused_at_bad(tmp_path: Path, source: str, rule: str) -> ss.SafetyError:
    mod = load_kernel_module(tmp_path, source)
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert info.value.rule == rule, info.value
    assert info.value.lineno == line_of(tmp_path, "# BAD"), info.value
    return info.value


# --------------------------------------------------------------------------- finding 1


@pytest.mark.parametrize(
    "source",
    [K.BROADCAST_F32, K.BROADCAST_F64, K.BROADCAST_AND_STORE],
    ids=["f32", "f64", "stored-and-broadcast"],
)
def test_grid_read_fed_to_warp_broadcast_in_a_writing_phase_is_refused(
    tmp_path: Path, source: str
) -> None:
    # Failed on 45de18a: the kernel compiles. instcombine's bitcast-of-phi rewrite turns the
    # tagged `load float` into an untagged `load i32` (copyMetadataForLoad keeps only
    # LLVM's own kinds), so check_grid_phases finds no grid.read to check.
    err = _refused_at_bad(tmp_path, source, "grid-phase")
    assert "grid.read of output 'a' may run in the same grid phase" in str(err)


def test_twin_the_same_read_with_an_arithmetic_use_is_refused(tmp_path: Path) -> None:
    _refused_at_bad(tmp_path, K.PLAIN_USE, "grid-phase")


def test_twin_broadcast_after_a_sync_compiles(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, K.BROADCAST_AFTER_SYNC).k.ptx(cc=CC)
    assert "cudaCGSynchronize" in ptx


# --------------------------------------------------------------------------- finding 2


def test_grid_read_in_a_kernel_whose_raw_grid_syncs_diverge_is_refused(tmp_path: Path) -> None:
    # Failed on 45de18a: compiles. The raw syncs are each under a block-dependent branch (in
    # unsafe regions); they shift the pairing of the Tier-1 syncs between blocks, so the
    # read of `a` runs while block 0 writes it (sim.check shows the divergent barriers).
    mod = load_kernel_module(tmp_path, K.RAW_SYNC_SHIFT)
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert info.value.rule in ("grid-phase", "uniformity"), info.value


# --------------------------------------------------------------------------- finding 3


def test_output_tile_then_grid_read_after_a_sync_compiles(tmp_path: Path) -> None:
    # Failed on 45de18a (false refusal, rule "out-tile" at decoration): the tile's writes and
    # the grid.read are in different grid phases, which the grid-phase check proves.
    ptx = load_kernel_module(tmp_path, K.TILE_THEN_GRID_READ).k.ptx(cc=CC)
    assert "cudaCGSynchronize" in ptx


def test_tile_read_in_a_kernel_whose_raw_block_barriers_diverge_is_refused(
    tmp_path: Path,
) -> None:
    # Failed on 45de18a: compiles. Same root cause as finding 2, at block scope (tile phases).
    mod = load_kernel_module(tmp_path, K.RAW_SYNCTHREADS_SHIFT)
    with pytest.raises(ss.SafetyError):
        mod.k.ptx(cc=CC)
