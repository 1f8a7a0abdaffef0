"""Static verdicts against dynamic ones, on generated kernels that write shared memory
(tests/kernels/generated_races.py).

For each seed:

* the *static* verdict is what a user gets: the kernel is decorated (the source-level
  rules, the tile-phase analysis among them) and compiled to PTX with NVVM
  (``kernel.ptx(cc=(9, 0))``: Numba's typing with simtsafe's rules, then the
  compiled-form checks), accepted or refused with a rule. Beside it the *compiled*
  verdict: the same kernel decorated with the source-level phase analysis switched
  off, so that the compiled form alone decides (docs/safety.md, "Decided twice": the
  compiled form is the check that decides; the source analysis words early messages);
* the *dynamic* verdict: ``simtsafe.sim.check`` replays the kernel (decorated without
  the source phase analysis, so refused kernels replay too) at every launch shape its
  contract admits (one or two blocks; 64 threads, or 40: a partial warp) and
  ``n`` = 0, 1, 2 (a refused kernel only until a replay breaks a promise or raises),
  then with a second input whose values have the other signs (``n`` = 1 for an
  accepted kernel; 0 to 3 for a refused one the first replays found nothing wrong
  with), and gives the set of what it found: ``race`` (with the kind of memory;
  ``race:dead`` for a race of shared memory whose read the compiled code does not make:
  the analysed IR has no shared-memory read at its line, a read LLVM dropped as dead),
  ``barrier_divergence``, ``warp_mask``, ``out_of_bounds`` (a read or a write),
  ``uninitialized``, ``dropped_write``, ``raised`` (a simulated thread raised),
  ``incomplete``; none of them is ``clean``.

Soundness: no kernel accepted (by either verdict) may show a finding that breaks a
promise of docs/safety.md (``BROKEN_PROMISES``): a race, a divergent barrier or warp
collective, an out-of-bounds write. A ``race:dead`` is not one: the compiled code, which is
what runs and what the compiled form decides on, does not make the access (the source-level
analysis refuses such kernels: docs/safety.md, "Decided twice"). Reads of a tile element nobody wrote
(``uninitialized``), out-of-bounds *reads* by plain int of an input, and a leader write
some lanes ran without the leader (``dropped_write``) are documented as not enforced.
Precision: of the kernels that replay clean, how many the static check refuses, and by
which rule.
"""

from __future__ import annotations

import contextlib
import linecache
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.generated_races import A2_SHAPE, A_SIZE, H_SIZE, generate

__all__ = [
    "BROKEN_PROMISES",
    "CompiledAccesses",
    "Outcome",
    "check_source",
    "compiled_form_only",
    "dynamic",
    "run",
    "summarize",
]

#: Dynamic findings that no accepted kernel may show (docs/safety.md, "What is enforced").
BROKEN_PROMISES = frozenset(
    {
        "race:shared",
        "race:output",
        "race:other",
        "barrier_divergence",
        "warp_mask",
        "out_of_bounds:write",
    }
)
NS = (0, 1, 2)
_A = ((np.arange(A_SIZE) * 7) % 11 - 4).astype(np.int32)
#: The second input a refused kernel that replayed safe gets (signs flipped), with n = 3:
#: a refusal whose race or divergence needs other data shows there.
_A_FLIPPED = (1 - _A).astype(np.int32)
_A2 = (np.arange(A2_SHAPE[0] * A2_SHAPE[1]) % 13).astype(np.int32).reshape(A2_SHAPE)


@dataclass
class Outcome:
    seed: int
    contract: str
    static: str  # "accepted" or "refused:<rule>" (decoration and compile, as users get it)
    compiled: str  # the same with the source-level phase analysis off
    dynamic: list[str]  # sorted finding kinds over every launch; ["clean"] if none
    features: list[str]
    message: str = ""  # the static refusal's first line
    details: list[str] = field(default_factory=list)  # the first finding of each kind

    @property
    def safe(self) -> bool:
        """Every replay ran to its end and broke no promise."""
        return self.dynamic != ["not-run"] and not any(
            k in BROKEN_PROMISES or k.startswith("raised") or k == "incomplete"
            for k in self.dynamic
        )

    @property
    def unsound(self) -> list[str]:
        """The broken promises of a kernel some static verdict accepts."""
        if "accepted" not in (self.static, self.compiled):
            return []
        return sorted(BROKEN_PROMISES & set(self.dynamic))


@contextlib.contextmanager
def compiled_form_only() -> Iterator[None]:
    """Decorate and compile with the source-level tile-phase analysis switched off."""
    from simtsafe.decoration import _rewrite

    saved = _rewrite.check_phases
    _rewrite.check_phases = lambda *args, **kwargs: None
    try:
        yield
    finally:
        _rewrite.check_phases = saved


@dataclass
class CompiledAccesses:
    """The lines at which the analysed IR (the compiled form's) reads shared memory:
    (file, line) -> the access kinds there, ``read`` or ``write`` (an atomic, a call both);
    ``decided`` is False when some access has no line of its own (no debug location, or
    line 0: a load LLVM hoisted or merged), and then no line can be said to lack a read."""

    lines: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    decided: bool = True

    def reads_at(self, location: tuple[Any, Any]) -> bool:
        """Whether the compiled code may read shared memory at ``location``.

        Only reads are judged: the replay places some writes elsewhere than the compiled
        code (an asynchronous fill lands at the wait, where the IR has only the wait), so
        a write missing from its line says nothing. A caveat: a load LLVM merges into an
        earlier one of the same address (GVN) keeps the earlier line only; the replay
        reports the race of the later read, unless the earlier read races too.
        """
        if not self.decided:
            return True
        return "read" in self.lines.get((str(location[0]), int(location[1])), set())


@contextlib.contextmanager
def recording_compiled_accesses(into: list[CompiledAccesses]) -> Iterator[None]:
    """Record, each time the compiled form checks tile phases, the lines of the shared
    memory accesses of the IR it analyses (``verify._tilephases``'s own reading of it)."""
    from simtsafe.verify import _tilephases, _verdict

    right = _verdict.check_tile_phases

    def recording(form: Any, kernel: str, where: Any, line_of: Any, fallback: Any) -> None:
        found = CompiledAccesses()
        objects = _tilephases.shared_objects(form)
        if objects:
            finder = _tilephases._Finder(form, objects)
            for b in form.blocks:
                for ins in b.instrs:
                    kinds = {k for k, objs in finder.accesses(ins) if objs}
                    if not kinds:
                        continue
                    places = {ins.loc, line_of(ins)} - {None}
                    if ins.loc is None or ins.loc[1] == 0 or not places:
                        found.decided = False
                    words = {"read" if k in _tilephases.READS else "write" for k in kinds}
                    if kinds & {"update", "other"}:
                        words = {"read", "write"}
                    for place in places:
                        found.lines.setdefault((str(place[0]), int(place[1])), set()).update(words)
        into.append(found)
        right(form, kernel, where, line_of, fallback)

    _verdict.check_tile_phases = recording
    try:
        yield
    finally:
        _verdict.check_tile_phases = right


def launch_args(grid: int, block: int, n: int, flipped: bool = False) -> tuple[Any, ...]:
    warps = grid * -(-block // 32)
    return (
        np.zeros(grid * block, np.float32),
        np.zeros(2 * grid * block, np.int32),
        np.zeros(grid, np.int32),
        np.zeros(warps, np.int32),
        np.zeros(H_SIZE, np.int32),
        _A_FLIPPED if flipped else _A,
        _A2,
        np.int64(n),
    )


def _classify(finding: Any, compiled: CompiledAccesses | None = None) -> str:
    kind = finding.kind
    if kind == "race":
        array = finding.array or ""
        if array == "shared":
            if compiled is not None and any(
                what == "read" and not compiled.reads_at(where)
                for where, what in zip(finding.locations, finding.accesses, strict=True)
            ):
                return "race:dead"  # a read the compiled code does not make
            return "race:shared"
        if array in ("out", "o2", "pb", "pw", "h"):
            return "race:output"
        return "race:other"
    if kind == "out_of_bounds":
        return "out_of_bounds:write" if "write" in finding.accesses else "out_of_bounds:read"
    return str(kind)


def _describe(finding: Any) -> str:
    where = []
    for file, line in finding.locations:
        where.append(f"{line}: {linecache.getline(str(file), int(line)).strip()}")
    return f"{finding.kind} {finding.array} {finding.accesses} | " + " || ".join(where)


def dynamic(
    kernel: Any,
    shapes: tuple[tuple[int, int], ...],
    ns: tuple[int, ...] = NS,
    flipped: bool = False,
    shared_mem: int | None = None,
    compiled: CompiledAccesses | None = None,
    justify: bool = False,
) -> tuple[list[str], list[str]]:
    """The finding kinds of the replays at every shape and ``n``, and a line for each
    (``flipped``: with the second input; ``compiled``: the shared memory accesses of the
    compiled code, to tell a race of a read it does not make, ``race:dead``; ``justify``:
    for a refused kernel, stop after the first replay that breaks a promise or raises,
    which justifies the refusal -- the replays left could change no verdict)."""
    kinds: set[str] = set()
    details: dict[str, str] = {}
    for grid, block in shapes:
        for n in ns:
            if justify and any(k in BROKEN_PROMISES or k.startswith("raised") for k in kinds):
                break
            try:
                args = launch_args(grid, block, n, flipped)
                report = ss.sim.check(kernel, grid, block, *args, timeout=60, shared_mem=shared_mem)
            except ss.SafetyError as exc:
                kind = f"raised:{exc.rule}"
                kinds.add(kind)
                details.setdefault(kind, f"grid {grid} block {block} n {n}: {exc.message[:300]}")
                continue
            except Exception as exc:  # noqa: BLE001 - a simulated thread's error
                kind = f"raised:{type(exc).__name__}"
                kinds.add(kind)
                details.setdefault(kind, f"grid {grid} block {block} n {n}: {str(exc)[:300]}")
                continue
            if not report.complete:
                kinds.add("incomplete")
            for f in report.findings:
                kind = _classify(f, compiled)
                kinds.add(kind)
                details.setdefault(kind, f"grid {grid} block {block} n {n}: {_describe(f)}")
    if not kinds:
        return ["clean"], []
    return sorted(kinds), [details[k] for k in sorted(details)]


def _static(kernel: Any) -> tuple[str, str]:
    try:
        kernel.ptx(cc=(9, 0))
    except ss.SafetyError as exc:
        return f"refused:{exc.rule}", exc.message.splitlines()[0][:400]
    return "accepted", ""


def check_source(
    seed: int,
    source: str,
    contract: str,
    shapes: Any,
    features: list[str],
    folder: Path,
    shared_mem: int | None = None,
) -> Outcome:
    """Both static verdicts and the dynamic one of one generated module's kernel ``k``."""
    where = folder / f"s{seed}"
    where.mkdir(exist_ok=True)
    static, message = "", ""
    try:
        load_kernel_module(where, source)
    except ss.SafetyError as exc:  # a decoration rule: tile phases, out-tile routes...
        static, message = f"refused:{exc.rule}", exc.message.splitlines()[0][:400]
    with compiled_form_only():
        try:
            kernel = load_kernel_module(where, source).k
        except ss.SafetyError as exc:  # another decoration rule: nothing compiles or replays
            rule = f"refused:{exc.rule}"
            msg = exc.message.splitlines()[0][:400]
            return Outcome(
                seed, contract, static or rule, rule, ["not-run"], features, message or msg
            )
        recorded: list[CompiledAccesses] = []
        with recording_compiled_accesses(recorded):
            compiled, cmessage = _static(kernel)
        # (none when the compiled form refused the kernel before it looked at tile phases)
        accesses = recorded[-1] if recorded else None
        refused = "accepted" not in (static or compiled, compiled)
        kinds, details = dynamic(
            kernel, shapes, shared_mem=shared_mem, compiled=accesses, justify=refused
        )
        if not refused:
            # an acceptance: the other input too (branches on input values go the other way)
            more, more_details = dynamic(
                kernel, shapes, (1,), flipped=True, shared_mem=shared_mem, compiled=accesses
            )
        elif not any(k in BROKEN_PROMISES or k.startswith("raised") for k in kinds):
            # a refusal the replays did not justify: the other input, and n = 3
            more, more_details = dynamic(
                kernel, shapes, (*NS, 3), flipped=True, shared_mem=shared_mem, compiled=accesses
            )
        else:
            more, more_details = ["clean"], []
        kinds = sorted((set(kinds) | set(more)) - {"clean"}) or ["clean"]
        details += [f"(second input) {d}" for d in more_details]
    if not static:
        static, message = compiled, cmessage
    return Outcome(seed, contract, static, compiled, kinds, features, message or cmessage, details)


def check_seed(seed: int, folder: Path) -> Outcome:
    g = generate(seed)
    return check_source(
        seed, g.source, g.contract, g.shapes, sorted(g.features), folder, g.shared_mem
    )


def _chunk(seeds: list[int]) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="ss_race_") as tmp:
        out = []
        for s in seeds:
            try:
                out.append(check_seed(s, Path(tmp)))
            except Exception as exc:  # noqa: BLE001 - an internal error is an outcome too
                g = generate(s)
                out.append(
                    Outcome(
                        s, g.contract, f"error:{type(exc).__name__}", "error", ["not-run"],
                        sorted(g.features), str(exc).splitlines()[0][:400] if str(exc) else "",
                    )
                )  # fmt: skip
        return out


def run(
    seeds: range | list[int], workers: int | None = None, progress: bool = False
) -> list[Outcome]:
    """Check every seed, in ``workers`` processes (default: the CPUs, at most 4), in chunks
    of 10 seeds; ``progress``: a line on stderr after each chunk."""
    seeds_list = list(seeds)
    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1 or len(seeds_list) < 2:
        return _chunk(seeds_list)
    chunks = [seeds_list[k : k + 10] for k in range(0, len(seeds_list), 10)]
    ctx = multiprocessing.get_context("fork")
    out: list[Outcome] = []
    with ctx.Pool(n, maxtasksperchild=20) as pool:
        for part in pool.imap_unordered(_chunk, chunks):
            out += part
            if progress:
                bad = sum(1 for o in out if o.unsound)
                dead = sum(1 for o in out if "race:dead" in o.dynamic)
                print(
                    f"{len(out)}/{len(seeds_list)} kernels, {bad} unsound, {dead} with a race "
                    "on a read the compiled code does not make",
                    file=sys.stderr,
                )
    out.sort(key=lambda o: o.seed)
    return out


def summarize(outcomes: list[Outcome]) -> dict[str, object]:
    """Counts (static x dynamic), the unsound acceptances and the false refusals by rule."""

    def dyn(o: Outcome) -> str:
        return "+".join(o.dynamic)

    counts = Counter((o.static, dyn(o)) for o in outcomes)
    compiled_counts = Counter((o.compiled, dyn(o)) for o in outcomes)
    unsound = [
        {"seed": o.seed, "static": o.static, "compiled": o.compiled, "broken": o.unsound,
         "details": o.details}
        for o in outcomes if o.unsound
    ]  # fmt: skip
    # "safe": the replays broke no promise and ran to the end (a tile element read before
    # anyone wrote it, an input read out of range, a dropped leader write are not promises)
    safe = [o for o in outcomes if o.safe]
    false_refusals = Counter(o.static for o in safe if o.static != "accepted")
    compiled_false = Counter(o.compiled for o in safe if o.compiled != "accepted")
    inconclusive = [
        {"seed": o.seed, "static": o.static, "dynamic": o.dynamic, "details": o.details}
        for o in outcomes
        if "accepted" in (o.static, o.compiled) and not o.safe and not o.unsound
    ]
    # races of a read the compiled code does not make (a dead read): counted apart, in
    # no promise (the compiled form rightly sees no access; the source analysis refuses)
    dead = [o for o in outcomes if "race:dead" in o.dynamic]
    features: Counter[str] = Counter()
    for o in outcomes:
        features.update(o.features)
    return {
        "kernels": len(outcomes),
        "counts": {f"{s} / {d}": k for (s, d), k in sorted(counts.items())},
        "compiled_form_counts": {f"{s} / {d}": k for (s, d), k in sorted(compiled_counts.items())},
        "accepted": sum(1 for o in outcomes if o.static == "accepted"),
        "accepted_by_compiled_form": sum(1 for o in outcomes if o.compiled == "accepted"),
        "unsound": unsound,
        "dead_races": {
            "kernels": len(dead),
            "accepted_by_compiled_form": sum(1 for o in dead if o.compiled == "accepted"),
            "accepted": sum(1 for o in dead if o.static == "accepted"),
            "seeds": [o.seed for o in dead][:50],
        },
        "accepted_inconclusive": inconclusive,
        "dynamically_safe": len(safe),
        "safe_refused": dict(false_refusals.most_common()),
        "safe_refused_by_compiled_form": dict(compiled_false.most_common()),
        "features": dict(sorted(features.items())),
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def as_json(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    return [asdict(o) for o in outcomes]
