"""Edges of the compiled form that no execution takes: a ``switch`` default that its masked
condition cannot reach.

Numba indexes a tuple at a run-time index through a ``switch`` over every position (and its
negative twin) whose default raises ``IndexError`` -- in a reduction's op or a helper, an
early exit of the thread. With the index masked, ``TT[int(x) & 3]`` on a 4-tuple, the
condition is ``and iN %v, 3``: a value in ``0..3``, each one a case, so the default is never
taken. Left in the graph, the analysis would see threads leave there for a thread-dependent
``x`` and refuse the collective after it (attack round 26). Only that shape is pruned: the
mask a non-negative constant, every value ``0..mask`` a case; any other switch keeps all its
edges.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..lowering._irform import FunctionForm, Instr, split_operands

__all__ = ["feasible_successors"]

#: Masks up to this many values are checked case by case.
_MAX_MASK = 4096


def feasible_successors(form: FunctionForm) -> dict[str, tuple[str, ...]]:
    """Each block's successors, less a switch default its condition cannot reach."""
    defs = {i.result: i for b in form.blocks for i in b.instrs if i.result is not None}
    return {b.name: _targets(b.terminator, defs) for b in form.blocks}


def _targets(term: Instr, defs: Mapping[str, Instr]) -> tuple[str, ...]:
    if term.opcode != "switch":
        return term.targets
    parsed = _switch(term.text)
    if parsed is None:
        return term.targets
    cond, default, cases = parsed
    mask = _mask(defs.get(cond))
    if mask is None or not all(v in cases for v in range(mask + 1)):
        return term.targets
    reached = {cases[v] for v in range(mask + 1)}
    return tuple(t for t in term.targets if t in reached)


def _switch(text: str) -> tuple[str, str, dict[int, str]] | None:
    """``switch iN %c, label %d [ iN v, label %t ... ]`` -> (``%c``, ``%d``, {v: ``%t``})."""
    head, sep, rest = text.partition("switch ")
    if not sep or "[" not in rest:
        return None
    first, _, table = rest.partition("[")
    parts = [p.strip() for p in split_operands(first)]
    if len(parts) < 2 or not parts[1].startswith("label "):
        return None
    cond = parts[0].split(" ")[-1]
    default = parts[1].split(" ")[-1]
    words = table.rstrip().rstrip("]").replace(",", " ").split()
    cases: dict[int, str] = {}
    # i64 0 label %switch.0 i64 -4 label %switch.0 ...
    for k in range(0, len(words) - 3, 4):
        typ, value, label, target = words[k : k + 4]
        if label != "label" or not typ.startswith("i"):
            return None
        try:
            cases[int(value)] = target
        except ValueError:
            return None
    return cond, default, cases


def _mask(ins: Instr | None) -> int | None:
    """``c`` when ``ins`` is ``and iN %v, c`` with ``0 <= c <= _MAX_MASK`` (its value is
    then in ``0..c``)."""
    if ins is None or ins.opcode != "and":
        return None
    rest = ins.text.partition("and ")[2]
    parts = [p.strip() for p in split_operands(rest)]
    if len(parts) != 2:
        return None
    for text in parts:
        word = text.split(" ")[-1]
        if word.lstrip("-").isdigit():
            value = int(word)
            return value if 0 <= value <= _MAX_MASK else None
    return None
