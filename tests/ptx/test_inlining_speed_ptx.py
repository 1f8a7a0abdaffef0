"""Numba-level inlining in linear time (``simtsafe.lowering._compat``): the same PTX as
numba-cuda's own inlining, with the callee's pipeline run once per caller instead of once
per call site."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import simtsafe as ss

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="PTX needs the CUDA target")

ROOT = Path(__file__).resolve().parents[2]

_COMPILE = """
import sys
from numba import cuda, types
from simtsafe.lowering import _compat
if sys.argv[1] == "numba":
    _compat._uninstall_linear_inlining()
from tests.kernels import inline_nest as m
f32 = types.float32[::1]
ptx = m.nested.ptx(cc=(9, 0)) if sys.argv[2] == "safe" else cuda.compile_ptx(
    m.nested_raw.py_func, (f32, f32), cc=(9, 0))[0]
# numba-cuda orders its NumbaEnv declarations by hash: the code is what must agree
print("\\n".join(line for line in str(ptx).splitlines() if "NumbaEnv" not in line))
"""


def _ptx(inlining: str, which: str, tmp_path: Path) -> str:
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "SIMTSAFE_CACHE_DIR": str(tmp_path / inlining),  # compiled, not found in a cache
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", _COMPILE, inlining, which],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("which", ["safe", "raw"])
def test_the_ptx_is_numba_cudas_own(which: str, tmp_path: Path) -> None:
    ours = _ptx("linear", which, tmp_path)
    theirs = _ptx("numba", which, tmp_path)
    assert "ld.global" in ours and ".entry" in ours
    assert ours == theirs


def test_a_callee_runs_through_the_pipeline_once_per_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from numba import cuda, types
    from numba.cuda.core import inline_closurecall

    from simtsafe.lowering import _compat
    from tests.kernels import inline_nest

    ran: list[str] = []
    worker = inline_closurecall.InlineWorker
    run = worker.run_untyped_passes

    def counted(self: object, func: object, enable_ssa: bool = False) -> object:
        ran.append(func.__name__)  # type: ignore[attr-defined]
        return run(self, func, enable_ssa)

    monkeypatch.setattr(worker, "run_untyped_passes", counted)
    f32 = types.float32[::1]
    cuda.compile_ptx(inline_nest.nested_raw.py_func, (f32, f32), cc=(9, 0))
    # the kernel calls _raw_pair three times (one run), _raw_pair calls _raw_leaf twice (one)
    assert sorted(ran) == ["_raw_leaf", "_raw_pair"]
    ran.clear()
    _compat._uninstall_linear_inlining()
    try:
        cuda.compile_ptx(inline_nest.nested_raw.py_func, (f32, f32), cc=(9, 0))
    finally:
        assert _compat._install_linear_inlining()
    # numba-cuda's own: per call site, the nested callee again inside each copy
    assert sorted(ran) == ["_raw_leaf"] * 6 + ["_raw_pair"] * 3


# An ``inline=`` cost model is user code run between two call sites: here it changes a
# global the callee reads, so each site's translation differs (found by an attack round).
_COST_MODEL = """
import re, sys
from numba import cuda, types
from simtsafe.lowering import _compat
if sys.argv[1] == "numba":
    _compat._uninstall_linear_inlining()
K = 100
def budget(expr, caller_ir, callee_ir):
    global K
    K += 1
    return True
@cuda.jit(device=True, inline=budget)
def f(x):
    return x + K
def kern(out):
    out[0] = f(0)
    out[1] = f(0)
ptx, _ = cuda.compile_ptx(kern, (types.int64[::1],), cc=(9, 0))
print(sorted(int(v) for v in re.findall(r"mov\\.u64\\s+%rd\\d+, (\\d+);", ptx)))
"""

# In a debug build each site's inlined locals keep names of their own (numba-cuda groups a
# name's SSA versions into one slot: one name for both sites would make a union of them).
_DEBUG_NAMES = """
import re, sys
from numba import cuda, types
from simtsafe.lowering import _compat
if sys.argv[1] == "numba":
    _compat._uninstall_linear_inlining()
@cuda.jit(device=True, inline="always")
def f(x):
    y = x * 2
    return y
def kern(out, fo):
    out[0] = f(3)
    fo[0] = f(1.5)
ptx, _ = cuda.compile_ptx(
    kern, (types.int64[::1], types.float64[::1]), cc=(9, 0), debug=True, opt=False)
code = [line for line in ptx.splitlines() if "NumbaEnv" not in line]
print(len(code), re.findall(r"__local_depot\\d+\\[(\\d+)\\]", ptx))
"""


def _run(source: str, inlining: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", source, inlining],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_cost_model_run_between_call_sites_is_seen_by_the_next_site() -> None:
    assert _run(_COST_MODEL, "linear") == _run(_COST_MODEL, "numba") == "[101, 102]"


def test_a_debug_build_keeps_each_sites_locals_apart() -> None:
    # the same code and the same local slots (one name for both sites: a union slot, a
    # larger depot and other code)
    ours = _run(_DEBUG_NAMES, "linear")
    assert ours == _run(_DEBUG_NAMES, "numba")
    assert "__local_depot" not in ours and "[" in ours
