"""No write reaches constant memory, on the compiled form.

Numba compiles a constant array (``cuda.const.array_like``, ``lowering._constarrays``) as
an ``addrspace(4)`` global that the code reaches through a generic pointer
(``addrspacecast``). Nothing in a kernel may write it: the GPU caches constant memory per
multiprocessor and does not keep the caches coherent with writes, and a Tier-1 read of
it is declared uniform (``_divergence``) because nothing writes it during a launch.
simtsafe's typing of the constant array offers no store, atomic or slice (the friendly
message, at the user's line); this check decides, on the kernel after inlining, whatever
spelling or route produced the code:

* a ``store``, ``atomicrmw``, ``cmpxchg`` or writing call whose address may point into a
  constant global (pointer provenance, through ``getelementptr``, casts, ``ptrtoint`` /
  ``inttoptr`` arithmetic, ``phi`` and ``select``) is refused;
* a call that may write anything it reaches (an unknown function, memory-writing inline
  assembly) given an address derived from a constant global is refused;
* if such an address is itself stored into memory (it escapes), any write through a
  pointer the analysis cannot follow (one loaded from memory) is refused: it may be that
  address, loaded back.
"""

from __future__ import annotations

import linecache
import re
from collections.abc import Callable

from .._errors import SafetyError
from ..lowering._irform import FunctionForm, Instr, global_names, split_operands
from ._divergence import UNKNOWN, pointer_roots, written_by

__all__ = ["MESSAGE", "check_const_writes"]

#: What the refusal says; the kernel and what the write is are filled in.
MESSAGE = (
    "kernel {kernel!r}: {what} may write constant memory (a `cuda.const.array_like` "
    "array): constant memory is read-only in a kernel (the GPU's constant caches are not "
    "kept coherent with writes, and reads of it are trusted to be the same in every thread). "
    "Read the values into a local or a thread-private array and write an output through a "
    "witness"
)


def _stores_address(ins: Instr, of: Callable[[str], frozenset[str]], const: frozenset[str]) -> bool:
    """Whether a ``store`` stores (not: stores to) an address derived from a constant global:
    ``store <ty> <value>, ptr <address>``, the value a local or a constant expression."""
    value = (split_operands(ins.text.partition("store ")[2]) or [""])[0]
    if set(global_names(value)) & const:
        return True
    address = ins.pointers[-1] if ins.pointers else None
    named = set(_LOCAL_NAME.findall(value))
    return any(of(op) & const for op in ins.operands if op != address and op in named)


#: A local value's name in IR text.
_LOCAL_NAME = re.compile(r'%(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)')


def check_const_writes(form: FunctionForm, kernel: str, filename: str, first_line: int) -> None:
    """Refuse a kernel whose compiled form may write a constant-memory global.

    Raises:
        SafetyError: ``rule="const-write"``, at the write's line when it is known.
    """
    const = frozenset(g for g, info in form.globals.items() if info.addrspace == 4)
    if not const:
        return
    of = pointer_roots(form)
    instrs = [i for b in form.blocks for i in b.instrs]

    def derived(ins: Instr, operands: tuple[str, ...]) -> bool:
        return any(of(op) & const for op in operands) or bool(set(ins.globals) & const)

    escaped: Instr | None = None
    unknown_write: Instr | None = None
    for ins in instrs:
        written = written_by(ins, of)
        if written & const:
            _refuse(kernel, filename, first_line, ins, _what(ins))
        if UNKNOWN in written:
            if ins.opcode == "call" and derived(ins, ins.operands):
                _refuse(
                    kernel, filename, first_line, ins, f"a call ({ins.callee}) given its address"
                )
            unknown_write = unknown_write or ins
        if ins.opcode == "store" and _stores_address(ins, of, const):
            escaped = escaped or ins
    if escaped is not None and unknown_write is not None:
        _refuse(
            kernel,
            filename,
            first_line,
            unknown_write,
            "a write through a pointer read from memory, where the address of constant "
            "memory was stored,",
        )


def _what(ins: Instr) -> str:
    if ins.opcode in ("atomicrmw", "cmpxchg"):
        return "an atomic"
    if ins.opcode == "call":
        return f"a call ({ins.callee})"
    return "a store"


def _refuse(kernel: str, filename: str, first_line: int, ins: Instr, what: str) -> None:
    at = ins.loc
    file, line = at if at is not None else (filename, first_line)
    raise SafetyError(
        MESSAGE.format(kernel=kernel, what=what),
        kernel=kernel,
        rule="const-write",
        filename=file,
        lineno=line,
        source_line=linecache.getline(file, line) or None,
    )
