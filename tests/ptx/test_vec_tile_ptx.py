"""``vec.load`` of a shared tile on the real target (NVVM, no GPU): one ld.shared.v4 per run
in the read phase; the refusals of tests/kernels/vec_tile_rules.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.vec_tile_rules import ACCEPTED, ACCEPTED_RUNS, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


def test_a_run_of_a_padded_tile_is_one_shared_vector_load(tmp_path: Path) -> None:
    body = load_kernel_module(tmp_path, ACCEPTED).k.ptx(cc=CC).split(".entry", 1)[1]
    # Tiles are 16-byte aligned (lowering/_mma's ldmatrix): LLVM then also merges the
    # element path's four loads of an in-range run into one v4 load, on its own branch.
    loads = re.findall(r"ld\.shared\.\S+", body)
    assert set(loads) == {"ld.shared.v4.f32"} and len(loads) <= 2, loads


def test_load_runs_of_a_tile_compiles_to_shared_vector_loads(tmp_path: Path) -> None:
    body = load_kernel_module(tmp_path, ACCEPTED_RUNS).k.ptx(cc=CC).split(".entry", 1)[1]
    loads = re.findall(r"ld\.shared\.\S+", body)
    assert "ld.shared.v4.f32" in loads and ".local" not in body, loads
