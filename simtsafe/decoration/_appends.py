"""Append buffers and hash tables paired with their arrays, as the launch contract declares them.

An ``AppendBuffer`` parameter is written at slots won by the fetch-add of one
``Counter`` parameter (``LaunchContract(appends={"out": "count"})``); a
``HashTable`` parameter (the keys) owns ``HashValues`` parameters, written at
the slots its inserts win, and a ``Counter`` of failed inserts
(``tables={"keys": {"values": ["vals"], "failed": "nfail"}}``). The kernel's
prologue builds each view from its partners, so every ``claim()`` or
``insert()`` -- in the kernel, in a helper, through any alias -- uses the one
counter the host reads, and a value array accepts only the witnesses of its
own table: the pairing is fixed before any kernel code runs.

Checked here, at decoration, with the parameters' annotations: every buffer,
table, values array and counter is paired, and each name has the annotation
its role needs. (The contract itself checks that the names are array
parameters, that no counter or values array is named twice, and adds the
per-launch relations ``counter.size == 1`` and ``values.size == keys.size``.)
"""

from __future__ import annotations

import inspect
from typing import Any

from .._errors import ContractDefinitionError, SafetyError
from ._params import Param

__all__ = ["view_args"]

#: space -> (role in messages, how to annotate it)
_ROLES = {
    "Append": ("an AppendBuffer", "AppendBuffer[np.float32]"),
    "Counter": ("a Counter", "simtsafe.Counter"),
    "Table": ("a HashTable", "HashTable[np.uint32]"),
    "Values": ("a HashValues", "HashValues[np.float32]"),
}


def _role_check(by_name: dict[str, Param], name: str, space: str, field: str, kernel: str) -> None:
    p = by_name.get(name)
    if p is not None and p.space != space:
        role, how = _ROLES[space]
        raise ContractDefinitionError(
            f"kernel {kernel!r}: the launch contract's {field} names {name!r} as {role}, but it "
            f"is annotated {p.annotation}. Annotate it {how}",
            kernel=kernel,
            argument=name,
            actual=p.annotation,
        )


def view_args(
    params: tuple[Param, ...], contract: Any, kernel: str, fn: Any
) -> dict[str, tuple[str, ...]]:
    """The extra arguments (source text) of each paired parameter's view intrinsic.

    An ``AppendBuffer``: its counter and its own name; a ``HashTable``: its failure
    counter and its own name; a ``HashValues``: its table's name.

    Raises:
        ContractDefinitionError: the contract names a parameter in a role its
            annotation does not have.
        SafetyError: an ``AppendBuffer``, ``HashTable``, ``HashValues`` or
            ``Counter`` parameter is not paired by the contract (``rule="contract"``).
    """
    by_name = {p.name: p for p in params}
    appends: tuple[tuple[str, str], ...] = contract.appends if contract is not None else ()
    tables: tuple[tuple[str, tuple[str, ...], str], ...] = (
        contract.tables if contract is not None else ()
    )
    args: dict[str, tuple[str, ...]] = {}
    for buffer, counter in appends:
        _role_check(by_name, buffer, "Append", "appends", kernel)
        _role_check(by_name, counter, "Counter", "appends", kernel)
        args[buffer] = (counter, repr(buffer))
    for keys, values, failed in tables:
        _role_check(by_name, keys, "Table", "tables", kernel)
        _role_check(by_name, failed, "Counter", "tables", kernel)
        args[keys] = (failed, repr(keys))
        for v in values:
            _role_check(by_name, v, "Values", "tables", kernel)
            args[v] = (repr(keys),)
    covered = by_name.get(contract.covers) if contract is not None and contract.covers else None
    if covered is not None and covered.space in _ROLES:
        raise ContractDefinitionError(
            f"kernel {kernel!r}: the launch contract covers {covered.name!r}, which is "
            f"{_ROLES[covered.space][0]}: its slots are won by atomics, not owned by thread "
            "index, so no launch shape covers it. Drop covers (the host reads what was stored "
            "after the launch), or cover an input the kernel walks",
            kernel=kernel,
            argument=covered.name,
        )
    counters = {c for _, c in appends} | {f for _, _, f in tables}
    for p in params:
        if p.space not in _ROLES or p.name in args or p.name in counters:
            continue
        raise SafetyError(
            f"kernel {kernel!r}: parameter {p.name!r} {_unpaired(p, contract is not None)}",
            kernel=kernel,
            rule="contract",
            filename=inspect.getsourcefile(fn),
            lineno=getattr(getattr(fn, "__code__", None), "co_firstlineno", None),
        )
    return args


def _unpaired(p: Param, has_contract: bool) -> str:
    """Why an unpaired parameter is refused, and the declaration that pairs it."""
    if p.space == "Append":
        missing = (
            "its launch contract names no counter for it"
            if has_contract
            else "the kernel has no launch contract to name its counter"
        )
        return (
            f"is an AppendBuffer, but {missing}; declare the pair: LaunchContract(..., "
            f"appends={{{p.name!r}: '<its Counter parameter>'}}) -- every claim() adds to "
            "that counter, which is how the host learns how many items were stored and dropped"
        )
    if p.space == "Counter":
        missing = (
            "its launch contract pairs it with no AppendBuffer or HashTable"
            if has_contract
            else "the kernel has no launch contract to pair it with an AppendBuffer"
        )
        return (
            f"is a Counter, but {missing}; declare the pair: LaunchContract(..., "
            f"appends={{'<AppendBuffer parameter>': {p.name!r}}}) or tables={{'<HashTable "
            f"parameter>': {{'failed': {p.name!r}}}}}"
        )
    if p.space == "Table":
        missing = (
            "its launch contract does not declare it"
            if has_contract
            else "the kernel has no launch contract to declare it"
        )
        return (
            f"is a HashTable, but {missing}; declare it with its values and failure counter: "
            f"LaunchContract(..., tables={{{p.name!r}: {{'values': [...], 'failed': '<its "
            "Counter parameter>'}}) -- a failed insert (a full table) adds to that counter, "
            "which is how the host learns of it"
        )
    missing = (
        "its launch contract names no table for it"
        if has_contract
        else "the kernel has no launch contract to name its table"
    )
    return (
        f"is a HashValues, but {missing}; list it in its table's values: LaunchContract(..., "
        f"tables={{'<HashTable parameter>': {{'values': [{p.name!r}], 'failed': ...}}}}) -- "
        "it is written only at the slots that table's inserts win"
    )
