"""Grid phases of a compiled kernel: which grid syncs may be the last one before an instruction.

A *grid phase* is the code a thread runs between two grid syncs. The grid
syncs of a Tier-1 kernel are grid-uniform (``_verdict``: every thread of the
launch reaches each one the same number of times, in the same order), so the
k-th sync every thread passes is the same instruction, and two threads run
two instructions at the same time only if both follow the same sync in the
same round. Hence: if no sync instruction can be the last one before both
``a`` and ``b`` (the function's entry counts as a sync), no thread runs ``a``
while another runs ``b``.

``last_syncs`` computes, for every instruction, the set of sync instructions
(or ``ENTRY``) that may be the last one passed before it on some path: a
forward data-flow over the CFG. Loops are handled by the fixed point: a sync
in a loop body reaches the top of the next iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..lowering._irform import FunctionForm, Instr

__all__ = ["ENTRY", "last_syncs"]

#: The function's entry: the "sync" before the first one.
ENTRY = -1


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
