"""What a check reports: ``Finding`` records and the ``CheckReport`` that holds them.

A finding names one defect the replay observed: its kind, the array and
element (for memory findings), the two threads involved, what each did and
where (file and line), and how many times the same (kind, source lines)
pair was seen. Findings are plain frozen data; ``CheckReport`` renders them
for people (``str``) and programs (``to_json``).
"""

from __future__ import annotations

import json
import linecache
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np

__all__ = ["KINDS", "CheckReport", "Finding", "Kind", "ThreadRef"]

Kind = Literal[
    "race", "barrier_divergence", "warp_mask", "out_of_bounds", "uninitialized", "dropped_write"
]

#: Every finding kind, in the order the report lists them.
KINDS: Final[tuple[Kind, ...]] = (
    "race",
    "barrier_divergence",
    "warp_mask",
    "out_of_bounds",
    "uninitialized",
    "dropped_write",
)

Location = tuple[str, int]


@dataclass(frozen=True)
class ThreadRef:
    """One CUDA thread of the launch: its block and thread coordinates (x, y, z)."""

    block: tuple[int, int, int]
    thread: tuple[int, int, int]

    def __str__(self) -> str:
        return f"block {_dim(self.block)} thread {_dim(self.thread)}"

    def to_dict(self) -> dict[str, list[int]]:
        return {"block": list(self.block), "thread": list(self.thread)}


@dataclass(frozen=True)
class Finding:
    """One defect, deduplicated per (kind, source lines).

    Attributes:
        kind: ``race``, ``barrier_divergence``, ``warp_mask``,
            ``out_of_bounds``, ``uninitialized`` or ``dropped_write`` (a write through a
            leader witness that a block's or warp's leader never ran).
        array: the array's parameter name, ``shared``, ``local`` or
            ``const`` (None for synchronization findings).
        index: the element's index in that array (None for synchronization
            findings; for out-of-bounds, the index as the kernel wrote it).
        threads: the two threads involved, first the earlier one. A finding
            about one thread (out-of-bounds; uninitialized when the loading
            thread is the one using the value) names it twice.
        accesses: what each thread did: ``read``, ``write``, ``atomic`` for
            memory findings (``read`` then ``use`` for uninitialized: the
            load of the undefined value and where it was used); the operation
            (``syncthreads``, ``shfl_sync``, ``exit``...) for synchronization
            findings.
        locations: (file, line) of each thread's operation, same order.
        count: how many times this (kind, source lines) pair was observed.
        message: one sentence saying what is wrong.
    """

    kind: Kind
    array: str | None
    index: tuple[int, ...] | None
    threads: tuple[ThreadRef, ThreadRef]
    accesses: tuple[str, str]
    locations: tuple[Location, Location]
    count: int
    message: str

    @property
    def lines(self) -> tuple[int, int]:
        """The two source line numbers (same order as ``locations``)."""
        return (self.locations[0][1], self.locations[1][1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "array": self.array,
            "index": list(self.index) if self.index is not None else None,
            "threads": [t.to_dict() for t in self.threads],
            "accesses": list(self.accesses),
            "locations": [{"file": f, "line": n} for f, n in self.locations],
            "count": self.count,
            "message": self.message,
        }

    def __str__(self) -> str:
        head = f"{self.kind}"
        if self.array is not None:
            head += f" on {self.array}"
            if self.index is not None:
                head += "[" + ", ".join(str(i) for i in self.index) + "]"
        if self.count > 1:
            head += f" (seen {self.count} times)"
        lines = [head + ": " + self.message]
        same = self.threads[0] == self.threads[1] and self.locations[0] == self.locations[1]
        pairs = list(zip(self.accesses, self.threads, self.locations, strict=True))
        for access, thread, (filename, lineno) in pairs[:1] if same else pairs:
            lines.append(f"  {access:<8} by {thread} at {filename}:{lineno}")
            text = linecache.getline(filename, lineno).strip()
            if text:
                lines.append(f"      {text}")
        return "\n".join(lines)


@dataclass(frozen=True)
class CheckReport:
    """The result of ``simtsafe.sim.check``.

    Attributes:
        kernel: the kernel's name.
        grid: the launch grid (x, y, z).
        block: the launch block (x, y, z).
        shared_mem: dynamic shared memory in bytes.
        findings: the defects observed, in the order first seen.
        stats: ``threads``, ``blocks``, ``accesses``, ``barriers``,
            ``warp_ops``, ``steps``, ``time_s``.
        complete: False when the replay stopped early (step or time limit,
            see ``stopped``): findings so far are real, but the rest of the
            launch was not checked.
        stopped: why the replay stopped early, or None.
        outputs: the final value of every array argument after the replay
            (copies; the caller's arrays are never modified), by parameter name.
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    findings: tuple[Finding, ...]
    stats: dict[str, Any]
    complete: bool = True
    stopped: str | None = None
    outputs: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict, compare=False)

    @property
    def ok(self) -> bool:
        """No finding, and the whole launch was replayed."""
        return self.complete and not self.findings

    def of_kind(self, kind: Kind) -> list[Finding]:
        """The findings of one kind."""
        return [f for f in self.findings if f.kind == kind]

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (findings, stats, completeness; not the outputs)."""
        return json.dumps(
            {
                "kernel": self.kernel,
                "grid": list(self.grid),
                "block": list(self.block),
                "shared_mem": self.shared_mem,
                "ok": self.ok,
                "complete": self.complete,
                "stopped": self.stopped,
                "stats": self.stats,
                "findings": [f.to_dict() for f in self.findings],
            },
            indent=indent,
        )

    def summary(self) -> str:
        """One line: kernel, launch, verdict."""
        launch = f"grid {_dim(self.grid)} block {_dim(self.block)}"
        if self.shared_mem:
            launch += f" shared_mem {self.shared_mem}"
        if self.findings:
            kinds: dict[str, int] = {}
            for f in self.findings:
                kinds[f.kind] = kinds.get(f.kind, 0) + 1
            verdict = f"{len(self.findings)} finding(s) (" + ", ".join(
                f"{n} {k}" for k, n in kinds.items()
            )
            verdict += ")"
        else:
            verdict = "no findings"
        if not self.complete:
            verdict += f"; INCOMPLETE: {self.stopped}"
        return f"simtsafe.sim.check: kernel {self.kernel!r}, {launch}: {verdict}"

    def __str__(self) -> str:
        s = self.stats
        parts = [self.summary()]
        parts += [f"[{i}] {f}" for i, f in enumerate(self.findings, 1)]
        parts.append(
            f"replayed {s.get('threads', 0)} threads in {s.get('blocks', 0)} blocks: "
            f"{s.get('accesses', 0)} memory accesses, {s.get('barriers', 0)} barriers, "
            f"{s.get('warp_ops', 0)} warp operations in {s.get('time_s', 0.0):.2f} s"
        )
        return "\n".join(parts)


def _dim(d: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(int(v)) for v in d) + ")"
