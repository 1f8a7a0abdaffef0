"""Developer helper (not a test; needs ptxas and nvdisasm on PATH or given): the SASS of PTX
files for sm_90a, and per step of a GEMM loop the instructions on its whole-tile path.

A step runs from a ``BAR.SYNC`` to the next ``WARPGROUP.ARRIVE`` (the wgmma example; give
``--stop`` for another kernel). At a conditional branch the walk takes the side that reaches
a copy (``LDGSTS``) or the stop without passing a block of per-run code first (a ``BSSY``
region, a zero-filling copy, a 16-bit load), so the count is the path a step takes when
every tile lies wholly inside its input. Printed per file: the kernel's instruction count,
then per step (instructions, constant-bank loads, index of the first copy).

    python3 scripts/sass_steps.py [--ptxas P] [--nvdisasm N] A.ptx B.ptx ...
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

_LABEL = re.compile(r"^(\.L_x_\d+):")
_INSTR = re.compile(r"\s*/\*([0-9a-f]+)\*/\s+(.*?);")
_BRANCH = re.compile(r"BRA\s+(?:!?U?P\d+,\s*)?`\((\.L_x_\d+)\)")
_PER_RUN = ("BSSY", "ZFILL", "LDG.E.U16")


def _listing(sass: str) -> tuple[list[str], dict[str, int]]:
    instrs: list[str] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        m = _INSTR.match(line)
        if m:
            instrs.append(m.group(2).strip())
    return instrs, labels


def _reaches_copy(instrs: list[str], i: int, stop: str) -> bool:
    """The straight-line code from ``i`` reaches a copy or the stop before per-run code."""
    for text in instrs[i:]:
        if any(p in text for p in _PER_RUN):
            return False
        if "LDGSTS" in text or stop in text:
            return True
        if "BRA" in text:
            return False
    return False


def _walk(
    instrs: list[str], labels: dict[str, int], start: int, stop: str
) -> tuple[int, int, int | None] | None:
    n = constants = 0
    first_copy = None
    seen: set[int] = set()
    i = start
    while i < len(instrs) and (i == start or stop not in instrs[i]):
        if i in seen:
            return None
        seen.add(i)
        text = instrs[i]
        if not text.startswith("@!PT"):
            n += 1
            constants += "LDC" in text
            if "LDGSTS" in text and first_copy is None:
                first_copy = n
        m = _BRANCH.search(text)
        if m:
            target = labels[m.group(1)]
            if not text.startswith("@"):
                i = target
                continue
            if _reaches_copy(instrs, target, stop) and not _reaches_copy(instrs, i + 1, stop):
                i = target
                continue
        i += 1
    return n, constants, first_copy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptxas", default="ptxas")
    parser.add_argument("--nvdisasm", default="nvdisasm")
    parser.add_argument("--start", default="BAR.SYNC")
    parser.add_argument("--stop", default="WARPGROUP.ARRIVE")
    parser.add_argument("ptx", nargs="+", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.ptx:
            cubin = Path(tmp) / (path.stem + ".cubin")
            subprocess.run(
                [args.ptxas, "-arch=sm_90a", "-O3", "-o", str(cubin), str(path)], check=True
            )
            sass = subprocess.run(
                [args.nvdisasm, "-c", str(cubin)], check=True, capture_output=True, text=True
            ).stdout
            instrs, labels = _listing(sass)
            print(f"{path.name}: {len(instrs)} instructions")
            for k, text in enumerate(instrs):
                if args.start in text:
                    print(
                        f"  {args.start} at {k}: (instructions, LDC, first LDGSTS) =",
                        _walk(instrs, labels, k, args.stop),
                    )


if __name__ == "__main__":
    main()
