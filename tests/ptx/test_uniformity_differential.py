"""The compiled-form uniformity check against simtsafe.sim.check, on generated kernels.

At least 2,000 seeded kernels per run (``SIMTSAFE_DIFF_KERNELS`` sets the
count; the seeds are fixed): no kernel the static check accepts may show a
divergent barrier or warp collective when replayed. Needs the CUDA target's
typing (no GPU, no NVVM); runs in a few processes.
"""

from __future__ import annotations

import os

import pytest

import simtsafe as ss
from tests.kernels.differential import run, summarize

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler")

KERNELS = int(os.environ.get("SIMTSAFE_DIFF_KERNELS", "2000"))
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
