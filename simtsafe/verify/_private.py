"""Thread-private memory whose contents the divergence analysis can follow.

A load is thread-dependent by default: memory may hold what another thread wrote. A Tier-1
``cuda.local.array`` is different -- an ``alloca``, each thread has its own, every access
bounds-checked by its lowering, zero-filled by Numba where the function starts -- so a load
from one reads only what this thread stored there.
Such a load is as uniform as its address and every store into that memory: the stored
values, their addresses and whether the store runs (its block's control level). That is what
makes a reduction op using a local scratch array (``t[int(x) & 3]``) pure (attack round 26).

Only such an alloca (``lowering._irform.PRIVATE_ARRAY``) whose contents are all known
qualifies (``private_allocas``):

* it never escapes: every use of a pointer into it is a load's or store's address, an
  address computation (``getelementptr``, casts, ``phi``/``select`` of pointers) or a
  lifetime marker -- no call, no ``ptrtoint``, no store of the pointer itself, so nothing
  the analysis does not see reads or writes it;
* every byte is written before any read: one block, dominating every load of it, stores
  each byte at a constant offset before its first load there (an uninitialized byte is
  whatever this thread's stack held: per-thread garbage);
* the function has no write of unknown target and no unsafe region stores (the caller
  passes ``trust``): a stray store through a generic address might land in this thread's
  local window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..lowering._irform import (
    PRIVATE_ARRAY,
    FunctionForm,
    Instr,
    plain_type_bytes,
    split_operands,
)
from ._cfg import Graph

__all__ = ["private_allocas"]

#: address computations: a pointer in, a pointer into the same memory out
_DERIVES = ("getelementptr", "bitcast", "addrspacecast", "phi", "select")

Stores = tuple[tuple[str, Instr], ...]


def _is_private_array(name: str) -> bool:
    """A Tier-1 local array's alloca (``%__ss.lmem``, ``%"__ss.lmem.i"`` once inlined):
    bounds-checked on every access, so no load through it reads past it (an alloca Numba
    makes for its own values is not followed: a read of one at a computed index is not
    proven inside it)."""
    return name.strip('%"').startswith(PRIVATE_ARRAY)


def _alloca_bytes(ins: Instr) -> int | None:
    """``alloca [4 x double], align 8`` -> 32; ``alloca i64, i64 3`` -> 24."""
    parts = [p.strip() for p in split_operands(ins.text.partition("alloca ")[2])]
    parts = [p for p in parts if not p.startswith(("align ", "addrspace("))]
    if not parts:
        return None
    size = plain_type_bytes(parts[0])
    if size is None or len(parts) > 2:
        return None
    if len(parts) == 2:
        count = parts[1].split(" ")
        if len(count) != 2 or not count[1].isdigit():
            return None
        size *= int(count[1])
    return size


def _stored_bytes(ins: Instr) -> int | None:
    """Bytes a ``store T v, ptr p`` writes."""
    rest = ins.text.partition("store ")[2].split(" ")
    if rest and rest[0] in ("volatile", "atomic"):
        return None  # ordered or volatile: not a plain private store
    parts = split_operands(" ".join(rest))
    if not parts:
        return None
    value = parts[0].strip()
    for width in range(len(value), 0, -1):  # the type is the longest prefix that parses
        size = plain_type_bytes(value[:width])
        if size is not None and value[width : width + 1] == " ":
            return size
    return None


def _offset(
    ptr: str,
    alloca: str,
    defs: Mapping[str, Instr],
    step: Callable[[Instr], tuple[str, int] | None],
) -> int | None:
    """The constant byte offset of ``ptr`` from ``alloca`` (through constant GEPs)."""
    offset = 0
    for _depth in range(64):
        if ptr == alloca:
            return offset
        ins = defs.get(ptr)
        if ins is None:
            return None
        if ins.opcode in ("bitcast", "addrspacecast") and ins.pointers:
            ptr = ins.pointers[0]
            continue
        if ins.opcode != "getelementptr":
            return None
        found = step(ins)
        if found is None:
            return None
        ptr, delta = found
        offset += delta
    return None


def _dominates(graph: Graph, a: str, b: str) -> bool:
    seen: set[str] = set()
    while b not in seen:
        if a == b:
            return True
        seen.add(b)
        parent = graph.idom.get(b)
        if parent is None or parent == b:
            return False
        b = parent
    return False


def private_allocas(
    form: FunctionForm,
    graph: Graph,
    prov: Mapping[str, frozenset[str]],
    step: Callable[[Instr], tuple[str, int] | None],
    trust: bool,
) -> dict[str, Stores]:
    """Allocas whose every load reads only this thread's stores, with those stores
    (block, instruction). ``step``: a constant GEP's (base, byte offset)."""
    if not trust:
        return {}
    defs = {i.result: i for b in form.blocks for i in b.instrs if i.result is not None}
    allocas = {
        i.result: i
        for b in form.blocks
        for i in b.instrs
        if i.opcode == "alloca" and i.result is not None and _is_private_array(i.result)
    }
    out: dict[str, Stores] = {}
    for name, ins in allocas.items():
        size = _alloca_bytes(ins)
        if size is None or size > 1 << 16:
            continue
        uses = _uses(form, prov, name)
        if uses is None:
            continue
        if _initialized(form, graph, defs, step, name, size, uses):
            out[name] = tuple((blk, i) for blk, i in uses if i.opcode == "store")
    return out


def _uses(
    form: FunctionForm, prov: Mapping[str, frozenset[str]], alloca: str
) -> list[tuple[str, Instr]] | None:
    """The loads and stores of the alloca, or None when a pointer into it escapes."""
    found: list[tuple[str, Instr]] = []
    for b in form.blocks:
        for ins in b.instrs:
            touching = [op for op in ins.operands if alloca in prov.get(op, frozenset())]
            if not touching:
                continue
            address = ins.pointers[-1] if ins.pointers else None
            if ins.opcode == "load":
                if touching != [address]:
                    return None
                found.append((b.name, ins))
            elif ins.opcode == "store":
                # the address only: a store of the pointer itself lets it escape
                parts = _store_parts(ins)
                if parts is None:
                    return None
                value, target = parts
                if alloca in prov.get(value, frozenset()) or touching != [target]:
                    return None
                found.append((b.name, ins))
            elif ins.opcode in _DERIVES:
                continue
            elif ins.opcode == "call" and (ins.callee or "").startswith("llvm.lifetime."):
                continue
            else:
                return None
    return found


def _store_parts(ins: Instr) -> tuple[str, str] | None:
    """(value, address) of ``store T v, ptr p`` as written (a constant value as its text)."""
    parts = [p.strip() for p in split_operands(ins.text.partition("store ")[2])]
    if len(parts) < 2:
        return None
    return parts[0].split(" ")[-1], parts[1].split(" ")[-1]


def _initialized(
    form: FunctionForm,
    graph: Graph,
    defs: Mapping[str, Instr],
    step: Callable[[Instr], tuple[str, int] | None],
    alloca: str,
    size: int,
    uses: list[tuple[str, Instr]],
) -> bool:
    """Is every byte stored, in one block dominating every load, before a load reads it?"""
    loads = [(blk, i) for blk, i in uses if i.opcode == "load"]
    if not loads:
        return True
    reachable = set(graph.order)
    for b in form.blocks:
        if b.name not in reachable:
            continue
        covered = bytearray(size)
        done = False
        for ins in b.instrs:
            if ins.opcode == "load" and any(i is ins for _, i in loads):
                break  # a load before every byte is written
            parts = _store_parts(ins) if ins.opcode == "store" else None
            if parts is None:
                continue
            at = _offset(parts[1], alloca, defs, step)
            width = _stored_bytes(ins)
            if at is None or width is None or at < 0 or at + width > size:
                continue
            covered[at : at + width] = b"\x01" * width
            if all(covered):
                done = True
                break
        if not done:
            continue
        # (a load in this block comes after the store that completed the bytes: the scan
        # stops at an earlier one)
        if all(blk == b.name or _dominates(graph, b.name, blk) for blk, _ in loads):
            return True
    return False
