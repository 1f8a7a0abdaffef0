"""Porting round 15 (tests/kernels/port15.py; its kernels' checks: tests/ptx/test_porting_ptx.py):
the tree reduction's refusal points to the block collectives."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import port15

pytestmark = pytest.mark.ptx


def test_a_tree_reduction_in_one_tile_is_pointed_to_the_block_collectives(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"block\.sum / block\.reduce / block\.max"):
        port15.load("tree_reduction_shared_tile", tmp_path)
