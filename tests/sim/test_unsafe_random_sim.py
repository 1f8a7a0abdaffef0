"""``numba.cuda.random`` inside unsafe regions on the simulator, as on the GPU.

A Tier-2 kernel may call numba-cuda's xoroshiro128+ functions on the raw
states array (``states.unchecked``) inside ``with simtsafe.unsafe(...)``; the
same names outside a region are refused. The simulator runs numba-cuda's own
Python bodies of the functions: the draws are compared with an independent
xoroshiro128+ written here from the generator's definition (Blackman and
Vigna, parameters a=55, b=14, c=36; the top 53 bits scaled to [0, 1)).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

pytestmark = pytest.mark.sim

_MASK = (1 << 64) - 1

DRAWS = """
from numba.cuda.random import xoroshiro128p_normal_float32, xoroshiro128p_uniform_float32

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def draw(out: DisjointSlice2D[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    with ss.unsafe(
        "SAFETY: thread i advances only states[i] and writes only row i of out, both guarded "
        "by i < states.size"
    ):
        i = w.index
        if i < states.size:
            raw = states.unchecked
            out.unchecked[i, 0] = xoroshiro128p_uniform_float32(raw, i)
            out.unchecked[i, 1] = xoroshiro128p_uniform_float32(raw, i)
            out.unchecked[i, 2] = xoroshiro128p_normal_float32(raw, i)
"""


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _MASK


def _next(s0: int, s1: int) -> tuple[int, int, int]:
    """One xoroshiro128+ step: (output, new s0, new s1)."""
    out = (s0 + s1) & _MASK
    s1 ^= s0
    return out, _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _MASK), _rotl(s1, 36)


def _unit(x: int) -> np.float32:
    return np.float32(np.float64(x >> 11) * (1.0 / (1 << 53)))


def _launch(mod: object, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    states = create_xoroshiro128p_states(n, seed=seed)
    before = states.copy_to_host()
    out = cuda.to_device(np.full((n, 3), -1, np.float32))
    mod.draw.prepare(grid=2, block=32)(out, states)  # type: ignore[attr-defined]
    return before, states.copy_to_host(), out.copy_to_host()


def test_numba_random_in_an_unsafe_region_runs_as_the_generator_defines(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, DRAWS)
    n = 40  # 64 threads: 24 draw nothing
    before, after, got = _launch(mod, n, seed=7)
    for i in range(n):
        s0, s1 = int(before["s0"][i]), int(before["s1"][i])
        first, s0, s1 = _next(s0, s1)
        second, s0, s1 = _next(s0, s1)
        assert got[i, 0] == _unit(first), f"state {i}: first draw"
        assert got[i, 1] == _unit(second), f"state {i}: second draw"
        # The normal draw takes two more steps (Box-Muller): the state moved by four in all.
        for _ in range(2):
            _, s0, s1 = _next(s0, s1)
        assert (int(after["s0"][i]), int(after["s1"][i])) == (s0, s1), f"state {i}"
    assert ((got[:, :2] >= 0) & (got[:, :2] < 1)).all()
    assert np.isfinite(got[:, 2]).all()


def test_numba_random_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, DRAWS)
    _, _, one = _launch(mod, 32, seed=11)
    _, _, two = _launch(mod, 32, seed=11)
    _, _, other = _launch(mod, 32, seed=12)
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, other)


def test_numba_random_outside_an_unsafe_region_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        load_kernel_module(
            tmp_path,
            """
from numba.cuda.random import xoroshiro128p_uniform_float32

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def draw(out: DisjointSlice[np.float32], states: ss.random.States) -> None:
    w = thread.index_1d()
    out[w] = xoroshiro128p_uniform_float32(states.unchecked, w.index)  # BAD
""",
        )
    assert "xoroshiro128p_uniform_float32` is allowed only inside `with simtsafe.unsafe" in str(
        info.value
    )
    assert info.value.lineno == line_of(tmp_path, "# BAD")
