"""numpy ufuncs on scalars in kernels: every supported ufunc on every scalar dtype.

Shared by tests/ptx (each accepted call compiles to PTX; each refused one is a
``SafetyError`` at its line, never a bare ``KeyError``) and tests/sim (each
accepted call gives numpy's value and dtype; the same refusals when the line
runs). What is accepted is decided by ``simtsafe.lowering._ufuncs.plan``, the
one table both targets follow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lowering._ufuncs import SCALAR_UFUNCS, UfuncPlan, plan
from tests.kernels import line_of, load_kernel_module

DTYPES = [
    "bool_",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

#: Where a result of each dtype kind is stored (a widening store, exact for every value).
_OUT_FOR_KIND = {"b": "ob", "i": "oi", "u": "ou", "f": "of", "c": "oc"}
_OUT_DTYPE = {
    "ob": np.bool_,
    "oi": np.int64,
    "ou": np.uint64,
    "of": np.float64,
    "oc": np.complex128,
}


def accepted_calls(dtype: str) -> list[tuple[str, UfuncPlan]]:
    """Every supported ufunc that ``plan`` accepts for arguments of ``dtype``, with its plan."""
    calls = []
    for name in sorted(SCALAR_UFUNCS):
        nin = getattr(np, name).nin
        p = plan(name, (np.dtype(dtype),) * nin)
        if not isinstance(p, str):
            calls.append((name, p))
    return calls


def kernel_source(dtype: str) -> str:
    """One kernel calling every accepted ufunc on ``dtype``; scalar ``sel`` picks the call."""
    body = []
    for j, (name, p) in enumerate(accepted_calls(dtype)):
        args = ", ".join(["x"] * getattr(np, name).nin)
        body.append(
            f"    if sel == {j}:\n        {_OUT_FOR_KIND[p.out.kind]}[w] = np.{name}({args})"
        )
    outs = ", ".join(
        f"{o}: DisjointSlice[np.{np.dtype(t).name if t is not np.bool_ else 'bool_'}, PerBlock]"
        for o, t in _OUT_DTYPE.items()
    )
    return (
        "@ss.kernel\n"
        f"def k({outs}, a: In[np.{dtype}], sel: np.int64) -> None:\n"
        "    w = thread.block_leader()\n"
        "    x = a[0]\n" + "\n".join(body) + "\n"
    )


def refused_cases() -> list[tuple[str, tuple[str, ...], str]]:
    """(ufunc, argument dtypes, message fragment) that compile nowhere, with the fix."""
    return [
        ("power", ("int32", "int32"), "convert to a float type"),
        ("floor", ("complex64",), "numpy has no np.floor for (complex64)"),
        ("fmod", ("int64", "int64"), "or use `a % b`"),
        ("log2", ("complex128",), "has no GPU implementation in simtsafe"),
        ("bitwise_and", ("float32", "float32"), "numpy has no np.bitwise_and"),
    ]


def check_refused(tmp_path: Path, name: str, dtypes: tuple[str, ...], fragment: str) -> None:
    """``np.<name>`` of ``dtypes`` is a SafetyError at its line (compile on the GPU, run on sim)."""
    params = ", ".join(f"a{j}: In[np.{d}]" for j, d in enumerate(dtypes))
    args = ", ".join(f"a{j}[i]" for j in range(len(dtypes)))
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float64], {params}) -> None:
            i = thread.index_1d()
            out[i] = np.float64(np.{name}({args}).real)  # BAD
        """,
    )
    with pytest.raises(ss.SafetyError) as info:
        run(mod.k, [np.ones(1, dtype=d) for d in dtypes], np.zeros(1))
    exc = info.value
    assert fragment in str(exc), str(exc)
    assert f"np.{name}" in str(exc) and "kernel 'k'" in str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD"), str(exc)
    assert not isinstance(exc.__cause__, KeyError)


def run(kernel: ss.Kernel, inputs: list[np.ndarray], out: np.ndarray) -> np.ndarray | None:  # type: ignore[type-arg]
    """Compile (GPU target) or launch one thread (simulator); the output on the simulator."""
    if not ss.SIMULATOR:
        kernel.ptx()
        return None
    from numba import cuda

    d_out = cuda.to_device(out)
    kernel.prepare(grid=1, block=1)(d_out, *(cuda.to_device(a) for a in inputs))
    return d_out.copy_to_host()  # type: ignore[no-any-return]


def _unnamed(ptx: str) -> str:
    """PTX with the kernel's mangled name (and its environment's) replaced by one word."""
    name = ptx.split(".entry", 1)[1].split("(", 1)[0].strip()
    return ptx.replace(name.replace("_ZN", "_ZN08NumbaEnv", 1), "ENV").replace(name, "KERNEL")


def test_scalar_math_compiles_as_numpy_gives(tmp_path):  # type: ignore[no-untyped-def]
    """np.exp/np.sqrt/np.abs/np.log/np.sin of a float32 compile to exactly math's float32 code."""
    mod = load_kernel_module(
        tmp_path,
        """
        import math

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            x = a[i]
            out[i] = np.exp(x) + np.sqrt(x) + np.abs(x) + np.log(x) + np.sin(x)

        @ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
        def twin(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            x = a[i]
            out[i] = math.exp(x) + math.sqrt(x) + abs(x) + math.log(x) + math.sin(x)
        """,
    )
    a = np.linspace(0.25, 4.0, 32, dtype=np.float32)
    if not ss.SIMULATOR:
        # float32 in, float32 math: the same instructions as math's float32 functions.
        assert _unnamed(mod.k.ptx()) == _unnamed(mod.twin.ptx())
        return
    from numba import cuda

    d_out = cuda.to_device(np.zeros(32, np.float32))
    mod.k.prepare(grid=1, block=32)(d_out, cuda.to_device(a))
    want = np.exp(a) + np.sqrt(a) + np.abs(a) + np.log(a) + np.sin(a)
    assert want.dtype == np.float32
    np.testing.assert_array_equal(d_out.copy_to_host(), want)


def test_int_argument_computes_in_float64(tmp_path):  # type: ignore[no-untyped-def]
    """numpy's loop for np.exp(int32) is float64: so is the kernel's (f64 in the PTX)."""
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1))
        def k(out: DisjointSlice[np.float64], a: In[np.int32]) -> None:
            i = thread.index_1d()
            out[i] = np.exp(a[i])
        """,
    )
    a = np.arange(32, dtype=np.int32) - 16
    res = run(mod.k, [a], np.zeros(32))
    if res is None:
        assert ".f64" in mod.k.ptx()
    else:  # one thread ran: element 0
        assert res[0] == np.exp(a[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_accepted_ufunc_runs(tmp_path, dtype):  # type: ignore[no-untyped-def]
    """Each call `plan` accepts compiles (GPU target) / gives numpy's value (simulator)."""
    mod = load_kernel_module(tmp_path, kernel_source(dtype))
    calls = accepted_calls(dtype)
    assert len(calls) > 10
    if not ss.SIMULATOR:
        assert ".entry" in mod.k.ptx()
        return
    from numba import cuda

    value = np.array([True]) if dtype == "bool_" else np.array([3], dtype=dtype)
    launch = mod.k.prepare(grid=1, block=1)
    with np.errstate(all="ignore"):
        for j, (name, p) in enumerate(calls):
            d = {o: cuda.to_device(np.zeros(1, dtype=t)) for o, t in _OUT_DTYPE.items()}
            launch(*d.values(), cuda.to_device(value), np.int64(j))
            want = getattr(np, name)(*([value[0]] * getattr(np, name).nin))
            assert want.dtype == p.out, (name, want.dtype, p.out)
            got = d[_OUT_FOR_KIND[p.out.kind]].copy_to_host()[0]
            np.testing.assert_equal(got, want, err_msg=f"np.{name}({dtype})")


@pytest.mark.parametrize("case", refused_cases(), ids=lambda c: f"{c[0]}-{'-'.join(c[1])}")
def test_refused_with_the_fix(tmp_path, case):  # type: ignore[no-untyped-def]
    check_refused(tmp_path, *case)


def test_array_argument_refused_at_the_line(tmp_path):  # type: ignore[no-untyped-def]
    check_refused_source = """
        @ss.kernel
        def k(out: DisjointSlice[np.float64], a0: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = np.sqrt(a0)  # BAD
        """
    mod = load_kernel_module(tmp_path, check_refused_source)
    with pytest.raises(ss.SafetyError) as info:
        run(mod.k, [np.ones(1, np.float32)], np.zeros(1))
    assert "np.sqrt takes scalars in kernels" in str(info.value)
    assert "np.sqrt(a[i])" in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ("np.floor_divide(a[i], a[i])", "write `a // b`"),
        ("np.square(a[i])", "write `x * x`"),
        ("np.frexp(a[i])", "several outputs"),
    ],
)
def test_ufunc_without_kernel_implementation_refused_at_decoration(tmp_path, call, fragment):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            f"""
            @ss.kernel
            def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
                i = thread.index_1d()
                out[i] = {call}  # BAD
            """,
        )
    assert info.value.rule == "ufunc"
    assert fragment in str(info.value), str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")
