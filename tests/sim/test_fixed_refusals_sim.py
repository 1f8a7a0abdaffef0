"""False refusals of attack rounds 23-27 and porting round 18, fixed (tests/kernels/
fixed_refusals.py) on the simulator: each natural kernel runs through ``prepare`` with numpy's
values, ``simtsafe.sim.check`` replays it with no finding, and each rejected twin is refused
there too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.case_checks import assert_refused_at_prepare, assert_runs_like_reference
from tests.kernels.fixed_refusals import ACCEPTED, REFUSED, helper_modules_on_path

pytestmark = pytest.mark.sim


@pytest.fixture(autouse=True)
def helper_modules(tmp_path: Path) -> Iterator[None]:
    with helper_modules_on_path(tmp_path):
        yield


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_matches_numpy(tmp_path: Path, name: str) -> None:
    assert_runs_like_reference(tmp_path, ACCEPTED[name], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_twin_refused(tmp_path: Path, name: str) -> None:
    assert_refused_at_prepare(tmp_path, *REFUSED[name])


def test_a_table_through_a_module_is_the_snapshot_of_the_first_compile(tmp_path: Path) -> None:
    """The module's table changed after the first compile: the kernel keeps its copy, as
    for `cuda.const.array_like(TABLE)` (tests/sim/test_constmem_sim.py)."""
    case = ACCEPTED["const-table-through-user-module"]
    k = load_kernel_module(tmp_path, case.source).k
    host = case.args()
    expected = case.expect(*host)
    launch = k.prepare(grid=case.grid, block=case.block)
    import fr27tables

    fr27tables.TABLE[:] = 1000  # after the compile
    dev = [cuda.to_device(a) for a in host]
    launch(*dev)
    np.testing.assert_array_equal(dev[0].copy_to_host(), expected[0])


def test_a_device_array_through_a_module_is_refused(tmp_path: Path) -> None:
    import fr27tables

    fr27tables.DEV = cuda.to_device(fr27tables.TABLE)  # type: ignore[attr-defined]
    from tests.kernels.fixed_refusals import _CONST_TABLE

    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, _CONST_TABLE.replace("ARG", "hm.DEV")).k.prepare(
            grid=1, block=64
        )
    assert "cuda.const.array_like takes a module-level numpy array, got numba.cuda." in str(
        info.value
    ), str(info.value)
    assert "pass device data as an In[...] parameter" in str(info.value)
