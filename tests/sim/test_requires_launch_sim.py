"""``requires`` relations over launch dimensions, on the simulator.

A relation that reads only ``grid.*``/``block.*`` is checked once, in
``prepare``; one that also reads an argument is checked per launch, by the
generated checker and the general loop alike (and the generated one never
accepts what the general loop refuses).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.sim

POISON = np.float32(-7.0)

SOURCE = """
@ss.kernel(contract=ss.LaunchContract(
    domain=1, max_threads=256,
    requires=["block.x >= 32", "grid.x * block.x >= out.size", "a.size == out.size"]))
def twice(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] * 2
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("requires_launch"), SOURCE)


def _arrays(n):  # type: ignore[no-untyped-def]
    return cuda.to_device(np.full(n, POISON)), cuda.to_device(np.arange(n, dtype=np.float32))


def test_launch_only_relation_refused_at_prepare(mod):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.RequiresViolation) as info:
        mod.twice.prepare(grid=8, block=16)
    exc = info.value
    assert exc.relation == "block.x >= 32"
    assert "but with grid (8, 1, 1) and block (16, 1, 1), block.x >= 32 is 16 >= 32" in str(exc)
    assert "Prepare with a grid and block that satisfy it" in str(exc)


def test_mixed_relation_refused_per_launch_output_untouched(mod):  # type: ignore[no-untyped-def]
    launch = mod.twice.prepare(grid=2, block=32)  # 64 threads
    out, a = _arrays(65)
    with pytest.raises(ss.RequiresViolation) as info:
        launch(out, a)
    exc = info.value
    assert exc.relation == "grid.x * block.x >= out.size"
    assert "is 64 >= 65. Launch dimensions seen: block.x = 32, grid.x = 2" in str(exc)
    np.testing.assert_array_equal(out.copy_to_host(), np.full(65, POISON))


def test_launch_satisfying_every_relation_runs(mod):  # type: ignore[no-untyped-def]
    out, a = _arrays(64)
    mod.twice.prepare(grid=2, block=32)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(64, dtype=np.float32) * 2)
    plan = mod.twice.prepare(grid=2, block=32)._plan
    fast = plan._fast_check((out, a))
    assert fast is not None and fast == plan._check((out, a))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), grid=st.integers(1, 5), block=st.sampled_from([32, 64, 100]))
def test_generated_checker_agrees_on_launch_dims(mod, n, grid, block) -> None:  # type: ignore[no-untyped-def]
    plan = mod.twice.prepare(grid=grid, block=block)._plan
    args = (cuda.device_array(n, np.float32), cuda.device_array(n, np.float32))
    fast = plan._fast_check(args)
    try:
        slow = plan._check(args)
    except ss.RequiresViolation:
        assert n > grid * block
        assert fast is None, "generated checker accepted what the general loop refuses"
        return
    assert n <= grid * block
    assert fast == slow
