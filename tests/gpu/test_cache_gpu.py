"""cache=True on a GPU: a second process loads the kernel (PTX and cubin) and compiles nothing."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

ROOT = Path(__file__).resolve().parents[2]
#: A new string-hash seed per process: nothing in a key may follow set order.
_SEEDS = itertools.count(1)

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

@ss.device
def twice(x):
    return x * np.float32(2)

# a relation over two names: its parsed names are a set, whose repr follows string hashing
CONTRACT = ss.LaunchContract(domain=1, block=128, requires=("out.shape[0] == a.shape[0]",))

@ss.kernel(contract=CONTRACT, cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    s = ss.block.sum(a[i])
    out[i] = twice(s) + n
"""


def _probe(folder: Path, cache: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": str(next(_SEEDS)), "SIMTSAFE_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-m", "tests.kernels.cache_probe", str(folder), "kmod", "launch"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_second_process_launches_without_compiling(tmp_path: Path) -> None:
    (tmp_path / "kmod.py").write_text(KERNEL)
    cold = _probe(tmp_path, tmp_path / "cache")
    warm = _probe(tmp_path, tmp_path / "cache")
    assert cold["compiles"] >= 1 and cold["checks"] == 1, cold
    assert warm["compiles"] == 0 and warm["checks"] == 0, warm
    assert warm["digest"] == cold["digest"]  # the same results from the loaded cubin
