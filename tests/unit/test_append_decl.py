"""Append buffers at decoration: the contract pairs each buffer with its counter.

Every refusal names the kernel, the parameter and the fix; each has an
accepted twin. The contract's ``appends`` field validates on its own
(pydantic) and round-trips through JSON as ``{buffer: counter}``.
"""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module

_BODY = """
    for w in thread.grid_stride(x):
        s = out.claim()
        out[s] = x[w]
"""


def _kernel(contract: str, params: str = "out: ss.AppendBuffer[np.float32], n: ss.Counter") -> str:
    return f"@ss.kernel({contract})\ndef k({params}, x: In[np.float32]) -> None:{_BODY}"


_PAIRED = 'contract=ss.LaunchContract(domain=1, appends={"out": "n"})'

#: case -> (kernel source, error class, fragment)
REFUSED: dict[str, tuple[str, type[Exception], str]] = {
    "buffer-without-contract": (
        _kernel(""),
        ss.SafetyError,
        "kernel 'k': parameter 'out' is an AppendBuffer, but the kernel has no launch contract "
        "to name its counter; declare the pair: LaunchContract(..., appends={'out': '<its "
        "Counter parameter>'})",
    ),
    "buffer-not-in-appends": (
        _kernel("contract=ss.LaunchContract(domain=1)"),
        ss.SafetyError,
        "parameter 'out' is an AppendBuffer, but its launch contract names no counter for it",
    ),
    "counter-not-in-appends": (
        _kernel(
            _PAIRED,
            "out: ss.AppendBuffer[np.float32], n: ss.Counter, m: ss.Counter",
        ),
        ss.SafetyError,
        "parameter 'm' is a Counter, but its launch contract pairs it with no AppendBuffer or "
        "HashTable; declare the pair: LaunchContract(..., appends={'<AppendBuffer parameter>': "
        "'m'}) or tables={'<HashTable parameter>': {'failed': 'm'}}",
    ),
    "appends-names-an-unknown-parameter": (
        _kernel('contract=ss.LaunchContract(domain=1, appends={"out": "count"})'),
        ss.ContractDefinitionError,
        "the launch contract's appends names 'count', which is not an array parameter",
    ),
    "appends-names-a-plain-output-as-buffer": (
        _kernel(
            'contract=ss.LaunchContract(domain=1, appends={"o": "n"})',
            "o: DisjointSlice[np.float32], n: ss.Counter",
        ).replace("s = out.claim()\n        out[s] = x[w]", "o[w] = x[w]"),
        ss.ContractDefinitionError,
        "the launch contract's appends names 'o' as an AppendBuffer, but it is annotated "
        "DisjointSlice. Annotate it AppendBuffer[np.float32]",
    ),
    "appends-names-an-input-as-counter": (
        _kernel(
            'contract=ss.LaunchContract(domain=1, appends={"out": "c"})',
            "out: ss.AppendBuffer[np.float32], c: In[np.uint64]",
        ),
        ss.ContractDefinitionError,
        "the launch contract's appends names 'c' as a Counter, but it is annotated In. "
        "Annotate it simtsafe.Counter",
    ),
}


_TBODY = """
    for w in thread.grid_stride(x):
        s = keys.insert(np.uint32(w.index))
        vals[s] = x[w]
"""


def _table(contract: str, params: str) -> str:
    return f"@ss.kernel({contract})\ndef k({params}, x: In[np.float32]) -> None:{_TBODY}"


_TPARAMS = "keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.float32], nf: ss.Counter"
_TPAIRED = (
    'contract=ss.LaunchContract(domain=1, tables={"keys": {"values": ["vals"], "failed": "nf"}})'
)

REFUSED.update(
    {
        "covers-an-append-buffer": (
            _kernel('contract=ss.LaunchContract(domain=1, appends={"out": "n"}, covers="out")'),
            ss.ContractDefinitionError,
            "the launch contract covers 'out', which is an AppendBuffer: its slots are won by "
            "atomics, not owned by thread index, so no launch shape covers it",
        ),
        "table-without-contract": (
            _table("", _TPARAMS),
            ss.SafetyError,
            "parameter 'keys' is a HashTable, but the kernel has no launch contract to declare "
            "it; declare it with its values and failure counter: LaunchContract(..., "
            "tables={'keys': {'values': [...], 'failed': '<its Counter parameter>'}})",
        ),
        "values-not-in-a-table": (
            _table(
                'contract=ss.LaunchContract(domain=1, tables={"keys": {"failed": "nf"}})',
                _TPARAMS,
            ),
            ss.SafetyError,
            "parameter 'vals' is a HashValues, but its launch contract names no table for it; "
            "list it in its table's values",
        ),
        "table-keys-of-a-float-type": (
            _table(_TPAIRED, _TPARAMS.replace("HashTable[np.uint32]", "HashTable[np.float32]")),
            ss.SafetyError,
            "parameter 'keys' is annotated HashTable; hash table keys are int32, uint32, int64 "
            "or uint64 (compare-and-swap sizes); got float32",
        ),
        "tables-names-an-input-as-values": (
            _table(_TPAIRED, _TPARAMS.replace("ss.HashValues[np.float32]", "In[np.float32]")),
            ss.ContractDefinitionError,
            "the launch contract's tables names 'vals' as a HashValues, but it is annotated In",
        ),
        "tables-names-an-unknown-counter": (
            _table(
                'contract=ss.LaunchContract(domain=1, tables={"keys": {"values": "vals", '
                '"failed": "nfail"}})',
                _TPARAMS,
            ),
            ss.ContractDefinitionError,
            "the launch contract's tables names 'nfail', which is not an array parameter",
        ),
    }
)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_at_decoration(tmp_path: Path, case: str) -> None:
    source, cls, fragment = REFUSED[case]
    with pytest.raises(cls) as info:
        load_kernel_module(tmp_path, source)
    assert fragment in str(info.value)
    assert getattr(info.value, "kernel", None) == "k"


def test_paired_twin_decorates(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, _kernel(_PAIRED)).k
    assert [(p.name, p.kind, p.space, str(p.dtype)) for p in k.params[:2]] == [
        ("out", "out", "Append", "float32"),
        ("n", "out", "Counter", "uint64"),
    ]
    two = _kernel(
        'contract=ss.LaunchContract(domain=1, appends={"a": "na", "b": "nb"})',
        "a: ss.AppendBuffer[np.int32], na: ss.Counter, nb: ss.Counter, "
        "b: ss.AppendBuffer[np.float64]",
    ).replace("s = out.claim()\n        out[s] = x[w]", "s = a.claim()\n        a[s] = 1")
    assert load_kernel_module(tmp_path, two).k.contract.appends == (("a", "na"), ("b", "nb"))


def test_table_twin_decorates(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, _table(_TPAIRED, _TPARAMS)).k
    assert [(p.name, p.space) for p in k.params[:3]] == [
        ("keys", "Table"),
        ("vals", "Values"),
        ("nf", "Counter"),
    ]
    assert k.contract.tables == (("keys", ("vals",), "nf"),)


def test_tables_field_validation() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(tables={"k": {"failed": "n"}}, appends={"o": "n"})
    assert "the counter 'n' is named for both 'o' and 'k'" in str(info.value)
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(tables={"k": {"values": "v"}})
    assert "tables['k'] must be {'values': [<HashValues parameters>], 'failed': " in str(info.value)
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(
            tables={"a": {"values": "v", "failed": "n"}, "b": {"values": "v", "failed": "m"}}
        )
    assert "the values 'v' are named for the hash tables 'a' and 'b'" in str(info.value)
    c = ss.LaunchContract(tables={"k": {"values": "v", "failed": "n"}})
    assert '"tables":{"k":{"values":["v"],"failed":"n"}}' in c.model_dump_json()
    assert ss.LaunchContract.model_validate_json(c.model_dump_json()) == c


def test_appends_field_validation() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(appends={"a": "n", "b": "n"})
    assert "appends names the counter 'n' for both 'a' and 'b'" in str(info.value)
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(appends={"a": "a"})
    assert "appends pairs 'a' with itself" in str(info.value)
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(appends={"a": "n-1"})
    assert "appends names parameters" in str(info.value)
    with pytest.raises(pydantic.ValidationError) as info:
        ss.LaunchContract(appends="out")  # type: ignore[arg-type]
    assert "appends maps each AppendBuffer parameter to its Counter parameter" in str(info.value)


def test_appends_round_trips_through_json() -> None:
    c = ss.LaunchContract(domain=1, block=64, appends={"out": "n"})
    assert '"appends":{"out":"n"}' in c.model_dump_json()
    assert ss.LaunchContract.model_validate_json(c.model_dump_json()) == c
    assert ss.LaunchContract.model_validate({"appends": [["out", "n"]]}).appends == (("out", "n"),)
    assert hash(c) == hash(ss.LaunchContract(domain=1, block=64, appends={"out": "n"}))
