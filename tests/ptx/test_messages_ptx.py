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


@pytest.mark.parametrize(
    ("line", "use"),
    [
        ("q = [a[0], a[1]]  # BAD", "q[0]"),
        ("q = {0: a[0]}  # BAD", "a[0]"),
        ("q = {a[0]}  # BAD", "a[0]"),
    ],
    ids=["list", "dict", "set"],
)
def test_a_heap_object_is_named_with_the_tuple_and_local_array_fixes(tmp_path, line, use):  # type: ignore[no-untyped-def]
    """Numba lowers a list, dict or set only with its runtime (NRT), which CUDA kernels lack
    (a raw NumbaRuntimeError or AttributeError): refused at decoration, at the line, with the
    fixes; the tuple twin compiles, and so does a list as an assignment target (unpacking)."""
    body = f"""
        @ss.kernel
        def k({SIG}) -> None:
            i = thread.index_1d()
            {line}
            out[i] = {use}
        """
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, body).k.ptx()
    exc = info.value
    assert "needs Numba's runtime, which CUDA kernels do not have" in str(exc), str(exc)
    assert "in a tuple, `(a, b)`" in str(exc) and "cuda.local.array(n, dtype)" in str(exc)
    assert exc.rule == "statement" and exc.lineno == line_of(tmp_path, "# BAD")
    (tmp_path / "twin").mkdir()
    twin = body.replace(f"out[i] = {use}", "out[i] = q[0] + p")
    twin = twin.replace(line, "[p, q] = (a[0], (a[1], a[0]))")
    assert ".entry" in load_kernel_module(tmp_path / "twin", twin).k.ptx()


def test_a_string_built_at_run_time_is_named_with_the_same_fixes(tmp_path):  # type: ignore[no-untyped-def]
    """What decoration cannot see (a string repeated a run-time number of times) fails in
    Numba's lowering for want of its runtime: that NumbaRuntimeError is the same message."""
    body = f"""
        @ss.kernel
        def k({SIG}, n: int) -> None:
            i = thread.index_1d()
            s = "ab" * n  # BAD
            out[i] = np.float32(len(s))
        """
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, body).k.ptx()
    exc = info.value
    assert "an object Numba allocates at run time (a string" in str(exc), str(exc)
    assert "needs Numba's runtime, which CUDA kernels do not have" in str(exc)
    assert exc.rule == "typing" and exc.lineno == line_of(tmp_path, "# BAD")
    (tmp_path / "twin").mkdir()
    twin = body.replace('"ab" * n', '"ab"')
    assert ".entry" in load_kernel_module(tmp_path / "twin", twin).k.ptx()
