"""The runner of a porting corpus (tests/kernels/port15.py, port17.py): its cases' sources,
their loading, and a one-line verdict per case -- NVVM and ``simtsafe.check_kernel`` on the
CUDA target, the case's numpy check on the simulator.

    PYTHONPATH=. .venv/bin/python -m tests.kernels.portNN NAME...                          # NVVM
    NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. .venv/bin/python -m tests.kernels.portNN NAME...   # simulator
"""

from __future__ import annotations

import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["Corpus", "to_device", "to_host"]


def to_device(a: np.ndarray) -> Any:
    """A host array on the device (the simulator's, under NUMBA_ENABLE_CUDASIM). float16 and
    bfloat16 go through their bits: Numba's copy to a GPU takes no buffer of either."""
    from numba import cuda

    if a.dtype.kind == "f" and a.dtype.itemsize == 2 or a.dtype.name == "bfloat16":
        return cuda.to_device(a.view(np.uint16)).view(a.dtype)
    return cuda.to_device(a)


def replay_clean(prepared: Any, args: tuple[Any, ...], unclean: dict[str, str]) -> bool:
    """``sim.check`` of one prepared launch with host copies of ``args``: no finding (a report
    that has one goes into ``unclean``, by the launch, and is printed)."""
    from simtsafe import sim

    rep = sim.check(prepared, *args)
    if not rep.ok:
        unclean[str(prepared)] = str(rep)
        print(rep)
    return bool(rep.ok)


def to_host(d: Any) -> np.ndarray:
    """A device array's values on the host."""
    return np.asarray(d.copy_to_host())


@dataclass(frozen=True)
class Corpus:
    """A porting round's cases: accepted module bodies, their numpy checks, and the refused or
    misreported ones (each a dict with its ``source``)."""

    header: str
    accepted: dict[str, str]
    checks: dict[str, Callable[[ModuleType, np.random.Generator], bool]]
    false_refusals: dict[str, dict[str, Any]]
    bad_errors: dict[str, dict[str, Any]]
    doc_gaps: dict[str, dict[str, Any]]
    seed: int

    def source(self, name: str) -> str:
        if name in self.accepted:
            return self.accepted[name]
        for group in (self.false_refusals, self.bad_errors, self.doc_gaps):
            if name in group:
                return str(group[name]["source"])
        raise KeyError(name)

    def load(self, name: str, tmp: Path) -> ModuleType:
        """Import case ``name``'s module body (decoration errors propagate)."""
        from tests.kernels import load_kernel_module

        return load_kernel_module(tmp, self.header + self.source(name))

    def run_case(self, name: str) -> str:
        """Compile (CUDA target) or run and compare with numpy (simulator): a verdict."""
        import simtsafe as ss

        with tempfile.TemporaryDirectory() as d:
            try:
                mod = self.load(name, Path(d))
            except Exception as exc:  # noqa: BLE001 - report whatever the user would see
                return f"REFUSED at decoration: {type(exc).__name__}: {exc}"
            kernels = {k: v for k, v in vars(mod).items() if isinstance(v, ss.Kernel)}
            if not ss.SIMULATOR:
                return " | ".join(
                    f"{kname}: " + _findings(ss.check_kernel(k)) for kname, k in kernels.items()
                )
            check = self.checks.get(name)
            if check is None:
                return "no simulator check"
            try:
                ok = check(mod, np.random.default_rng(self.seed))
            except Exception as exc:  # noqa: BLE001
                return f"ERROR at launch: {type(exc).__name__}: {exc}"
            return "numpy check: " + ("PASS" if ok else "FAIL")

    def main(self, argv: list[str]) -> int:
        names = argv or [
            *self.accepted,
            *self.false_refusals,
            *self.bad_errors,
            *self.doc_gaps,
        ]
        for name in names:
            try:
                verdict = self.run_case(name)
            except Exception:  # noqa: BLE001
                verdict = "HARNESS ERROR\n" + traceback.format_exc()
            print(f"[{name}] {verdict}", flush=True)
        return 0


def _findings(findings: list[Any]) -> str:
    if not findings:
        return "ok"
    return "; ".join(f"{f.code} line {f.line}: {f.message}" for f in findings)
