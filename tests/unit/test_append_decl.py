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
        "parameter 'm' is a Counter, but its launch contract pairs it with no AppendBuffer; "
        "declare the pair: LaunchContract(..., appends={'<AppendBuffer parameter>': 'm'})",
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
        "the launch contract's appends names 'o' as a buffer, but it is annotated "
        "DisjointSlice; an appends entry maps an AppendBuffer parameter to a Counter parameter. "
        "Annotate it AppendBuffer[np.float32]",
    ),
    "appends-names-an-input-as-counter": (
        _kernel(
            'contract=ss.LaunchContract(domain=1, appends={"out": "c"})',
            "out: ss.AppendBuffer[np.float32], c: In[np.uint64]",
        ),
        ss.ContractDefinitionError,
        "the launch contract's appends names 'c' as a counter, but it is annotated "
        "In; an appends entry maps an AppendBuffer parameter to a Counter parameter. "
        "Annotate it simtsafe.Counter",
    ),
}


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
