"""Grid phases of a compiled kernel: which grid syncs may be the last one before an instruction.

A *grid phase* is the code a thread runs between two grid syncs. The grid
syncs of a Tier-1 kernel are grid-uniform (``_verdict``: every thread of the
launch reaches each one the same number of times, in the same order), so the
k-th sync every thread passes is the same instruction, and two threads run
two instructions at the same time only if both follow the same sync in the
same round. Hence: if no sync instruction can be the last one before both
``a`` and ``b`` (the function's entry counts as a sync), no thread runs ``a``
while another runs ``b``.

``next_syncs`` is the mirror image: the syncs (or the function's exit) that
may be the first one after an instruction. Two threads that run ``a`` and
``b`` at the same time have passed the same k-th sync and will pass the same
(k+1)-th one (or both leave the function: a thread that leaves while others
go on to a sync makes that sync non-uniform, which is refused), so the pair
also needs a common next sync: code after a uniform branch that only one
side reaches before the next sync never runs beside the other side's.

``last_syncs`` computes, for every instruction, the set of sync instructions
(or ``ENTRY``) that may be the last one passed before it on some path: a
forward data-flow over the CFG. Loops are handled by the fixed point: a sync
in a loop body reaches the top of the next iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..lowering._irform import FunctionForm, Instr

__all__ = ["ENTRY", "EXIT", "last_syncs", "next_syncs"]

#: The function's entry: the "sync" before the first one.
ENTRY = -1
#: The function's exit: the "sync" after the last one.
EXIT = -2


def last_syncs(
    form: FunctionForm, is_sync: Callable[[Instr], bool]
) -> Mapping[int, frozenset[int]]:
    """``id(instr)`` -> the syncs (their ``id``, or ``ENTRY``) that may precede it last."""
    blocks = {b.name: b for b in form.blocks}
    entry = form.blocks[0].name
    into: dict[str, frozenset[int]] = {name: frozenset() for name in blocks}
    into[entry] = frozenset({ENTRY})
    out: dict[int, frozenset[int]] = {}
    work = [entry]
    while work:
        name = work.pop()
        block = blocks[name]
        now = into[name]
        for ins in block.instrs:
            out[id(ins)] = now
            if is_sync(ins):
                now = frozenset({id(ins)})
        for succ in block.terminator.targets:
            if succ in blocks and not now <= into[succ]:
                into[succ] = into[succ] | now
                work.append(succ)
    return out


def next_syncs(
    form: FunctionForm, is_sync: Callable[[Instr], bool]
) -> Mapping[int, frozenset[int]]:
    """``id(instr)`` -> the syncs (their ``id``, or ``EXIT``) that may follow it first."""
    blocks = {b.name: b for b in form.blocks}
    head: dict[str, frozenset[int]] = {}
    first: dict[str, int | None] = {}
    for b in form.blocks:
        first[b.name] = next((id(i) for i in b.instrs if is_sync(i)), None)
    changed = True
    while changed:
        changed = False
        for b in reversed(form.blocks):
            f = first[b.name]
            if f is not None:
                new = frozenset({f})
            else:
                succs = [s for s in b.terminator.targets if s in blocks]
                new = frozenset({EXIT}) if not succs else frozenset()
                for s in succs:
                    new |= head.get(s, frozenset())
            if head.get(b.name) != new:
                head[b.name] = new
                changed = True
    out: dict[int, frozenset[int]] = {}
    for b in form.blocks:
        succs = [s for s in b.terminator.targets if s in blocks]
        now = frozenset({EXIT}) if not succs else frozenset().union(*(head[s] for s in succs))
        for ins in reversed(b.instrs):
            out[id(ins)] = now
            if is_sync(ins):
                now = frozenset({id(ins)})
    return out
