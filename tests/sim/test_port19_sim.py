"""Porting round 19 (tests/kernels/port19.py): each ported Tier-1 kernel gives numpy's values on
the simulator; the round's launch-time false refusal (an int8 GEMV whose rows are not whole
4-byte runs) is pinned with the message it gives today, and runs with the contract's
vec_alignment="any"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, port19
from tests.kernels.porting import to_device

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(port19.ACCEPTED))
def test_a_ported_kernel_matches_numpy(tmp_path: Path, name: str) -> None:
    mod = port19.load(name, tmp_path)
    assert port19.CHECKS[name](mod, np.random.default_rng(19))


def test_a_gemv_whose_rows_are_not_whole_runs_is_refused_at_launch(tmp_path: Path) -> None:
    # FALSE_REFUSALS vec_load_row_pitch_not_a_run (DOC_GAPS vec_load_row_pitch)
    mod = port19.load("gemv_int8_unrolled", tmp_path)
    a = np.ones((6, 130), np.int8)
    x = np.ones(130, np.int8)
    p = mod.gemv_i8.prepare(grid=2, block=128)
    with pytest.raises(ss.ArgumentTypeError, match=r"row pitch 0x82 is not a multiple of 4"):
        p(to_device(np.zeros(6, np.int32)), to_device(a), to_device(x))


def test_the_same_gemv_with_vec_alignment_any_runs_ragged_rows(tmp_path: Path) -> None:
    # the fix of FALSE_REFUSALS vec_load_row_pitch_not_a_run: the contract's opt-in
    source = port19.GEMV_I8_UNROLLED.replace(
        "LaunchContract(domain=1,", 'LaunchContract(domain=1, vec_alignment="any",'
    )
    mod = load_kernel_module(tmp_path, port19.EXTRA_HEADER + source)
    rng = np.random.default_rng(19)
    a = rng.integers(-128, 128, (6, 130)).astype(np.int8)
    x = rng.integers(-128, 128, 130).astype(np.int8)
    y = to_device(np.full(6, -1, np.int32))
    mod.gemv_i8.prepare(grid=2, block=128)(y, to_device(a), to_device(x))
    np.testing.assert_array_equal(y.copy_to_host(), a.astype(np.int32) @ x.astype(np.int32))


def test_sim_check_replays_the_stencil_clean(tmp_path: Path) -> None:
    from simtsafe import sim

    m = port19.load("stencil5_halo", tmp_path)
    u = np.random.default_rng(19).standard_normal((9, 40)).astype(np.float32)
    p = m.stencil5.prepare(grid=(2, 2), block=(32, 8))
    assert sim.check(p, np.zeros_like(u), u).ok
