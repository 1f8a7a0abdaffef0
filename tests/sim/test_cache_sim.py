"""cache=True on the simulator: the compile worker's verdict is kept; a second process asks none."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A new string-hash seed per process: nothing in a key may follow set order.
_SEEDS = itertools.count(1)

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

# a relation over two names: its parsed names are a set, whose repr follows string hashing
CONTRACT = ss.LaunchContract(domain=1, block=128, requires=("out.shape[0] == a.shape[0]",))

@ss.kernel(contract=CONTRACT, cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    out[i] = ss.block.sum(a[i]) + n
"""


def _probe(folder: Path, cache: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONHASHSEED": str(next(_SEEDS)),
        "SIMTSAFE_CACHE_DIR": str(cache),
        "NUMBA_ENABLE_CUDASIM": "1",
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-m", "tests.kernels.cache_probe", str(folder), "kmod", "simulator"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_second_simulator_process_asks_no_compile_worker(tmp_path: Path) -> None:
    (tmp_path / "kmod.py").write_text(KERNEL)
    cold = _probe(tmp_path, tmp_path / "cache")
    warm = _probe(tmp_path, tmp_path / "cache")
    assert cold["worker"] == 1, cold
    assert warm["worker"] == 0, warm
    assert warm["digest"] == cold["digest"]
