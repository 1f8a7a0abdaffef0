"""Reading PTX text in the tests: a kernel's basic blocks, and loads counted per block."""

from __future__ import annotations

import re

__all__ = ["basic_blocks", "loads_per_block"]


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
