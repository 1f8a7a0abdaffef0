"""Typing errors name the operation, the simtsafe value involved and what it supports.

No catch-all: an In operand is described as an input, a DisjointSlice as an
output, a witness as a witness; the user's line is always attached.
"""

from __future__ import annotations

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

SIG = "out: DisjointSlice[np.float32], a: In[np.float32]"


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        (
            "out[i] = math.sqrt(a)  # BAD",
            [
                "Numba cannot type `sqrt(readonly array(float32, 1d, C))`",
                "an In[...] input is a read-only array",
            ],
        ),
        (
            "out[i] = a[i] + out  # BAD",
            ["`add(float32, DisjointSlice[", "a DisjointSlice (an output) supports only"],
        ),
        (
            "for v in out:  # BAD\n                out[i] = v",
            ["`getiter(DisjointSlice[", "a DisjointSlice (an output) supports only"],
        ),
        (
            "out[i] = a[i] * (i < 3)  # BAD",
            ["ThreadIndex", "Use w.index"],
        ),
        (
            "a[0] = 1.0  # BAD",
            ["cannot store into a read-only input", "In[...] parameters are read-only"],
        ),
    ],
    ids=["math-on-input", "output-arithmetic", "output-iteration", "witness-compare", "store"],
)
def test_typing_error_names_the_real_cause(tmp_path, line, fragments):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        f"""
        import math

        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            {line}
        """,
    )
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx()
    exc = info.value
    for fragment in fragments:
        assert fragment in str(exc), str(exc)
    if "input is a read-only array" in fragments[-1]:
        assert "DisjointSlice (an output)" not in str(exc)
    assert exc.rule == "typing" and exc.kernel == "k"
    assert exc.lineno == line_of(tmp_path, "# BAD")
