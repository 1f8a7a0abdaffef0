"""Attack round 27 (tests/kernels/attacks27.py) on the simulator: a Tier-1 local array read
before it is written is not reported (docs/safety.md promises an `uninitialized` finding),
and a record field named like an allowed array attribute (`size`, `ndim`, `real`) is read as
numpy's attribute, not the field the compiled kernel reads. Both fixed: the tests below
check the fixed behaviour against numpy and the compiled form's values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks27 import FINDINGS

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("name", ["local-array-made-in-loop", "local-array-never-written"])
def test_unwritten_local_element_is_reported(tmp_path: Path, name: str) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS[name])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), np.zeros(32), 1)
    assert not report.ok, report
    assert {f.kind for f in report.findings} == {"uninitialized"}, report
    assert "local[1] is read but no thread wrote it" in str(report), str(report)


def _launch(k: object, *args: object) -> np.ndarray:
    out = cuda.to_device(np.full(32, -7.0))
    k.prepare(grid=1, block=32)(out, cuda.to_device(np.zeros(32)), *args)  # type: ignore[attr-defined]
    return out.copy_to_host()  # type: ignore[no-any-return]


def test_local_array_made_in_a_loop_keeps_its_values(tmp_path: Path) -> None:
    """Numba allocates and zero-fills the array once where the function starts (the IR:
    tests/ptx/test_attacks27_ptx.py), so the loop's second and third reads see the 1.0 the
    previous iteration stored: 0 + 1 + 1 on the GPU, on Numba's simulator and in sim.check."""
    k = load_kernel_module(tmp_path, FINDINGS["local-array-made-in-loop"]).k
    want = np.full(32, 0.0 + 1.0 + 1.0)
    np.testing.assert_array_equal(_launch(k, np.int64(1)), want)
    report = ss.sim.check(k, 1, 32, np.zeros(32), np.zeros(32), 1)
    np.testing.assert_array_equal(report.outputs["out"], want)


WRITTEN_FIRST = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    i = thread.index_1d()
    s = 0.0
    for q in range(3):
        t = cuda.local.array(4, np.float64)
        for e in range(4):
            t[e] = float(q + e)
        s += t[(j + q) & 3]
    if i.in_bounds(out):
        out[i] = s
"""


def test_local_array_written_before_read_is_clean(tmp_path: Path) -> None:
    """The twin: every element stored before a read, no finding, numpy's values."""
    k = load_kernel_module(tmp_path, WRITTEN_FIRST).k
    want = np.full(32, float(sum(q + ((1 + q) & 3) for q in range(3))))
    report = ss.sim.check(k, 1, 32, np.zeros(32), np.zeros(32), 1)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], want)
    np.testing.assert_array_equal(_launch(k, np.int64(1)), want)


HELPER_TWICE = """
@ss.device
def h(j):
    t = cuda.local.array(4, np.float64)
    s = t[j & 3]
    t[j & 3] = 1.0
    return s


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[np.float64], j: int) -> None:
    i = thread.index_1d()
    s = h(j) + h(j)
    if i.in_bounds(out):
        out[i] = s
"""


def test_helper_local_array_is_fresh_per_call(tmp_path: Path) -> None:
    """A helper's array is allocated and zero-filled in the helper's entry block: each
    call has a new one (0 + 0, not the first call's 1.0), and both reads are unwritten."""
    k = load_kernel_module(tmp_path, HELPER_TWICE).k
    np.testing.assert_array_equal(_launch(k, np.int64(2)), np.zeros(32))
    report = ss.sim.check(k, 1, 32, np.zeros(32), np.zeros(32), 2)
    assert not report.ok, report
    assert "local[2] is read but no thread wrote it" in str(report), str(report)
    np.testing.assert_array_equal(report.outputs["out"], np.zeros(32))


def _records(mod: object) -> np.ndarray:
    a = np.zeros(32, mod.REC)  # type: ignore[attr-defined]
    a["size"], a["real"], a["ndim"] = 3.0, 5.0, 7.0
    return a


def test_record_field_named_size_reads_the_field(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS["record-field-named-size"])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), _records(mod))
    assert report.ok, report
    # the compiled kernel: h = 3 + 100 * 7, plus a[i].size = 3
    np.testing.assert_array_equal(report.outputs["out"], np.full(32, 706.0))


def test_record_field_named_real_reads_the_field(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, FINDINGS["record-field-named-real"])
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), _records(mod))
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], np.full(32, 50.0))


@pytest.mark.parametrize(
    ("name", "want"), [("record-field-named-size", 706.0), ("record-field-named-real", 50.0)]
)
def test_record_fields_on_numbas_simulator(tmp_path: Path, name: str, want: float) -> None:
    """The same values on Numba's simulator (a plain launch), in the body and a helper."""
    mod = load_kernel_module(tmp_path, FINDINGS[name])
    out = cuda.to_device(np.full(32, -7.0))
    mod.k.prepare(grid=1, block=32)(out, cuda.to_device(_records(mod)))
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, want))


def test_nested_record_field_named_T_and_imag(tmp_path: Path) -> None:
    src = """
INNER = np.dtype([("T", np.float64), ("imag", np.float64)])
REC = np.dtype([("size", np.float64), ("real", np.float64), ("ndim", np.float64), ("n", INNER)])


@ss.device
def t_of(r):
    return r.T


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.in_bounds(a):
        out[i] = t_of(a[i].n) + 10.0 * a[i].n.imag
"""
    mod = load_kernel_module(tmp_path, src)
    a = np.zeros(32, mod.REC)
    a["n"]["T"], a["n"]["imag"] = np.arange(32.0), 2.0
    report = ss.sim.check(mod.k, 1, 32, np.zeros(32), a)
    assert report.ok, report
    np.testing.assert_array_equal(report.outputs["out"], a["n"]["T"] + 10.0 * a["n"]["imag"])


def test_record_without_the_field_is_refused_on_the_simulator(tmp_path: Path) -> None:
    from tests.ptx.test_attacks27_ptx import NO_SUCH_FIELD

    for attr in ("size", "real"):
        mod = load_kernel_module(tmp_path, NO_SUCH_FIELD.format(attr=attr))
        refusal = rf"`\.{attr}` is not allowed in kernels on a value of type Record"
        with pytest.raises(ss.SafetyError, match=refusal):  # the compiled form's verdict
            mod.k.prepare(grid=1, block=32)(
                cuda.to_device(np.zeros(32)), cuda.to_device(np.zeros(32, mod.REC))
            )
        with pytest.raises(ss.SafetyError, match=refusal):  # sim.check runs the rewrite
            ss.sim.check(mod.k, 1, 32, np.zeros(32), np.zeros(32, mod.REC))
