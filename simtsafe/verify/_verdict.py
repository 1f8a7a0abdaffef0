"""The verdict on a compiled kernel: every Tier-1 barrier and collective reached by its whole scope.

``check_sites`` runs the divergence analysis (``_divergence``) on the
kernel's compiled form and refuses the first collective whose block is
control dependent on a branch more divergent than its scope allows. The
refusal is reported where a user fixes it: the collective's line and the
branch's line in the innermost function that holds both (a barrier inside
a helper called under a thread-dependent ``if`` is reported at the call),
with what makes the branch divergent (a ``threadIdx`` read, a load, an
atomic's result, a value assigned under another branch, a loop that
threads leave at different iterations, an early exit).

Untagged barriers and shuffles (raw ``numba.cuda`` operations) are the
author's responsibility inside ``simtsafe.unsafe`` regions and are refused
anywhere else (they can only come from a lowering bug).

``check_grid_phases`` refuses a ``simtsafe.grid.read`` of an output that may
run in the same grid phase as a write of that output (``_phases``), and
``_tilephases.check_tile_phases`` a read of a shared tile or accumulator that
may share a barrier interval with another thread's write of it.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._errors import SafetyError
from ..lowering._irform import FunctionForm, Instr, Opaque
from ._divergence import (
    BLOCK,
    GRID,
    LEVEL_NAMES,
    ONE_D_BLOCK,
    SCOPE_LEVEL,
    THREAD,
    UNKNOWN,
    WARP,
    Divergence,
    analyze,
    callee_scope,
    convergent_scope,
    pointer_roots,
    written_by,
)
from ._feasible import tuple_index_switch
from ._phases import last_syncs
from ._ranges import InputInfo
from ._tilephases import check_tile_phases

__all__ = ["SourceInfo", "check_grid_phases", "check_sites", "purity", "stores_in_unsafe"]

Frame = tuple[str, int]  # (filename, line)


@dataclass(frozen=True)
class SourceInfo:
    """What the verdict needs to know about the kernel's source."""

    kernel: str
    filename: str
    first_line: int
    last_line: int
    #: (filename, first line, last line) of every ``simtsafe.unsafe`` region of the
    #: kernel and of the helpers it calls
    unsafe: tuple[tuple[str, int, int], ...] = ()
    #: (name, element size, elements the contract guarantees, scalar parameters it
    #: keeps at most the input's size) of every 1D input
    inputs: tuple[tuple[str, int, int, tuple[str, ...]], ...] = ()
    #: the contract's exact block (every checked launch has it), or None
    block: tuple[int, int, int] | None = None
    #: the contract proves every launch one-dimensional (``domain=1``: ``prepare`` refuses
    #: other blocks), so without an exact block the block is still ``(bx, 1, 1)``
    one_d: bool = False

    def readable(self, form: FunctionForm) -> dict[str, InputInfo]:
        """The inputs by data pointer in ``form`` (Numba passes an array ``a`` as ``%a.0`` ...
        ``%a.6.k``: ``.2`` its size, ``.4`` its data, ``.5.0`` its extent, ``.6.0`` its stride)."""
        out: dict[str, InputInfo] = {}
        for name, itemsize, elements, bounded in self.inputs:
            pointer = f"%{name}.4"
            if pointer in form.params:
                out[pointer] = InputInfo(
                    param=name,
                    itemsize=itemsize,
                    elements=elements,
                    extents=frozenset({f"%{name}.5.0", f"%{name}.2"}),
                    bounded=frozenset(f"%{n}" for n in bounded if f"%{n}" in form.params),
                    stride=f"%{name}.6.0",
                )
        return out

    def in_kernel(self, loc: Frame) -> bool:
        return loc[0] == self.filename and self.first_line <= loc[1] <= self.last_line

    def in_unsafe(self, loc: Frame | None) -> bool:
        return loc is not None and any(f == loc[0] and a <= loc[1] <= b for f, a, b in self.unsafe)


def purity(form: FunctionForm, trust_const: bool = True) -> int:
    """The least uniform value or branch of a function analyzed with uniform arguments
    (constant memory trusted as in the kernel that calls it: ``stores_in_unsafe``)."""
    d = analyze(form, trust_const=trust_const)
    if any(convergent_scope(i) for b in form.blocks for i in b.instrs):
        return THREAD
    return max([GRID, *d.levels.values(), *d.branch.values()])


class _Locator:
    """Maps instructions of the inlined form back to the user's frames."""

    def __init__(self, d: Divergence, info: SourceInfo) -> None:
        self.d = d
        self.info = info
        self.markers = d.form.call_markers
        self.index = {id(ins): (b.name, k) for b in d.form.blocks for k, ins in enumerate(b.instrs)}

    def _backwards(self, block: str, k: int) -> Sequence[tuple[str, int, Instr]]:
        """Instructions before (block, k) in dominance order, nearest first."""
        out: list[tuple[str, int, Instr]] = []
        b: str | None = block
        limit = k
        seen: set[str] = set()
        while b is not None and b not in seen:
            seen.add(b)
            instrs = self.d.blocks[b].instrs
            for j in range(min(limit, len(instrs)) - 1, -1, -1):
                out.append((b, j, instrs[j]))
            parent = self.d.graph.idom.get(b)
            b = None if parent is None or parent == b else parent
            limit = 1 << 30
        return out

    def loc_of(self, ins: Instr) -> Frame | None:
        if ins.loc is not None:
            return ins.loc
        block, k = self.index[id(ins)]
        for _b, _j, prev in self._backwards(block, k):
            if prev.loc is not None:
                return prev.loc
        return None

    def frames(self, ins: Instr) -> list[tuple[Frame, str | None]]:
        """[(kernel frame line, None), (helper line, helper name), ...] for ``ins``."""
        chain: list[tuple[Frame, str | None]] = []
        current = ins
        for _depth in range(32):
            loc = self.loc_of(current)
            if loc is None:
                break
            if self.info.in_kernel(loc):
                chain.append((loc, None))
                break
            block, k = self.index[id(current)]
            # the nearest call whose helper's module may hold the line: a library helper
            # called earlier in the same body has returned (cmath.exp's before a tile read);
            # the nearest call at all where none may (a module named unlike its file)
            nearest = marker = None
            for _b, _j, prev in self._backwards(block, k):
                callee = prev.callee or ""
                if prev.opcode == "call" and callee.startswith("__ss.at."):
                    nearest = nearest or prev
                    if _defined_in(self.markers[int(callee.rsplit(".", 1)[1])], loc[0]):
                        marker = prev
                        break
            marker = marker or nearest
            if marker is None:
                chain.append((loc, None))
                break
            helper = self.markers[int(marker.callee.rsplit(".", 1)[1])]  # type: ignore[union-attr]
            chain.append((loc, _helper_name(helper)))
            current = marker
        chain.reverse()
        return chain


def _mangled_parts(mangled: str) -> list[str]:
    """The names of a Numba-mangled function name (``_ZN5numba4cuda...8exp_implB2v...``)."""
    parts: list[str] = []
    if mangled.startswith("_ZN"):
        i = 3
        while i < len(mangled) and mangled[i].isdigit():
            j = i
            while j < len(mangled) and mangled[j].isdigit():
                j += 1
            n = int(mangled[i:j])
            parts.append(mangled[j : j + n])
            i = j + n
    return parts


def _defined_in(mangled: str, filename: str) -> bool:
    """May the helper ``mangled`` be defined in ``filename``: its module's dotted name ends
    the file's path (``numba.cuda.cpython.cmathimpl`` for ``.../numba/cuda/cpython/
    cmathimpl.py``)? True where the name says nothing."""
    parts = _mangled_parts(mangled)
    path = filename.removesuffix(".py").replace("\\", "/").replace("/", ".")
    if len(parts) < 2 or not path:
        return True
    return any(
        path == ".".join(parts[:k]) or path.endswith("." + ".".join(parts[:k]))
        for k in range(len(parts) - 1, 0, -1)
    )


def _helper_name(mangled: str) -> str:
    """The Python name inside a Numba-mangled function name (``_ZN...6helperB2v...``)."""
    parts = _mangled_parts(mangled)
    return parts[-1] if parts else mangled


def _common(a: list[tuple[Frame, str | None]], b: list[tuple[Frame, str | None]]) -> int:
    """The depth of the innermost frame both chains share (0: the kernel itself)."""
    depth = 0
    while (
        depth + 1 < len(a)
        and depth + 1 < len(b)
        and a[depth][0] == b[depth][0]
        and a[depth + 1][1] == b[depth + 1][1]
    ):
        depth += 1
    return depth


class _Explainer:
    def __init__(self, d: Divergence, loc: _Locator) -> None:
        self.d = d
        self.loc = loc

    def where(self, ins: Instr | None) -> str:
        if ins is None:
            return "an earlier line"
        frames = self.loc.frames(ins)
        if not frames:
            return "an earlier line"
        (f0, _), *rest = frames
        text = f"line {f0[1]}"
        if rest:
            (fl, name) = rest[-1]
            text += f" (in helper {name}, line {fl[1]})"
        return text

    def value(self, name: str, above: int, depth: int = 0) -> str:
        """Why ``name`` is less uniform than ``above``: its first source, in words."""
        d = self.d
        why = d.reasons.get(name)
        if why is None or depth > 60:
            return "a thread-dependent value"
        kind, ins = why.kind, why.instr
        if kind == "operand" and why.via is not None:
            return self.value(why.via, above, depth + 1)
        if kind == "join" and why.via is not None:
            src = why.via
            b = self.d.branch.get(src, GRID)
            cause = src if b > above else self._control_cause(src, above)
            if cause is not None:
                return (
                    f"a value that depends on which way the branch at "
                    f"{self.where(self.d.blocks[cause].terminator)} went"
                )
            return "a value merged from thread-dependent paths"
        if kind == "read-range" and why.read is not None:
            name, needed = why.read
            where = self.where(ins)
            if needed:
                return (
                    f"a read of input {name!r} at {where} that is the same in every thread only "
                    f"if it is in range (a read past the end may see what other threads write); "
                    f"state the size in the launch contract: requires=['{name}.size >= {needed}']"
                )
            return (
                f"a read of input {name!r} at {where} at a computed index, which simtsafe does "
                "not prove in range (a read past the end may see what other threads write); "
                "a read is trusted where its index is proven inside the input (a constant the "
                f"contract's requires cover, a guard `k < {name}.size`, `for k in range(n)` "
                f"with requires=['{name}.size >= n'], `for v in {name}`), or make the value "
                f"uniform by construction: `v = ss.block.broadcast({name}[k])`"
            )
        if kind == "loop-exit":
            return (
                f"a value computed in a loop that threads leave at different iterations "
                f"(the exit at {self.where(ins)})"
            )
        words = {
            "thread-id": "the thread's index (threadIdx, a lane id, a witness)",
            "warp-id": "the thread's warp within its block (threadIdx.x // 32, or threadIdx.y "
            "or .z where the block's rows are whole warps), the same in a warp only",
            "block-id": "blockIdx",
            "load": "a value loaded from memory (written during the launch, or at a "
            "thread-dependent address)",
            "atomic": "the result of an atomic",
            "asm": "inline assembly (a lane mask, activemask...)",
            "call": "the result of a call simtsafe cannot see into",
            "collective": "the result of a warp collective (uniform within a warp only)",
        }
        return f"{words.get(kind, kind)} at {self.where(ins)}"

    def _control_cause(self, block: str, above: int) -> str | None:
        for dep, lv in sorted(self.d.control_sources([block]).items(), key=lambda kv: -kv[1]):
            if lv > above:
                return dep
        return None

    def branch(self, block: str, above: int) -> str:
        term = self.d.blocks[block].terminator
        if term.operands:
            return self.value(term.operands[0], above)
        return "a thread-dependent value"


def check_sites(
    form: FunctionForm,
    info: SourceInfo,
    site_purity: dict[int, int] | None = None,
    trust_const: bool = True,
) -> Divergence:
    """Refuse the first Tier-1 collective some threads of its scope may not reach.

    Raises:
        SafetyError: ``rule="uniformity"``, at the collective's line, naming the
            line of the branch (or early exit) that makes control flow divergent.
    """
    d = analyze(
        form,
        site_purity,
        trust_memory=not info.unsafe,
        readable=info.readable(form),
        block=info.block or (ONE_D_BLOCK if info.one_d else None),
        trust_const=trust_const,
    )
    loc = _Locator(d, info)
    sites: dict[int, list[tuple[str, Instr]]] = {}
    raw_barriers: list[tuple[str, Instr]] = []
    for b in form.blocks:
        for ins in b.instrs:
            opaque = form.opaque.get(ins.callee or "") if ins.opcode == "call" else None
            if opaque is not None:
                _check_opaque(info, loc, ins, opaque)
                continue
            # What needs every thread are a collective's barriers and shuffles; its pure
            # arithmetic may have been sunk by LLVM into a branch that uses the result.
            if convergent_scope(ins) is None:
                continue
            if ins.site is not None:
                sites.setdefault(ins.site[2], []).append((b.name, ins))
            elif not info.in_unsafe(loc.loc_of(ins)):
                _raise_untagged(info, loc, ins)
            elif convergent_scope(ins) == "block":
                raw_barriers.append((b.name, ins))
    order = {b: k for k, b in enumerate(d.graph.order)}
    if any(m[0][1].site is not None and m[0][1].site[1] == "block" for m in sites.values()):
        # simtsafe's block barriers (and the tile phases they separate) are proven for
        # the k-th barrier every thread passes being the same one: a raw barrier under
        # thread-dependent control would pair with them differently in different warps.
        for name, ins in raw_barriers:
            bad = {b: lv for b, lv in d.control_sources({name}).items() if lv > BLOCK}
            if bad:
                api = "a raw barrier in an unsafe region, beside simtsafe's block barriers,"
                _raise_divergent(d, info, loc, api, "block", BLOCK, [(name, ins)], {name}, bad)
    for ident, members in sorted(sites.items(), key=lambda kv: order.get(kv[1][0][0], 0)):
        api, scope, _ = members[0][1].site  # type: ignore[misc]
        allowed = SCOPE_LEVEL.get(scope, GRID)
        blocks = {b for b, _ in members if b in order}
        if not blocks:
            continue  # unreachable code
        if (site_purity or {}).get(ident, GRID) > allowed:
            _raise_impure_op(info, loc, api, members[0][1])
        bad = {
            b: lv for b, lv in d.control_sources(blocks, skip_site=ident).items() if lv > allowed
        }
        if bad:
            _raise_divergent(d, info, loc, api, scope, allowed, members, blocks, bad)
    check_grid_phases(form, info, loc)
    check_tile_phases(
        form,
        info.kernel,
        _Explainer(d, loc).where,
        lambda ins: _kernel_line(loc, ins),
        (info.filename, info.first_line),
    )
    return d


def _kernel_line(loc: _Locator, ins: Instr) -> Frame | None:
    """Where ``ins`` is in the kernel itself (a helper's instruction: at the call)."""
    frames = loc.frames(ins)
    return frames[0][0] if frames else loc.loc_of(ins)


def _is_grid_sync(ins: Instr) -> bool:
    """A Tier-1 grid sync's barrier call (its grid-uniformity is proven by check_sites)."""
    return ins.site is not None and ins.site[0] == "grid.sync" and convergent_scope(ins) == "grid"


def check_grid_phases(form: FunctionForm, info: SourceInfo, loc: _Locator) -> None:
    """Refuse a ``grid.read`` of an output that may run in the same grid phase as a write of it.

    A grid read's address passes an opaque ``mov`` (inline assembly) tagged
    ``!ss.gridread``: a call, which LLVM neither retypes nor strips of its tags (a
    load it may rebuild), and whose operand's provenance names the output's data
    pointer. Every instruction that may write that pointer (a store, an atomic, a
    call that may write anything) other than the grid syncs' own calls must be
    separated from the read by a grid sync on every path: no sync (nor the entry)
    may be the last one before both (``_phases``). The phases are those of the
    Tier-1 syncs, proven grid-uniform; a raw grid barrier (an unsafe region's
    ``this_grid().sync()``, under any control flow) could pair with them
    differently in different blocks, so a kernel with a grid read has none.

    Raises:
        SafetyError: ``rule="grid-phase"``, at the read's line, naming the write's
            (or the raw barrier's).
    """
    reads = [ins for b in form.blocks for ins in b.instrs if ins.callee == "asm" and ins.gridread]
    if not reads:
        return
    raw = next(
        (
            ins
            for b in form.blocks
            for ins in b.instrs
            if convergent_scope(ins) == "grid" and not _is_grid_sync(ins)
        ),
        None,
    )
    if raw is not None:
        _raise_raw_barrier(info, loc, reads[0], raw)
    of = pointer_roots(form)
    params = set(form.params)
    writes = [
        (ins, roots)
        for b in form.blocks
        for ins in b.instrs
        if not (ins.site is not None and ins.site[0] == "grid.sync")
        and (roots := written_by(ins, of))
    ]
    last = last_syncs(form, _is_grid_sync)
    for read in reads:
        target = of(read.operands[0]) if read.operands else frozenset({UNKNOWN})
        target = target & (params | {UNKNOWN})
        for write, roots in writes:
            if not (target & roots or UNKNOWN in roots or UNKNOWN in target):
                continue
            if last[id(read)] & last[id(write)]:
                _raise_same_phase(info, loc, read, write, target)


def _raise_raw_barrier(info: SourceInfo, loc: _Locator, read: Instr, raw: Instr) -> None:
    at = loc.loc_of(read)
    filename, lineno = at if at is not None else (info.filename, info.first_line)
    where = loc.loc_of(raw)
    raise SafetyError(
        f"kernel {info.kernel!r}: grid.read needs the grid phases of simtsafe.grid.sync(), "
        f"but the kernel also has a raw grid barrier (line {where[1] if where else '?'}, "
        "inside simtsafe.unsafe): raw barriers may be reached under block-dependent control, "
        "which pairs the syncs differently in different blocks, so no phase can be proven. "
        "Use simtsafe.grid.sync() for every grid barrier of the kernel",
        kernel=info.kernel,
        rule="grid-phase",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
        cause_line=where[1] if where is not None else None,
    )


def _raise_same_phase(
    info: SourceInfo, loc: _Locator, read: Instr, write: Instr, target: frozenset[str]
) -> None:
    at = loc.loc_of(read)
    filename, lineno = at if at is not None else (info.filename, info.first_line)
    wrote = loc.loc_of(write)
    named = sorted(p.removeprefix("%").split(".")[0] for p in target if p != UNKNOWN)
    what = f"output {named[0]!r}" if named else "an output"
    where = f"line {wrote[1]}" if wrote is not None else "another line"
    raise SafetyError(
        f"kernel {info.kernel!r}: grid.read of {what} may run in the same grid phase as the "
        f"write at {where}: no simtsafe.grid.sync() separates them on every path, so one "
        "thread may read an element while another writes it. Put a grid.sync() between the "
        "writes and the reads (in a loop, one after the writes and one after the reads)",
        kernel=info.kernel,
        rule="grid-phase",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
        cause_line=wrote[1] if wrote is not None else None,
    )


def _first_located(loc: _Locator, members: list[tuple[str, Instr]]) -> Instr:
    for _b, ins in members:
        if ins.loc is not None:
            return ins
    return members[0][1]


#: ``for w in thread.block_row(s)`` / ``warp_row(s)`` on a line (not the chunked forms).
_ROW_WALK = re.compile(r"\bthread\.(block_row|warp_row)\s*\(")


def _row_walk_advice(cause_at: tuple[str, int] | None) -> str:
    """Where the divergent loop is a row walk: its chunked form, whose trip count is the
    same in every thread (advice only: the verdict itself never reads the source)."""
    if cause_at is None:
        return ""
    m = _ROW_WALK.search(linecache.getline(*cause_at))
    if m is None:
        return ""
    walk = m.group(1)
    t, step = ("t", "blockDim.x") if walk == "block_row" else ("lane", "32")
    return (
        f" (thread.{walk} gives each thread the columns {t}, {t} + {step}, ... below the width: "
        f"their number differs between threads; to call a collective per column, walk the row "
        f"in whole chunks, `for c in thread.{walk}_chunks(s)`, ceil(width / {step}) "
        "iterations in every thread, the last chunk's columns past the end addressing nothing)"
    )


_VALID = re.compile(r"\b(\w+)\.valid\b")


def _valid_exit_advice(cause_at: tuple[str, int] | None) -> str:
    """Where a chunk loop is left on a chunk's ``.valid`` (``if not c.valid: break``): the
    loop needs no exit of its own (advice only: the verdict itself never reads the source).
    Such a break may be sound -- ``.valid`` fails only in the last chunk or in a whole block
    -- but the compiled-form analysis does not relate the column to the trip count."""
    if cause_at is None:
        return ""
    m = _VALID.search(linecache.getline(*cause_at))
    if m is None:
        return ""
    c = m.group(1)
    return (
        f" (`{c}.valid` differs between threads; a chunk loop already runs the same number of "
        f"times in every thread, the last chunk's columns past the end reading 0 and writing "
        f"nothing: drop the exit on `{c}.valid` and guard only the work that needs it with "
        f"`if {c}.valid:`)"
    )


def _raise_divergent(
    d: Divergence,
    info: SourceInfo,
    loc: _Locator,
    api: str,
    scope: str,
    allowed: int,
    members: list[tuple[str, Instr]],
    blocks: set[str],
    bad: dict[str, int],
) -> None:
    order = {b: k for k, b in enumerate(d.graph.order)}
    worst = max(bad.values())
    cause = max((b for b, lv in bad.items() if lv == worst), key=lambda b: order.get(b, 0))
    site_ins = _first_located(loc, members)
    site_frames = loc.frames(site_ins)
    cause_ins = d.blocks[cause].terminator
    where, site_at, cause_at, depth = _placed(loc, site_frames, cause_ins)
    what, inside = f"`{api}`", ""
    if site_frames and len(site_frames) > depth + 1:
        what = f"`helper {site_frames[depth + 1][1]}`"
        inside = f" (it reaches `{api}` at line {site_frames[-1][0][1]})"
    exits = {name: b.terminator for name, b in d.blocks.items()}
    n = tuple_index_switch(cause_ins, exits)
    if n is not None:
        _raise_tuple_index(info, what, inside, scope, worst, where, n, site_at, cause_at)
    inner_index = _tuple_index_inside(d, cause, exits, blocks)
    if inner_index is not None:
        # the branch leads some threads to a tuple index that may raise, a uniform one
        block, n = inner_index
        at, _site, index_at, _depth = _placed(loc, site_frames, d.blocks[block].terminator)
        at += f", which only the threads taking the {LEVEL_NAMES[worst]} branch at {where} reach,"
        _raise_tuple_index(info, what, inside, scope, worst, at, n, site_at, index_at)
    explainer = _Explainer(d, loc)
    because = explainer.branch(cause, allowed)
    loop = next((lp for lp in d.graph.loops if cause in lp.blocks and blocks & lp.blocks), None)
    if loop is not None and any(s not in loop.blocks for s in d.graph.succs.get(cause, ())):
        how = (
            f"the loop whose exit is at {where} runs a different number of times in different "
            f"threads: its exit depends on {because}"
        ) + (_row_walk_advice(cause_at) or _valid_exit_advice(cause_at))
    else:
        how = (
            f"the branch at {where} depends on {because}, and threads going one way do not "
            f"reach it (it is inside that branch, or the other way leaves first: a `return`, a "
            f"`raise`, or an operation that fails for some threads only, such as a tuple index "
            f"out of range or a range step of 0)"
        )
    message = (
        f"kernel {info.kernel!r}: {what} needs every thread of the {scope} to reach it{inside}, but "
        f"control flow here is {LEVEL_NAMES[worst]}: {how}; so some threads would skip it or "
        f"reach it a different number of times. Move the call out of that branch or loop "
        f"(compute per-thread values first, then call it in every thread), make the condition "
        + (
            "warp-uniform (a warp collective's result, scalar parameters, blockIdx, the warp's "
            "number `threadIdx.x // 32` where the contract's exact block has rows of whole "
            "warps, block.x % 32 == 0, or one row)"
            if allowed == WARP
            else "uniform (scalar parameters, shapes, blockIdx, a block collective's result)"
        )
        + ", or use Tier 2 (`simtsafe.unsafe`) if the schedule cannot be expressed"
    )
    raise _uniformity_error(info, message, site_at, cause_at)


def _uniformity_error(
    info: SourceInfo, message: str, site_at: Frame | None, cause_at: Frame | None
) -> SafetyError:
    """The ``rule="uniformity"`` refusal at the collective's line (else the kernel's)."""
    filename, lineno = site_at if site_at is not None else (info.filename, info.first_line)
    return SafetyError(
        message,
        kernel=info.kernel,
        rule="uniformity",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
        cause_line=cause_at[1] if cause_at else None,
    )


def _placed(
    loc: _Locator, site_frames: list[tuple[Frame, str | None]], ins: Instr
) -> tuple[str, Frame | None, Frame | None, int]:
    """(``line L`` (in helper H, line M), the site's and ``ins``'s frames at the depth they
    share, that depth) for naming ``ins`` in a message about the site."""
    frames = loc.frames(ins)
    depth = _common(site_frames, frames) if site_frames and frames else 0
    site_at = site_frames[min(depth, len(site_frames) - 1)][0] if site_frames else None
    at = frames[min(depth, len(frames) - 1)][0] if frames else None
    where = f"line {at[1]}" if at else "an earlier line"
    if frames and len(frames) > depth + 1:
        inner = frames[-1]
        where += f" (in helper {inner[1]}, line {inner[0][1]})"
    return where, site_at, at, depth


def _tuple_index_inside(
    d: Divergence, branch: str, exits: dict[str, Instr], site_blocks: set[str]
) -> tuple[str, int] | None:
    """The run-time tuple index (block, length) whose ``IndexError`` is the only way the
    threads taking ``branch`` may leave before the site (``site_blocks``) -- what makes the
    branch decide whether they reach it; None where they may leave another way (a
    ``return``, another exit) or reach no such index."""
    g = d.graph
    position = {b: k for k, b in enumerate(g.order)}
    found: tuple[str, int] | None = None
    seen = {branch}
    work = [branch]
    while work:
        block = work.pop()
        term = d.blocks[block].terminator
        n = tuple_index_switch(term, exits) if block != branch else None
        succs = g.succs.get(block, ())
        if n is not None and term.targets[0] in succs:
            if found is None or position[block] < position[found[0]]:
                found = (block, n)
            succs = tuple(s for s in succs if s != term.targets[0])  # its IndexError
        elif not succs:
            return None  # another way out of the kernel
        for nxt in succs:
            if nxt not in site_blocks and nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return found


def _raise_tuple_index(
    info: SourceInfo,
    what: str,
    inside: str,
    scope: str,
    worst: int,
    where: str,
    n: int,
    site_at: Frame | None,
    cause_at: Frame | None,
) -> None:
    """The early exit is Numba's ``IndexError`` of a tuple indexed at a run-time position
    (``_feasible.tuple_index_switch``): name the index and its fixes, not a branch."""
    mask = (
        f"`t[q & {n - 1}]` (every value of `q & {n - 1}` is a position), "
        if n & (n - 1) == 0
        else ""
    )
    message = (
        f"kernel {info.kernel!r}: {what} needs every thread of the {scope} to reach it{inside}, but "
        f"control flow here is {LEVEL_NAMES[worst]}: the tuple index at {where} reads a "
        f"{n}-element tuple at a position computed at run time, and Numba raises IndexError "
        "there for a position out of range. simtsafe does not prove this position in range "
        f"(proven: `for q in range(k)` with a constant k <= {n}, a mask `& c`, a compare), so "
        "the analysis sees threads that may leave the kernel there and never reach it. Index "
        "with a bounded position, "
        f"{mask}or write the elements out (`t[0]`, ..., `t[{n - 1}]`); or use Tier 2 "
        "(`simtsafe.unsafe`)"
    )
    raise _uniformity_error(info, message, site_at, cause_at)


def _check_opaque(info: SourceInfo, loc: _Locator, ins: Instr, opaque: Opaque) -> None:
    """A call left after inlining (recursion): nothing behind it can be analysed.

    A Tier-1 collective behind it is refused wherever the call stands (an unsafe
    region's reason covers the recursion, not the collective's threads); a raw
    barrier or shuffle behind it is the author's, inside an unsafe region only.
    """
    raw = any(callee_scope(name) for name in opaque.calls)
    if not opaque.sites and not (raw and not info.in_unsafe(loc.loc_of(ins))):
        return
    at = loc.loc_of(ins)
    filename, lineno = at if at is not None else (info.filename, info.first_line)
    what = "a simtsafe barrier or collective" if opaque.sites else "a barrier or warp operation"
    raise SafetyError(
        f"kernel {info.kernel!r}: the call at line {lineno} reaches {what} through a "
        "function that cannot be inlined (it calls itself, directly or through others), so "
        "simtsafe cannot prove that every thread of the scope reaches it together. Remove "
        "the recursion from the path to the collective (a loop with a bound, or the "
        "collective outside the recursive function)",
        kernel=info.kernel,
        rule="uniformity",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
    )


def stores_in_unsafe(form: FunctionForm, info: SourceInfo) -> bool:
    """Whether an unsafe region of the kernel or its helpers may write memory: a store, an
    atomic (Numba's float atomics are calls), a writing call or inline assembly, at a line
    inside a region -- or with no line at all when the kernel has a region (a record copied
    by bytes carries none: attack round 26). Its address is the author's, unchecked."""
    if not info.unsafe:
        return False
    of = pointer_roots(form)
    for b in form.blocks:
        for ins in b.instrs:
            writes = ins.opcode in ("store", "atomicrmw", "cmpxchg") or (
                ins.opcode == "call" and bool(written_by(ins, of))
            )
            if writes and (ins.loc is None or info.in_unsafe(ins.loc)):
                return True
    return False


def _raise_impure_op(info: SourceInfo, loc: _Locator, api: str, ins: Instr) -> None:
    """A reduction's operator that does not compute from its two values alone: it reads the
    thread's identity (or what differs between threads), or holds a barrier or collective.
    Threads of the scope would then combine differently -- the result is promised to be the
    same bits in each -- or wait for each other inside a combine that runs a different number
    of times in different threads (attack round 24)."""
    at = loc.loc_of(ins)
    filename, lineno = at if at is not None else (info.filename, info.first_line)
    raise SafetyError(
        f"kernel {info.kernel!r}: the op of {api} at line {lineno} must combine its two "
        "values from them alone, the same way in every thread: its compiled code reads "
        "something that differs between the threads (threadIdx, a lane id, memory other "
        "threads write) or holds a barrier or collective. Compute per-thread values before "
        f"{api} and fold them into the value it reduces",
        kernel=info.kernel,
        rule="uniformity",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
    )


def _raise_untagged(info: SourceInfo, loc: _Locator, ins: Instr) -> None:
    at = loc.loc_of(ins)
    filename, lineno = at if at is not None else (info.filename, info.first_line)
    raise SafetyError(
        f"kernel {info.kernel!r}: the compiled code has a barrier or warp operation "
        f"({ins.callee}) that is neither one of simtsafe's collectives nor inside a "
        f"`simtsafe.unsafe` region; simtsafe cannot prove that every thread reaches it. "
        f"This is a simtsafe bug: please report it with the kernel",
        kernel=info.kernel,
        rule="uniformity",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
    )
