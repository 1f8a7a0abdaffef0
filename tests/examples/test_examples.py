"""Every example runs with a contract-checked launch and matches numpy."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import simtsafe
from tests.coop_examples import NEEDS, skip_if_not_lowered

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SIZES = importlib.import_module("run_all").SIZES


def test_every_example_is_listed() -> None:
    files = {p.stem for p in EXAMPLES.glob("*.py")} - {"run_all"}
    files |= {p.parent.name for p in EXAMPLES.glob("*/__init__.py")}  # packages (decode/, tsdf/)
    assert files == set(SIZES), "add new examples to examples/run_all.py SIZES"


@pytest.mark.parametrize("name", sorted(SIZES))
def test_example_matches_numpy(name: str) -> None:
    if name in NEEDS:
        skip_if_not_lowered(name)  # block cooperation: until its lowering is merged
    gpu_sizes, sim_sizes = SIZES[name]
    module = importlib.import_module(name)
    assert module.run(**(sim_sizes if simtsafe.SIMULATOR else gpu_sizes)) is True
