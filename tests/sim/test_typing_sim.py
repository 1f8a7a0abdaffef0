"""Typing-level safety rules on the simulator: refused at the first compile, as on the GPU.

The first simulator launch types the kernel for the CUDA target in the
compile worker (lowering._compileworker), so a typing rule refuses the
kernel before any thread runs, with the same ``SafetyError`` (kernel, rule,
file and line) that compiling for the GPU raises.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, source_path
from tests.kernels.typing_cases import (
    CASES,
    HELPER_WRITES,
    LOCATED,
    RETURN_WITNESS,
    RETURN_WITNESS_TUPLE,
    kernel_source,
    sim_args,
)

pytestmark = pytest.mark.sim


def _launch(kernel, *host, grid=1, block=32):  # type: ignore[no-untyped-def]
    dev = [cuda.to_device(a) for a in host]
    kernel.prepare(grid=grid, block=block)(*dev)
    return [d.copy_to_host() for d in dev]


def _launch_error(tmp_path, kernel, *host):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        _launch(kernel, *host)
    exc = info.value
    path, line = str(source_path(tmp_path)), line_of(tmp_path, "# BAD")
    assert (exc.filename, exc.lineno) == (path, line), str(exc)
    return exc


@pytest.mark.parametrize("case", list(CASES))
def test_typing_rule_rejects(tmp_path, case):  # type: ignore[no-untyped-def]
    body, fragment = CASES[case]
    mod = load_kernel_module(tmp_path, kernel_source(body))
    exc = _launch_error(tmp_path, mod.k, *sim_args())
    assert type(exc) is ss.SafetyError
    assert fragment in str(exc)


@pytest.mark.parametrize("case", LOCATED)
def test_typing_error_names_kernel_and_line(tmp_path, case):  # type: ignore[no-untyped-def]
    body, _ = CASES[case]
    mod = load_kernel_module(tmp_path, kernel_source(body))
    exc = _launch_error(tmp_path, mod.k, *sim_args())
    assert "'k'" in str(exc)
    assert exc.kernel == "k"
    assert exc.lineno == line_of(tmp_path, "# BAD")


def test_const_write_rejected_even_in_bounds_thread(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, kernel_source(CASES["const-write"][0]))
    host = sim_args()
    with pytest.raises(ss.SafetyError):
        _launch(mod.k, *host)


@pytest.mark.parametrize("source", [RETURN_WITNESS, RETURN_WITNESS_TUPLE], ids=["bare", "tuple"])
def test_device_helper_returning_witness_rejected(tmp_path, source):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, source)
    exc = _launch_error(tmp_path, mod.k, np.zeros(32, np.float32), np.ones(32, np.float32))
    assert "a device helper may not return a witness" in str(exc)


def test_device_helper_taking_slice_and_witness_accepted(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, HELPER_WRITES)
    a = np.arange(20, dtype=np.float32)
    out, _ = _launch(mod.k, np.zeros(20, np.float32), a)
    np.testing.assert_array_equal(out, a * 2)


# ------------------------------------------------------------------ accepted twins


def test_witness_write_then_read_back(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        kernel_source("i = thread.index_1d()\nout[i] = a[i]\nout[i] = out[i] * 2"),
    )
    res = _launch(mod.k, *sim_args())
    np.testing.assert_array_equal(res[0], np.arange(32, dtype=np.float32) * 2)


def test_index_reads_input(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            if i.in_bounds(out):
                out[i] = a[i.index + 1] + a[0]
        """,
    )
    a = np.arange(21, dtype=np.float32) + 5
    out, _ = _launch(mod.k, np.zeros(20, np.float32), a)
    np.testing.assert_array_equal(out, a[1:] + a[0])


def test_index_2d_twin(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out2d: DisjointSlice2D[np.float32]) -> None:
            w = thread.index_2d()
            out2d[w] = w.row * 10 + w.col
        """,
    )
    (out,) = _launch(mod.k, np.zeros((3, 7), np.float32), grid=(1, 1), block=(8, 4))
    rows, cols = np.indices((3, 7))
    np.testing.assert_array_equal(out, rows * 10 + cols)


def test_index_2d_xy_aliases_twin(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out2d: DisjointSlice2D[np.float32]) -> None:
            w = thread.index_2d()
            out2d[w] = w.y * 10 + w.x
        """,
    )
    (out,) = _launch(mod.k, np.zeros((3, 7), np.float32), grid=(1, 1), block=(8, 4))
    rows, cols = np.indices((3, 7))
    np.testing.assert_array_equal(out, rows * 10 + cols)


def test_index_3d_twin(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out3d: DisjointSlice3D[np.float32]) -> None:
            w = thread.index_3d()
            out3d[w] = w.z * 100 + w.y * 10 + w.x
        """,
    )
    (out,) = _launch(mod.k, np.zeros((3, 5, 7), np.float32), grid=(1, 2, 2), block=(8, 4, 2))
    z, y, x = np.indices((3, 5, 7))
    np.testing.assert_array_equal(out, z * 100 + y * 10 + x)


def test_witness_value_as_plain_int_twin(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(iout: DisjointSlice[np.int64]) -> None:
            i = thread.index_1d()
            acc = 0
            for j in range(i.index % 4):
                acc += 1
            iout[i] = i.index * 100 + acc
        """,
    )
    (out,) = _launch(mod.k, np.zeros(30, np.int64))
    idx = np.arange(30)
    np.testing.assert_array_equal(out, idx * 100 + idx % 4)


def test_in_read_twin(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] + a[0]
        """,
    )
    a = np.arange(10, dtype=np.float32) + 3
    out, a_after = _launch(mod.k, np.zeros(10, np.float32), a)
    np.testing.assert_array_equal(out, a + a[0])
    np.testing.assert_array_equal(a_after, a)
