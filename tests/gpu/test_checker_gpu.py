"""The checker's replay computes what the GPU computes (skipped without a device).

Every fixed twin of the checker corpus is launched on the device with the
same arguments as ``simtsafe.sim.check`` replays it with; the device's
outputs must equal the replay's. Race-free kernels over small integers give
exact results in any order, so any difference is a semantic difference
between the replay and CUDA (a shuffle, vote, atomic or barrier modelled
wrongly).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe import sim

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.checker.cases import CASES, Case  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

#: Fixed twins whose outputs depend on the order of atomics between threads.
ORDER_DEPENDENT = {"atomic_plain_read"}


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.name not in ORDER_DEPENDENT], ids=lambda c: c.name
)
def test_fixed_twin_matches_the_replay(case: Case) -> None:
    args = case.args()
    report = sim.check(case.ok, case.grid, case.block, *args, shared_mem=case.shared_mem)
    assert report.ok, str(report)
    dargs = [cuda.to_device(a) for a in args]
    config = (case.grid, case.block, 0, case.shared_mem)
    if case.tier == "simtsafe":
        with ss.unsafe("SAFETY: the corpus's fixed twin with its test launch, checked clean above"):
            case.ok.unchecked[config](*dargs)
    else:
        case.ok[config](*dargs)
    cuda.synchronize()
    assert len(report.outputs) == len(dargs)  # the corpus passes arrays only
    for name, d in zip(report.outputs, dargs, strict=True):
        np.testing.assert_array_equal(d.copy_to_host(), report.outputs[name], err_msg=name)
