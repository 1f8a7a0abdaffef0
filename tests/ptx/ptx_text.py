"""Reading PTX text in the tests: a kernel's basic blocks, and loads counted per block; its
control-flow graph, its loops, and the path through a loop that takes every vector load."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Block",
    "basic_blocks",
    "control_flow",
    "count",
    "fast_path",
    "innermost_loop",
    "loads_in_flight",
    "loads_per_block",
    "loop_entry",
    "loop_span",
    "loops",
    "on_every_iteration",
]


def basic_blocks(ptx: str) -> list[list[str]]:
    """The kernel's basic blocks (split at labels and after branches), as instruction lists."""
    blocks: list[list[str]] = [[]]
    for line in ptx.split(".entry", 1)[1].splitlines():
        line = line.strip()
        if re.match(r"^\$L\w+:", line):
            blocks.append([])
        elif line and not line.startswith("//"):
            blocks[-1].append(line)
            if re.search(r"\bbra(\.uni)?\b", line):
                blocks.append([])
    return blocks


def loads_per_block(ptx: str, pattern: str) -> list[int]:
    """How many instructions of each basic block start with ``pattern`` (a regex)."""
    return [sum(bool(re.match(pattern, i)) for i in b) for b in basic_blocks(ptx)]


def loop_span(ptx: str, pattern: str) -> tuple[list[str], set[str]]:
    """The lines of the innermost loop around the instruction matching ``pattern`` (the
    kernel's first match), as ``innermost_loop`` finds it, and the labels inside it: the
    shortest span from a label ``L`` above the instruction to a branch back to ``L`` below.
    """
    lines = [line.strip() for line in ptx.split(".entry", 1)[1].splitlines()]
    at = next(n for n, line in enumerate(lines) if re.match(pattern, line))
    labels = {m.group(1): n for n, line in enumerate(lines) if (m := re.match(r"^(\$L\w+):", line))}
    best: tuple[int, int] | None = None
    for n in range(at + 1, len(lines)):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L\w+);", lines[n])
        start = labels.get(m.group(1), len(lines)) if m else len(lines)
        if start < at and (best is None or n - start < best[1] - best[0]):
            best = (start, n)
    if best is None:
        raise ValueError(f"no loop around {pattern!r}")
    span = lines[best[0] : best[1] + 1]
    return span, {m.group(1) for line in span if (m := re.match(r"^(\$L\w+):", line))}


def innermost_loop(ptx: str, pattern: str) -> list[str]:
    """The instructions of the innermost loop around the instruction matching ``pattern``
    (``loop_span``); labels, comments and inline-assembly markers are left out."""
    span, _ = loop_span(ptx, pattern)
    return [
        line
        for line in span
        if line and not line.startswith("//") and not re.match(r"^\$L\w+:", line)
    ]


@dataclass(frozen=True)
class Block:
    """One basic block of a kernel: its label (None: reached only by falling through), its
    instructions, and the indices of the blocks it may go to next."""

    label: str | None
    instrs: tuple[str, ...]
    succs: tuple[int, ...]


_BRANCH = re.compile(r"^(@!?%p\d+\s+)?bra(?:\.uni)?\s+(\$L\w+);")


def control_flow(ptx: str) -> list[Block]:
    """The kernel's control-flow graph: its basic blocks in text order (split at labels and
    after branches and returns), each with its successors (branch target, fall-through)."""
    body = ptx.split(".entry", 1)[1]
    body = body[body.index("{") + 1 :]
    raw: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in body.splitlines():
        line = line.strip()
        if m := re.match(r"^(\$L\w+):", line):
            if raw[-1][1] or raw[-1][0] is not None:
                raw.append((m.group(1), []))
            else:  # the empty block a branch left open: this label starts it
                raw[-1] = (m.group(1), raw[-1][1])
        elif line.endswith(";") and not line.startswith(("//", ".")):
            raw[-1][1].append(line)
            if _BRANCH.match(line) or re.match(r"^(@!?%p\d+\s+)?(ret|exit);", line):
                raw.append((None, []))
    raw = [(label, instrs) for label, instrs in raw if label is not None or instrs]
    where = {label: n for n, (label, _) in enumerate(raw) if label is not None}
    blocks = []
    for n, (label, instrs) in enumerate(raw):
        last = instrs[-1] if instrs else ""
        succs: list[int] = []
        if m := _BRANCH.match(last):
            succs.append(where[m.group(2)])
            if m.group(1) and n + 1 < len(raw):  # a conditional branch falls through
                succs.append(n + 1)
        elif not re.match(r"^(ret|exit);", last) and n + 1 < len(raw):
            succs.append(n + 1)
        blocks.append(Block(label, tuple(instrs), tuple(dict.fromkeys(succs))))
    return blocks


def loops(blocks: list[Block]) -> list[frozenset[int]]:
    """The kernel's loops: the strongly connected parts of its graph that hold a cycle (a
    loop nest is one part), in text order of their first block."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    found: list[frozenset[int]] = []

    def visit(v: int) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in blocks[v].succs:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1 or v in blocks[v].succs:
                found.append(frozenset(part))

    for v in range(len(blocks)):
        if v not in index:
            visit(v)
    return sorted(found, key=min)


def loop_entry(blocks: list[Block], loop: frozenset[int]) -> int:
    """The loop's header: its one block entered from outside it."""
    entries = {w for v, b in enumerate(blocks) if v not in loop for w in b.succs if w in loop}
    if len(entries) != 1:
        raise ValueError(f"loop {sorted(loop)} has entries {sorted(entries)}, not one")
    return entries.pop()


def fast_path(blocks: list[Block], loop: frozenset[int], vector: str) -> list[int]:
    """The blocks one iteration of ``loop`` runs when every vector access it can take is taken
    (its header first): of the ways from the header back to it, the one with the most
    instructions matching ``vector`` (a regex), and of those the fewest instructions. A loop
    LLVM made for misaligned runs has a fast path with no vector load. Raises ValueError on a
    loop with a loop inside it (no single way around)."""
    head = loop_entry(blocks, loop)
    rx = re.compile(rf"(?:@!?%p\d+\s+)?{vector}")
    best: dict[int, tuple[int, int, list[int]]] = {}
    on_stack: set[int] = set()

    def way(v: int) -> tuple[int, int, list[int]]:  # (vector loads, -instructions, blocks)
        if v in best:
            return best[v]
        if v in on_stack:
            raise ValueError(f"loop {sorted(loop)} holds another loop (at block {v})")
        on_stack.add(v)
        ways = [(0, 0, [])] if head in blocks[v].succs else []
        ways += [way(w) for w in blocks[v].succs if w in loop and w != head]
        on_stack.discard(v)
        n, neg, rest = max(ways, key=lambda t: (t[0], t[1]))
        mine = sum(bool(rx.match(i)) for i in blocks[v].instrs)
        best[v] = (n + mine, neg - len(blocks[v].instrs), [v, *rest])
        return best[v]

    return way(head)[2]


def on_every_iteration(blocks: list[Block], loop: frozenset[int], block: int) -> bool:
    """Whether every way around ``loop`` (from its header back to it) runs ``block``: the
    header cannot reach itself inside the loop once ``block`` is taken out."""
    head = loop_entry(blocks, loop)
    if block == head:
        return True
    seen, todo = set(), [head]
    while todo:
        for w in blocks[todo.pop()].succs:
            if w == head:
                return False
            if w in loop and w != block and w not in seen:
                seen.add(w)
                todo.append(w)
    return True


def count(blocks: list[Block], which: list[int] | frozenset[int], pattern: str) -> int:
    """How many instructions of the blocks ``which`` start with ``pattern`` (a regex; a
    guard ``@%p`` before it is skipped)."""
    rx = re.compile(rf"(?:@!?%p\d+\s+)?{pattern}")
    return sum(bool(rx.match(i)) for v in which for i in blocks[v].instrs)


def loads_in_flight(blocks: list[Block], path: list[int], vector: str) -> int:
    """How many loads matching ``vector`` (a regex) ``path`` issues before any instruction
    reads a register one of them wrote: the loads in flight together."""
    rx = re.compile(rf"(?:@!?%p\d+\s+)?{vector}")
    written: set[str] = set()
    issued = 0
    for v in path:
        for instr in blocks[v].instrs:
            if rx.match(instr):
                dest = instr.split("{", 1)[1].split("}", 1)[0] if "{" in instr else instr
                written |= set(
                    re.findall(r"%\w+", dest.split(",")[0] if "{" not in instr else dest)
                )
                issued += 1
                continue
            operands = instr.split(None, 1)[1] if " " in instr or "\t" in instr else ""
            if not instr.startswith(("st.", "@")):  # the first operand is written, not read
                operands = operands.split(",", 1)[1] if "," in operands else ""
            if written & set(re.findall(r"%\w+", operands)):
                return issued
    return issued
