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
