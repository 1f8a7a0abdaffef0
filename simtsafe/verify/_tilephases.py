"""Tile phases of a compiled kernel: no thread reads a shared element another writes unordered.

A Tier-1 shared object -- a ``shared.tile`` (its own ``addrspace(3)`` global,
``_simtsafe_tile_L<line>_N``), the dynamic tile (``_simtsafe_dyntile*``: all of
them are the one dynamic shared array) or a ``shared.accumulator``
(``__ss_acc_L<line>_N``) -- is accessed in *barrier intervals*: the code a
thread runs between two of simtsafe's block barriers (``block.sync``, the
barriers inside block collectives and ``shared.accumulator``, grid syncs).
Those barriers are proven block-uniform (``_verdict.check_sites``), so the
k-th barrier every thread of a block passes is the same instruction, and two
threads run two instructions at the same time only if both may follow the
same barrier: ``_phases.last_syncs`` computes, for every instruction, the
barriers (or the entry) that may be the last one before it.

Accesses are found by pointer provenance (``_divergence.pointer_roots``), on
what LLVM cannot rename away:

* reads: a ``load``; inline assembly that loads (``ldmatrix``, ``ld.``);
* writes: a ``store``; an atomic (an *update* of an accumulator: ``atomicrmw``, or a call
  of Numba's float atomics);
  ``cp.async`` (inline assembly; its destination is its first operand); a
  call or other inline assembly that may write what its operands point to;
* a read or write whose pointer cannot be followed touches every object.

Two accesses may share an interval when some barrier may be the last before
both and some barrier (or the exit) the first after both (``_phases``). Two
accesses of one object *clash* when they may share a barrier interval and
one of them is a read and the other a write, except a thread's read of its
*own* element: a load whose address is computed from block-local witness
indices alone, by the same instructions as the address of a witness store
(``tile[w] = v``). The lowering tags both what it trusts: each witness index
(``!ss.witness``, on an ``add 0``) and each witness store (``!ss.own``);
``lowering._irform`` turns the first into a call ``@__ss.witness.<space>.<axis>``
and puts a call ``@__ss.own.K(address)`` before the second, before any pass
runs: calls no pass drops or folds. A witness names one element per thread in
every tile of its space, so no other thread's witness store writes it; any
other write (a fill, an update, an unknown write) clashes with the own read.
A witness store whose address is not computed from witnesses alone (the name
may hold a default value on some path) is a plain write.

Among writes, an atomic update clashes with every non-atomic write, and a
witness store with every other write (a fill's stores give the element to
another thread). Each write of a whole-object fill -- ``fill_async``'s copies
and per-element stores, ``fill_transposed``'s stores, an accumulator's zeroing
-- carries the label of the map by which its fill gives elements to threads
(``!ss.fill``, a call ``@__ss.fill.<label>.K`` of its address right before it
in the compiled form): two writes with one label write each element from one
thread, any other two plain writes (two labels, or a write without one) may
write it from two threads, and clash. An asynchronous fill also starts with a
call ``@__ss.fillstart`` of its tile: where a copy of the thread into that tile
may still be in flight (not waited for on some path), the fill is refused, as
the thread's two copies of an element land in either order.

``cp.async`` writes land asynchronously: a copy counts as a write in every
interval from the one it is issued in up to the one in which the thread
waits for it (``cp.async.wait_all``, or ``cp.async.wait_group n`` once ``n``
or fewer groups were committed after its own; a copy not yet committed is
covered by ``wait_all`` only). The number of commits since each copy is
tracked along every path, saturating.

``wgmma`` reads asynchronously too: a ``wgmma.mma_async`` issue (inline
assembly that commits its group and does not wait for it) counts as a read
of its tiles (its descriptors carry their addresses) in every interval from
its own up to the one in which the thread waits for its group
(``wgmma.wait_group n`` once ``n`` or fewer groups were committed after it;
a synchronous ``wgmma.mma`` commits and waits for 0 in one statement).

Conservative edges (refused though they may be safe): an own read whose
address is computed differently from every witness store's (``tile[w]`` is
the same computation as ``tile[w] = v``; ``tile[w.index + 0]`` may not be);
recursion or an unknown call in a kernel that uses shared objects.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .._errors import SafetyError
from ..lowering._irform import FunctionForm, Instr, split_operands
from ._divergence import ATOMIC_CALLS, UNKNOWN, _provenance, convergent_scope, written_by
from ._phases import last_syncs, next_syncs

__all__ = ["check_tile_phases", "shared_objects"]

_TILE = "_simtsafe_tile"
_DYNAMIC = "_simtsafe_dyntile"
_ACC = "__ss_acc"
_LINE_RE = re.compile(r"_L(\d+)_")
#: The type before an operand's value: ``i32``, ``ptr``, ``ptr addrspace(3)``, attributes.
_TYPE_PREFIX = re.compile(
    r"^(?:i\d+|ptr(?: addrspace\(\d+\))?)(?:\s+(?:noundef|nonnull|align \d+))*\s+"
)
_LOCAL_RE = re.compile(r'%(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+)')
#: Opcodes whose result is a function of their operands alone (an address computation).
_PURE = frozenset(
    {
        "getelementptr",
        "add",
        "sub",
        "mul",
        "shl",
        "lshr",
        "ashr",
        "and",
        "or",
        "xor",
        "udiv",
        "sdiv",
        "urem",
        "srem",
        "zext",
        "sext",
        "trunc",
        "bitcast",
        "addrspacecast",
        "ptrtoint",
        "inttoptr",
        "icmp",
        "select",
        "extractvalue",
        "freeze",
    }
)
_FLAGS_RE = re.compile(r"\b(?:inbounds|nuw|nsw|nusw|exact|disjoint|samesign)\s+")
_SREG = "llvm.nvvm.read.ptx.sreg."
_WITNESS = "__ss.witness."
_FILL = "__ss.fill."
_FILL_START = "__ss.fillstart"
#: The most commits a copy is counted through (``wait_group n`` takes small ``n``).
_OLD = 64
_WAIT_GROUP_RE = re.compile(r"cp\.async\.wait_group\s+(\d+)")

READS = ("read", "own", "aread")
_WGMMA_WAIT_RE = re.compile(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)")


@dataclass(frozen=True)
class SharedObject:
    """A Tier-1 shared object of the kernel, as the message names it."""

    key: str  # the global (every dynamic tile: the dynamic prefix)
    kind: str  # "shared tile", "dynamic shared tile", "accumulator"
    line: int | None  # where it is made


def shared_objects(form: FunctionForm) -> dict[str, SharedObject]:
    """Global name -> the Tier-1 shared object it is (dynamic tiles all map to one)."""
    out: dict[str, SharedObject] = {}
    for name, g in form.globals.items():
        if g.addrspace != 3:
            continue
        m = _LINE_RE.search(name)
        line = int(m.group(1)) if m else None
        if name.startswith(_DYNAMIC):
            out[name] = SharedObject(_DYNAMIC, "dynamic shared tile", line)
        elif name.startswith(_TILE):
            out[name] = SharedObject(name, "shared tile", line)
        elif name.startswith(_ACC):
            out[name] = SharedObject(name, "accumulator", line)
    return out


@dataclass(frozen=True)
class Access:
    instr: Instr
    obj: str  # SharedObject.key
    kind: str  # read, own, witness, write, async, update, other
    label: str | None = None  # a fill's write: the map that gives elements to threads


def _clash(x: Access, y: Access) -> bool:
    a, b = x.kind, y.kind
    if a in READS or b in READS:
        if a in READS and b in READS:
            return False
        read, write = (a, b) if a in READS else (b, a)
        return not (read == "own" and write == "witness")
    if "update" in (a, b):
        return a != b
    if "witness" in (a, b):
        return a != b
    # Two plain writes (stores, copies, calls): fills of one map give each element to one
    # thread; anything else may give it to two.
    return x.label is None or x.label != y.label


def is_block_sync(ins: Instr) -> bool:
    """One of simtsafe's block barriers (block.sync, a collective's, a grid sync's)."""
    return ins.site is not None and convergent_scope(ins) in ("block", "grid")


class _Keys:
    """Value numbering of address computations: equal keys, equal values in one thread."""

    def __init__(self, form: FunctionForm) -> None:
        self.defs = {i.result: i for b in form.blocks for i in b.instrs if i.result}
        self.memo: dict[str, str] = {}

    def of(self, value: str, depth: int = 0) -> str:
        done = self.memo.get(value)
        if done is not None:
            return done
        self.memo[value] = value  # a cycle through phis: the value itself
        ins = self.defs.get(value)
        key = value
        if ins is not None and depth < 48:
            callee = ins.callee or ""
            if ins.opcode == "call" and callee.startswith(_SREG):
                key = f"sreg:{callee}"
            elif ins.opcode == "call" and callee.startswith(_WITNESS):
                key = "witness:" + callee[len(_WITNESS) :]
            elif ins.opcode == "phi" and ins.incoming:
                # The same witness on every incoming path (none a constant): that witness.
                keys = {self.of(v, depth + 1) if v is not None else "%" for v, _ in ins.incoming}
                if len(keys) == 1 and "%" not in next(iter(keys)):
                    key = next(iter(keys))
            elif ins.opcode in _PURE:
                rhs = _FLAGS_RE.sub("", ins.text.split(" = ", 1)[1])
                key = "(" + _LOCAL_RE.sub(lambda m: self.of(m.group(0), depth + 1), rhs) + ")"
        self.memo[value] = key
        return key


def _call_args(ins: Instr) -> list[str]:
    """The argument texts of a call (``i64 %x``), after the callee or the asm strings."""
    text = ins.text
    start = text.rfind('"(') + 1 if ins.callee == "asm" else text.find("(", text.find("@"))
    if start <= 0:
        return []
    depth, end = 0, len(text)
    for k in range(start, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                end = k
                break
    return split_operands(text[start + 1 : end])


class _Finder:
    def __init__(self, form: FunctionForm, objects: Mapping[str, SharedObject]) -> None:
        self.form = form
        self.objects = objects
        self.prov, _ = _provenance(form)
        self.every = frozenset(o.key for o in objects.values())
        self.keys = _Keys(form)
        # The addresses of witness stores computed from witnesses alone (a witness that
        # may be a default value on some path, e.g. a name bound only in a loop that
        # ran no iteration, leaves a value of its own in the key).
        self.own = {
            key
            for b in form.blocks
            for ins in b.instrs
            if ins.opcode == "call" and (ins.callee or "").startswith("__ss.own.") and ins.operands
            for key in [self.keys.of(ins.operands[0])]
            if "%" not in key and "witness:" in key
        }
        self.labels = self._fill_labels()

    def starts(self) -> dict[int, tuple[Instr, frozenset[str]]]:
        """``id(start)`` -> (the start of an asynchronous fill, the objects it fills)."""
        return {
            id(ins): (ins, self.arg_objs(_call_args(ins)))
            for b in self.form.blocks
            for ins in b.instrs
            if ins.opcode == "call" and ins.callee == _FILL_START
        }

    def _fill_labels(self) -> dict[int, str]:
        """``id(write)`` -> the label of the fill it belongs to: the write (a store, a
        ``cp.async``) right after a ``__ss.fill.<label>.K`` marker of its own address
        (``lowering._irform``), with no other memory access or call between them. The
        address is a value or, where the compiler folded it (one thread's last run at a
        fixed place of the tile), a constant expression, compared as text (attack round
        14: such a copy had no label and clashed with its own fill's other copies)."""
        out: dict[int, str] = {}
        for b in self.form.blocks:
            pending: tuple[str, str] | None = None
            for ins in b.instrs:
                name = ins.callee or ""
                if ins.opcode == "call" and name.startswith(_FILL):
                    marked = _call_args(ins)[:1]
                    key = self._address_key(marked[0]) if marked else None
                    label = name[len(_FILL) :].rpartition(".")[0]
                    pending = (label, key) if key is not None else None
                    continue
                address = None
                if ins.opcode == "store":
                    parts = split_operands(ins.text.partition("store ")[2])
                    address = parts[1] if len(parts) > 1 else None
                elif name == "asm" and "cp.async." in (ins.asm or ""):
                    first = _call_args(ins)[:1]
                    address = first[0] if first else None
                if pending is not None and address is not None:
                    if self._address_key(address) == pending[1]:
                        out[id(ins)] = pending[0]
                if ins.opcode in ("load", "store", "atomicrmw", "cmpxchg", "call"):
                    pending = None
        return out

    def _address_key(self, typed: str) -> str | None:
        """The value number of a typed operand (``i32 %x``, ``ptr addrspace(3) %p``): its
        value's key; a constant expression (it names no local value) by its text; None
        where the text is neither."""
        value = _TYPE_PREFIX.sub("", typed.strip(), count=1)
        found = _LOCAL_RE.findall(value)
        if len(found) == 1 and found[0] == value:
            return self.keys.of(value)
        if not found:
            return "const:" + value
        return None

    def of(self, ptr: str) -> frozenset[str]:
        p = self.prov.get(ptr, frozenset())
        return p if p else frozenset({UNKNOWN})

    def objs(self, roots: Iterable[str]) -> frozenset[str]:
        out: set[str] = set()
        for r in roots:
            if r == UNKNOWN:
                return self.every
            o = self.objects.get(r)
            if o is not None:
                out.add(o.key)
        return frozenset(out)

    def address(self, ins: Instr) -> frozenset[str]:
        if ins.pointers:
            return self.objs(self.of(ins.pointers[-1]))
        named = [g for g in ins.globals if g in self.form.globals]
        return self.objs(named) if named else self.every

    def arg_objs(self, args: Iterable[str]) -> frozenset[str]:
        """What the given argument texts may point to (integers carry their pointer's)."""
        roots: set[str] = set()
        for arg in args:
            for local in _LOCAL_RE.findall(arg):
                roots |= self.prov.get(local, frozenset())
            roots |= {g for g in self.objects if f"@{g}" in arg or f'@"{g}"' in arg}
        return self.objs(roots)

    def accesses(self, ins: Instr) -> list[tuple[str, frozenset[str]]]:
        op = ins.opcode
        if op == "load":
            ptr = ins.pointers[-1] if ins.pointers else None
            own = ptr is not None and self.keys.of(ptr) in self.own
            return [("own" if own else "read", self.address(ins))]
        if op == "store":
            ptr = ins.pointers[-1] if ins.pointers else None
            own = ptr is not None and self.keys.of(ptr) in self.own
            return [("witness" if own else "write", self.address(ins))]
        if op in ("atomicrmw", "cmpxchg"):
            return [("update", self.address(ins))]
        if op != "call" or is_block_sync(ins):
            return []
        name = ins.callee or ""
        if name.startswith(("__ss.own.", _FILL)) or name == _FILL_START:
            return []
        if name == "asm":
            text = ins.asm or ""
            if "cp.async.commit" in text or "cp.async.wait" in text:
                return []
            args = _call_args(ins)
            if "cp.async." in text:
                return [("async", self.arg_objs(args[:1]))]
            if "wgmma.mma_async" in text:
                # its descriptors carry the tiles' addresses; read until its group is waited
                # for, in this statement (wgmma.mma) or later (wgmma.mma_async)
                done = _WGMMA_WAIT_RE.search(text)
                kind = "read" if done is not None and done.group(1) == "0" else "aread"
                # Only the 64-bit descriptors address memory; the float operands are the
                # accumulator registers (whose values come out of other asm: no address).
                descriptors = [a for a in args if a.lstrip().startswith("i64")]
                return [(kind, self.arg_objs(descriptors))]
            if "ldmatrix" in text or re.search(r"\bld\.", text):
                return [("read", self.arg_objs(args))]
            if written_by(ins, self.of):
                touched = self.arg_objs(args) | self.objs(
                    g for g in self.objects if g in text
                )  # a symbol named in the text
                return [("read", touched), ("other", touched)]
            return []
        if name.startswith(ATOMIC_CALLS) and ins.pointers:  # a float accumulator's update
            return [("update", self.objs(self.of(ins.pointers[0])))]
        wrote = written_by(ins, self.of)
        out: list[tuple[str, frozenset[str]]] = []
        if wrote:
            out.append(("other", self.objs(wrote)))
        if ins.pointers and not name.startswith(_SREG):
            out.append(("read", self.objs(r for p in ins.pointers for r in self.of(p))))
        return out


def _async_spans(
    form: FunctionForm,
    fills: set[int],
    last: Mapping[int, frozenset[int]],
    wgmma: frozenset[int] = frozenset(),
    starts: frozenset[int] = frozenset(),
    in_flight: dict[int, set[int]] | None = None,
) -> dict[int, frozenset[int]]:
    """``id(cp.async)`` -> the barriers that may open an interval in which its copy may land;
    ``id(wgmma.mma_async)`` -> those that may open an interval in which it may still read.
    ``in_flight`` (if given) receives, for each fill start in ``starts``, the copies that may
    still be in flight there.

    Copies age by ``cp.async.commit_group`` and leave at ``cp.async.wait_*``; wgmma groups
    age by wgmma commits (an issue, a synchronous ``wgmma.mma``) and leave at
    ``wgmma.wait_group``: the two kinds of groups are counted apart."""
    spans: dict[int, set[int]] = {f: set(last[f]) for f in fills | wgmma}

    def older(now: frozenset[tuple[int, int]], is_wgmma: bool) -> frozenset[tuple[int, int]]:
        """``now`` after a commit of one kind: only that kind's entries age (a copy group
        closed between a wgmma issue and its wait does not make the wgmma group older)."""
        return frozenset(
            (f, min(a + 1, _OLD)) if (f in wgmma) == is_wgmma else (f, a) for f, a in now
        )

    blocks = {b.name: b for b in form.blocks}
    entry = form.blocks[0].name
    into: dict[str, frozenset[tuple[int, int]]] = {name: frozenset() for name in blocks}
    seen: set[str] = set()
    work = [entry]
    while work:
        name = work.pop()
        seen.add(name)
        now = into[name]
        for ins in blocks[name].instrs:
            text = (ins.asm or "") if ins.callee == "asm" else ""
            if is_block_sync(ins):
                for f, _age in now:
                    spans[f].add(id(ins))
            elif id(ins) in starts and in_flight is not None:
                in_flight.setdefault(id(ins), set()).update(f for f, _ in now if f in fills)
            elif id(ins) in wgmma:
                # the issue commits its own group: age 1, every earlier wgmma group one older
                now = older(now, is_wgmma=True) | {(id(ins), 1)}
            elif "wgmma." in text:
                if "wgmma.commit_group" in text:  # a synchronous wgmma.mma: a group too
                    now = older(now, is_wgmma=True)
                if (m := _WGMMA_WAIT_RE.search(text)) is not None:
                    n = int(m.group(1))
                    now = frozenset((f, a) for f, a in now if f not in wgmma or a <= n)
            elif id(ins) in fills:
                now = now | {(id(ins), 0)}
            elif "cp.async.commit_group" in text:
                now = older(now, is_wgmma=False)
            elif "cp.async.wait_all" in text:
                now = frozenset((f, a) for f, a in now if f in wgmma)
            elif (m := _WAIT_GROUP_RE.search(text)) is not None:
                n = int(m.group(1))
                now = frozenset((f, a) for f, a in now if f in wgmma or a <= n)
        for succ in blocks[name].terminator.targets:
            if succ in blocks and (succ not in seen or not now <= into[succ]):
                into[succ] = into[succ] | now
                work.append(succ)
    return {f: frozenset(s) for f, s in spans.items()}


Where = Callable[[Instr], str]


def check_tile_phases(
    form: FunctionForm,
    kernel: str,
    where: Where,
    line_of: Callable[[Instr], tuple[str, int] | None],
    fallback: tuple[str, int],
) -> None:
    """Refuse a read of a shared object that may share a barrier interval with another
    thread's write of it (or two writes that give an element to different threads).

    ``where(ins)``: the instruction's place in words (``line 12 (in helper h, line 3)``);
    ``line_of(ins)``: its (file, line) in the kernel.

    Raises:
        SafetyError: ``rule="tile-phase"``, at the read's (or the first write's) line,
            naming the object, both lines and the fix.
    """
    objects = shared_objects(form)
    if not objects:
        return
    _check_proxy_fences(form, kernel, where, line_of, fallback)
    finder = _Finder(form, objects)
    found: list[Access] = []
    for b in form.blocks:
        for ins in b.instrs:
            label = finder.labels.get(id(ins))
            for kind, objs in finder.accesses(ins):
                found.extend(Access(ins, o, kind, label) for o in objs)
    if not found:
        return
    last = last_syncs(form, is_block_sync)
    after = next_syncs(form, is_block_sync)
    fills = {id(a.instr) for a in found if a.kind == "async"}
    areads = frozenset(id(a.instr) for a in found if a.kind == "aread")
    starts = finder.starts()
    in_flight: dict[int, set[int]] = {}
    spans = (
        _async_spans(form, fills, last, areads, frozenset(starts), in_flight)
        if fills or areads
        else {}
    )

    def span(a: Access) -> frozenset[int]:
        if a.kind in ("async", "aread"):
            return spans[id(a.instr)]
        return last.get(id(a.instr), frozenset())

    def together(a: Access, b: Access) -> bool:
        """May ``a`` and ``b`` run in one barrier interval (the same last and next barrier)?"""
        if not span(a) & span(b):
            return False
        if {"async", "aread"} & {a.kind, b.kind}:
            return True  # in flight in any interval of its span: no next barrier to compare
        return bool(after.get(id(a.instr), frozenset()) & after.get(id(b.instr), frozenset()))

    by_obj: dict[str, list[Access]] = {}
    for a in found:
        if span(a):  # unreachable code has no interval
            by_obj.setdefault(a.obj, []).append(a)
    by_key = {o.key: o for o in objects.values()}
    for key, accesses in by_obj.items():
        for i, x in enumerate(accesses):
            for y in accesses[i:]:
                if not _clash(x, y) or not together(x, y):
                    continue
                if x.instr is y.instr and x.kind == y.kind:
                    continue
                first, second = (x, y) if x.kind in READS or y.kind not in READS else (y, x)
                _raise_clash(kernel, by_key[key], first, second, where, line_of, fallback)
    _check_refills(kernel, objects, found, starts, in_flight, where, line_of, fallback)


def _check_refills(
    kernel: str,
    objects: Mapping[str, SharedObject],
    found: list[Access],
    starts: Mapping[int, tuple[Instr, frozenset[str]]],
    in_flight: Mapping[int, set[int]],
    where: Where,
    line_of: Callable[[Instr], tuple[str, int] | None],
    fallback: tuple[str, int],
) -> None:
    """Refuse an asynchronous fill that starts while a copy of the same thread into its tile
    may still be in flight: the thread's two copies of an element land in either order."""
    copies = {id(a.instr): a for a in found if a.kind == "async"}
    by_key = {o.key: o for o in objects.values()}
    for start, flying in in_flight.items():
        ins, objs = starts[start]
        for f in sorted(flying, key=lambda f: str(copies[f].instr.loc)):
            if copies[f].obj in objs:
                _raise_refill(
                    kernel, by_key[copies[f].obj], ins, copies[f].instr, where, line_of, fallback
                )


def _raise_refill(
    kernel: str,
    obj: SharedObject,
    start: Instr,
    copy: Instr,
    where: Where,
    line_of: Callable[[Instr], tuple[str, int] | None],
    fallback: tuple[str, int],
) -> None:
    at = line_of(start) or fallback
    raise _phase_error(
        kernel,
        f"kernel {kernel!r}: {_named(obj, at[0])} is filled asynchronously at {where(start)} "
        f"while its copies of {where(copy)} may still be in flight (the thread has not waited "
        "for them on some path), so two copies of one element land in either order. Wait for "
        "the copies (simtsafe.shared.wait_group(n) or wait_all()) before the tile is filled "
        "again",
        at,
        line_of(copy),
    )


def _check_proxy_fences(
    form: FunctionForm,
    kernel: str,
    where: Where,
    line_of: Callable[[Instr], tuple[str, int] | None],
    fallback: tuple[str, int],
) -> None:
    """In a kernel whose code issues ``wgmma`` (the tensor cores read shared memory through
    another memory proxy), every wait for copies must be followed by ``fence.proxy.async``:
    the copies a thread waited for are then visible to the tensor cores (lowering._wgmma)."""
    asms = [i for b in form.blocks for i in b.instrs if i.callee == "asm"]
    if not any("wgmma.mma_async" in (i.asm or "") for i in asms):
        return
    for ins in asms:
        text = ins.asm or ""
        if "cp.async.wait" in text and "fence.proxy.async" not in text:
            filename, lineno = line_of(ins) or fallback
            raise SafetyError(
                f"kernel {kernel!r} uses wgmma.mma, and its wait for copies at {where(ins)} is "
                "not followed by the proxy fence that makes the copies visible to the tensor "
                "cores: wait for copies (shared.wait_group / wait_all) in the kernel itself, "
                "not in a helper",
                kernel=kernel,
                rule="tile-phase",
                filename=filename,
                lineno=lineno,
                source_line=linecache.getline(filename, lineno) or None,
            )


_WRITE_WORDS = {
    "witness": "written through a witness",
    "write": "written",
    "async": "filled asynchronously (cp.async)",
    "update": "updated atomically",
    "other": "written (by a call or inline assembly)",
}
#: A plain store's words by the fill it belongs to (its label's letters).
_FILL_WORDS = {
    "async": "filled asynchronously (an element copied by the thread itself)",
    "tfill": "filled (transposed)",
    "zero": "zeroed (made)",
}


def _words(a: Access) -> str:
    if a.kind == "write" and a.label is not None:
        return _FILL_WORDS.get(a.label.rstrip("0123456789"), "written")
    return _WRITE_WORDS[a.kind]


def _raise_clash(
    kernel: str,
    obj: SharedObject,
    a: Access,
    b: Access,
    where: Where,
    line_of: Callable[[Instr], tuple[str, int] | None],
    fallback: tuple[str, int],
) -> None:
    at = line_of(a.instr) or fallback
    filename = at[0]
    other = line_of(b.instr)
    if a.kind in READS:
        how = "read through the thread's own witness" if a.kind == "own" else "read"
        fix = (
            "Put simtsafe.block.sync() between the writes and the reads (every thread must "
            "reach it; in a loop, one after the writes and one after the reads)"
        )
        if b.kind == "async":
            fix = (
                "Wait for the copies (simtsafe.shared.wait_group(n) or wait_all()), then "
                "simtsafe.block.sync(), then read"
            )
        if a.kind == "aread":
            how = "read by a wgmma group still in flight (wgmma.mma_async)"
            fix = (
                "Wait for the group (acc = simtsafe.wgmma.wait(acc, n), n small enough that "
                "the group is done) and then simtsafe.block.sync() before the tile is written "
                "again, or refill a tile read one stage earlier"
            )
        race = "one thread may read an element while another writes it"
    else:
        how = _words(a)
        fix = (
            "Fill (or update) a shared object one way per interval: put simtsafe.block.sync() "
            "between the two (after the wait, for an asynchronous fill)"
        )
        race = "two threads may write one element"
    raise _phase_error(
        kernel,
        f"kernel {kernel!r}: {_named(obj, filename)} is {how} at {where(a.instr)} and "
        f"{_words(b)} at {where(b.instr)} in the same barrier interval (the "
        f"compiled code has no simtsafe block barrier between them on some path), so {race}. "
        f"{fix}",
        at,
        other,
    )


_ASSIGNED_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=")


def _phase_error(
    kernel: str, message: str, at: tuple[str, int], other: tuple[str, int] | None
) -> SafetyError:
    """The tile-phase refusal ``message``, at ``at`` (file, line), naming ``other``'s line as
    its cause."""
    filename, lineno = at
    return SafetyError(
        message,
        kernel=kernel,
        rule="tile-phase",
        filename=filename,
        lineno=lineno,
        source_line=linecache.getline(filename, lineno) or None,
        cause_line=other[1] if other is not None else None,
    )


def _named(obj: SharedObject, filename: str) -> str:
    """The object as a message names it: its kind, its name and the line that makes it."""
    named = _name_at(filename, obj.line)
    what = f"{obj.kind} {named!r}" if named else obj.kind
    return what + (f" (made at line {obj.line})" if obj.line is not None else "")


def _name_at(filename: str, line: int | None) -> str | None:
    """The name a tile is bound to on the line that makes it (``tile = ss.shared.tile(...)``)."""
    if line is None:
        return None
    m = _ASSIGNED_RE.match(linecache.getline(filename, line))
    return m.group(1) if m else None
