"""docs/faq.md quotes real messages: each error is produced here and found in the FAQ.

Shared by tests/sim (decoration and launch errors) and tests/ptx (typing errors,
whose text is the CUDA target's). Addresses, line numbers and file paths are
normalized on both sides.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module

FAQ = Path(__file__).resolve().parents[2] / "docs" / "faq.md"
_BLOCK = re.compile(r"^```text\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _normalized(line: str) -> str:
    line = re.sub(r"0x[0-9a-f]+", "0x...", line)
    return re.sub(r"line \d+", "line N", line).strip()


def faq_messages() -> set[str]:
    """The first line of every ```text block of docs/faq.md, normalized."""
    return {_normalized(b.splitlines()[0]) for b in _BLOCK.findall(FAQ.read_text())}


def assert_quoted(make: Callable[[], object]) -> None:
    """``make()`` raises; its first message line is quoted in docs/faq.md."""
    with pytest.raises(Exception) as info:  # noqa: B017,PT011 - any documented error
        make()
    exc = info.value
    first = _normalized(f"{type(exc).__name__}: {exc}".splitlines()[0])
    assert first in faq_messages(), f"not quoted in docs/faq.md:\n{first}"


KERNELS = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256, requires=["a.size == out.size"],
                                      covers="out"))
def vecadd(out: DisjointSlice[np.float32], a: In[np.float32], b: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i] + b[i]

@ss.kernel
def scale(out: DisjointSlice[np.float32], alpha: np.float32, a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = alpha * a[i]
"""

#: name -> kernel `k` refused at decoration or its first compile (the same on both targets).
DECORATION = {
    "syncthreads": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            cuda.syncthreads()
            out[i] = a[i]
        """,
    "global-array": """
        TABLE = np.arange(4, dtype=np.float32)

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] * TABLE[0]
        """,
    "uniformity": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            if a[i] > 0:
                ss.block.sync()
            out[i] = a[i]
        """,
    "ufunc": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = np.square(a[i])
        """,
    "numpy-function": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = np.clip(a[i], 0, 1)
        """,
}

#: name -> kernel `k` (or `bad`) refused by Numba typing on the CUDA target.
TYPING = {
    "int-index": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = cuda.grid(1)
            out[i] = a[i]
        """,
    "witness-arithmetic": """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i + 1] = a[i]
        """,
    "ufunc-array": """
        @ss.kernel
        def bad(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = np.exp(a)
        """,
}


@pytest.mark.parametrize("name", sorted(DECORATION))
def test_decoration_errors_are_quoted(tmp_path, name):  # type: ignore[no-untyped-def]
    def first_compile() -> None:  # refused at decoration, or at the first compile
        kernel = load_kernel_module(tmp_path, DECORATION[name]).k
        if ss.SIMULATOR:
            kernel.prepare(grid=1, block=64)
        else:
            kernel.ptx()

    assert_quoted(first_compile)


def test_missing_source_is_quoted() -> None:
    namespace: dict[str, object] = {"np": np, "ss": ss}
    exec(  # no source file: the decorator cannot read it
        "def k(out: ss.DisjointSlice[np.float32], a: ss.In[np.float32]) -> None:\n    pass\n",
        namespace,
    )
    assert_quoted(lambda: ss.kernel(namespace["k"]))  # type: ignore[arg-type]
