"""Without the CUDA compiler libraries the gate says in ONE line what to install.

A machine with numba-cuda but no NVVM/NVRTC (``pip install simtsafe`` without
``[cu13]``) fails inside ``cuda.pathfinder`` at the first compile; one without
the CUDA runtime fails already at ``import numba.cuda``. Both are reproduced
by making ``cuda.pathfinder`` report the libraries missing in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Runs `simtsafe ARGS...` with the named CUDA libraries reported missing by cuda.pathfinder.
HIDE = """
import runpy, sys
import cuda.pathfinder._dynamic_libs.load_nvidia_dynamic_lib as m
from cuda.pathfinder import DynamicLibNotFoundError
hidden, real = set(sys.argv[1].split(",")), m._load_lib_no_cache
def load(libname, *args, **kwargs):
    if libname in hidden:
        raise DynamicLibNotFoundError(
            f'Failure finding "lib{libname}.so.13": No such file: lib{libname}.so.13')
    return real(libname, *args, **kwargs)
m._load_lib_no_cache = load
sys.argv = ["simtsafe", *sys.argv[2:]]
runpy.run_module("simtsafe", run_name="__main__", alter_sys=True)
"""

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

@ss.kernel
def copy(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i]
"""

INSTALL = 'pip install "simtsafe[cu13]"'


def _run(tmp_path: Path, hidden: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "k.py").write_text(KERNEL)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    return subprocess.run(
        [sys.executable, "-c", HIDE, hidden, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_missing_compiler_libraries_are_one_line(tmp_path: Path) -> None:
    result = _run(tmp_path, "nvrtc,nvvm", "check", "k.py")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert re.fullmatch(
        r"simtsafe: a CUDA library numba-cuda compiles with is not installed "
        r"\(lib(nvvm|nvrtc)\.so\.13 not found\): "
        + re.escape(f'{INSTALL} (for a CUDA 12 driver: "simtsafe[cu12]")'),
        line,
    ), line


def test_missing_compiler_libraries_in_json(tmp_path: Path) -> None:
    result = _run(tmp_path, "nvrtc,nvvm", "check", "--format", "json", "k.py")
    assert result.returncode == 2
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["code"] == "SS-toolchain" and INSTALL in finding["message"]
    assert "Traceback" not in result.stderr


def test_missing_cuda_runtime_at_import_is_one_line(tmp_path: Path) -> None:
    result = _run(tmp_path, "cudart", "check", "k.py")
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert "(libcudart.so.13 not found)" in line and INSTALL in line
