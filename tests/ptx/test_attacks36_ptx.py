"""Attack round 36 (tests/kernels/attacks36.py) on the real target (NVVM, no GPU): the
half-precision truth tests and the heap-object refusal.

Held: 6 accepted (float16/bfloat16 truth by the magnitude bits, ``not h`` by the exact f32
conversion, a list as an assignment target), 2 heap objects refused with the message.
FINDING 5 (LOW, a message; fixed): a starred assignment target gave Numba's raw
``UnsupportedBytecodeError``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks36 import (
    HEAP_MESSAGE,
    HEAP_REFUSED,
    STARRED_TARGETS,
    TRUTH_ACCEPTED,
    body_kernel,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(TRUTH_ACCEPTED))
def test_truth_tests_and_list_targets_compile(tmp_path: Path, name: str) -> None:
    body, instruction = TRUTH_ACCEPTED[name]
    ptx = load_kernel_module(tmp_path, body_kernel(body)).k.ptx(cc=CC)
    entry = ptx[ptx.index(".entry") :]
    if instruction == "and.b16":
        # the magnitude bits: -0.0 is false, NaN and subnormals true
        assert ", 32767;" in entry and "and.b16" in entry, entry
    elif instruction:
        assert instruction in entry, entry


@pytest.mark.parametrize("name", sorted(HEAP_REFUSED))
def test_heap_objects_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ss.SafetyError, match=HEAP_MESSAGE):
        load_kernel_module(tmp_path, body_kernel(HEAP_REFUSED[name])).k.ptx(cc=CC)


@pytest.mark.parametrize("name", sorted(STARRED_TARGETS))
def test_a_starred_target_is_refused_with_a_message(tmp_path: Path, name: str) -> None:
    # FINDING 5: Numba's UnsupportedBytecodeError (UNPACK_EX) reached the user
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, body_kernel(STARRED_TARGETS[name])).k.ptx(cc=CC)
    assert info.value.rule == "statement"
    assert "a starred assignment target (`p, *q = t`) is not supported by Numba" in str(info.value)
    assert "unpack into one name per element, `p, q0, q1 = t`" in str(info.value)
    assert "line 13" in str(info.value)


def test_a_call_with_a_starred_argument_is_not_a_starred_target(tmp_path: Path) -> None:
    # FINDING 5's twin: unpacking into names compiles, and `*t` in a call is not a target
    body = "    p, q0, q1 = (a[cuda.threadIdx.x], n, n)\n    out[i] = np.float32(max(*(p, q1)))\n"
    load_kernel_module(tmp_path, body_kernel(body)).k.ptx(cc=CC)
