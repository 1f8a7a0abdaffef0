"""Random draws in 1D, 2D and 3D kernels on a real GPU: each thread draws from the state of its
linear thread number, the same values numba-cuda's own draw gives on the host."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

from tests.kernels import load_kernel_module
from tests.kernels.random_rules import ACCEPTED, LAUNCH, STATES

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_each_thread_draws_from_its_linear_state(tmp_path: Path, case: str) -> None:
    grid, block, shape = LAUNCH[case]
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    states = create_xoroshiro128p_states(STATES, seed=7)
    host_states = states.copy_to_host()
    with np.errstate(over="ignore"):
        expected = [xoroshiro128p_uniform_float32(host_states, i) for i in range(STATES)]
    out = cuda.to_device(np.zeros(shape, np.float32))
    mod.k.prepare(grid=grid, block=block)(out, states)
    np.testing.assert_array_equal(out.copy_to_host().ravel(), np.array(expected, np.float32))
