"""Attack round 21 (tests/kernels/attacks21.py): an array whose data pointer (or stride) is not
a multiple of the alignment its elements' loads and stores assume -- a float64 or an
``align=True`` record array viewed from a byte buffer at an odd offset -- was accepted at
launch; the compiled ``ld.f64``/``st.f64`` would fault on the GPU (the simulator computed
it). Now every launch refuses it (the general check and the generated fast one), with the
argument, the address and the alignment named; the same arrays at aligned offsets, and a
packed record (alignment 1) at any offset, launch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks21 import FINDINGS

pytestmark = pytest.mark.sim

N = 32


def _at(dtype: Any, offset: int) -> Any:
    """A device array of N elements of ``dtype`` starting ``offset`` bytes into a buffer."""
    dt = np.dtype(dtype)
    return cuda.to_device(np.zeros(N * dt.itemsize + offset, np.uint8))[offset:].view(dt)


@pytest.mark.parametrize(("which", "offset"), [("out", 1), ("o2", 3), ("a", 4), ("b", 7)])
def test_an_argument_at_a_misaligned_address_is_refused(
    tmp_path: Path, which: str, offset: int
) -> None:
    m = load_kernel_module(tmp_path, FINDINGS["misaligned-base-record"])
    launch = m.k.prepare(grid=1, block=N)
    dtypes = {"out": np.float64, "o2": m.REC, "a": m.REC, "b": np.float64}
    args = {name: _at(dt, offset if name == which else 0) for name, dt in dtypes.items()}
    for _ in range(2):  # the first launch's general check, then the generated fast one
        with pytest.raises(
            ss.ArgumentTypeError, match=f"argument {which!r} .* not a multiple of 8 bytes"
        ):
            launch(*args.values())


def test_the_same_arrays_at_aligned_offsets_launch(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, FINDINGS["misaligned-base-record"])
    out, o2, a, b = _at(np.float64, 8), _at(m.REC, 16), _at(m.REC, 8), _at(np.float64, 24)
    host = np.zeros(N, m.REC)
    host["x"] = np.arange(N)
    a.copy_to_device(host)
    b.copy_to_device(np.arange(N) * 100.0)
    m.k.prepare(grid=1, block=N)(out, o2, a, b)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N) * 101.0)


PACKED = """
REC = np.dtype([("x", np.float64), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    w = thread.index_1d()
    out[w] = a[w].x
"""


def test_a_packed_record_at_an_odd_offset_launches(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, PACKED)
    a = _at(m.REC, 3)
    host = np.zeros(N, m.REC)
    host["x"] = np.arange(N) + 0.5
    a.copy_to_device(host)
    out = cuda.to_device(np.zeros(N))
    m.k.prepare(grid=1, block=N)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N) + 0.5)


class _Interface:
    """A bare CUDA-array-interface object: a float64 input at byte stride 9 (an element's
    loads need 8)."""

    def __init__(self, base: np.ndarray, strides: tuple[int, ...]) -> None:
        self.base = base  # the memory stays alive with the object
        ptr = base.ctypes.data
        self.__cuda_array_interface__ = {
            "shape": (N,),
            "strides": strides,
            "typestr": "<f8",
            "data": (ptr, True),
            "version": 3,
        }


def test_an_input_at_a_misaligned_stride_is_refused(tmp_path: Path) -> None:
    m = load_kernel_module(tmp_path, FINDINGS["misaligned-stride-input"])
    base = np.zeros(N * 9 + 8, np.uint8)  # (on the simulator, device memory is host memory)
    out = cuda.to_device(np.zeros(N))
    with pytest.raises(ss.ArgumentTypeError, match=r"argument 'b' .* stride at 0x9, not a"):
        m.k.prepare(grid=1, block=N)(out, _Interface(base, (9,)))


FIELD_READ = """
REC = np.dtype([("x", np.float64), ("n", np.int32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    w = thread.index_1d()
    out[w] = a[w].x + 1.0
"""


def test_sim_check_replays_a_record_field_read_by_name(tmp_path: Path) -> None:
    # a false refusal of the round: sim.check's replay read `a[w].x` as an attribute of
    # numpy's record scalar, which has none (the launch and the compile accepted it)
    from simtsafe import sim

    m = load_kernel_module(tmp_path, FIELD_READ)
    a = np.zeros(N, m.REC)
    a["x"] = np.arange(N)
    report = sim.check(m.k, 1, N, np.zeros(N), a)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], np.arange(N) + 1.0)


class _RecordInterface:
    """A CuPy-like record array: ``.dtype`` and a ``__cuda_array_interface__`` (typestr
    ``|V16``)."""

    def __init__(self, host: np.ndarray) -> None:
        self.base = host
        self.dtype = host.dtype
        self.shape = host.shape
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "strides": None,
            "typestr": host.dtype.str,
            "descr": host.dtype.descr,
            "data": (host.ctypes.data, True),
            "version": 3,
        }


def test_a_record_interface_object_keeps_its_fields_on_the_simulator(tmp_path: Path) -> None:
    # a false refusal of the round: the simulator rebuilt the array from its typestr only
    # (a void of 16 bytes), so the kernel's field reads failed in the simulated threads
    m = load_kernel_module(tmp_path, FIELD_READ)
    host = np.zeros(N, m.REC)
    host["x"] = np.arange(N) * 2.0
    out = cuda.to_device(np.zeros(N))
    m.k.prepare(grid=1, block=N)(out, _RecordInterface(host))
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N) * 2.0 + 1.0)


class _BareRecordInterface(_RecordInterface):
    """The same without ``.dtype``: the record only in the interface's ``descr``."""

    def __init__(self, host: np.ndarray) -> None:
        super().__init__(host)
        del self.dtype


def test_a_bare_interface_of_a_padded_record_launches(tmp_path: Path) -> None:
    # a false refusal of the round: numpy's descr of an align=True record names its padding
    # '' and np.dtype(descr) made it a field 'f2' -- a record of the declared dtype refused
    m = load_kernel_module(tmp_path, FIELD_READ)
    assert m.REC.itemsize == 16  # 12 bytes of fields, 4 of padding
    host = np.zeros(N, m.REC)
    host["x"] = np.arange(N) * 3.0
    out = cuda.to_device(np.zeros(N))
    m.k.prepare(grid=1, block=N)(out, _BareRecordInterface(host))
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(N) * 3.0 + 1.0)
