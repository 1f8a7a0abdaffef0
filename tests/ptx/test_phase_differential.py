"""The compiled-form tile-phase check against simtsafe.sim.check, on generated kernels.

Seeded kernels that fill (asynchronously and transposed), wait, synchronize and read two
shared tiles at random (tests/kernels/generated_phases.py) are compiled for the CUDA target
with the source-level phase analysis switched off, so the compiled form alone decides, then
replayed on the simulator: no kernel the compiled form accepts may race on a tile or refill
one while the thread's copies into it are in flight, for n = 0, 1 or 2 (the kernels branch
and loop on it). ``SIMTSAFE_PHASE_KERNELS`` sets the count (the seeds are fixed).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.generated_phases import COLS, ROWS, generate

pytestmark = [
    pytest.mark.ptx,
    pytest.mark.skipif(ss.SIMULATOR, reason="needs the CUDA target's compiler"),
]

KERNELS = int(os.environ.get("SIMTSAFE_PHASE_KERNELS", "150"))
FIRST_SEED = 7_000
_A = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    yield


def _dynamic(kernel: ss.Kernel, ns: tuple[int, ...]) -> str:  # type: ignore[type-arg]
    """The replay's verdict over the launches with each ``n`` (the kernels branch and loop
    on it)."""
    for n in ns:
        try:
            report = ss.sim.check(kernel, 1, 64, np.zeros(64, np.float32), _A, np.int64(n))
        except ss.SafetyError as exc:
            return "refill" if exc.rule == "tile-phase" else f"raised:{exc.rule}"
        if any(f.kind == "race" for f in report.findings):
            return "race"
    return "clean"


def test_no_kernel_the_compiled_form_accepts_races(
    tmp_path: Path, compiled_form_only: None
) -> None:
    outcomes: Counter[tuple[str, str]] = Counter()
    unsound: list[int] = []
    for seed in range(FIRST_SEED, FIRST_SEED + KERNELS):
        where = tmp_path / f"s{seed}"
        where.mkdir()
        try:
            kernel = load_kernel_module(where, generate(seed).source).k
        except ss.SafetyError as exc:  # a typing rule, not a phase (e.g. wait count)
            outcomes[(f"decoration:{exc.rule}", "-")] += 1
            continue
        try:
            kernel._compiled_verdict()
            static = "accepted"
        except ss.SafetyError as exc:
            static = f"refused:{exc.rule}"
        # every n for what the compiled form accepts (soundness); n = 1 for the counts
        dynamic = _dynamic(kernel, (0, 1, 2) if static == "accepted" else (1,))
        outcomes[(static, dynamic)] += 1
        if static == "accepted" and dynamic in ("race", "refill"):
            unsound.append(seed)
    print(dict(outcomes))
    assert unsound == [], (unsound, dict(outcomes))
    # The generator reaches both sides: accepted clean kernels, and refused racy ones.
    assert outcomes[("accepted", "clean")] > KERNELS // 10, dict(outcomes)
    racy_refused = (
        outcomes[("refused:tile-phase", "race")] + outcomes[("refused:tile-phase", "refill")]
    )
    assert racy_refused > KERNELS // 10, dict(outcomes)
