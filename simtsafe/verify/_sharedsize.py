"""A block's static shared memory, on the compiled form: at most 48 KiB on every GPU.

Every shared tile, shared accumulator, collective's exchange buffer and raw
``cuda.shared.array`` of a kernel is an ``addrspace(3)`` global of a fixed size in the
LLVM IR handed to NVVM (the dynamic shared array is an external one of no size). CUDA
lets a block declare at most 48 KiB of them; past that, ptxas refuses the kernel at its
first load with its own message ("uses too much shared data"). Each object's own size is
checked when it is made (``shared.accumulator``: ``lowering._cooprule``); this check adds
up the objects the kernel uses (those its code names: LLVM drops the others) and refuses
the kernel, naming each, before any launch (attack round 22: two 48 KiB accumulators).
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Sequence

from .._errors import SafetyError
from ..lowering._cooprule import STATIC_SHARED_LIMIT, static_shared_advice
from ..lowering._irform import laid_out, static_shared_globals

__all__ = ["check_static_shared"]

#: What made a global, by its symbol: (kind, line) -- simtsafe's objects carry their line.
_MADE = (
    (re.compile(r"^__ss_acc_L(\d+)"), "shared accumulator"),
    (re.compile(r"^_simtsafe_tile_L(\d+)"), "shared tile"),
)


def _describe(name: str, nbytes: int) -> tuple[str, int | None]:
    for pattern, kind in _MADE:
        m = pattern.match(name)
        if m is not None:
            line = int(m.group(1))
            return f"the {kind} made at line {line}: {nbytes} bytes", line
    if name.startswith("_cudapy_smem"):
        return f"a cuda.shared.array: {nbytes} bytes", None
    return f"a collective's exchange buffer ({name}): {nbytes} bytes", None


def check_static_shared(texts: Sequence[str], kernel: str, filename: str, first_line: int) -> None:
    """Refuse a kernel whose used static shared globals add up to more than 48 KiB.

    Raises:
        SafetyError: ``rule="shared-memory"``, at the line of the object that crosses the
            limit when simtsafe made it.
    """
    objects = static_shared_globals(texts)
    total = laid_out([(n, align) for _, n, align in objects])
    if total <= STATIC_SHARED_LIMIT:
        return
    parts = [_describe(name, n) for name, n, _ in objects]
    lines = [line for _, line in parts if line is not None]
    at = max(lines) if lines else first_line
    listed = "; ".join(text for text, _ in parts)
    raise SafetyError(
        f"kernel {kernel!r}: its shared objects take {total} bytes of static shared memory "
        f"({listed}); {static_shared_advice()}",
        kernel=kernel,
        rule="shared-memory",
        filename=filename,
        lineno=at,
        source_line=linecache.getline(filename, at) or None,
    )
