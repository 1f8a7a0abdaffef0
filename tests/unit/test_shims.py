"""lowering._shims: which of numba-cuda's float16/bf16/fp8 C++ shims return status 0, read
from the source its bindings link (the compiled-form checks then read a call's status as 0)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from simtsafe.lowering import _shims

_GOOD = """
extern "C" __device__ int
    _ZmlRK6__halfS1__nbst(__half &retval , __half* lh, __half* rh) {
        retval = operator*(*lh, *rh);
        return 0;
    }
"""


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("retval = *lh;\n return 1;", "a status other than 0"),
        ("if (*lh) return 0;\n return 2;", "a second return"),
        ("retval = *lh;", "no return"),
        ('asm("exit;");\n return 0;', "inline assembly"),
        ("__syncthreads();\n return 0;", "a barrier"),
        ("__trap();\n return 0;", "a trap"),
        ("while (1) {}\n return 0;", "a loop"),
        ("for (;;) {}\n return 0;", "a loop"),
    ],
)
def test_a_shim_whose_status_may_be_nonzero_is_not_taken(body: str, why: str) -> None:
    source = _GOOD.replace("retval = operator*(*lh, *rh);\n        return 0;", body)
    assert _shims._parse(source) == frozenset(), why


def test_a_shim_returning_zero_on_its_one_path_is_taken() -> None:
    assert _shims._parse(_GOOD) == {"_ZmlRK6__halfS1__nbst"}


def test_a_pointer_to_a_pointer_is_not_taken() -> None:
    """atomicAdd's binding writes through *address: not only what its operands point to."""
    source = _GOOD.replace("__half* lh", "__half ** lh")
    assert _shims._parse(source) == frozenset()


def test_a_name_defined_twice_must_pass_both_times() -> None:
    bad = _GOOD.replace("return 0;", "return 3;")
    assert _shims._parse(_GOOD + bad) == frozenset()


def test_numba_cudas_own_bindings() -> None:
    """Every shim numba-cuda's bindings can write: all taken but the shuffles (a warp
    collective) and the loads and atomics through a pointer to a pointer."""
    import numba.cuda._internal.cuda_bf16
    import numba.cuda._internal.cuda_fp16  # noqa: F401

    samples = {
        "numba.cuda._internal.cuda_fp16": "_ZmlRK6__halfS1__nbst",  # half * half
        "numba.cuda._internal.cuda_bf16": "_ZL10__hmul2_rn14__nv_bfloat162S__nbst",
    }
    for name, sample in samples.items():
        text = Path(sys.modules[name].__file__ or "").read_text()
        shims = "\n".join(re.findall(r'shim_raw_str = """(.*?)"""', text, re.S))
        taken = _shims._parse(shims)
        heads = dict(re.findall(r'extern "C" __device__ int\s+(\w+)\(([^)]*)\)', shims))
        left = set(heads) - taken
        assert sample in taken
        assert all("**" in heads[n] or "shfl" in n for n in left), sorted(left)
        assert not any("shfl" in n for n in taken)
