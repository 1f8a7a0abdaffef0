"""Porting round 15 (an outside helper porting kernels a GPU programmer writes first, in Tier
1; tests/kernels/port15.py): each ported kernel passes every compile-time check with NVVM
(``simtsafe.check_kernel``: no finding) -- a refusal here is safe code refused. The tree
reduction's refusal points to the block collectives."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import port15

pytestmark = pytest.mark.ptx


@pytest.mark.parametrize("name", sorted(port15.ACCEPTED))
def test_a_ported_kernel_passes_every_check(tmp_path: Path, name: str) -> None:
    mod = port15.load(name, tmp_path)
    kernels = [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)


def test_a_tree_reduction_in_one_tile_is_pointed_to_the_block_collectives(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"block\.sum / block\.reduce / block\.max"):
        port15.load("tree_reduction_shared_tile", tmp_path)
