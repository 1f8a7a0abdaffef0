"""Random draws in 1D, 2D and 3D kernels on the simulator: each thread draws from the state of
its linear thread number (so a 2D/3D fill equals the 1D one, reshaped), refusals with their
messages, and no state shared (sim.check)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.random_rules import ACCEPTED, LAUNCH, REFUSED, STATES

pytestmark = pytest.mark.sim


def _first_draws(n: int) -> np.ndarray:
    states = create_xoroshiro128p_states(STATES, seed=7).copy_to_host()
    with np.errstate(over="ignore"):
        return np.array([xoroshiro128p_uniform_float32(states, i) for i in range(n)], np.float32)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_each_thread_draws_from_its_linear_state(tmp_path: Path, case: str) -> None:
    grid, block, shape = LAUNCH[case]
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    out = cuda.to_device(np.zeros(shape, np.float32))
    mod.k.prepare(grid=grid, block=block)(out, create_xoroshiro128p_states(STATES, seed=7))
    np.testing.assert_array_equal(out.copy_to_host().ravel(), _first_draws(int(np.prod(shape))))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    mod = load_kernel_module(tmp_path, source)
    states = create_xoroshiro128p_states(STATES, seed=7)
    if "2d-states" in case:
        out = cuda.to_device(np.zeros((8, 16), np.float32))
        args = (out, cuda.to_device(states.copy_to_host().reshape(8, 16)))
        grid, block = (2, 2), (8, 4)
    else:
        args, grid, block = (cuda.to_device(np.zeros(4, np.float32)), states), 4, 32
    with pytest.raises(ss.SafetyError) as info:
        mod.k.prepare(grid=grid, block=block)(*args)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_too_few_states_draw_nothing_past_them(tmp_path: Path) -> None:
    grid, block, shape = LAUNCH["d3"]
    mod = load_kernel_module(tmp_path, ACCEPTED["d3"])
    out = cuda.to_device(np.full(shape, -1, np.float32))
    mod.k.prepare(grid=grid, block=block)(out, create_xoroshiro128p_states(100, seed=7))
    got = out.copy_to_host().ravel()
    np.testing.assert_array_equal(got[:100], _first_draws(100))
    assert not got[100:].any()  # no state: the draw gives 0


def test_check_finds_no_race_on_the_states(tmp_path: Path) -> None:
    grid, block, shape = LAUNCH["d2"]
    mod = load_kernel_module(tmp_path, ACCEPTED["d2"])
    states = create_xoroshiro128p_states(STATES, seed=7).copy_to_host()
    report = ss.sim.check(mod.k, grid, block, np.zeros(shape, np.float32), states)
    assert report.ok, report
