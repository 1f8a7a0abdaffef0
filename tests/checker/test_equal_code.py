"""Functions of equal bodies in different modules are different functions to the checker.

Python's code objects compare equal when their bodies are the same, whatever their file,
so storage keyed by a code object would be shared between two such functions: on the GPU
each device function's ``cuda.shared.array`` is its own array, and each module's
``cuda.const.array_like`` its own constant data.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np

from simtsafe import sim
from tests.kernels import load_kernel_module

HELPER = """
@cuda.jit(device=True)
def helper(x):
    s = cuda.shared.array(64, np.float32)
    s[cuda.threadIdx.x] = x
    cuda.syncthreads()
    return s[63 - cuda.threadIdx.x]
"""

CONST_HELPER = """
TABLE = np.arange(64, dtype=np.float32) * {scale}


@cuda.jit(device=True)
def helper(x):
    t = cuda.const.array_like(TABLE)
    return t[cuda.threadIdx.x] + x
"""


def _two(tmp_path: Path, first: str, second: str) -> tuple[ModuleType, ModuleType]:
    mods = []
    for name, source in (("a", first), ("b", second)):
        (tmp_path / name).mkdir()
        mods.append(load_kernel_module(tmp_path / name, source))
    a, b = mods
    assert a.helper.py_func.__code__ == b.helper.py_func.__code__  # equal, not the same
    return a, b


def _kernel(tmp_path: Path, a: ModuleType, b: ModuleType) -> object:
    (tmp_path / "k").mkdir()
    source = f"""
from {a.__name__} import helper as ha
from {b.__name__} import helper as hb


@cuda.jit
def k(out):
    i = cuda.threadIdx.x
    x = ha(np.float32(i))
    out[i] = x + hb(np.float32(2 * i))
"""
    return load_kernel_module(tmp_path / "k", source).k


def test_two_helpers_of_one_body_have_a_shared_array_each(tmp_path: Path) -> None:
    a, b = _two(tmp_path, HELPER, HELPER)
    report = sim.check(_kernel(tmp_path, a, b), 1, 64, np.zeros(64, np.float32))
    assert report.ok, report
    out = report.outputs["out"]
    i = np.arange(64)
    np.testing.assert_array_equal(out, (63 - i) + 2 * (63 - i))


def test_one_helper_called_twice_has_one_shared_array(tmp_path: Path) -> None:
    # the twin: the same function twice, one array, and the second call's store races with
    # the first call's read (no barrier between them)
    a, _ = _two(tmp_path, HELPER, HELPER)
    report = sim.check(_kernel(tmp_path, a, a), 1, 64, np.zeros(64, np.float32))
    assert [f.kind for f in report.findings] == ["race"], report


def test_two_helpers_of_one_body_read_their_own_constants(tmp_path: Path) -> None:
    a, b = _two(tmp_path, CONST_HELPER.format(scale=1), CONST_HELPER.format(scale=100))
    report = sim.check(_kernel(tmp_path, a, b), 1, 64, np.zeros(64, np.float32))
    assert report.ok, report
    i = np.arange(64)
    np.testing.assert_array_equal(report.outputs["out"], (i + i) + (100 * i + 2 * i))
