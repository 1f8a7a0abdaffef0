"""Grid cooperation in Tier 1 on the simulator: the same refusals as the GPU's compiled-form check
(asked of the compile worker), results of cooperative launches, sim.check, and the launch-time
refusals (no cooperative contract)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.grid_rules import ACCEPTED, BLOCK, GRID, REFUSED, STEPS, start

pytestmark = pytest.mark.sim


def _launch(mod: object) -> tuple[np.ndarray, np.ndarray]:
    a, b = start()
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    mod.k.prepare(grid=GRID, block=BLOCK)(d_a, d_b, np.int32(STEPS))  # type: ignore[attr-defined]
    return d_a.copy_to_host(), d_b.copy_to_host()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    mod = load_kernel_module(tmp_path, source)
    with pytest.raises(ss.SafetyError) as info:
        if case == "read-of-an-input":
            mod.k.prepare(grid=GRID, block=BLOCK)(
                cuda.to_device(np.zeros(64, np.float32)),
                cuda.to_device(np.zeros(64, np.float32)),
                np.int32(STEPS),
            )
        else:
            _launch(mod)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_gives_its_result(tmp_path: Path, case: str) -> None:
    source, expected = ACCEPTED[case]
    got = _launch(load_kernel_module(tmp_path, source))
    for g, e in zip(got, expected(*start()), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_check_replays_the_heat_steps_without_a_race(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED["ping-pong-heat-steps"][0])
    a, b = start()
    report = ss.sim.check(mod.k, GRID, BLOCK, a, b, np.int32(STEPS))
    assert report.ok, report
    assert report.stats["grid_syncs"] == 2 * STEPS
    np.testing.assert_allclose(report.outputs["a"], ACCEPTED["ping-pong-heat-steps"][1](a, b)[0])


def test_a_grid_sync_needs_a_cooperative_contract(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(a: DisjointSlice[np.float32]) -> None:
    w = thread.index_1d()
    ss.grid.sync()
    a[w] = np.float32(1)
""",
    )
    with pytest.raises(ss.CooperativeLaunchError, match=r"simtsafe\.grid\.sync\(\) or"):
        mod.k.prepare(grid=GRID, block=BLOCK)
