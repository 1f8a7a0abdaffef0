"""Porting round 18 (tests/kernels/port18.py): each ported Tier-1 kernel gives numpy's values on
the simulator, as does its raw Numba twin, and ``simtsafe.sim.check`` replays the port with no
finding (the checks assert all three). The round's false refusals, fixed, run with numpy's
values too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels import port18

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", sorted(port18.ACCEPTED))
def test_a_ported_kernel_matches_numpy_and_replays_clean(tmp_path: Path, name: str) -> None:
    mod = port18.load(name, tmp_path)
    assert port18.CHECKS[name](mod, np.random.default_rng(18))


def test_a_factory_constant_filter_is_snapshotted_per_kernel(tmp_path: Path) -> None:
    # accepted against the docs (DOC_GAPS const_array_closed_over_by_a_factory), and right
    mod = port18.load("const_array_closed_over_by_a_factory", tmp_path)
    assert port18.CHECKS["const_array_closed_over_by_a_factory"](mod, np.random.default_rng(18))


def test_sim_check_replays_a_record_gather_by_attribute(tmp_path: Path) -> None:
    mod = port18.load("simcheck_record_attr_int_index", tmp_path)
    assert port18.CHECKS["simcheck_record_attr_int_index"](mod, np.random.default_rng(18))


def test_a_helper_stores_a_field_named_mean(tmp_path: Path) -> None:
    mod = port18.load("helper_field_named_like_array_method", tmp_path)
    assert port18.CHECKS["helper_field_named_like_array_method"](mod, np.random.default_rng(18))


def test_a_helper_reads_a_field_named_mean(tmp_path: Path) -> None:
    mod = port18.load("helper_field_read_named_like_array_method", tmp_path)
    assert port18.CHECKS["helper_field_read_named_like_array_method"](
        mod, np.random.default_rng(18)
    )


def test_block_stride_flushes_a_shared_accumulator(tmp_path: Path) -> None:
    mod = port18.load("accumulator_block_stride_flush", tmp_path)
    assert port18.CHECKS["accumulator_block_stride_flush"](mod, np.random.default_rng(18))
