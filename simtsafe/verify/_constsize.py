"""A kernel's constant data, on the compiled form: at most the 64 KiB constant bank.

Each constant array (``cuda.const.array_like``) is an ``addrspace(4)`` global of the LLVM IR
handed to NVVM, its values compiled in. One array is at most 64 KiB (checked where it is
made: ``lowering._construle``); several can add up past the bank, and ptxas then refuses
the kernel at its first load with its own message ("too much global constant data"). This
check adds up the constant globals the kernel's code names and refuses it, naming each,
before any launch (attack round 28: two 40000-byte tables).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import SafetyError
from ..lowering._construle import MAX_BYTES
from ..lowering._irform import constant_globals

__all__ = ["check_constant_total"]


def check_constant_total(texts: Sequence[str], kernel: str, filename: str, first_line: int) -> None:
    """Refuse a kernel whose constant globals add up to more than the constant bank.

    Raises:
        SafetyError: ``rule="const-array"``, at the kernel's first line (the globals carry
            no line of their own).
    """
    objects = constant_globals(texts)
    total = sum(n for _, n in objects)
    if total <= MAX_BYTES:
        return
    listed = "; ".join(f"{name}: {n} bytes" for name, n in objects)
    raise SafetyError(
        f"kernel {kernel!r}: its constant arrays (`cuda.const.array_like`) take {total} bytes "
        f"of constant memory ({listed}), more than the {MAX_BYTES} bytes of the GPU's constant "
        "bank; pass the larger tables as In[...] parameters",
        kernel=kernel,
        rule="const-array",
        filename=filename,
        lineno=first_line,
    )
