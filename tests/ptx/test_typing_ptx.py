"""Typing-level safety rules on the real CUDA target: ``Kernel.ptx()`` must reject.

The rejected kernels decorate fine (the rule is about types) and fail when
compiled, with a ``SafetyError`` naming the kernel, the rule and the line.
Each rule has an accepted twin that compiles.
"""

from __future__ import annotations

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.typing_cases import (
    CASES,
    HELPER_WRITES,
    LOCATED,
    RETURN_WITNESS,
    RETURN_WITNESS_TUPLE,
    kernel_source,
)

pytestmark = pytest.mark.ptx


def _ptx_error(kernel):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        kernel.ptx()
    exc = info.value
    assert type(exc) is ss.SafetyError
    assert exc.__cause__ is None and exc.__suppress_context__, "raise ... from None"
    return exc


@pytest.mark.parametrize("case", list(CASES))
def test_typing_rule_rejects(tmp_path, case):  # type: ignore[no-untyped-def]
    body, fragment = CASES[case]
    mod = load_kernel_module(tmp_path, kernel_source(body))  # decoration accepts
    exc = _ptx_error(mod.k)
    assert fragment in str(exc)
    assert str(exc).startswith("kernel 'k': ")
    assert exc.kernel == "k"
    assert exc.rule == "typing"


@pytest.mark.parametrize("case", LOCATED)
def test_typing_error_points_at_line(tmp_path, case):  # type: ignore[no-untyped-def]
    body, _ = CASES[case]
    mod = load_kernel_module(tmp_path, kernel_source(body))
    exc = _ptx_error(mod.k)
    assert exc.lineno == line_of(tmp_path, "# BAD")
    assert "# BAD" in (exc.source_line or "")
    assert f"line {exc.lineno}" in str(exc)


@pytest.mark.parametrize("source", [RETURN_WITNESS, RETURN_WITNESS_TUPLE], ids=["bare", "tuple"])
def test_device_helper_returning_witness_rejected(tmp_path, source):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, source)
    exc = _ptx_error(mod.k)
    assert "a device helper may not return a witness" in str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD")


def test_device_helper_taking_slice_and_witness_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, HELPER_WRITES)
    assert ".entry" in mod.k.ptx()


TWINS = {
    "witness-write-read": "i = thread.index_1d()\nout[i] = a[i]\nout[i] = out[i] * 2",
    "index-reads-input": (
        "i = thread.index_1d()\nif i.in_bounds(out):\n    out[i] = a[i.index + 1] + a[0]"
    ),
    "index2d": "w = thread.index_2d()\nout2d[w] = w.row * 10 + w.col",
    "index2d-xy": "w = thread.index_2d()\nout2d[w] = w.y * 10 + w.x",
    "index3d": "w = thread.index_3d()\nout3d[w] = w.z * 100 + w.y * 10 + w.x",
    "index3d-reads-3d": "w = thread.index_3d()\nif w.in_bounds(out3d):\n    out3d[w] = out3d[w] + 1",
    "block-leader": "w = thread.block_leader()\npb[w] = 7.0",
    "plain-int-store": "i = thread.index_1d()\niout[i] = i.index",
    "range-over-index": (
        "i = thread.index_1d()\nacc = 0\nfor j in range(i.index % 4):\n    acc += j\niout[i] = acc"
    ),
    "unchecked-in-unsafe": (
        'i = thread.index_1d()\nwith ss.unsafe("SAFETY: slot i.index belongs to this thread"):\n'
        "    if i.index < out.size:\n        out.unchecked[i.index] = 1.0"
    ),
}


@pytest.mark.parametrize("twin", list(TWINS))
def test_typing_twin_compiles(tmp_path, twin):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, kernel_source(TWINS[twin]))
    ptx = mod.k.ptx()
    assert ".entry" in ptx
    assert "trap" not in ptx


def test_in_input_may_be_strided(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, kernel_source("i = thread.index_1d()\nout[i] = a[i]"))
    assert ".entry" in mod.k.ptx(layouts=("A",))
    assert np.dtype(mod.k.params[1].dtype) == np.float32


def test_from_import_alias_of_gated_op_rejected(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        load_kernel_module(
            tmp_path,
            """
            from numba.cuda import syncthreads as barrier

            @ss.kernel
            def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
                i = thread.index_1d()
                barrier()  # BAD
                out[i] = a[i]
            """,
        )
    exc = info.value
    assert "`barrier` is allowed only inside `with simtsafe.unsafe(" in str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD")


def test_from_import_alias_inside_unsafe_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        from numba.cuda import syncthreads as barrier

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            with ss.unsafe("SAFETY: every thread of the block reaches this barrier"):
                barrier()
            out[i] = a[i]
        """,
    )
    assert "bar.sync" in mod.k.ptx()


def test_reqntid_stamped_for_exact_block(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1)))
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i]

        @ss.kernel
        def free(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i]
        """,
    )
    assert ".reqntid 64, 1, 1" in mod.k.ptx()
    assert ".reqntid" not in mod.free.ptx()
