"""Static verdicts against dynamic ones, on generated kernels (tests/kernels/generated.py).

For each seed: the kernel is decorated and compiled for the CUDA target (no
NVVM), which gives the *static* verdict of the compiled-form check (accepted,
or refused with a rule); the source-level analysis' own verdict is recorded
beside it (what decided before the compiled form did). Then
``simtsafe.sim.check`` replays the kernel at a few launch shapes (a block of
whole warps, and blocks with a partial warp) and gives the *dynamic* verdict:
a barrier or warp collective that some threads of its scope skipped
(``barrier_divergence`` / ``warp_mask``), clean, or a simulated thread raised
(an implicit exit the replay does not model: inconclusive).

Soundness: no kernel accepted statically may diverge dynamically.
Precision: of the kernels that never diverge dynamically, how many the static
check refuses.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.generated import generate

__all__ = ["Outcome", "run", "summarize"]

#: (grid, block): whole warps, then partial ones.
SHAPES = ((1, 64), (1, 40))
_A = (np.arange(256) % 7).astype(np.float32)


@dataclass(frozen=True)
class Outcome:
    seed: int
    static: str  # "accepted" or "refused:<rule>"
    source: str  # the source-level uniformity analysis: "accepted" / "refused"
    dynamic: str  # "divergent", "clean", "raised"
    features: tuple[str, ...]


def _dynamic(kernel: ss.Kernel, shapes: tuple[tuple[int, int], ...]) -> str:  # type: ignore[type-arg]
    for grid, block in shapes:
        try:
            report = ss.sim.check(
                kernel, grid, block, np.zeros(grid * block, np.float32), _A, 3, timeout=30
            )
        except Exception:  # a simulated thread raised (tuple index out of range...)
            return "raised"
        if any(f.kind in ("barrier_divergence", "warp_mask") for f in report.findings):
            return "divergent"
    return "clean"


def check_seed(seed: int, folder: Path, before: bool = False) -> Outcome:
    g = generate(seed)
    where = folder / f"s{seed}"
    where.mkdir()
    try:
        mod = load_kernel_module(where, g.source)
    except ss.SafetyError as exc:  # refused by a decoration rule (taint, allow-list...)
        return Outcome(seed, f"refused:{exc.rule}", "refused", "not-run", tuple(sorted(g.features)))
    kernel = mod.k
    try:
        kernel._compiled_verdict()
        static = "accepted"
    except ss.SafetyError as exc:
        static = f"refused:{exc.rule}"
    source = "-"
    if before:  # what the source-level analysis alone decided (the old verdict)
        source = "refused" if kernel.source_uniformity().finding is not None else "accepted"
    if static.startswith("refused:") and static != "refused:uniformity":
        dynamic = "not-run"  # refused for another reason: nothing to compare
    else:
        # Soundness needs every shape for what the static check accepts; for a
        # refused kernel (the precision figure) the whole-warp shape.
        dynamic = _dynamic(kernel, SHAPES if static == "accepted" else SHAPES[:1])
    return Outcome(seed, static, source, dynamic, tuple(sorted(g.features)))


def _chunk(job: tuple[list[int], bool]) -> list[Outcome]:
    seeds, before = job
    with tempfile.TemporaryDirectory(prefix="ss_diff_") as tmp:
        return [check_seed(s, Path(tmp), before) for s in seeds]


def run(seeds: range, workers: int | None = None, before: bool = False) -> list[Outcome]:
    """Check every seed, in ``workers`` processes (default: the CPUs, at most 4).

    ``before``: also record the source-level analysis' own verdict (slower).
    """
    seeds_list = list(seeds)
    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1:
        return _chunk((seeds_list, before))
    chunks = [(seeds_list[k::n], before) for k in range(n)]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(n) as pool:
        parts = pool.map(_chunk, chunks)
    out = [o for part in parts for o in part]
    out.sort(key=lambda o: o.seed)
    return out


def summarize(outcomes: list[Outcome]) -> dict[str, object]:
    """Counts, the soundness violations and the precision before and after."""
    counts = Counter((o.static, o.dynamic) for o in outcomes)
    unsound = [o.seed for o in outcomes if o.static == "accepted" and o.dynamic == "divergent"]
    clean = [o for o in outcomes if o.dynamic == "clean"]
    refused_after = sum(1 for o in clean if o.static == "refused:uniformity")
    refused_before = sum(1 for o in clean if o.source == "refused")
    source_unsound = [
        o.seed for o in outcomes if o.source == "accepted" and o.dynamic == "divergent"
    ]
    # A refused kernel was replayed at the whole-warp shape only: "clean" there.
    return {
        "kernels": len(outcomes),
        "counts": {f"{s} / {d}": n for (s, d), n in sorted(counts.items())},
        "unsound": unsound,
        "dynamically_clean": len(clean),
        "clean_refused_by_compiled_form": refused_after,
        "clean_refused_by_source_analysis": refused_before,
        "divergent_accepted_by_source_analysis": source_unsound,
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
