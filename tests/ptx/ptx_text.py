"""Reading PTX text in the tests: a kernel's basic blocks, and loads counted per block."""

from __future__ import annotations

import re

__all__ = ["basic_blocks", "innermost_loop", "loads_per_block", "loop_span"]


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
