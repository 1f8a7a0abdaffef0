"""Index ranges on the compiled form: is a read of an input inside the input?

A read by plain int is not bounds-checked, so a read past an input's end may
land in an output other threads are writing; the divergence analysis trusts
the value a read loads only where this module proves it inside the input.
``Ranges.inside(ptr, size, block)`` holds when ``ptr`` is element ``k`` of a
1D input (``data + k * itemsize``, Numba's C-layout address, or ``data + k *
stride``, its strided one, with or without Numba's negative-index wrap) and
``0 <= k < extent`` follows from facts that hold in ``block``:

* a constant ``k`` below the size the contract guarantees;
* a dominating branch ``k < B`` (``slt`` with ``k >= 0`` proven, or ``ult``
  with ``B >= 0`` proven) with ``B <= extent``: the input's own shape or size, a constant the
  contract covers, a scalar parameter ``n`` with ``requires=["a.size >= n"]``,
  or a phi/select of such;
* Numba's ``range`` loop: an index phi ``p`` (from 0, ``+1`` per trip) paired
  with a trip counter ``c`` (from ``N``, ``-1`` per trip) in one loop header,
  where ``c > 0`` holds: then ``p = N - c`` lies in ``[0, N)``, and
  ``N <= extent``;
* a number: ``0 <= k <= U`` by ``Ranges.upper`` (below, with the facts that
  hold in ``block``) with ``U`` below the size the contract guarantees;
* a phi, each of whose incoming values is inside on its edge (or whose edge
  contradicts a branch condition that holds in ``block``; an edge from a block no
  run reaches -- past a branch on a constant -- is no value).

A branch on ``x and y`` asserts both where it is true (``_conjuncts``). Two more
shapes of reads are proven:

* an element of a slice, ``gep T, (gep T, data, s), k`` (``b = a[s:]``, ``b[k]``),
  with ``s >= 0`` and ``k >= 0`` proven and a branch ``k <s X - s`` (the slice's
  size) with ``0 <= X <= extent``: ``s + k < X`` (``_slice_within``);
* a run of ``n`` elements read by one load of ``n * itemsize`` bytes at element
  ``j * n`` (``vec.load``'s vector load), under ``j < X / n`` with ``0 <= X <= extent``
  (``_run_within``).

``k >= 0`` may also come from branch facts on ``k``'s parts: ``j <=u R`` with
``R >= 0`` bounds ``j`` in ``[0, R]``, and ``2 * j``, ``j << 1``, ``j | 1`` stay
non-negative while their bounds stay below the sign bit (``_upper_with``).

``k >= 0`` (for ``slt``) is proven from values as the GPU computes them
(wrapping): constants, ``zext``, shapes, special registers, masks, shifts,
sums and products whose bounds stay below the sign bit, ``C - x`` for
``0 <= x <= C``, and loop phis by induction -- never from the ``nsw``/``nuw``
flags Numba puts on every signed operation (``Ranges.upper``; an operand is
bounded with the branch facts of the block its user is computed in). Anything
else is not inside: the analysis then treats the loaded value as
thread-dependent (sound, maybe refusing a safe kernel).

A range loop's index phi has numbers for bounds (``_trips``, ``_span``): ``p``
and a counter ``c``, phis of one loop header, entered with ``p = S`` (one
constant) and ``c = N``, and on every path back to the header either both
unchanged or ``p + s`` (one constant ``s``, either sign) with ``c - 1``
computed only where ``c > 0`` (signed) holds. Then ``p + s * c`` keeps its
entry value, modulo ``2**width`` (so wrapping steps change nothing), and ``c``
moves only from a positive value, by -1 (it stays ``N`` for ``N <= 0``, else in
``[0, N]``): ``p = S + s * t`` for the trips done ``t = N - c``, in
``[0, N - 1]`` where a fact ``c > 0`` still sees this ``p`` and ``c``, in
``[0, max(N, 0)]`` anywhere. With ``N`` at most a number
(constants, ``min``, ``max``, phis and selects of such, ``upper``), every
value ``S + s * t`` is known; when they all fit the width, ``p`` is one of
them as the machine computes it (``range(1, 4)``, ``range(0, 4, 2)``,
``range(3, -1, -1)``, ``range(np.int8(4))``'s 32-bit loop, ``range(min(m, 4))``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lowering._irform import Block, FunctionForm, Instr, split_operands
from ._cfg import Graph

__all__ = ["InputInfo", "Ranges"]

#: (condition value, the truth it has, the block its edge enters -- None: the point itself)
Fact = tuple[str, bool, str | None]

_FLAGS = ("nsw", "nuw", "nneg", "exact", "disjoint", "samesign", "inbounds", "nusw")
_SCALAR_BYTES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4}
_SCALAR_BYTES["double"] = 8
#: the predicate that holds where an icmp is false
_INVERSE = {
    "slt": "sge",
    "sge": "slt",
    "sgt": "sle",
    "sle": "sgt",
    "ult": "uge",
    "uge": "ult",
    "ugt": "ule",
    "ule": "ugt",
}


@dataclass(frozen=True)
class InputInfo:
    """A 1D input as the compiled form names it."""

    param: str
    itemsize: int
    elements: int  # the fewest elements the contract guarantees
    extents: frozenset[str]  # IR values equal to its extent (shape[0], size)
    bounded: frozenset[str]  # IR scalar parameters the contract keeps <= its extent
    stride: str  # the IR value of its byte stride


def _words(text: str, opcode: str) -> list[str]:
    """The operand text after ``opcode`` and its flags, split at top-level commas."""
    rest = text.split(f"{opcode} ", 1)[1] if f"{opcode} " in text else ""
    head = rest.split(" ")
    while head and head[0] in _FLAGS:
        head.pop(0)
    return [w.strip() for w in split_operands(" ".join(head))]


def _value(typed: str) -> str:
    """``i64 %x`` -> ``%x``; ``i64 3`` -> ``3``."""
    return typed.strip().split(" ")[-1]


def _bits(typ: str) -> int | None:
    """``i32`` -> 32; None for a type that is not an integer."""
    return int(typ[1:]) if typ[:1] == "i" and typ[1:].isdigit() else None


def _width(ins: Instr) -> int | None:
    """The bit width of an integer instruction's result, from its own text."""
    op = ins.opcode
    words = _words(ins.text, op)
    if not words:
        return None
    if op in ("zext", "sext", "trunc"):
        return _bits(words[0].rpartition(" to ")[2].strip())
    if op == "select":
        return _bits(words[1].split(" ")[0]) if len(words) == 3 else None
    if op in ("phi", "call"):
        return _bits(words[0].split(" ")[0])
    return _bits(words[0].split(" ")[0])


def _signed(c: int, bits: int) -> int:
    """The bit pattern of ``c`` in ``bits`` bits, read as a signed integer."""
    c %= 1 << bits
    return c - (1 << bits) if c >> (bits - 1) else c


@dataclass(frozen=True)
class _Trips:
    """A range loop's index phi: ``start + step * t`` after ``t`` trips, entered with a
    counter ``counts`` (one value per edge into the loop), ``width`` bits (``Ranges._trips``)."""

    start: int
    step: int
    counts: tuple[str, ...]
    width: int


def _fits(span: tuple[int, int]) -> tuple[int, int] | None:
    """``span`` when every value in it is a signed 64-bit integer (no run wraps), else None."""
    return span if -(1 << 63) <= span[0] <= span[1] < 1 << 63 else None


def _meet(spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The values inside every one of ``spans`` (each a bound on the same value), or None."""
    if not spans:
        return None
    return (max(s[0] for s in spans), min(s[1] for s in spans))


def _max(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    """The smaller of two bounds, either of which alone bounds the value (None: no bound)."""
    return b if a is None else a if b is None else min(a, b)


#: Special registers and the largest value each can hold (CUDA's launch limits).
_SREG_BOUNDS = {
    "tid.x": 1023,
    "tid.y": 1023,
    "tid.z": 63,
    "ntid.x": 1024,
    "ntid.y": 1024,
    "ntid.z": 64,
    "ctaid.x": 2**31 - 2,
    "ctaid.y": 65534,
    "ctaid.z": 65534,
    "nctaid.x": 2**31 - 1,
    "nctaid.y": 65535,
    "nctaid.z": 65535,
    "laneid": 31,
}


def _int(token: str) -> int | None:
    try:
        return int(token)
    except ValueError:
        return {"true": 1, "false": 0}.get(token)


@dataclass
class Ranges:
    """Range facts of one function's compiled form (see the module docstring)."""

    form: FunctionForm
    graph: Graph
    defs: Mapping[str, Instr]
    def_block: Mapping[str, str]
    inputs: Mapping[str, InputInfo]  # data pointer -> the input
    _upper: dict[tuple[str, int, tuple[str, ...]], int | None] = field(default_factory=dict)
    _hypothesis: dict[str, int] = field(default_factory=dict)
    _depth: int = 0
    _within_open: set[str] = field(default_factory=set)
    _facts: dict[str, list[Fact]] = field(default_factory=dict)
    _blocks: dict[str, Block] = field(default_factory=dict)
    _keys: dict[str, str] = field(default_factory=dict)
    _reachable: frozenset[str] = frozenset()
    _trip_cache: dict[tuple[str, str], _Trips | None] = field(default_factory=dict)
    _smax: dict[tuple[str, int, tuple[str, ...]], int | None] = field(default_factory=dict)
    _twin_cache: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    # ------------------------------------------------------------------ the question

    def inside(self, ptr: str, size: int | None, block: str) -> str | None:
        """The input's data pointer when a read of ``size`` bytes at ``ptr``, in
        ``block``, is one of its elements; None when that is not proven."""
        found = self._element(ptr)
        if found is None:
            sliced = self._slice_element(ptr)
            if sliced is None:
                return None
            info, start, index = sliced
            if size != info.itemsize or not self._slice_within(start, index, info, block):
                return None
            return next(p for p, i in self.inputs.items() if i is info)
        info, index = found
        if size is None or size % info.itemsize or size < info.itemsize:
            return None
        count = size // info.itemsize  # a vector load reads a run of elements
        facts = self.facts(block)
        if count == 1:
            if not self._within(index, info, facts, block, True):
                return None
        elif not self._run_within(index, count, info, facts, block):
            return None
        return next(p for p, i in self.inputs.items() if i is info)

    def within(self, k: str, info: InputInfo, block: str) -> bool:
        """``0 <= k < info.elements`` (or below its extents) in ``block``, by the rules of the
        module docstring (``_feasible``: a tuple index of ``n`` positions as an input of ``n``
        elements)."""
        return self._within(k, info, self.facts(block), block, True)

    def constant_inside(self, base: str, index: int, block: str) -> bool:
        """Is element ``index`` of the input at ``base`` inside it where ``block`` runs
        (``if a.size > 3: a[3]``)?"""
        info = self.inputs.get(base)
        return info is not None and self._within(str(index), info, self.facts(block), block, True)

    # ------------------------------------------------------------------ addresses

    def _element(self, ptr: str) -> tuple[InputInfo, str] | None:
        """(input, index value) when ``ptr`` is ``data + index`` elements of an input."""
        ins = self.defs.get(ptr)
        if ins is None:
            return None
        if ins.opcode == "getelementptr":
            return self._gep_element(ins)
        if ins.opcode == "inttoptr":
            return self._strided_element(_value(_words(ins.text, "inttoptr")[0].split(" to ")[0]))
        return None

    def _gep_element(self, ins: Instr) -> tuple[InputInfo, str] | None:
        # gep T, (gep T, %a.4, %k), (select (icmp slt %k, 0), %a.5.0, 0): Numba's wrap
        words = _words(ins.text, "getelementptr")
        if len(words) != 3:
            return None
        base, index = _value(words[1]), _value(words[2])
        size = _SCALAR_BYTES.get(words[0])
        info = self.inputs.get(base)
        if info is not None:
            return (info, index) if size == info.itemsize else None
        inner = self.defs.get(base)
        if inner is None or inner.opcode != "getelementptr":
            return None
        found = self._gep_element(inner)
        if found is None or size != found[0].itemsize:
            return None
        info, k = found
        return (info, k) if self._is_wrap(index, k, info) else None

    def _is_wrap(self, value: str, k: str, info: InputInfo) -> bool:
        """``value`` is ``select (icmp slt k, 0), extent, 0`` (0 for a non-negative ``k``)."""
        ins = self.defs.get(value)
        if ins is None or ins.opcode != "select":
            return _int(value) == 0
        cond, yes, no = (_value(w) for w in _words(ins.text, "select"))
        test = self.defs.get(cond)
        if test is None or test.opcode != "icmp" or _int(no) != 0 or yes not in info.extents:
            return False
        words = _words(test.text, "icmp")
        pred, a = words[0].split(" ")[0], _value(words[0])
        return pred == "slt" and a == k and _int(_value(words[1])) == 0

    def _strided_element(self, addr: str) -> tuple[InputInfo, str] | None:
        # inttoptr (add (mul %a.6.0, %k), (ptrtoint %a.4)): Numba's strided address
        ins = self.defs.get(addr)
        if ins is None or ins.opcode != "add":
            return None
        x, y = (_value(w) for w in _words(ins.text, "add"))
        for base_int, offset in ((x, y), (y, x)):
            p2i = self.defs.get(base_int)
            if p2i is None or p2i.opcode != "ptrtoint":
                continue
            info = self.inputs.get(_value(_words(p2i.text, "ptrtoint")[0].split(" to ")[0]))
            mul = self.defs.get(offset)
            if info is None or mul is None or mul.opcode != "mul":
                continue
            m1, m2 = (_value(w) for w in _words(mul.text, "mul"))
            if m1 == info.stride:
                return info, self._unwrapped(m2, info)
            if m2 == info.stride:
                return info, self._unwrapped(m1, info)
        return None

    def _unwrapped(self, index: str, info: InputInfo) -> str:
        """``k`` for ``k + select (icmp slt k, 0), extent, 0`` (Numba's wrap), else ``index``."""
        ins = self.defs.get(index)
        if ins is None or ins.opcode != "add":
            return index
        x, y = (_value(w) for w in _words(ins.text, "add"))
        for k, w in ((x, y), (y, x)):
            if self._is_wrap(w, k, info):
                return k
        return index

    def _slice_element(self, ptr: str) -> tuple[InputInfo, str, str] | None:
        """(input, start, index) when ``ptr`` is element ``index`` of a slice of an input
        that starts at element ``start``: ``gep T, (gep T, %a.4, start), index`` (Numba's
        ``b = a[s:]`` then ``b[k]``, both C-layout)."""
        ins = self.defs.get(ptr)
        if ins is None or ins.opcode != "getelementptr":
            return None
        words = _words(ins.text, "getelementptr")
        inner = self.defs.get(_value(words[1])) if len(words) == 3 else None
        if inner is None or inner.opcode != "getelementptr":
            return None
        inner_words = _words(inner.text, "getelementptr")
        if len(inner_words) != 3:
            return None
        info = self.inputs.get(_value(inner_words[1]))
        size = _SCALAR_BYTES.get(words[0])
        if info is None or size != info.itemsize or _SCALAR_BYTES.get(inner_words[0]) != size:
            return None
        return info, _value(inner_words[2]), _value(words[2])

    def _slice_within(self, start: str, k: str, info: InputInfo, block: str) -> bool:
        """``0 <= start + k < extent``: ``start >= 0``, ``k >= 0`` and a fact
        ``k <s X - start`` (the slice's size) with ``0 <= X <= extent``.

        Then ``X - start`` does not wrap (both in ``[0, 2**63)``), so ``start + k < X``;
        a ``start`` past ``X`` makes the size negative and the fact false for ``k >= 0``.
        Signed compares only: unsigned, a negative size would read as a huge one.
        """
        facts = self.facts(block)
        if not self.nonneg(start) or not self._nonneg_at(k, facts, block):
            return False
        for fact in facts:
            cmp = self._compare(fact)
            if cmp is None or cmp[0] != "s" or not self.same(cmp[1], k):
                continue
            size = self.defs.get(cmp[2])
            if size is None or size.opcode != "sub":
                continue
            x, s = (_value(w) for w in _words(size.text, "sub"))
            if not self.same(s, start) or not self.nonneg(x):
                continue
            if not self._at_most_extent(x, info):
                continue
            values = (fact[0], *self._tree(k), *self._tree(cmp[2]), *self._tree(start))
            if self.fresh(fact, values, block):
                return True
        return False

    def _run_within(
        self, index: str, count: int, info: InputInfo, facts: list[Fact], block: str
    ) -> bool:
        """Elements ``index .. index + count - 1`` inside the input: ``index = j * count``
        (``mul`` or ``shl``) with a fact ``j < runs``, ``runs = extent / count`` (``sdiv``,
        ``udiv`` or ``lshr`` of a non-negative extent), ``j >= 0``: ``vec.load``'s whole
        run, whose last element ``j * count + count - 1 < runs * count <= extent``."""
        ins = self.defs.get(index)
        if ins is None or ins.opcode not in ("mul", "shl"):
            return False
        x, y = (_value(w) for w in _words(ins.text, ins.opcode))
        if ins.opcode == "shl":
            shift = _int(y)
            if shift is None or not 0 <= shift < 32 or 1 << shift != count:
                return False
            j = x
        elif _int(y) == count:
            j = x
        elif _int(x) == count:
            j = y
        else:
            return False
        for fact in facts:
            cmp = self._compare(fact)
            if cmp is None or not self.same(cmp[1], j) or not self._runs_of(cmp[2], count, info):
                continue
            if not self.fresh(fact, (fact[0], *self._tree(j), *self._tree(cmp[2])), block):
                continue
            # j <u runs (runs >= 0) or j <s runs with j >= 0: 0 <= j < runs
            if cmp[0] == "u" or self._nonneg_at(j, facts, block):
                return True
        return False

    def _runs_of(self, v: str, count: int, info: InputInfo) -> bool:
        """``v`` is ``X / count`` rounded down for a ``0 <= X <= extent``."""
        ins = self.defs.get(v)
        if ins is None or ins.opcode not in ("sdiv", "udiv", "lshr"):
            return False
        x, y = (_value(w) for w in _words(ins.text, ins.opcode))
        divisor = _int(y)
        if divisor is None or divisor < 1:
            return False
        if ins.opcode == "lshr":
            if divisor >= 63:
                return False
            divisor = 1 << divisor
        return divisor == count and self.nonneg(x) and self._at_most_extent(x, info)

    # ------------------------------------------------------------------ facts

    def facts(self, block: str) -> list[Fact]:
        """Branch conditions true on every path into ``block`` (from dominating edges)."""
        cached = self._facts.get(block)
        if cached is not None:
            return cached
        out: list[Fact] = []
        b: str | None = block
        while b is not None:
            preds = self.graph.preds.get(b, [])
            if len(preds) == 1:
                out.extend((c, t, b) for c, t, _at in self.edge_fact(preds[0], b))
            parent = self.graph.idom.get(b)
            b = None if parent is None or parent == b else parent
        self._facts[block] = out
        return out

    def edge_fact(self, src: str, dst: str) -> list[Fact]:
        """The condition the edge ``src -> dst`` asserts, if ``src`` branches on one."""
        term = self.by_name(src).terminator
        if term.opcode != "br" or len(term.targets) != 2 or not term.operands:
            return []
        yes, no = term.targets
        if yes == no:
            return []
        return [(c, t, None) for c, t in self._conjuncts(term.operands[0], dst == yes, 0)]

    def _conjuncts(self, cond: str, truth: bool, depth: int) -> list[tuple[str, bool]]:
        """``cond`` has ``truth``, and what that says of its parts: ``and i1 x, y`` true
        (or ``select i1 x, i1 y, i1 false``) makes both true, ``or i1 x, y`` false both
        false (``vec.load`` guards its run with ``j < runs and aligned``)."""
        out = [(cond, truth)]
        ins = self.defs.get(cond)
        if ins is None or depth > 8 or _width(ins) != 1:
            return out
        parts: list[str] = []
        if ins.opcode == ("and" if truth else "or"):
            parts = [_value(w) for w in _words(ins.text, ins.opcode)]
        elif ins.opcode == "select":
            c, yes, no = (_value(w) for w in _words(ins.text, "select"))
            if _int(no) == 0 and truth:  # c ? y : false
                parts = [c, yes]
            elif _int(yes) == 1 and not truth:  # c ? true : y
                parts = [c, no]
        for part in parts:
            if part.startswith("%"):
                out.extend(self._conjuncts(part, truth, depth + 1))
        return out

    def fresh(self, fact: Fact, values: tuple[str, ...], point: str) -> bool:
        """Do ``values`` at ``point`` still have the values the fact's edge saw?

        A fact asserted on entering block X (dominating ``point``) is about the
        values computed before it; one of them is recomputed after it when a
        path from X to ``point`` (not passing X again, which asserts the fact
        again) passes that value's block -- a later iteration of a loop.
        """
        entered = fact[2]
        if entered is None:
            return True
        for v in values:
            where = self.def_block.get(v)
            if where is not None and self._reevaluated_between(where, entered, point):
                return False
        return True

    def by_name(self, name: str) -> Block:
        if not self._blocks:
            self._blocks.update((b.name, b) for b in self.form.blocks)
        return self._blocks[name]

    def _compare(self, fact: Fact, strict: bool = True) -> tuple[Any, ...] | None:
        """A fact as ``(kind, x, y)``: ``x < y``, kind ``"s"`` (signed) or ``"u"``.

        With ``strict=False`` also ``x <= y``, as ``(kind, x, y, is_strict)``.
        """
        cond, truth, _entered = fact
        ins = self.defs.get(cond)
        if ins is None or ins.opcode != "icmp":
            return None
        words = _words(ins.text, "icmp")
        if len(words) != 2:
            return None
        pred = words[0].split(" ")[0]
        a, b = _value(words[0]), _value(words[1])
        if not truth:
            pred = _INVERSE.get(pred, "")
        kind = {"s": "s", "u": "u"}.get(pred[:1])
        rel = pred[1:]
        if kind is None or rel not in ("lt", "gt", "le", "ge"):
            return None
        x, y = (a, b) if rel in ("lt", "le") else (b, a)
        is_strict = rel in ("lt", "gt")
        if strict:
            return (kind, x, y) if is_strict else None
        return (kind, x, y, is_strict)

    # ------------------------------------------------------------------ bounds

    def _within(self, k: str, info: InputInfo, facts: list[Fact], block: str, top: bool) -> bool:
        """``0 <= k < extent`` where ``facts`` hold (``block``: where they hold)."""
        c = _int(k)
        if c is not None and 0 <= c < info.elements:
            return True
        for fact in facts:
            cmp = self._compare(fact)
            if cmp is None or not self.same(cmp[1], k) or not self._at_most_extent(cmp[2], info):
                continue
            values = (fact[0], *self._tree(cmp[1]), *self._tree(k), *self._tree(cmp[2]))
            if not self.fresh(fact, values, block):
                continue
            # k <u B says 0 <= k < B only for a B that is not negative as a signed number
            # (-1 is the largest unsigned value); k <s B needs k >= 0 itself.
            if cmp[0] == "u" and self.nonneg(cmp[2]):
                return True
            if cmp[0] == "s" and self._nonneg_at(k, facts, block):
                return True
        if c is not None:
            return False
        if self._counted(k, info, facts, block):
            return True
        bound = self._upper_by(k, 64, facts, block)  # 0 <= k <= bound
        if bound is not None and bound < info.elements:
            return True
        ins = self.defs.get(k)
        if ins is None:
            return False
        if ins.opcode == "phi":
            if k in self._within_open:  # a cycle of phis (`x, y = y, x`): not proven
                return False
            home = self.def_block[k]
            self._within_open.add(k)
            try:
                for value, pred in self._incoming(ins):
                    if top and self._infeasible(pred, home, facts, block):
                        continue
                    edge = self.facts(pred) + self.edge_fact(pred, home)
                    if not self._within(value, info, edge, pred, top=False):
                        return False
                return True
            finally:
                self._within_open.discard(k)
        if ins.opcode == "select":
            cond, yes, no = (_value(w) for w in _words(ins.text, "select"))
            return self._within(
                yes, info, [*facts, (cond, True, None)], block, False
            ) and self._within(no, info, [*facts, (cond, False, None)], block, False)
        return False

    def signed_span(self, k: str, block: str) -> tuple[int, int] | None:
        """``lo <= k <= hi`` (``k`` a signed 64-bit value) where ``block`` runs, or None: the
        values of a tuple index that may be negative (Numba's switch has a case for each
        position ``i`` and its negative twin ``i - n``: ``t[q - 1]`` for ``q`` in
        ``range(4)`` takes -1..2, all cases). By ``_sspan``'s rules."""
        return self._sspan(k, self.facts(block), block, 0)

    def _sspan(self, k: str, facts: list[Fact], point: str, depth: int) -> tuple[int, int] | None:
        """Signed 64-bit bounds of ``k`` where ``facts`` hold (at ``point``), each exact as the
        machine computes it: a constant; ``0..U`` from ``_upper_by``; a range loop's index by
        its trips (``_span``, negative starts and values included); a loop phi equal to such
        an index plus a constant (``_twins``: ``enumerate``'s count beside the tuple
        iterator's position); ``x + y`` and ``x - y`` of bounded values while every result
        fits 64 bits (then no run wraps); ``smin``/``smax``; a select, or a phi over the
        edges a run may take to ``point`` (``_infeasible``), by the union of their values.
        The operands of an instruction are bounded with the facts of the block it is
        computed in (they hold when it runs), a phi's values with those of their edges."""
        c = _int(k)
        if c is not None:
            return (_signed(c, 64), _signed(c, 64))
        ins = self.defs.get(k)
        if ins is None or depth > 12 or _width(ins) != 64:
            return None
        # each rule bounds every value k takes: their intersection does too
        found_bounds: list[tuple[int, int]] = []
        u = self._upper_by(k, 64, facts, point)
        if u is not None:
            found_bounds.append((0, u))
        span = self._span(k, facts, point)
        if span is not None:
            found_bounds.append(span)
        home = self.def_block[k]
        if ins.opcode == "phi" and any(lp.header == home for lp in self.graph.loops):
            if k not in self._within_open:  # else a cycle of phis (twins of each other)
                self._within_open.add(k)
                try:
                    for base, shift in self._twins(k):
                        inner = self._sspan(base, facts, point, depth + 1)
                        if inner is not None:
                            shifted = _fits((inner[0] + shift, inner[1] + shift))
                            if shifted is not None:
                                found_bounds.append(shifted)
                finally:
                    self._within_open.discard(k)
            return _meet(found_bounds)  # another loop phi: no other bound
        built = self._sspan_built(k, ins, facts, point, depth)
        return _meet(found_bounds if built is None else [*found_bounds, built])

    def _sspan_built(
        self, k: str, ins: Instr, facts: list[Fact], point: str, depth: int
    ) -> tuple[int, int] | None:
        """``_sspan`` of ``k`` from how it is built (not a loop header's phi)."""
        home = self.def_block[k]
        if ins.opcode == "phi":
            if k in self._within_open:
                return None  # a cycle of phis: no bound
            self._within_open.add(k)
            try:
                found: list[tuple[int, int]] = []
                for value, pred in self._incoming(ins):
                    if depth == 0 and self._infeasible(pred, home, facts, point):
                        continue
                    edge = self._edge_facts(pred, home)
                    got = self._sspan(value, edge, pred, depth + 1)
                    if got is None:
                        return None
                    found.append(got)
            finally:
                self._within_open.discard(k)
            return (min(f[0] for f in found), max(f[1] for f in found)) if found else None
        block = self.def_block[k]
        here = self.facts(block)
        if ins.opcode == "select":
            cond, yes, no = (_value(w) for w in _words(ins.text, "select"))
            a = self._sspan(yes, [*here, (cond, True, None)], block, depth + 1)
            b = self._sspan(no, [*here, (cond, False, None)], block, depth + 1)
            return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        if ins.opcode == "call":
            body = ins.text.split(" = ", 1)[1] if " = " in ins.text else ins.text
            if "@llvm.smin.i64(" not in body and "@llvm.smax.i64(" not in body:
                return None
            args = [_value(w) for w in split_operands(body.split("(", 1)[1].rsplit(")", 1)[0])]
            parts = [self._sspan(a, here, block, depth + 1) for a in args]
            if len(parts) != 2 or parts[0] is None or parts[1] is None:
                return None
            pick = min if "@llvm.smin." in body else max
            return (pick(parts[0][0], parts[1][0]), pick(parts[0][1], parts[1][1]))
        if ins.opcode not in ("add", "sub"):
            return None
        words = _words(ins.text, ins.opcode)
        if len(words) != 2:
            return None
        x = self._sspan(_value(words[0]), here, block, depth + 1)
        y = self._sspan(_value(words[1]), here, block, depth + 1)
        if x is None or y is None:
            return None
        if ins.opcode == "add":
            return _fits((x[0] + y[0], x[1] + y[1]))
        return _fits((x[0] - y[1], x[1] - y[0]))

    def _twins(self, k: str) -> list[tuple[str, int]]:
        """``(p, d)`` for each other phi ``p`` of ``k``'s loop header with ``k == p + d``
        (modulo ``2**64``) on every run: entered with constants ``k0 = p0 + d`` on every edge
        into the loop, and on every path back to the header a run may take (``_offsets``; a
        path that contradicts the branch facts of its back edge is none) either both moved
        by one same constant, or both set to ``p + a`` and ``p + b`` with ``a - b == d``.
        Numba's ``enumerate(t)`` counts ``k`` in the header from 0 by 1 beside the tuple
        iterator's position ``p``, stepped by 1 after the guarded read of ``t``: on the paths
        back (those with ``p <s len(t)``) both moved by 1, so ``k == p``. A copy carried to the
        next trip, ``j = q + 1`` beside the range loop's ``q + 1``, is ``j == q``."""
        cached = self._twin_cache.get(k)
        if cached is not None:
            return cached
        self._twin_cache[k] = []
        ins = self.defs.get(k)
        header = self.def_block.get(k)
        loop = next((lp for lp in self.graph.loops if lp.header == header), None)
        if ins is None or header is None or ins.opcode != "phi" or loop is None:
            return []
        kin = self._incoming(ins)
        out = []
        for other in self.by_name(header).instrs:
            p = other.result
            if other.opcode != "phi" or p is None or p == k or _width(other) != 64:
                continue
            pin = dict((pred, v) for v, pred in self._incoming(other))
            if set(pin) != {pred for _v, pred in kin}:
                continue
            shifts = set()
            for kv, pred in kin:
                a, b = _int(kv), _int(pin[pred])
                if pred not in loop.blocks:
                    shifts.add(None if a is None or b is None else _signed(a - b, 64))
            if len(shifts) != 1 or None in shifts:
                continue
            d = shifts.pop()
            assert d is not None
            if all(
                self._stepped_together(kv, pin[pred], k, p, d, self._edge_facts(pred, header), pred)
                for kv, pred in kin
                if pred in loop.blocks
            ):
                out.append((p, d))
        self._twin_cache[k] = out
        return out

    def _stepped_together(
        self, kv: str, pv: str, k: str, p: str, d: int, facts: list[Fact], point: str
    ) -> bool:
        """``kv - pv == k - p == d`` (modulo ``2**64``) on the paths a run may take to the
        back edge at ``point``: both moved from ``k`` and ``p`` by one same constant, or
        both offsets of ``p`` alone, ``a - b == d``."""
        ks = self._offsets(kv, k, facts, point, 0)
        ps = self._offsets(pv, p, facts, point, 0)
        if ks is not None and ps is not None and len(ks) == 1 and ks == ps:
            return True
        ka = self._offsets(kv, p, facts, point, 0)
        if ka is None or ps is None or len(ka) != 1 or len(ps) != 1:
            return False
        return _signed(next(iter(ka)) - next(iter(ps)), 64) == d

    def _offsets(
        self, x: str, base: str, facts: list[Fact], point: str, depth: int
    ) -> frozenset[int] | None:
        """The constants ``d`` with ``x == base + d`` (modulo ``2**64``) on the paths a run
        may take to ``point`` where ``facts`` hold: ``base`` itself, ``y + C``, a phi of such
        over its edges that do not contradict the facts (``_infeasible``); None otherwise."""
        if x == base:
            return frozenset({0})
        ins = self.defs.get(x)
        if ins is None or depth > 16:
            return None
        if ins.opcode == "add":
            a, b = (_value(w) for w in _words(ins.text, "add"))
            step = _int(b)
            inner = None if step is None else self._offsets(a, base, facts, point, depth + 1)
            if inner is None or step is None:
                return None
            return frozenset(_signed(d + step, 64) for d in inner)
        if ins.opcode != "phi" or any(lp.header == self.def_block[x] for lp in self.graph.loops):
            return None  # a loop header's phi other than ``base``: not followed
        home = self.def_block[x]
        found: frozenset[int] = frozenset()
        for value, pred in self._incoming(ins):
            if self._infeasible(pred, home, facts, point):
                continue
            got = self._offsets(value, base, facts, point, depth + 1)
            if got is None:
                return None
            found |= got
        return found

    def _nonneg_at(self, k: str, facts: list[Fact], block: str) -> bool:
        """``k >= 0`` where ``facts`` hold: from its value, a branch on it, or its parts."""
        return (
            self.nonneg(k)
            or self._nonneg_by_fact(k, facts, block)
            or self._upper_with(k, facts, block, 0) is not None
        )

    def _upper_with(self, v: str, facts: list[Fact], block: str, depth: int) -> int | None:
        """``upper(v)`` (a bound ``U`` with ``0 <= v <= U``), where the value alone gives
        none, from the branch facts on it or on its parts: ``j <=u R`` with ``0 <= R <= U``
        puts ``j`` in ``[0, U]`` (an unsigned compare with a non-negative bound also says
        ``j >= 0``), ``j >= 0`` and ``j <s R`` likewise; then ``j * 2``, ``j << 1``, ``j | 1``
        and sums are bounded as ``upper`` bounds them (below the sign bit or nothing)."""
        found = self.upper(v)
        if found is not None or depth > 8:
            return found
        top = (1 << 63) - 1
        nonneg = self._nonneg_by_fact(v, facts, block)
        for fact in facts:
            cmp = self._compare(fact, strict=False)
            if cmp is None or not self.same(cmp[1], v) or (cmp[0] == "s" and not nonneg):
                continue
            if not self.fresh(fact, (fact[0], *self._tree(v), *self._tree(cmp[2])), block):
                continue
            bound = self.upper(cmp[2])
            if bound is not None:
                bound = max(bound - 1, 0) if cmp[3] else bound
                found = bound if found is None else min(found, bound)
        if found is not None:
            return found
        ins = self.defs.get(v)
        if ins is None or ins.opcode not in ("shl", "mul", "add", "or") or _width(ins) != 64:
            return None
        x, y = (_value(w) for w in _words(ins.text, ins.opcode))
        ux = self._upper_with(x, facts, block, depth + 1)
        uy = _int(y) if ins.opcode == "shl" else self._upper_with(y, facts, block, depth + 1)
        if ux is None or uy is None or uy < 0:
            return None
        if ins.opcode == "shl":
            result = ux << uy if uy < 64 else top + 1
        elif ins.opcode == "mul":
            result = ux * uy
        elif ins.opcode == "add":
            result = ux + uy
        else:
            result = (1 << max(ux, uy).bit_length()) - 1
        return result if result <= top else None

    def _nonneg_by_fact(self, k: str, facts: list[Fact], block: str) -> bool:
        """A branch says ``k >= 0`` (``if 0 <= k < a.size:``)."""
        for fact in facts:
            cmp = self._compare(fact, strict=False)
            if cmp is None or cmp[0] != "s":
                continue
            if not self.fresh(fact, (fact[0], *self._tree(cmp[2]), *self._tree(k)), block):
                continue
            low = _int(cmp[1])  # low <= x (not strict) or low < x (strict)
            if low is not None and self.same(cmp[2], k) and low >= (-1 if cmp[3] else 0):
                return True
        return False

    def same(self, x: str, y: str) -> bool:
        """``x`` and ``y`` are the same value (one computation written twice: a second
        ``zext`` of one register, a special register read again)."""
        return x == y or self._key(x) == self._key(y)

    def _tree(self, v: str, depth: int = 0) -> tuple[str, ...]:
        """The values ``v``'s ``same`` key is built from: what must be fresh for two
        copies of one computation to be equal (special registers never change)."""
        ins = self.defs.get(v)
        if ins is None or depth >= 8 or self._key(v) == v:
            return (v,)
        if ins.opcode == "call":  # a special register: the same in every read
            return ()
        return tuple(x for op in ins.operands for x in self._tree(op, depth + 1))

    def _key(self, v: str, depth: int = 0) -> str:
        cached = self._keys.get(v)
        if cached is not None:
            return cached
        ins = self.defs.get(v)
        key = v
        if ins is not None and depth < 8:
            body = ins.text.split(" = ", 1)[1] if " = " in ins.text else ""
            pure = ins.opcode in ("zext", "sext", "trunc", "add", "sub", "mul", "shl", "and")
            sreg = ins.opcode == "call" and "@llvm.nvvm.read.ptx.sreg." in body
            if pure:
                key = " ".join(
                    self._key(w.rstrip(","), depth + 1) + ("," if w.endswith(",") else "")
                    if w.startswith("%")
                    else w
                    for w in body.split(" ")
                )
            elif sreg and ".clock" not in body and "globaltimer" not in body:
                key = body
        self._keys[v] = key
        return key

    def _at_most_extent(self, bound: str, info: InputInfo, depth: int = 0) -> bool:
        """``bound <= extent`` (for every value ``bound`` may take)."""
        c = _int(bound)
        if c is not None:
            return c <= info.elements
        if bound in info.extents or bound in info.bounded:
            return True
        ins = self.defs.get(bound)
        if ins is None or depth > 8:
            return False
        if ins.opcode == "phi":
            return all(self._at_most_extent(v, info, depth + 1) for v, _p in self._incoming(ins))
        if ins.opcode == "select":
            _cond, yes, no = (_value(w) for w in _words(ins.text, "select"))
            return self._at_most_extent(yes, info, depth + 1) and self._at_most_extent(
                no, info, depth + 1
            )
        if ins.opcode == "call" and ("@llvm.smin." in ins.text or "@llvm.umin." in ins.text):
            # min(x, y) <= y (umin: for a y that is not negative)
            args = [_value(w) for w in split_operands(ins.text.split("(", 1)[1].rsplit(")", 1)[0])]
            signed = "@llvm.smin." in ins.text
            return any(
                self._at_most_extent(x, info, depth + 1) and (signed or self.nonneg(x))
                for x in args
            )
        return False

    def _counted(self, p: str, info: InputInfo, facts: list[Fact], block: str) -> bool:
        """Numba's range loop: ``p`` from 0 by +1 with a counter ``c`` from N by -1, c > 0,
        ``N <= extent`` (an extent read from the input itself: ``range(a.size)``)."""
        for trips in self._counters(p, facts, block):
            if (trips.width, trips.start, trips.step) != (64, 0, 1):
                continue
            if all(self._at_most_extent(n, info) for n in trips.counts):
                return True
        return False

    def _counters(self, p: str, facts: list[Fact], point: str) -> list[_Trips]:
        """The range loops of ``p`` (``_trips``) whose counter ``c`` has a fact ``0 <s c``
        that holds at ``point`` and still sees the ``p`` and ``c`` there."""
        header = self.def_block.get(p)
        ins = self.defs.get(p)
        if header is None or ins is None or ins.opcode != "phi":
            return []
        out = []
        for fact in facts:
            cmp = self._compare(fact)
            # c > 0 is "0 < c" (signed)
            if cmp is None or cmp[0] != "s" or _int(cmp[1]) != 0:
                continue
            c = cmp[2]
            if self.def_block.get(c) != header or not self.fresh(fact, (fact[0], c, p), point):
                continue
            trips = self._trips(p, c)
            if trips is not None:
                out.append(trips)
        return out

    def _trips(self, p: str, c: str) -> _Trips | None:
        """``p`` and ``c``, phis of one loop header, as Numba's range loop: on every edge
        into the header either ``p = S`` (one constant) and ``c = N``, or both stepped
        together (``_steps``: ``p + s`` with ``c - 1`` computed only where ``c > 0``, or both
        unchanged, one constant ``s`` for every step).

        Then ``p + s * c`` does not change from the entry on (modulo ``2**width``: the steps
        wrap as the machine computes them, and the invariant holds modulo too), so
        ``p == S + s * (N - c)``; ``c`` starts at ``N`` and moves only from a positive value,
        by -1 (never wrapping), so the trips done ``t = N - c`` lie in ``[0, max(N, 0)]``, and
        in ``[0, N - 1]`` where ``c > 0`` holds (``_span``)."""
        key = (p, c)
        if key in self._trip_cache:
            return self._trip_cache[key]
        self._trip_cache[key] = None
        pins, cins = self.defs.get(p), self.defs.get(c)
        header = self.def_block.get(p)
        loop = next((lp for lp in self.graph.loops if lp.header == header), None)
        if pins is None or cins is None or loop is None or p == c:
            return None
        if pins.opcode != "phi" or cins.opcode != "phi" or self.def_block.get(c) != header:
            return None
        width = _width(pins)
        if width is None or _width(cins) != width:
            return None
        pin = dict((pred, v) for v, pred in self._incoming(pins))
        cin = dict((pred, v) for v, pred in self._incoming(cins))
        if set(pin) != set(cin):
            return None
        starts: set[int] = set()
        steps: set[int] = set()
        counts: list[str] = []
        for pred, pv in pin.items():
            if pred in loop.blocks:
                moved = self._steps(pv, cin[pred], p, c, 0)
                if moved is None:
                    return None
                steps |= {_signed(s, width) for s in moved}
                continue
            start = _int(pv)
            if start is None:
                return None
            starts.add(_signed(start, width))
            counts.append(cin[pred])
        if len(starts) != 1 or len(steps) > 1:
            return None
        # no step at all: ``p`` keeps its start, inside any span from it
        found = _Trips(starts.pop(), steps.pop() if steps else 1, tuple(counts), width)
        self._trip_cache[key] = found
        return found

    def _steps(self, x: str, y: str, p: str, c: str, depth: int) -> frozenset[int] | None:
        """The steps ``s`` on the paths from ``(p, c)`` to ``(x, y)``: each ``x = x' + s``
        taken with ``y = y' - 1`` (guarded, ``_decrement_guarded``), or both unchanged; None
        when some path changes one without the other (or otherwise)."""
        if (x, y) == (p, c):
            return frozenset()
        if depth > 16:
            return None
        xi, yi = self.defs.get(x), self.defs.get(y)
        if xi is None or yi is None:
            return None
        if xi.opcode == "add" and yi.opcode == "add":
            xa, xb = (_value(w) for w in _words(xi.text, "add"))
            ya, yb = (_value(w) for w in _words(yi.text, "add"))
            step = _int(xb)
            if step is None or _int(yb) != -1 or not self._decrement_guarded(y, ya):
                return None
            inner = self._steps(xa, ya, p, c, depth + 1)
            return None if inner is None else inner | {step}
        if xi.opcode == "phi" and yi.opcode == "phi" and self.def_block[x] == self.def_block[y]:
            xin = dict((pred, v) for v, pred in self._incoming(xi))
            yin = dict((pred, v) for v, pred in self._incoming(yi))
            if set(xin) != set(yin):
                return None
            found: frozenset[int] = frozenset()
            for b in xin:
                moved = self._steps(xin[b], yin[b], p, c, depth + 1)
                if moved is None:
                    return None
                found |= moved
            return found
        return None

    def _decrement_guarded(self, y: str, ya: str) -> bool:
        """``y = ya - 1`` is computed only where ``ya > 0`` (signed, in its width) holds: the
        counter never goes below 0, so it never wraps and the trips are at most its start."""
        where = self.def_block[y]
        for fact in self.facts(where):
            cmp = self._compare(fact)
            if cmp is None or cmp[0] != "s" or _int(cmp[1]) != 0 or not self.same(cmp[2], ya):
                continue
            if self.fresh(fact, (fact[0], *self._tree(ya)), where):
                return True
        return False

    def _span(self, p: str, facts: list[Fact], point: str) -> tuple[int, int] | None:
        """``lo <= p <= hi`` (signed) at ``point`` for the index phi ``p`` of a range loop
        (``_trips``) whose start, step and greatest count ``N`` are known numbers: ``p`` is
        ``S + s * t`` for trips ``t`` in ``[0, N - 1]`` where a fact ``c > 0`` holds, in
        ``[0, max(N, 0)]`` anywhere (after the last step too). None when ``p`` is no such
        phi or a value of the span does not fit its width (the exact value is then not
        the machine's)."""
        ins = self.defs.get(p)
        if ins is None or ins.opcode != "phi":
            return None
        header = self.def_block[p]
        if not any(lp.header == header for lp in self.graph.loops):
            return None
        spans = [self._trip_span(t, True) for t in self._counters(p, facts, point)]
        if not any(spans):
            phis = [i.result for i in self.by_name(header).instrs if i.opcode == "phi"]
            spans = [self._trip_span(self._trips(p, c), False) for c in phis if c and c != p]
        found = [s for s in spans if s is not None]
        if not found:
            return None
        return (max(s[0] for s in found), min(s[1] for s in found))

    def _trip_span(self, trips: _Trips | None, counting: bool) -> tuple[int, int] | None:
        if trips is None:
            return None
        most = [self._signed_max(n, trips.width, 0) for n in trips.counts]
        if None in most:
            return None
        n = max(m for m in most if m is not None)
        last = n - 1 if counting else max(n, 0)
        if last < 0:  # no trip reaches the point: refused all the same (no value to bound)
            return None
        ends = (trips.start, trips.start + trips.step * last)
        top = (1 << (trips.width - 1)) - 1
        lo, hi = min(ends), max(ends)
        return (lo, hi) if -top - 1 <= lo and hi <= top else None

    def _signed_max(self, v: str, bits: int, depth: int) -> int | None:
        """The greatest value ``v`` may take, read as a signed ``bits``-wide integer (no
        lower bound): a constant, ``upper``'s bound, the most of a phi's or a select's
        values, ``smin`` (at most any of its operands), ``smax`` (the most of all), ``umin``
        (at most an operand that is not negative)."""
        c = _int(v)
        if c is not None:
            return _signed(c, bits)
        # once per value (a phi of phis would be walked once per path); a bound found under
        # a loop's hypothesis is its own, and one cut short by the depth is None: looser only
        key = (v, bits, tuple(self._hypothesis))
        if key not in self._smax:
            self._smax[key] = None  # a cycle of phis: no bound
            self._smax[key] = self._signed_max_instr(v, bits, depth)
        return self._smax[key]

    def _signed_max_instr(self, v: str, bits: int, depth: int) -> int | None:
        u = self.upper(v, bits)
        if u is not None:
            return u
        ins = self.defs.get(v)
        if ins is None or depth > 8 or _width(ins) != bits:
            return None
        if ins.opcode in ("phi", "select"):
            if ins.opcode == "phi":
                parts = [x for x, _pred in self._incoming(ins)]
            else:
                parts = [_value(w) for w in _words(ins.text, "select")[1:]]
            most = [self._signed_max(x, bits, depth + 1) for x in parts]
            return None if not most or None in most else max(m for m in most if m is not None)
        if ins.opcode != "call":
            return None
        body = ins.text.split(" = ", 1)[1] if " = " in ins.text else ins.text
        args = [_value(w) for w in split_operands(body.split("(", 1)[1].rsplit(")", 1)[0])]
        if "@llvm.umin." in body:  # below every operand read unsigned
            bounds = [self.upper(a, bits) for a in args]
        elif "@llvm.smin." in body or "@llvm.smax." in body:
            bounds = [self._signed_max(a, bits, depth + 1) for a in args]
            if "@llvm.smax." in body:
                return None if None in bounds else max(b for b in bounds if b is not None)
        else:
            return None
        return min((b for b in bounds if b is not None), default=None)

    def _incoming(self, ins: Instr) -> list[tuple[str, str]]:
        """A phi's (value, predecessor) pairs, constants included, over the edges some run
        takes: an edge from a block no run reaches is no value, and neither is one from a
        reached block that never branches to the phi's (a branch on a constant keeps one
        target: ``br i1 true`` past Numba's ``%`` sign fix-up leaves the other arm's
        ``poison`` on an edge no run takes)."""
        out = []
        live = self._live()
        home = self.def_block.get(ins.result or "")
        body = ins.text.split("phi ", 1)[1]
        for part in body.split("[")[1:]:
            inner = part.split("]")[0]
            value, _, pred = inner.partition(",")
            pred = pred.strip()
            if pred not in live or (home is not None and home not in self.graph.succs[pred]):
                continue
            out.append((value.strip(), pred))
        return out

    def _live(self) -> frozenset[str]:
        """The blocks reachable from the entry (a branch on a constant goes one way:
        ``_irform`` keeps that target only, and the graph holds reachable blocks only)."""
        if not self._reachable:
            self._reachable = frozenset(self.graph.order)
        return self._reachable

    def _infeasible(self, pred: str, home: str, facts: list[Fact], use: str) -> bool:
        """Does the edge ``pred -> home`` contradict a fact that holds at ``use``?

        Only when the condition cannot have been evaluated again between the
        phi at ``home`` and ``use`` (no path from ``home`` to ``use`` passes its
        block without passing ``home`` first).
        """
        for cond, truth, _at in self.edge_fact(pred, home):
            for fact in facts:
                if fact[0] != cond or fact[1] == truth or not self.fresh(fact, (cond,), use):
                    continue
                where = self.def_block.get(cond)
                if where is None or not self._reevaluated_between(where, home, use):
                    return True
        return False

    def _reevaluated_between(self, where: str, home: str, use: str) -> bool:
        succs = self.graph.succs

        def reach(start: list[str]) -> set[str]:
            seen: set[str] = set()
            work = list(start)
            while work:
                n = work.pop()
                if n in seen or n == home:
                    continue
                seen.add(n)
                work.extend(succs.get(n, ()))
            return seen

        if where == home:  # computed in ``home`` itself, after its phis: a later evaluation
            return True
        after_home = reach(list(succs.get(home, ())))
        return where in after_home and (where == use or use in reach(list(succs.get(where, ()))))

    # ------------------------------------------------------------------ signs

    def nonneg(self, v: str) -> bool:
        """``v >= 0`` as a signed integer, as the machine computes it (wrapping)."""
        return self.upper(v) is not None

    def upper(self, v: str, bits: int = 64) -> int | None:
        """A bound ``U`` with ``0 <= v <= U`` (``v`` read as a signed ``bits``-wide integer)
        on every execution, or None.

        Derived from values alone, never from the ``nsw``/``nuw`` flags: numba-cuda puts
        ``nsw`` on every signed add, sub and mul, yet the GPU wraps (NVVM emits
        ``mul.lo.s64``); a flag is a promise LLVM may exploit, not a fact about what runs.
        A sum or product is bounded only when the operands' bounds keep it below the sign
        bit, ``C - x`` only for ``0 <= x <= C``; an operand by the branch facts of the block
        where the instruction runs (``_upper_at``: a range loop's index where its counter is
        positive, ``_span``); a range loop's index phi by its trips, any other loop phi by
        induction (its back-edge values bounded, assuming it is non-negative, by the branch
        facts where they are computed).
        """
        ins = self.defs.get(v)
        bits = (_width(ins) if ins is not None else None) or bits  # its own type decides
        top = (1 << (bits - 1)) - 1
        c = _int(v)
        if c is not None:
            return c if 0 <= c <= top else None
        if v in self._hypothesis:
            return self._hypothesis[v]
        key = (v, bits, tuple(self._hypothesis))  # a result under a loop's hypothesis is its own
        if key in self._upper:
            return self._upper[key]
        if any(v in info.extents for info in self.inputs.values()):
            found: int | None = top  # a shape entry: a non-negative intp
        elif ins is None or self._depth > 48:
            found = None
        else:
            self._depth += 1
            try:
                found = self._upper_instr(v, ins, bits)
            finally:
                self._depth -= 1
            found = found if found is not None and found <= top else None
        self._upper[key] = found
        return found

    def _upper_instr(self, v: str, ins: Instr, bits: int) -> int | None:
        op = ins.opcode
        block = self.def_block[v]  # operands as they are where ``v`` is computed

        def at(x: str, width: int = bits) -> int | None:
            return self._upper_at(x, width, block)

        if op in ("zext", "sext", "trunc"):
            src, _, dst = _words(ins.text, op)[0].partition(" to ")
            width = _bits(src.split(" ")[0])
            if width is None:
                return None
            if op == "zext":
                return _min((1 << width) - 1, at(_value(src), width))
            return at(_value(src), width)  # sext keeps, trunc keeps a small value
        if op == "select":
            _cond, yes, no = (_value(w) for w in _words(ins.text, "select"))
            return _max(at(yes), at(no))
        if op == "phi":
            return self._upper_phi(v, ins, bits)
        if op == "call":
            return self._upper_call(ins, bits, at)
        words = _words(ins.text, op)
        if len(words) != 2:
            return None
        x, y = _value(words[0]), _value(words[1])
        if op in ("add", "mul"):
            ux, uy = at(x), at(y)
            if ux is None or uy is None:
                return None
            return ux + uy if op == "add" else ux * uy
        if op == "sub":  # C - x for 0 <= x <= U <= C: in [C - U, C], no wrap
            cx, uy = _int(x), at(y)
            return cx if cx is not None and uy is not None and uy <= cx else None
        ux, cy = at(x), _int(y)
        if op == "and":  # the sign bit clear in either operand clears it in the result
            return _min(ux, at(y))
        if op == "or":
            uy = at(y)
            return None if ux is None or uy is None else (1 << max(ux, uy).bit_length()) - 1
        if op == "shl":
            return None if ux is None or cy is None or cy < 0 else ux << cy
        if op in ("lshr", "udiv") and cy is not None and cy >= 1:
            whole = (1 << bits) - 1 if ux is None else ux  # read unsigned: any bit pattern
            return whole >> cy if op == "lshr" else whole // cy
        if op in ("ashr", "sdiv") and ux is not None and cy is not None and cy >= 1:
            return ux >> cy if op == "ashr" else ux // cy
        if op in ("urem", "srem") and cy is not None and cy >= 1:
            return min(cy - 1, ux) if ux is not None else (cy - 1 if op == "urem" else None)
        return None

    def _upper_at(self, x: str, bits: int, block: str) -> int | None:
        """``upper(x)``, tightened by the branch facts that hold in ``block`` (``x < B``)."""
        return self._upper_by(x, bits, self.facts(block), block)

    def _upper_edge(self, x: str, pred: str, home: str, bits: int) -> int | None:
        """``upper(x)`` for the value a phi of ``home`` takes along the edge from ``pred``."""
        return self._upper_by(x, bits, self._edge_facts(pred, home), pred)

    def _upper_by(self, x: str, bits: int, facts: list[Fact], point: str) -> int | None:
        """``upper(x)`` where ``facts`` hold (at ``point``): a range loop's index phi by its
        trips (``_span``: where its counter is positive, the last trip's value), then
        tightened by a branch on ``x`` itself (``x < B``)."""
        u = self.upper(x, bits)
        span = self._span(x, facts, point)
        if span is not None and span[0] >= 0:
            u = span[1] if u is None else min(u, span[1])
        bound = self._fact_bound(x, facts, point, bits)
        return u if u is None or bound is None else min(u, bound)

    def _edge_facts(self, pred: str, home: str) -> list[Fact]:
        return self.facts(pred) + self.edge_fact(pred, home)

    def _fact_bound(self, x: str, facts: list[Fact], point: str, bits: int) -> int | None:
        """The tightest ``x <= U`` the ``facts`` (holding at ``point``) give a non-negative
        ``x`` (``x < B`` or ``x <= B``, signed or unsigned, with ``0 <= B <= upper(B)``)."""
        best: int | None = None
        for fact in facts:
            cmp = self._compare(fact, strict=False)
            if cmp is None or not self.same(cmp[1], x):
                continue
            if not self.fresh(fact, (fact[0], *self._tree(x), *self._tree(cmp[2])), point):
                continue
            bound = self.upper(cmp[2], bits)
            if bound is not None:
                bound = bound - 1 if cmp[3] else bound
                best = bound if best is None else min(best, bound)
        return best

    def _upper_phi(self, v: str, ins: Instr, bits: int) -> int | None:
        home = self.def_block[v]
        loop = next((lp for lp in self.graph.loops if lp.header == home), None)
        incoming = self._incoming(ins)
        entry = [(x, p) for x, p in incoming if loop is None or p not in loop.blocks]
        back = [(x, p) for x, p in incoming if loop is not None and p in loop.blocks]
        if loop is not None:
            span = self._span(v, [], home)  # a range loop's index: by its trips
            if span is not None and span[0] >= 0:
                return span[1]
        found = [self._upper_edge(x, p, home, bits) for x, p in entry]
        if None in found:
            return None
        if back:
            # Induction over the trips: 0 <= v <= guess at the loop's entry; assuming it,
            # every back-edge value is non-negative (bounded by its operands) and at most
            # guess (by the branch facts on its edge), so it holds on the next trip.
            top = (1 << (bits - 1)) - 1
            limits = [self._fact_bound(x, self._edge_facts(p, home), p, bits) for x, p in back]
            guess = max(
                [u for u in found if u is not None] + [top if u is None else u for u in limits]
            )
            self._hypothesis[v] = guess
            try:
                again = [self._upper_edge(x, p, home, bits) for x, p in back]
            finally:
                del self._hypothesis[v]
            if None in again or max(u for u in again if u is not None) > guess:
                return None
        return max(u for u in found if u is not None) if not back else guess

    def _upper_call(self, ins: Instr, bits: int, at: Callable[[str], int | None]) -> int | None:
        body = ins.text.split(" = ", 1)[1] if " = " in ins.text else ins.text
        for name, bound in _SREG_BOUNDS.items():
            if f"@llvm.nvvm.read.ptx.sreg.{name}(" in body:
                # a thread-index read's ``!range`` (the contract's block or max_threads)
                return bound if ins.bounds is None else min(bound, ins.bounds[1] - 1)
        if "@llvm.umin." in body or "@llvm.smin." in body or "@llvm.smax." in body:
            args = [_value(w) for w in split_operands(body.split("(", 1)[1].rsplit(")", 1)[0])]
            bounds = [at(a) for a in args]
            if "@llvm.umin." in body:  # below every operand read unsigned: any non-negative one
                return min((u for u in bounds if u is not None), default=None)
            if None in bounds:
                return None
            return (min if "@llvm.smin." in body else max)(u for u in bounds if u is not None)
        return None
