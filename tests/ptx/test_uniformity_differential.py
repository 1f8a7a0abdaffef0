"""The compiled-form uniformity check against simtsafe.sim.check, on generated kernels.

400 seeded kernels in CI, the first 400 seeds of the full run's 2,000
(``SIMTSAFE_DIFF_KERNELS=2000`` runs them all, as the recorded run in
benchmarks/results/uniformity_differential.json did; any count works, the seeds
are fixed): no kernel the static check accepts may show a divergent barrier or
warp collective when replayed. Needs the CUDA target's typing (no GPU, no
NVVM); runs in a few processes. The count is CI time: each kernel is typed and
lowered for the CUDA target and replayed on the simulator, about a quarter of a
CPU-second, and the 2,000 were a fifth of the whole suite's CPU time.
"""

from __future__ import annotations

import os

import pytest

import simtsafe as ss
from tests.kernels.differential import run, summarize

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler")

#: CI's count; ``SIMTSAFE_DIFF_KERNELS=2000`` is the full run (docs/install.md).
KERNELS = int(os.environ.get("SIMTSAFE_DIFF_KERNELS", "400"))
FIRST_SEED = 160_000


def test_no_kernel_accepted_statically_diverges_dynamically() -> None:
    outcomes = run(range(FIRST_SEED, FIRST_SEED + KERNELS))
    summary = summarize(outcomes)
    print(summary)  # the counts and the precision, in the test log (-s / -rA)
    assert summary["unsound"] == [], summary
    # The generator reaches the interesting cases: accepted and refused kernels with
    # barriers, kernels that really diverge, kernels the source analysis refused.
    counts = summary["counts"]
    assert isinstance(counts, dict)
    assert counts.get("accepted / clean", 0) > KERNELS // 10, counts
    assert counts.get("refused:uniformity / divergent", 0) > KERNELS // 50, counts
    assert sum(1 for o in outcomes if "barrier" in o.features and o.static == "accepted") > 0
