"""Edges of the compiled form that no execution takes: a ``switch`` default that its
bounded condition cannot reach (the other edge of a branch on a constant is left out where
the form is parsed: ``lowering._irform``).

Numba indexes a tuple at a run-time index through a ``switch`` over every position (and its
negative twin) whose default raises ``IndexError`` -- in a reduction's op or a helper, an
early exit of the thread. With the index bounded, ``TT[int(x) & 3]`` on a 4-tuple, every
value the condition can take is a case, so the default is never taken. Left in the graph,
the analysis would see threads leave there for a thread-dependent ``x`` and refuse the
collective after it (attack rounds 26 and 27).

The condition's values are bounded by an unsigned range ``lo..hi`` evaluated over its
defining instructions, each in its own bit width and as the machine computes it (wrapping;
the ``nsw``/``nuw``/``nneg`` flags are promises, never facts):

* a constant is its own range; ``and`` is at most its smaller bound (a non-negative
  constant mask bounds it whatever the other side is);
* ``or`` and ``xor`` of bounded values stay below the next power of two; ``add`` of two
  bounded values is their sum, only while it fits the width (no wrap);
* ``zext`` keeps the range; ``trunc`` keeps it when it fits the narrower width; ``sext``
  when the value is non-negative in the narrower width (sign bit clear);
* ``urem`` by a constant ``c`` is ``0..c-1``; ``udiv`` by a constant divides the bounds;
  ``srem``/``sdiv`` by a positive constant only when the dividend is non-negative;
* ``select`` and ``phi``: the union of their values (a phi met again on its own chain -- a
  loop -- is unbounded);
* anything else (a load, a call, a parameter, ``sub``, ``shl``...) is unbounded.

The default is dropped only when every value of the range, read as a signed integer of the
switch's width, is a case and the range has at most ``_MAX_VALUES`` values; the cases no
value reaches are dropped with it. Any other switch keeps all its edges.

``tuple_index_switch`` recognises the tuple-index shape itself (for the verdict's message
only, never for a proof): a case ``i`` and its negative twin ``i - n`` for every position of
an ``n``-tuple, both to one target, and a default block that leaves the function (Numba's
``IndexError``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..lowering._irform import FunctionForm, Instr, is_local, split_operands
from ._cfg import Graph
from ._ranges import InputInfo, Ranges, _bits, _int, _value, _width, _words

__all__ = ["feasible_successors", "tuple_index_switch", "value_range"]

#: Ranges up to this many values are checked case by case.
_MAX_VALUES = 4097
#: How deep the chain of defining instructions is followed.
_MAX_DEPTH = 32
#: ``[ value, %block ]`` of a phi
_PHI_VALUE_RE = re.compile(r"\[\s*([^,\]]+?)\s*,\s*%[^\]]+\]")

#: The instructions whose result the rules bound (any other is unbounded: its operands are
#: not evaluated).
_BOUNDED = frozenset(
    ("zext", "sext", "trunc", "select", "phi", "and", "or", "xor", "add", "urem", "srem",
     "udiv", "sdiv")
)  # fmt: skip
#: An unsigned range ``(lo, hi)``, ``0 <= lo <= hi < 2**width``; None: any value.
Range = tuple[int, int] | None


def feasible_successors(form: FunctionForm) -> dict[str, tuple[str, ...]]:
    """Each block's successors, less a switch default its condition cannot reach, and less
    the other edge of a branch on a join that is one constant over its feasible edges."""
    defs = {i.result: i for b in form.blocks for i in b.instrs if i.result is not None}
    counted = _Counted(form, defs)
    succs = {b.name: _targets(b.name, b.terminator, defs, counted) for b in form.blocks}
    return _fold_constant_joins(form, succs)


def _fold_constant_joins(
    form: FunctionForm, succs: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Branches on an ``i1`` phi whose every incoming value, over the edges still feasible
    from reachable blocks, is the same constant: the other edge is dropped, until none
    changes. Inlined, a helper that indexes a tuple returns its status through such a phi
    (``true`` from its ``IndexError`` default, ``false`` from the cases), and its caller
    branches on it to leave: with the default dropped, the caller's exit goes too."""
    entry = form.blocks[0].name
    joins = _Joins(form)
    branches = [
        b for b in form.blocks if b.terminator.opcode == "br" and len(b.terminator.targets) == 2
    ]
    while True:
        reach = _reachable(entry, succs)
        changed = False
        for b in branches:
            term = b.terminator
            if b.name not in reach or len(succs[b.name]) != 2 or not term.operands:
                continue
            value = joins.constant(term.operands[0], succs, reach, set())
            if value is not None:
                succs[b.name] = term.targets[:1] if value else term.targets[1:]
                changed = True
        if not changed:
            return succs


def _reachable(entry: str, succs: Mapping[str, tuple[str, ...]]) -> set[str]:
    seen = {entry}
    work = [entry]
    while work:
        for s in succs.get(work.pop(), ()):
            if s not in seen:
                seen.add(s)
                work.append(s)
    return seen


class _Joins:
    """The ``i1`` values of a form that are one constant over its feasible edges."""

    def __init__(self, form: FunctionForm) -> None:
        self.defs: dict[str, Instr] = {}
        self.home: dict[str, str] = {}
        for b in form.blocks:
            for i in b.instrs:
                if i.result is not None:
                    self.defs[i.result] = i
                    self.home[i.result] = b.name

    def constant(
        self,
        value: str,
        succs: Mapping[str, tuple[str, ...]],
        reach: set[str],
        seen: set[str],
    ) -> bool | None:
        """``value``'s one constant (an ``i1`` constant, a phi of such over the edges still
        feasible, or a ``xor`` of one with ``true``), or None."""
        if value in ("true", "false"):
            return value == "true"
        ins = self.defs.get(value)
        if ins is None or value in seen:
            return None
        seen.add(value)
        if ins.opcode == "xor":  # `xor i1 %x, true`: not %x
            if "xor i1 " not in ins.text or not ins.text.rstrip().endswith(", true"):
                return None
            if len(ins.operands) != 1:
                return None
            inner = self.constant(ins.operands[0], succs, reach, seen)
            return None if inner is None else not inner
        if ins.opcode != "phi" or "phi i1 " not in ins.text:
            return None
        pairs = _phi_pairs(ins)
        if pairs is None:
            return None
        home = self.home[value]
        found: set[bool] = set()
        for incoming, pred in pairs:
            if pred not in succs:
                return None  # a block the form does not name (an unlabeled entry is `%0`)
            if pred not in reach or home not in succs[pred]:
                continue  # an edge no execution takes
            constant = self.constant(incoming, succs, reach, seen)
            if constant is None:
                return None
            found.add(constant)
        return found.pop() if len(found) == 1 else None


def _phi_pairs(ins: Instr) -> list[tuple[str, str]] | None:
    """A phi's ``(value, block)`` pairs, each value ``true``, ``false``, ``poison``, ``undef``
    (no constant, where its edge is taken) or a local, each block
    as the form names it (the parser's own pairs, in order); None when any pair of the text
    is something else or the two readings disagree in number (attack round 32: a pair the
    reading skips would count as an edge no execution takes)."""
    groups = split_operands(ins.text.partition("phi i1 ")[2].split(", !")[0])
    if len(groups) != len(ins.incoming):
        return None
    pairs = []
    for group, (_, pred) in zip(groups, ins.incoming, strict=True):
        if not (group.startswith("[") and group.endswith("]")):
            return None
        parts = split_operands(group[1:-1])
        if len(parts) != 2 or not is_local(parts[1]):
            return None
        value = parts[0]
        if value not in ("true", "false", "poison", "undef") and not is_local(value):
            return None
        pairs.append((value, pred))
    return pairs


class _Counted:
    """``0 <= k < n`` at a block, by ``_ranges``' proofs for an input of ``n`` elements
    (Numba's range loop, dominating compares, phis of such, a number bound: a range loop's
    trips from a constant start by a constant step, ``min(q, 3)``, ``3 - q``, casts that keep
    the value), over the graph with every edge (its dominators and loops hold in the graph
    without the dropped defaults too)."""

    def __init__(self, form: FunctionForm, defs: Mapping[str, Instr]) -> None:
        self.form = form
        self.defs = defs
        self.ranges: Ranges | None = None

    def below(self, k: str, n: int, block: str) -> bool:
        ranges = self._ranges()
        if block not in ranges.graph.idom:
            return False
        # a pseudo-input of exactly n elements: no shape value, no parameter bounded by it
        positions = InputInfo("", 1, n, frozenset(), frozenset(), "")
        return ranges.within(k, positions, block)

    def span(self, k: str, block: str) -> tuple[int, int] | None:
        """Signed bounds of ``k`` in ``block`` (``Ranges.signed_span``), negative ones too."""
        ranges = self._ranges()
        return ranges.signed_span(k, block) if block in ranges.graph.idom else None

    def _ranges(self) -> Ranges:
        if self.ranges is None:
            graph = Graph.build(
                self.form.blocks[0].name, {b.name: b.terminator.targets for b in self.form.blocks}
            )
            def_block = {
                i.result: b.name for b in self.form.blocks for i in b.instrs if i.result is not None
            }
            self.ranges = Ranges(self.form, graph, self.defs, def_block, {})
        return self.ranges


def _targets(
    name: str, term: Instr, defs: Mapping[str, Instr], counted: _Counted
) -> tuple[str, ...]:
    if term.opcode != "switch":
        return term.targets
    parsed = _switch(term.text)
    if parsed is None:
        return term.targets
    cond, width, cases = parsed
    bounds = value_range(cond, width, defs)
    if bounds is None or bounds[1] - bounds[0] >= _MAX_VALUES:
        n = 0
        while n in cases:
            n += 1
        # 64-bit only: ``_ranges`` proves ``0 <= k < n`` of a signed 64-bit index, or signed
        # bounds ``lo <= k <= hi`` (negative positions: Numba's cases ``i - n``)
        if width != 64:
            return term.targets
        if n and counted.below(cond, n, name):
            signed = list(range(n))
        else:
            span = counted.span(cond, name)
            if span is None or span[1] - span[0] >= _MAX_VALUES:
                return term.targets
            signed = list(range(span[0], span[1] + 1))
        if not all(v in cases for v in signed):
            return term.targets
        reached = {cases[v] for v in signed}
        return tuple(t for t in term.targets if t in reached)
    lo, hi = bounds
    signed = [v - (1 << width) if v >> (width - 1) else v for v in range(lo, hi + 1)]
    if not all(v in cases for v in signed):
        return term.targets
    reached = {cases[v] for v in signed}
    return tuple(t for t in term.targets if t in reached)


def tuple_index_switch(term: Instr, exits: Mapping[str, Instr]) -> int | None:
    """The tuple's length ``n`` when ``term`` is Numba's run-time tuple index: a ``switch``
    with cases ``i`` and ``i - n`` to one target for each ``0 <= i < n``, whose default is
    a block of ``exits`` (block name -> its terminator) that leaves the function (``ret`` or
    ``unreachable``: the ``IndexError``); None for any other terminator."""
    if term.opcode != "switch" or not term.targets:
        return None
    parsed = _switch(term.text)
    if parsed is None:
        return None
    _cond, _width_bits, cases = parsed
    n, rem = divmod(len(cases), 2)
    if n == 0 or rem or any(cases.get(i) is None or cases.get(i - n) != cases[i] for i in range(n)):
        return None
    default = exits.get(term.targets[0])
    if default is None or default.opcode not in ("ret", "unreachable"):
        return None
    return n


def _switch(text: str) -> tuple[str, int, dict[int, str]] | None:
    """``switch iN %c, label %d [ iN v, label %t ... ]`` -> (``%c``, N, {v: ``%t``})."""
    head, sep, rest = text.partition("switch ")
    if not sep or "[" not in rest:
        return None
    first, _, table = rest.partition("[")
    parts = [p.strip() for p in split_operands(first)]
    if len(parts) < 2 or not parts[1].startswith("label "):
        return None
    width = _bits(parts[0].split(" ")[0])
    if width is None:
        return None
    cond = parts[0].split(" ")[-1]
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
    return cond, width, cases


def value_range(v: str, width: int, defs: Mapping[str, Instr]) -> Range:
    """The unsigned range of ``v`` (an ``i{width}`` value or constant) on every execution,
    or None when it is not bounded by the rules of the module docstring."""
    return _Eval(defs).range(v, width, 0)


class _Eval:
    def __init__(self, defs: Mapping[str, Instr]) -> None:
        self.defs = defs
        self.open: set[str] = set()  # values on the chain being evaluated (a cycle: unbounded)
        # each value's range once (attack round 28: re-evaluating shared operands was
        # exponential in a chain of instructions each using the one before twice). A range
        # found with a cycle open is still a bound on every path (meeting the cycle gave
        # "any value" there), only a looser one: kept too
        self.known: dict[tuple[str, int], Range] = {}

    def range(self, v: str, width: int, depth: int) -> Range:
        c = _int(v)
        if c is not None:
            u = c % (1 << width)  # a negative constant is its bit pattern: a large value
            return (u, u)
        ins = self.defs.get(v)
        if ins is None or depth > _MAX_DEPTH or v in self.open:
            return None
        if (v, width) in self.known:
            return self.known[v, width]
        own = _width(ins)
        if own is None or own != width or ins.opcode not in _BOUNDED:
            return None
        self.open.add(v)
        try:
            found = self._instr(ins, width, depth + 1)
        finally:
            self.open.discard(v)
        if found is not None and not 0 <= found[0] <= found[1] < 1 << width:
            found = None
        self.known[v, width] = found
        return found

    def _instr(self, ins: Instr, width: int, depth: int) -> Range:
        op = ins.opcode
        words = _words(ins.text, op)
        if op in ("zext", "sext", "trunc"):
            src, _, _dst = words[0].partition(" to ")
            narrow = _bits(src.split(" ")[0])
            if narrow is None:
                return None
            r = self.range(_value(src), narrow, depth)
            if r is None:
                return None
            if op == "trunc":
                return r if r[1] < 1 << width else None
            if op == "sext":
                return r if r[1] < 1 << (narrow - 1) else None
            return r
        if op == "select":
            if len(words) != 3:
                return None
            return _union(
                self.range(_value(words[1]), width, depth),
                self.range(_value(words[2]), width, depth),
            )
        if op == "phi":
            values = _PHI_VALUE_RE.findall(ins.text.partition("phi ")[2])
            if not values:
                return None
            found: Range = self.range(values[0], width, depth)
            for value in values[1:]:
                found = _union(found, self.range(value, width, depth))
            return found
        if len(words) != 2:
            return None
        x = self.range(_value(words[0]), width, depth)
        y = self.range(_value(words[1]), width, depth)
        c = _int(_value(words[1]))
        if op == "and":  # at most either operand's bound
            bounds = [r[1] for r in (x, y) if r is not None]
            return (0, min(bounds)) if bounds else None
        if x is None:
            return (0, c - 1) if op == "urem" and c is not None and c > 0 else None
        if op in ("or", "xor", "add"):
            if y is None:
                return None
            if op == "add":
                return (x[0] + y[0], x[1] + y[1])  # checked against the width by range()
            top = (1 << max(x[1], y[1]).bit_length()) - 1
            return (max(x[0], y[0]) if op == "or" else 0, top)
        if c is None or c <= 0:
            return None
        nonneg = x[1] < 1 << (width - 1)  # sign bit clear: the signed value is x itself
        if op in ("srem", "sdiv") and (not nonneg or c >= 1 << (width - 1)):
            return None
        if op in ("urem", "srem"):
            return (0, min(c - 1, x[1])) if x[1] >= c else x
        if op in ("udiv", "sdiv"):
            return (x[0] // c, x[1] // c)
        return None


def _union(a: Range, b: Range) -> Range:
    return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
