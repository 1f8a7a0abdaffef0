"""The simulator behaves as the GPU path does: helpers see the geometry, CAI objects work,
errors in simulated threads come out as simtsafe errors, scalars of every supported kind."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

F32 = np.float32


def test_helper_reads_thread_geometry(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.device
        def lane():
            return cuda.threadIdx.x + cuda.blockDim.x * 0

        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] + lane()
        """,
    )
    out = cuda.to_device(np.zeros(64, F32))
    mod.k.prepare(grid=2, block=32)(out, cuda.to_device(np.zeros(64, F32)))
    np.testing.assert_array_equal(out.copy_to_host(), np.tile(np.arange(32, dtype=F32), 2))


class _CAIOnly:
    """An array of some other library: only ``__cuda_array_interface__`` (host memory here)."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "typestr": host.dtype.str,
            "data": (host.ctypes.data, False),
            "strides": None,
            "version": 3,
        }


def test_cuda_array_interface_objects_work(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            out[i] = a[i] * 3
        """,
    )
    out, a = np.zeros(40, F32), np.arange(40, dtype=F32)
    mod.k.prepare(grid=2, block=32)(_CAIOnly(out), _CAIOnly(a))
    np.testing.assert_array_equal(out, a * 3)


def test_typing_error_refused_before_the_simulated_threads_run(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            i = thread.index_1d()
            v = a[i]
            out[i] = v.row  # BAD
        """,
    )
    with pytest.raises(ss.SafetyError) as info:
        mod.k.prepare(grid=1, block=32)(
            cuda.to_device(np.zeros(32, F32)), cuda.to_device(np.zeros(32, F32))
        )
    exc = info.value
    # Refused before any thread runs: the first simulator compile types the kernel for
    # the CUDA target (the compile worker), as compiling for the GPU would.
    assert exc.rule == "typing"
    assert exc.kernel == "k"
    assert "Numba cannot" in str(exc) and "row" in str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD")


_SCALAR_KERNEL = """
@ss.kernel
def k(out: DisjointSlice[np.float32], a: In[np.float32], s: {ann}) -> None:
    i = thread.index_1d()
    out[i] = a[i] * np.float32({expr})
"""


@pytest.mark.parametrize(
    ("ann", "expr", "value", "factor"),
    [
        ("np.complex64", "s.real + s.imag", np.complex64(2 + 1j), 3.0),
        ("np.complex128", "s.imag", 1.5 - 4j, -4.0),
        ("complex", "s.real", complex(2, 9), 2.0),
        ("np.float16", "s", np.float16(0.5), 0.5),
        ("np.float32", "s", 2.5, 2.5),
        ("np.uint8", "s", 200, 200.0),
        ("bool", "1 if s else 0", True, 1.0),
    ],
    ids=["complex64", "complex128", "complex", "float16", "float32", "uint8", "bool"],
)
def test_scalar_kinds_end_to_end(tmp_path, ann, expr, value, factor):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, _SCALAR_KERNEL.format(ann=ann, expr=expr))
    a = np.arange(40, dtype=F32)
    out = cuda.to_device(np.zeros(40, F32))
    mod.k.prepare(grid=2, block=32)(out, cuda.to_device(a), value)
    np.testing.assert_allclose(out.copy_to_host(), a * np.float32(factor))


@pytest.mark.parametrize(
    ("ann", "value", "fragment"),
    [
        ("np.float32", 1e39, "overflows float32"),
        ("np.float16", 70000.0, "overflows float16"),
        ("np.complex64", complex(1e39, 0), "overflows complex64"),
        ("np.int8", 300, "does not fit int8 [-128, 127]"),
    ],
)
def test_scalar_out_of_range_refused(tmp_path, ann, value, fragment):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, _SCALAR_KERNEL.format(ann=ann, expr="1"))
    out = cuda.to_device(np.full(40, 7, F32))
    with pytest.raises(ss.ArgumentTypeError) as info:
        mod.k.prepare(grid=2, block=32)(out, cuda.to_device(np.zeros(40, F32)), value)
    assert fragment in str(info.value)
    assert info.value.argument == "s"
    np.testing.assert_array_equal(out.copy_to_host(), 7)  # nothing launched
