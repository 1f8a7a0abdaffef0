"""Append buffers paired with their counters, as the launch contract declares them.

An ``AppendBuffer`` parameter is written at slots won by the fetch-add of one
``Counter`` parameter; the contract names the pair
(``LaunchContract(appends={"out": "count"})``). The kernel's prologue then
builds the buffer's view from both arrays, so every ``claim()`` of the buffer
-- in the kernel, in a helper, through any alias -- adds to that one counter:
the pairing is fixed before any kernel code runs.

Checked here, at decoration, with the parameters' annotations: every buffer
has a counter, every counter belongs to a buffer, and each name has the
annotation its role needs. (The contract itself checks that the names are
array parameters, that no counter serves two buffers, and adds the per-launch
relation ``counter.size == 1``.)
"""

from __future__ import annotations

import inspect
from typing import Any

from .._errors import ContractDefinitionError, SafetyError
from ._params import Param

__all__ = ["append_pairs"]


def append_pairs(params: tuple[Param, ...], contract: Any, kernel: str, fn: Any) -> dict[str, str]:
    """``{buffer parameter: counter parameter}`` for a kernel's append buffers.

    Raises:
        ContractDefinitionError: the contract's ``appends`` names a parameter that
            is not an ``AppendBuffer`` (as a buffer) or a ``Counter`` (as a counter).
        SafetyError: an ``AppendBuffer`` or ``Counter`` parameter is not paired by
            the contract (``rule="contract"``).
    """
    by_name = {p.name: p for p in params}
    declared: tuple[tuple[str, str], ...] = contract.appends if contract is not None else ()
    for buffer, counter in declared:
        for name, role, space, how in (
            (buffer, "buffer", "Append", "AppendBuffer[np.float32]"),
            (counter, "counter", "Counter", "simtsafe.Counter"),
        ):
            p = by_name.get(name)
            if p is not None and p.space != space:
                raise ContractDefinitionError(
                    f"kernel {kernel!r}: the launch contract's appends names {name!r} as a "
                    f"{role}, but it is annotated {p.annotation}; an appends entry maps an "
                    f"AppendBuffer parameter to a Counter parameter. Annotate it {how}",
                    kernel=kernel,
                    argument=name,
                    actual=p.annotation,
                )
    paired = {b for b, _ in declared} | {c for _, c in declared}
    for p in params:
        if p.space not in ("Append", "Counter") or p.name in paired:
            continue
        if p.space == "Append":
            missing = (
                "its launch contract names no counter for it"
                if contract is not None
                else "the kernel has no launch contract to name its counter"
            )
            what = (
                f"is an AppendBuffer, but {missing}; declare the pair: LaunchContract(..., "
                f"appends={{{p.name!r}: '<its Counter parameter>'}}) -- every claim() adds to "
                "that counter, which is how the host learns how many items were stored and "
                "dropped"
            )
        else:
            missing = (
                "its launch contract pairs it with no AppendBuffer"
                if contract is not None
                else "the kernel has no launch contract to pair it with an AppendBuffer"
            )
            what = (
                f"is a Counter, but {missing}; declare the pair: LaunchContract(..., "
                f"appends={{'<AppendBuffer parameter>': {p.name!r}}})"
            )
        raise SafetyError(
            f"kernel {kernel!r}: parameter {p.name!r} {what}",
            kernel=kernel,
            rule="contract",
            filename=inspect.getsourcefile(fn),
            lineno=getattr(getattr(fn, "__code__", None), "co_firstlineno", None),
        )
    return dict(declared)
