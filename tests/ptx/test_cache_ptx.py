"""cache=True: a second process compiles nothing for an unchanged kernel (the PTX path, no GPU).

Each run is a fresh process (tests/kernels/cache_probe.py) with its own cache
directory; the probe counts Numba compiles and compiled-form checks. Any change
to what decides the code or the verdict -- the kernel's source, a helper's
source in another file, the contract, an option, a closure value of a factory
-- is a miss.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simtsafe as ss

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="the PTX path needs the CUDA target")

ROOT = Path(__file__).resolve().parents[2]
#: A new string-hash seed per process: nothing in a key may follow set order.
_SEEDS = itertools.count(1)

HELPERS = """
import numpy as np
import simtsafe as ss

@ss.device
def scale(x):
    return x * np.float32({factor})
"""

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread
from helpers import scale

def make(offset):
    # a relation over two names: its parsed names are a set, whose repr follows string hashing
    contract = ss.LaunchContract(domain=1, block={block}, requires=("out.shape[0] == a.shape[0]",))
    @ss.kernel(contract=contract, cache=True{options})
    def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
        i = thread.index_1d()
        s = ss.block.sum(a[i])
        out[i] = scale(s) + offset
    return k

k = make({offset})
"""


def _pythonpath() -> str:
    """The checkout first, then whatever the caller's path holds (an install with --target)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def _write(
    folder: Path, factor: str = "2", block: int = 128, options: str = "", offset: str = "1.0"
) -> None:
    (folder / "helpers.py").write_text(HELPERS.format(factor=factor))
    (folder / "kmod.py").write_text(KERNEL.format(block=block, options=options, offset=offset))


def _probe(folder: Path, cache: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONHASHSEED": str(next(_SEEDS)),
        "SIMTSAFE_CACHE_DIR": str(cache),
        "PYTHONPATH": _pythonpath(),
    }
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    out = subprocess.run(
        [sys.executable, "-m", "tests.kernels.cache_probe", str(folder), "kmod", "ptx"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_second_process_compiles_nothing_and_any_change_misses(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    _write(src)
    cold = _probe(src, cache)
    assert cold["compiles"] >= 1 and cold["checks"] == 1, cold  # the kernel and its helper
    warm = _probe(src, cache)
    assert warm["compiles"] == 0 and warm["checks"] == 0, warm
    assert warm["digest"] == cold["digest"]
    changes = {
        "helper source (another file)": {"factor": "3"},
        "contract": {"block": 64},
        "option": {"options": ", fastmath=True"},
        "closure value": {"offset": "2.0"},
    }
    for what, change in changes.items():
        _write(src, **change)  # type: ignore[arg-type]
        missed = _probe(src, cache)
        assert missed["compiles"] >= 1 and missed["checks"] == 1, (what, missed)
        assert missed["digest"] != cold["digest"] or what == "option", what
        again = _probe(src, cache)
        assert again["compiles"] == 0, (what, again)


def test_a_refused_kernel_is_never_cached(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "helpers.py").write_text("")
    (src / "kmod.py").write_text(
        """
import numpy as np
from numba import cuda
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

@ss.kernel(contract=ss.LaunchContract(domain=1, block=128), cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    if cuda.threadIdx.x < 3:
        ss.block.sync()
"""
    )
    env = {**os.environ, "SIMTSAFE_CACHE_DIR": str(cache), "PYTHONPATH": _pythonpath()}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "-m", "tests.kernels.cache_probe", str(src), "kmod", "ptx"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=300,
        )
        assert run.returncode != 0 and "needs every thread of the block" in run.stderr
    assert not list(cache.rglob("*.pkl"))
