"""Attack round 18 (tests/kernels/attacks18.py): a record element read by index from a shared
tile, a dynamic tile, a thread-private array or an output tile is 0 out of range (a
zero-filled record) and the element in range -- on the GPU the read had lost its bounds
test (a null record pointer out of range: LLVM deleted that path and the compare;
tests/ptx/test_attacks18_ptx.py), on the simulator the field read failed. Collected by
tests/gpu/test_records_gpu.py too, so the device gives the same values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks18 import FINDINGS

pytestmark = pytest.mark.sim

REC = np.dtype([("x", np.float32), ("y", np.float32)])
N = 64


def _records() -> np.ndarray:
    a = np.zeros(N, REC)
    a["x"] = np.arange(N) + 1
    a["y"] = np.arange(N) + 101
    return a


A = _records()

#: name -> (block, dynamic shared bytes, the n values, out[t] expected from (t, n))
Expect = Callable[[int, int], float]
CASES: dict[str, tuple[int, int, tuple[int, ...], Expect]] = {
    "tile-record-int-read-oob": (
        32,
        0,
        (0, 5, 31, 32, 40, -1, 2**40),
        lambda t, n: A["x"][n] if 0 <= n < 32 else 0.0,
    ),
    "tile-record-witness-read-oob": (64, 0, (0,), lambda t, n: A["y"][t] if t < 32 else 0.0),
    "dynamic-tile-record-read-oob": (
        64,
        256,
        (3, 31, 32, 40, -5),
        lambda t, n: A["x"][n] if 0 <= n < 32 else 0.0,
    ),
    "local-record-read-oob": (
        32,
        0,
        (0, 3, 4, -1, 1000),
        lambda t, n: A["x"][t] if 0 <= n < 4 else 0.0,
    ),
    "sim-record-tile-field-read": (32, 0, (0,), lambda t, n: A["x"][t]),
    "sim-local-record-store": (32, 0, (0,), lambda t, n: A["x"][t]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_record_read_by_index_is_its_element_or_zero(tmp_path: Path, name: str) -> None:
    block, shared, ns, expect = CASES[name]
    k = load_kernel_module(tmp_path, FINDINGS[name]).k
    launch = k.prepare(grid=1, block=block, shared_mem=shared)
    a = cuda.to_device(A)
    for n in ns:
        out = cuda.to_device(np.full(block, -7, np.float32))
        launch(out, a, *((np.int64(n),) if len(k.params) == 3 else ()))
        want = np.array([expect(t, n) for t in range(block)], np.float32)
        np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=f"n={n}")


def test_an_output_tile_record_read_is_the_threads_own_or_zero(tmp_path: Path) -> None:
    k = load_kernel_module(tmp_path, FINDINGS["out-tile-record-read-oob"]).k
    launch = k.prepare(grid=1, block=32)
    a = cuda.to_device(A)
    for n, want in ((0, A["x"][:32]), (1, np.zeros(32)), (2, np.zeros(32)), (-3, np.zeros(32))):
        out = cuda.to_device(np.zeros(64, REC))
        o2 = cuda.to_device(np.full(32, -7, np.float32))
        launch(out, o2, a, np.int64(n))
        np.testing.assert_array_equal(o2.copy_to_host(), want.astype(np.float32), err_msg=f"n={n}")


def test_a_fill_from_a_view_of_strided_rows_is_refused_as_when_compiled(tmp_path: Path) -> None:
    # Finding 2: a view of each row's first columns (strides (64, 4)) is no C-contiguous
    # input; the compiled fill (layout "A") refuses it, and now the simulator does too.
    from simtsafe import SafetyError

    k = load_kernel_module(tmp_path, FINDINGS["sim-fill-strided-input"]).k
    big = cuda.to_device(np.arange(64, dtype=np.float32).reshape(4, 16))
    out = cuda.to_device(np.zeros(32, np.float32))
    with pytest.raises(SafetyError, match="the input must be C-contiguous"):
        k.prepare(grid=1, block=32)(out, big[:, :8], np.int64(0), np.int64(0))
    # the accepted twin: the whole (C-contiguous) rows
    k.prepare(grid=1, block=32)(
        out, cuda.to_device(np.arange(32, dtype=np.float32).reshape(4, 8)), np.int64(0), np.int64(0)
    )
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(32, dtype=np.float32))


@pytest.mark.parametrize("size", ["4", "8", "16"])
def test_a_record_tile_filled_through_witnesses_holds_the_records(
    tmp_path: Path, size: str
) -> None:
    from tests.ptx.test_attacks18_ptx import RECORDS, WITNESS_FILL

    body = WITNESS_FILL.replace("FIELDS", RECORDS[size])
    k = load_kernel_module(tmp_path, body).k
    dtype = np.dtype(eval(RECORDS[size], {"np": np}))  # noqa: S307 - the test's own literal
    a = np.zeros(32, dtype)
    for f, name in enumerate(dtype.names or ()):
        a[name] = np.arange(32) + 1 + 100 * f
    out = cuda.to_device(np.zeros(32, np.float32))
    k.prepare(grid=1, block=32)(out, cuda.to_device(a))
    np.testing.assert_array_equal(out.copy_to_host(), a["x"][::-1].astype(np.float32))


def test_a_nested_field_of_the_own_element_holds_its_value(tmp_path: Path) -> None:
    from tests.ptx.test_attacks18_ptx import NESTED_FIELD

    k = load_kernel_module(tmp_path, NESTED_FIELD).k
    inner = np.dtype([("x", np.float32), ("y", np.float32)])
    rec = np.dtype([("inner", inner), ("n", np.int32)])
    out = cuda.to_device(np.zeros(40, rec))
    k.prepare(grid=2, block=32)(out, cuda.to_device(np.arange(40, dtype=np.float32)))
    got = out.copy_to_host()
    np.testing.assert_array_equal(got["inner"]["x"], np.arange(40, dtype=np.float32))
    np.testing.assert_array_equal(got["inner"]["y"], 2 * np.arange(40, dtype=np.float32))
    np.testing.assert_array_equal(got["n"], np.full(40, 7, np.int32))


@pytest.mark.parametrize("form", ["helper", "kernel"])
def test_a_field_stored_through_a_helper_holds_its_value(tmp_path: Path, form: str) -> None:
    from tests.ptx.test_attacks18_ptx import HELPER_FIELD, KERNEL_FIELD

    k = load_kernel_module(tmp_path, HELPER_FIELD if form == "helper" else KERNEL_FIELD).k
    out = cuda.to_device(np.zeros(40, REC))
    k.prepare(grid=2, block=32)(out, cuda.to_device(np.arange(40, dtype=np.float32)))
    got = out.copy_to_host()
    np.testing.assert_array_equal(got["x"], np.arange(40, dtype=np.float32))
    np.testing.assert_array_equal(got["y"], 2 * np.arange(40, dtype=np.float32))


def test_a_nested_field_stored_through_a_helper_holds_its_value(tmp_path: Path) -> None:
    from tests.ptx.test_attacks18_ptx import HELPER_NESTED_FIELD

    k = load_kernel_module(tmp_path, HELPER_NESTED_FIELD).k
    inner = np.dtype([("x", np.float32), ("y", np.float32)])
    rec = np.dtype([("inner", inner), ("n", np.int32)])
    out = cuda.to_device(np.zeros(40, rec))
    k.prepare(grid=2, block=32)(out, cuda.to_device(np.arange(40, dtype=np.float32)))
    got = out.copy_to_host()
    np.testing.assert_array_equal(got["inner"]["x"], np.arange(40, dtype=np.float32))
    np.testing.assert_array_equal(got["inner"]["y"], 2 * np.arange(40, dtype=np.float32))
    np.testing.assert_array_equal(got["n"], np.full(40, 7, np.int32))


def test_a_helper_given_an_input_for_its_output_is_refused(tmp_path: Path) -> None:
    from tests.ptx.test_attacks18_ptx import HELPER_FIELD_REFUSED

    body, message = HELPER_FIELD_REFUSED["helper-field-store-on-input"]
    k = load_kernel_module(tmp_path, body).k
    a = cuda.to_device(np.zeros(32, REC))
    out = cuda.to_device(np.zeros(32, np.float32))
    with pytest.raises(ss.SafetyError, match=message):
        k.prepare(grid=1, block=32)(out, a, cuda.to_device(np.ones(32, np.float32)))
    assert not a.copy_to_host()["x"].any()
