"""The CPU race and synchronization checker: ``simtsafe.sim.check``.

Replays one launch of a kernel (simtsafe or raw ``numba.cuda.jit``) on the
CPU under its own deterministic scheduler, with every memory access and
synchronization recorded, and reports data races, divergent barriers, bad
warp masks, out-of-bounds accesses, uses of uninitialized memory and writes
through a leader's witness that no leader ran, with thread coordinates and
source lines. See docs/checker.md.

Layout: ``_check`` (the entry point), ``_source`` (which function runs, over
which globals), ``_device`` (the fake ``numba.cuda`` API), ``_sched`` (the
baton scheduler), ``_threads`` (simulated threads and blocks), ``_sync``
(barriers, warp collectives, grid sync: arrival and resolution), ``_warp``
(warp collective results), ``_hb`` (happens-before, shadow memory, race
checks), ``_uninit`` (uninitialized memory: origins and uses of undefined
values), ``_leaders`` (leader-witness writes no leader ran), ``_poison`` (an
undefined value, propagated by arithmetic),
``_memory`` (recorded arrays), ``_findings`` / ``_report`` (what is
reported), ``_cli`` (``simtsafe sim-check``).
"""

from .._errors import KernelCheckError as KernelCheckError
from ._check import DEFAULT_MAX_STEPS as DEFAULT_MAX_STEPS
from ._check import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from ._check import assert_clean as assert_clean
from ._check import check as check
from ._report import KINDS as KINDS
from ._report import CheckReport as CheckReport
from ._report import Finding as Finding
from ._report import ThreadRef as ThreadRef

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TIMEOUT",
    "KINDS",
    "CheckReport",
    "Finding",
    "KernelCheckError",
    "ThreadRef",
    "assert_clean",
    "check",
]
